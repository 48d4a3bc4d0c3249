import { describe, expect, it } from 'vitest';
import { build } from '../../build/build.js';
import type { SourceObject } from '../../sources/snapshot.js';
import { gateway, object, service, v1, type Meta } from '../../../test/support/gateway.js';
import { testTranslateOptions } from '../../../test/support/options.js';
import { pathConflictCondition } from './http-routes.js';

/** Claims of HTTPRoutes against Ingress paths: one routine settles both, in any input order. */

const edge = gateway('infra', 'edge', [{ name: 'http', port: 80, protocol: 'HTTP', allowedRoutes: { namespaces: { from: 'All' } } }]);
const services = [service('apps', 'web', '10.0.0.1', [{ port: 80 }]), service('apps', 'api', '10.0.0.2', [{ port: 8080 }])];

function httpRoute(name: string, rules: Record<string, unknown>[], meta: Meta = {}): SourceObject {
  return object(v1, 'HTTPRoute', 'apps', name, { spec: { parentRefs: [{ name: 'edge', namespace: 'infra' }], hostnames: ['shop.example.com'], rules } }, meta);
}

function ingress(name: string, path: string, meta: Meta = {}): SourceObject {
  return object(
    'networking.k8s.io/v1',
    'Ingress',
    'apps',
    name,
    {
      spec: {
        ingressClassName: 'nginx',
        rules: [{ host: 'shop.example.com', http: { paths: [{ path, pathType: 'Prefix', backend: { service: { name: 'web', port: { number: 80 } } } }] } }],
      },
    },
    meta,
  );
}

const toApi = (path: string) => ({ matches: [{ path: { type: 'PathPrefix', value: path } }], backendRefs: [{ name: 'api', port: 8080 }] });

function render(objects: readonly SourceObject[]) {
  const result = build({ objects }, testTranslateOptions());
  const conf = result.files.find((f) => f.path === 'nginx.conf')?.contents ?? '';
  return { conf, diagnostics: result.diagnostics, statuses: result.statuses };
}

/** Every order of `items` (a few items only). */
function permutations<T>(items: readonly T[]): T[][] {
  if (items.length <= 1) return [[...items]];
  return items.flatMap((item, index) => permutations([...items.slice(0, index), ...items.slice(index + 1)]).map((rest) => [item, ...rest]));
}

describe('an Ingress and an HTTPRoute on one host and path', () => {
  const older = ingress('shop', '/', { creationTimestamp: '2020-01-01T00:00:00Z' });
  const newer = httpRoute('shop', [toApi('/'), toApi('/api')], { creationTimestamp: '2024-01-01T00:00:00Z' });

  it('settles by the same precedence in any input order (same bytes), and reports the losing route in status and diagnostics', () => {
    const outputs = permutations([edge, ...services, older, newer]).map(render);
    const [first] = outputs;
    for (const output of outputs) expect(output.conf).toBe(first?.conf);
    expect(first?.conf).toMatch(/location \/ \{\n[^}]*proxy_pass http:\/\/\w\w_apps_web_80;/);
    expect(first?.conf).toMatch(/location \/api\/ \{\n[^}]*proxy_pass http:\/\/\w\w_apps_api_8080;/);
    expect(first?.diagnostics).toContainEqual(
      expect.objectContaining({ code: 'path-conflict', resource: expect.objectContaining({ kind: 'HTTPRoute', name: 'shop' }) }),
    );
    const route = first?.statuses.find((s) => s.kind === 'HTTPRoute');
    expect(route?.kind === 'HTTPRoute' && route.parents[0]?.conditions.find((c) => c.type === pathConflictCondition)).toMatchObject({
      status: 'True',
      reason: 'PathConflict',
      message: expect.stringContaining('host shop.example.com path / is served by Ingress apps/shop'),
    });
  });

  it('gives the path to an older HTTPRoute, and tells the Ingress', () => {
    const { conf, diagnostics, statuses } = render([
      edge,
      ...services,
      ingress('shop', '/', { creationTimestamp: '2025-01-01T00:00:00Z' }),
      httpRoute('shop', [toApi('/')], { creationTimestamp: '2020-01-01T00:00:00Z' }),
    ]);
    expect(conf).toMatch(/location \/ \{\n[^}]*proxy_pass http:\/\/\w\w_apps_api_8080;/);
    expect(diagnostics).toContainEqual(
      expect.objectContaining({ code: 'path-conflict', resource: expect.objectContaining({ kind: 'Ingress', name: 'shop' }) }),
    );
    const route = statuses.find((s) => s.kind === 'HTTPRoute');
    expect(route?.kind === 'HTTPRoute' && route.parents[0]?.conditions.map((c) => c.type)).toEqual(['Accepted', 'ResolvedRefs']);
  });

  it('keeps the path for the Ingress when both have no timestamp and the same name, in any order', () => {
    const outputs = permutations([ingress('shop', '/'), httpRoute('shop', [toApi('/')]), edge]).map((objects) => render([...services, ...objects]));
    for (const output of outputs) expect(output.conf).toBe(outputs[0]?.conf);
    expect(outputs[0]?.conf).toMatch(/location \/ \{\n[^}]*proxy_pass http:\/\/\w\w_apps_web_80;/);
  });
});

describe('HTTPRoute rules', () => {
  it('reports what it cannot serve yet as PartiallyInvalid, never silently', () => {
    const { conf, diagnostics, statuses } = render([
      edge,
      ...services,
      httpRoute('shop', [
        // nginx reads no header names with "_".
        { matches: [{ path: { type: 'PathPrefix', value: '/h' }, headers: [{ name: 'x_env', value: 'canary' }] }], backendRefs: [{ name: 'api', port: 8080 }] },
        { matches: [{ path: { type: 'PathPrefix', value: '/f' } }], filters: [{ type: 'ExtensionRef', extensionRef: { group: 'x', kind: 'Y', name: 'z' } }] },
      ]),
    ]);
    expect(conf).not.toContain('location /h/');
    expect(conf).toMatch(/location \/f\/ \{\n[^}]*return 500;/);
    expect(diagnostics.map((d) => d.code)).toEqual(expect.arrayContaining(['httproute-match-unsupported', 'httproute-filter-unsupported']));
    const route = statuses.find((s) => s.kind === 'HTTPRoute');
    expect(route?.kind === 'HTTPRoute' && route.parents[0]?.conditions.find((c) => c.type === 'PartiallyInvalid')).toMatchObject({ status: 'True', reason: 'UnsupportedValue' });
  });

  it('weighs backends in one upstream block, with the unusable share on the 500 server', () => {
    const { conf } = render([
      edge,
      ...services,
      httpRoute('shop', [{ backendRefs: [{ name: 'web', port: 80, weight: 2 }, { name: 'api', port: 8080, weight: 4 }, { name: 'gone', port: 80, weight: 2 }] }]),
    ]);
    expect(conf).toMatch(/upstream \w\w_apps_shop_rule0_weighted \{\n\s+server 10\.0\.0\.1:80 weight=1;\n\s+server 10\.0\.0\.2:8080 weight=2;\n\s+server unix:\/run\/i2n\/http-500\.sock weight=1;/);
    expect(conf).toContain('listen unix:/run/i2n/http-500.sock;');
  });
});
