import { describe, expect, it } from 'vitest';
import type { HttpUpstream } from '../../model/nginx.js';
import type { ResolvedBackend } from '../backends.js';
import { ContextMemo } from './context-memo.js';

const backend = (name: string): ResolvedBackend => ({
  upstream: name,
  servers: [{ address: '10.0.0.1:80' }],
  serviceDnsName: 'web.shop.svc.cluster.local',
  description: 'Service shop/web port 80',
  service: { namespace: 'shop', name: 'web', port: 80 } as ResolvedBackend['service'],
});
const block = (keepalive: number) => (b: ResolvedBackend): HttpUpstream => ({ name: b.upstream, servers: b.servers, keepalive, comment: b.description });

describe('a context memo (the upstream blocks\' one)', () => {
  it('gives the same block for the same backend while the keepalive share is the same', () => {
    const memo = new ContextMemo<ResolvedBackend, HttpUpstream>();
    const web = backend('aa_shop_web_80');
    const first = memo.in('320', block(320))(web);
    expect(memo.in('320', block(320))(web)).toBe(first);
    expect(memo.in('320', block(320))(backend('aa_shop_web_80'))).not.toBe(first);
  });

  it('makes every block again when the keepalive share changes', () => {
    const memo = new ContextMemo<ResolvedBackend, HttpUpstream>();
    const web = backend('aa_shop_web_80');
    memo.in('320', block(320))(web);
    expect(memo.in('16', block(16))(web).keepalive).toBe(16);
  });
});
