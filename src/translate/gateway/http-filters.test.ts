import { describe, expect, it } from 'vitest';
import { build } from '../../build/build.js';
import type { SourceObject } from '../../sources/snapshot.js';
import { gateway, object, service, v1 } from '../../../test/support/gateway.js';
import { testTranslateOptions } from '../../../test/support/options.js';
import { rewrittenPath, ruleFilters } from './http-filters.js';

/** HTTPRoute filters in nginx's terms, and what they refuse. */

const edge = gateway('infra', 'edge', [{ name: 'http', port: 80, protocol: 'HTTP', allowedRoutes: { namespaces: { from: 'All' } } }]);
const services = [service('apps', 'one', '10.0.0.1', [{ port: 80 }]), service('apps', 'two', '10.0.0.2', [{ port: 80 }])];

function render(rules: Record<string, unknown>[]) {
  const route: SourceObject = object(v1, 'HTTPRoute', 'apps', 'r', { spec: { parentRefs: [{ name: 'edge', namespace: 'infra' }], hostnames: ['shop.example.com'], rules } });
  const result = build({ objects: [edge, ...services, route] }, testTranslateOptions());
  return { conf: result.files.find((f) => f.path === 'nginx.conf')?.contents ?? '', diagnostics: result.diagnostics, statuses: result.statuses };
}

const headers = (modifier: Record<string, unknown>) => [{ type: 'RequestHeaderModifier', requestHeaderModifier: modifier }];

