import { describe, expect, it } from 'vitest';
import { build } from '../../build/build.js';
import { gateway, object, service, v1 } from '../../../test/support/gateway.js';
import { testTranslateOptions } from '../../../test/support/options.js';
import { durationMs } from './http-timeouts.js';

/** HTTPRoute `timeouts` as nginx's proxy timeouts. */

const edge = gateway('infra', 'edge', [{ name: 'http', port: 80, protocol: 'HTTP', allowedRoutes: { namespaces: { from: 'All' } } }]);
const api = service('apps', 'api', '10.0.0.2', [{ port: 8080 }]);

/** The directives of the location of `/` for a rule with these timeouts, and the diagnostic codes. */
function location(timeouts: Record<string, string>) {
  const route = object(v1, 'HTTPRoute', 'apps', 'timed', {
    spec: { parentRefs: [{ name: 'edge', namespace: 'infra' }], hostnames: ['shop.example.com'], rules: [{ backendRefs: [{ name: 'api', port: 8080 }], timeouts }] },
  });
  const result = build({ objects: [edge, api, route] }, testTranslateOptions());
  const conf = result.files.find((f) => f.path === 'nginx.conf')?.contents ?? '';
  const block = /# HTTPRoute apps\/timed rule 0 PathPrefix \/\n\s*location \/ \{\n([^}]*)\}/.exec(conf)?.[1] ?? '';
  const directives = block
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => /^proxy_(connect|send|read|next_upstream)_timeout /.test(line));
  return { directives, codes: result.diagnostics.map((d) => d.code) };
}

describe('HTTPRoute timeouts', () => {
  it('parses Gateway API durations, and refuses what is not one', () => {
    expect(durationMs('500ms')).toBe(500);
    expect(durationMs('1h30m5s10ms')).toBe(5_405_010);
    expect(durationMs('0s')).toBe(0);
    for (const bad of ['', '1', '1.5s', '1d', '100000s', '1h1h1h1h1h', '-1s', '10 s']) expect(durationMs(bad), bad).toBeUndefined();
  });

  it('bounds every step to the backend by backendRequest, and the tries by request', () => {
    expect(location({ request: '10s', backendRequest: '2s' })).toEqual({
      directives: ['proxy_connect_timeout 2000ms;', 'proxy_read_timeout 2000ms;', 'proxy_send_timeout 2000ms;', 'proxy_next_upstream_timeout 10000ms;'],
      codes: [],
    });
  });

  it('bounds the steps by request when there is no backendRequest', () => {
    expect(location({ request: '500ms' }).directives).toEqual([
      'proxy_connect_timeout 500ms;',
      'proxy_read_timeout 500ms;',
      'proxy_send_timeout 500ms;',
      'proxy_next_upstream_timeout 500ms;',
    ]);
  });

  it('takes 0s as no timeout (a day for nginx, whose proxy timeouts cannot be switched off)', () => {
    expect(location({ request: '0s' }).directives).toEqual(['proxy_connect_timeout 86400000ms;', 'proxy_read_timeout 86400000ms;', 'proxy_send_timeout 86400000ms;']);
    expect(location({ request: '0s', backendRequest: '3s' }).directives).toEqual(['proxy_connect_timeout 3000ms;', 'proxy_read_timeout 3000ms;', 'proxy_send_timeout 3000ms;']);
  });

  it('reports a value that is not a duration, or a backendRequest longer than request, and keeps the defaults', () => {
    expect(location({ request: '5 seconds' })).toEqual({ directives: [], codes: ['httproute-timeout-invalid'] });
    expect(location({ request: '1s', backendRequest: '2s' })).toEqual({ directives: [], codes: ['httproute-timeout-invalid'] });
  });
});
