import { describe, expect, it } from 'vitest';
import { build } from '../../build/build.js';
import type { SourceObject } from '../../sources/snapshot.js';
import { gateway, object, service, v1, type Meta } from '../../../test/support/gateway.js';
import { testTranslateOptions } from '../../../test/support/options.js';

/** HTTPRoute matches beyond the path: the dispatch maps, their order, and what is refused. */

const edge = gateway('infra', 'edge', [{ name: 'http', port: 80, protocol: 'HTTP', allowedRoutes: { namespaces: { from: 'All' } } }]);
const services = ['one', 'two', 'three'].map((name, index) => service('apps', name, `10.0.0.${index + 1}`, [{ port: 80 }]));

function httpRoute(name: string, rules: Record<string, unknown>[], meta: Meta = {}): SourceObject {
  return object(v1, 'HTTPRoute', 'apps', name, { spec: { parentRefs: [{ name: 'edge', namespace: 'infra' }], hostnames: ['shop.example.com'], rules } }, meta);
}

const to = (name: string) => [{ name, port: 80 }];

function render(objects: readonly SourceObject[]) {
  const result = build({ objects }, testTranslateOptions());
  const conf = result.files.find((f) => f.path === 'nginx.conf')?.contents ?? '';
  return { conf, diagnostics: result.diagnostics, statuses: result.statuses };
}

/** The dispatch map of `location` on shop.example.com: its entries' targets' upstreams in order, then the default's. */
function dispatchOrder(conf: string, location: string): string[] {
  const map = new RegExp(`# shop\\.example\\.com ${location.replace(/[/=]/g, (c) => `\\${c}`)}: the first HTTPRoute match[^\\n]*\\n\\s*map "[^"]*" \\$\\w+ \\{\\n([^}]*)\\}`).exec(conf);
  if (!map) throw new Error(`no dispatch map for ${location}`);
  const upstreamOf = (name: string) => {
    if (name === '@i2n_not_found') return '404';
    const body = new RegExp(`location ${name} \\{\\n([^}]*)\\}`).exec(conf)?.[1] ?? '';
    return /proxy_pass http:\/\/\w\w_apps_(\w+)_80;/.exec(body)?.[1] ?? body.trim();
  };
  return [...map[1]!.matchAll(/\s(@\w+);/g)].map((m) => upstreamOf(m[1]!));
}