describe('HTTPRoute filters', () => {
  it('replaces, strips and keeps paths as the Gateway API examples say', () => {
    const apply = (modifier: Parameters<typeof rewrittenPath>[0], matched: string, path: string) => {
      const { regex, target } = rewrittenPath(modifier, matched);
      const match = new RegExp(regex.replaceAll('\\/', '/')).exec(path);
      return match ? target.replace('$1', match[1] ?? '') : path;
    };
    const prefix = (p: string) => ({ type: 'ReplacePrefixMatch' as const, prefix: p });
    expect(apply(prefix('/xyz'), '/foo', '/foo/bar')).toBe('/xyz/bar');
    expect(apply(prefix('/xyz'), '/foo', '/foo')).toBe('/xyz');
    expect(apply(prefix('/xyz/'), '/foo/', '/foo/bar')).toBe('/xyz/bar');
    expect(apply(prefix('/'), '/foo', '/foo/bar')).toBe('/bar');
    expect(apply(prefix('/'), '/foo', '/foo')).toBe('/');
    expect(apply(prefix('/bar'), '/', '/a/b')).toBe('/bar/a/b');
    expect(apply({ type: 'ReplaceFullPath', path: '/one' }, '/x', '/x/y')).toBe('/one');
  });

  it('appends to the client header with a map, and quotes values', () => {
    const checked = ruleFilters(headers({ add: [{ name: 'X-Add', value: 'a "b"' }], set: [{ name: 'X-Set', value: 'v;{}' }], remove: ['X-Gone'] }), ['f']);
    expect(checked.ok && checked.value.requestHeaders).toEqual([
      { name: 'X-Set', value: '"v;{}"' },
      { name: 'X-Add', value: expect.stringMatching(/^\$i2n_add_[0-9a-f]{12}$/) },
      { name: 'X-Gone', value: '""' },
    ]);
    expect(checked.ok && checked.value.definitions[0]?.blocks.maps?.[0]).toMatchObject({
      source: '$http_x_add',
      entries: [{ key: '""', value: '"a \\"b\\""' }],
      defaultValue: '"${http_x_add},a \\"b\\""',
    });
  });

  it('refuses what it cannot express, in status and diagnostics: the rule answers 500', () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ filters: headers({ set: [{ name: 'X Bad', value: 'v' }] }) }, 'spec.rules[0].filters[0].requestHeaderModifier.set[0].name'],
      [{ filters: headers({ set: [{ name: 'X-A', value: '$host' }] }) }, 'spec.rules[0].filters[0].requestHeaderModifier.set[0].value'],
      [{ filters: headers({ set: [{ name: 'X-A', value: 'line\nbreak' }] }) }, 'spec.rules[0].filters[0].requestHeaderModifier.set[0].value'],
      [{ filters: headers({ add: [{ name: 'X_A', value: 'v' }] }) }, 'spec.rules[0].filters[0].requestHeaderModifier.add'],
      [{ filters: headers({ set: [{ name: 'X-Forwarded-For', value: 'v' }] }) }, 'spec.rules[0].filters'],
      [{ filters: headers({ set: [{ name: 'X-A', value: '1' }], add: [{ name: 'x-a', value: '2' }] }) }, 'spec.rules[0].filters'],
      [{ filters: [{ type: 'URLRewrite', urlRewrite: { hostname: 'bad host' } }] }, 'spec.rules[0].filters[0].urlRewrite.hostname'],
      [{ filters: [{ type: 'URLRewrite', urlRewrite: { path: { type: 'ReplaceFullPath', replaceFullPath: '/a b' } } }] }, 'spec.rules[0].filters[0].urlRewrite.path.replaceFullPath'],
      [
        { matches: [{ path: { type: 'Exact', value: '/x' } }], filters: [{ type: 'URLRewrite', urlRewrite: { path: { type: 'ReplacePrefixMatch', replacePrefixMatch: '/y' } } }] },
        'spec.rules[0].filters',
      ],
      [{ filters: [{ type: 'ExtensionRef', extensionRef: { group: 'x', kind: 'Y', name: 'z' } }] }, 'spec.rules[0].filters[0].type'],
    ];
    for (const [rule, field] of cases) {
      const { conf, diagnostics, statuses } = render([{ ...rule, backendRefs: [{ name: 'one', port: 80 }] }]);
      expect(diagnostics.filter((d) => d.code === 'httproute-filter-unsupported').map((d) => d.field), JSON.stringify(rule)).toEqual([field]);
      expect(conf).toMatch(/return 500;/);
      const route = statuses.find((s) => s.kind === 'HTTPRoute');
      expect(route?.kind === 'HTTPRoute' && route.parents[0]?.conditions.find((c) => c.type === 'PartiallyInvalid')?.reason).toBe('UnsupportedValue');
    }
  });

  it('refuses filters of one backendRef among several, and takes them with the rule\'s one backend', () => {
    const own = [{ type: 'RequestHeaderModifier', requestHeaderModifier: { set: [{ name: 'X-Own', value: 'yes' }] } }];
    const several = render([{ backendRefs: [{ name: 'one', port: 80, filters: own }, { name: 'two', port: 80 }] }]);
    expect(several.diagnostics.map((d) => d.code)).toContain('httproute-filter-unsupported');
    const single = render([{ backendRefs: [{ name: 'one', port: 80, filters: own }] }]);
    expect(single.diagnostics).toEqual([]);
    expect(single.conf).toContain('proxy_set_header X-Own "yes";');
  });

  it('hides the backend\'s header where a response header is set, added or removed', () => {
    const { conf } = render([
      {
        filters: [{ type: 'ResponseHeaderModifier', responseHeaderModifier: { set: [{ name: 'X-Set', value: 'v' }], add: [{ name: 'X-Add', value: 'w' }], remove: ['X-Gone'] } }],
        backendRefs: [{ name: 'one', port: 80 }],
      },
    ]);
    for (const name of ['X-Set', 'X-Add', 'X-Gone']) expect(conf).toContain(`proxy_hide_header ${name};`);
    expect(conf).toContain('add_header X-Set "v" always;');
    expect(conf).toMatch(/add_header X-Add \$i2n_add_[0-9a-f]{12} always;/);
    expect(conf).toMatch(/map \$upstream_http_x_add \$i2n_add_[0-9a-f]{12} \{\n\s+"" "w";\n\s+default "\$\{upstream_http_x_add\},w";/);
  });

  it('mirrors to one Service with an internal location, and refuses several mirrors or a share', () => {
    const mirror = (more: Record<string, unknown> = {}) => ({ type: 'RequestMirror', requestMirror: { backendRef: { name: 'two', port: 80 }, ...more } });
    const one = render([{ filters: [mirror()], backendRefs: [{ name: 'one', port: 80 }] }]);
    expect(one.diagnostics).toEqual([]);
    expect(one.conf).toMatch(/mirror \/\.ingress2nginx\/route-mirror\/[0-9a-f]{12};\n\s+mirror_request_body on;/);
    expect(one.conf).toMatch(/location = \/\.ingress2nginx\/route-mirror\/[0-9a-f]{12} \{\n\s+internal;[^}]*proxy_pass http:\/\/\w\w_apps_two_80\$request_uri;/);
    for (const rule of [{ filters: [mirror(), mirror()] }, { filters: [mirror({ percent: 10 })] }]) {
      const { conf, diagnostics } = render([{ ...rule, backendRefs: [{ name: 'one', port: 80 }] }]);
      expect(diagnostics.map((d) => d.code)).toEqual(['httproute-filter-unsupported']);
      expect(conf).toMatch(/return 500;/);
    }
    const missing = render([{ filters: [{ type: 'RequestMirror', requestMirror: { backendRef: { name: 'gone', port: 80 } } }], backendRefs: [{ name: 'one', port: 80 }] }]);
    expect(missing.diagnostics.map((d) => d.code)).toEqual(['backend-not-found']);
    expect(missing.conf).not.toContain('mirror ');
  });
});
