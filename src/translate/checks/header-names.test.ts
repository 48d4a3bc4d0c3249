import { describe, expect, it } from 'vitest';
import { ruleFilters } from '../gateway/http-filters.js';
import { parseIngressAnnotations } from '../ingress/annotations/index.js';
import { headerEntries } from '../ingress/header-configmaps.js';
import { isReservedHeader } from './header-names.js';

/** One list of hop-by-hop and framing names, applied wherever a tenant names a header (issue 37, defect 2). */

const framing = ['Content-Length', 'transfer-encoding', 'Connection', 'Keep-Alive', 'Upgrade', 'TE', 'Trailer', 'Proxy-Authorization', 'Proxy'];

describe('reserved header names', () => {
  it('covers framing and hop-by-hop names both ways, and Host on requests only', () => {
    for (const name of framing) {
      expect(isReservedHeader(name, 'request'), name).toBe(true);
      expect(isReservedHeader(name, 'response'), name).toBe(true);
    }
    expect(isReservedHeader('Host', 'request')).toBe(true);
    expect(isReservedHeader('Host', 'response')).toBe(false);
    expect(isReservedHeader('X-Content-Length', 'request')).toBe(false);
  });

  it.each(['requestHeaderModifier', 'responseHeaderModifier'])('refuses them in an HTTPRoute %s, set, add and remove', (modifier) => {
    const type = modifier === 'requestHeaderModifier' ? 'RequestHeaderModifier' : 'ResponseHeaderModifier';
    for (const name of framing) {
      for (const spec of [{ set: [{ name, value: '0' }] }, { add: [{ name, value: '0' }] }, { remove: [name] }]) {
        const checked = ruleFilters([{ type, [modifier]: spec } as never], ['f']);
        expect(checked.ok, `${type} ${JSON.stringify(spec)}`).toBe(false);
      }
    }
    expect(ruleFilters([{ type, [modifier]: { set: [{ name: 'X-Ok', value: '1' }] } } as never], ['f']).ok).toBe(true);
  });

  it('refuses them in auth-response-headers (copied into the backend request)', () => {
    const parsed = (headers: string) => parseIngressAnnotations({ 'nginx.ingress.kubernetes.io/auth-response-headers': headers });
    for (const name of ['Content-Length', 'Transfer-Encoding', 'Host', 'Connection']) {
      expect(parsed(`X-User, ${name}`).issues.map((issue) => issue.code), name).toContain('annotation-invalid');
    }
    expect(parsed('X-User, X-Email').issues).toEqual([]);
  });

  it('refuses them in header ConfigMaps, request and response', () => {
    for (const direction of ['request', 'response'] as const) {
      const { headers, problems } = headerEntries({ 'Transfer-Encoding': 'chunked', 'Content-Length': '1', 'X-Ok': 'yes' }, direction, 'literal');
      expect(headers.map((h) => h.name)).toEqual(['X-Ok']);
      expect(problems).toHaveLength(2);
    }
  });
});