describe('HTTPRoute matches', () => {
  it('orders rules on one path by method, then header count, then query count, then age', () => {
    const { conf } = render([
      edge,
      ...services,
      httpRoute('newer', [{ matches: [{ headers: [{ name: 'a', value: '1' }] }], backendRefs: to('three') }], { creationTimestamp: '2025-01-01T00:00:00Z' }),
      httpRoute(
        'older',
        [
          { matches: [{ queryParams: [{ name: 'q', value: '1' }, { name: 'r', value: '2' }] }], backendRefs: to('one') },
          { matches: [{ headers: [{ name: 'a', value: '1' }, { name: 'b', value: '2' }] }], backendRefs: to('two') },
          { matches: [{ method: 'GET' }], backendRefs: to('three') },
          { matches: [{ headers: [{ name: 'a', value: '1' }] }], backendRefs: to('one') },
        ],
        { creationTimestamp: '2020-01-01T00:00:00Z' },
      ),
    ]);
    // method; two headers; one header (older route first, the newer route's same match loses); two query parameters; 404.
    expect(dispatchOrder(conf, '/')).toEqual(['three', 'two', 'one', 'one', '404']);
  });

  it('puts a longer path before any header match, and falls through to the shorter path', () => {
    const { conf } = render([
      edge,
      ...services,
      httpRoute('r', [
        { matches: [{ path: { type: 'PathPrefix', value: '/' }, headers: [{ name: 'a', value: '1' }, { name: 'b', value: '1' }] }], backendRefs: to('one') },
        { matches: [{ path: { type: 'PathPrefix', value: '/api' }, headers: [{ name: 'a', value: '1' }] }], backendRefs: to('two') },
        { matches: [{ path: { type: 'PathPrefix', value: '/' } }], backendRefs: to('three') },
      ]),
    ]);
    expect(dispatchOrder(conf, '/api/')).toEqual(['two', 'one', 'three']);
    expect(dispatchOrder(conf, '/')).toEqual(['one', 'three']);
  });

  it('puts Exact before RegularExpression before PathPrefix', () => {
    const { conf } = render([
      edge,
      ...services,
      httpRoute('r', [
        { matches: [{ path: { type: 'PathPrefix', value: '/a' }, method: 'GET' }], backendRefs: to('three') },
        { matches: [{ path: { type: 'RegularExpression', value: '/a/[0-9]+' } }], backendRefs: to('two') },
        { matches: [{ path: { type: 'Exact', value: '/a/1' } }], backendRefs: to('one') },
      ]),
    ]);
    expect(conf).toMatch(/location = \/a\/1 \{\n[^}]*proxy_pass http:\/\/\w\w_apps_one_80;/);
    expect(dispatchOrder(conf, '/a/')).toEqual(['two', 'three', '404']);
    expect(conf).toContain('"~^(?:/a/[0-9]+)$" 1;');
  });

  it('writes literal values with every character but letters and digits escaped, and reads the first query parameter of a name', () => {
    const { conf } = render([
      edge,
      ...services,
      httpRoute('r', [{ matches: [{ headers: [{ name: 'X-Env', value: 'a"b;c }$d\\' }], queryParams: [{ name: 'animal', value: 'whale' }] }], backendRefs: to('one') }]),
    ]);
    expect(conf).toContain('map $http_x_env $i2n_match_');
    expect(conf).toContain('"~^a\\x22b\\x3bc\\x20\\x7d\\x24d\\x5c$" 1;');
    expect(conf).toContain('"~^(?:(?!animal=)[^&]*+&)*+animal=whale(?:&|$)" 1;');
  });

  it('refuses what nginx cannot test, in status and diagnostics, and serves the other matches', () => {
    const { conf, diagnostics, statuses } = render([
      edge,
      ...services,
      httpRoute('r', [
        {
          matches: [
            { path: { type: 'PathPrefix', value: '/h' }, headers: [{ name: 'x_env', value: 'a' }] },
            { path: { type: 'PathPrefix', value: '/v' }, headers: [{ name: 'x-env', value: 'é' }] },
            { path: { type: 'PathPrefix', value: '/r' }, headers: [{ name: 'x-env', type: 'RegularExpression', value: '(a+)+$' }] },
            { path: { type: 'PathPrefix', value: '/q' }, queryParams: [{ name: 'a=b', value: '1' }] },
            { path: { type: 'PathPrefix', value: '/m' }, method: 'get' },
            { path: { type: 'RegularExpression', value: '/x/(a|aa)*' } },
            { path: { type: 'PathPrefix', value: '/ok' }, headers: [{ name: 'x-env', type: 'RegularExpression', value: 'can(ary|dy)' }] },
          ],
          backendRefs: to('one'),
        },
      ]),
    ]);
    for (const path of ['/h/', '/v/', '/r/', '/q/', '/m/']) expect(conf).not.toContain(`location ${path} `);
    expect(conf).toContain('"~^(?:can(ary|dy))$" 1;');
    expect(diagnostics.filter((d) => d.code === 'httproute-match-unsupported').map((d) => d.field)).toEqual([
      'spec.rules[0].matches[0].headers[0].name',
      'spec.rules[0].matches[1].headers[0].value',
      'spec.rules[0].matches[2].headers[0].value',
      'spec.rules[0].matches[3].queryParams[0].name',
      'spec.rules[0].matches[4].method',
      'spec.rules[0].matches[5].path.value',
    ]);
    const route = statuses.find((s) => s.kind === 'HTTPRoute');
    expect(route?.kind === 'HTTPRoute' && route.parents[0]?.conditions.find((c) => c.type === 'PartiallyInvalid')).toMatchObject({ status: 'True', reason: 'UnsupportedValue' });
  });

  it('leaves a path an Ingress holds to the Ingress, and warns', () => {
    const ingress = object('networking.k8s.io/v1', 'Ingress', 'apps', 'legacy', {
      spec: { ingressClassName: 'nginx', rules: [{ host: 'shop.example.com', http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'two', port: { number: 80 } } } }] } }] },
    });
    const { conf, diagnostics } = render([edge, ...services, ingress, httpRoute('r', [{ matches: [{ headers: [{ name: 'a', value: '1' }] }], backendRefs: to('one') }])]);
    expect(conf).toMatch(/location \/ \{\n[^}]*proxy_pass http:\/\/\w\w_apps_two_80;/);
    expect(conf).not.toContain('i2n_dispatch');
    expect(diagnostics.map((d) => d.code)).toContain('httproute-match-beside-ingress');
  });

  it('gives the same bytes in any input order', () => {
    const routes = [
      httpRoute('a', [{ matches: [{ headers: [{ name: 'a', value: '1' }] }], backendRefs: to('one') }]),
      httpRoute('b', [{ matches: [{ queryParams: [{ name: 'a', value: '1' }] }, { method: 'POST' }], backendRefs: to('two') }]),
    ];
    const first = render([edge, ...services, ...routes]).conf;
    expect(render([...routes.reverse(), ...services, edge]).conf).toBe(first);
  });
});
