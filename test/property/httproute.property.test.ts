import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { build } from '../../src/build/build.js';
import type { SourceObject } from '../../src/sources/snapshot.js';
import { gateway, object, service, v1 } from '../support/gateway.js';
import { checkBuiltFiles, requireNginx } from '../support/nginx.js';
import { testTranslateOptions } from '../support/options.js';

/**
 * HTTPRoute matches (headers, query parameters, method, RegularExpression paths) and filters against a
 * real `nginx -t`, over random routes on one host whose values are ordinary, invalid or hostile:
 * - the config always loads, however the matches of several routes share paths;
 * - text from a value (it carries the marker) appears only inside one quoted string of nginx syntax (a
 *   map key or a header value), never as syntax of its own.
 */

const runs = Number(process.env.I2N_PROPERTY_RUNS ?? 40);
const marker = 'I2NMARK';
const runDir = '/tmp/i2n-property-httproute';

const hostile = [
  `${marker}`,
  `a"${marker}`,
  `${marker}\\`,
  `x; ${marker} }`,
  `${marker} { return 200; }`,
  `$${marker}`,
  `\${${marker}}`,
  `#${marker}`,
  `${marker}\nlocation / {`,
  `é${marker}`,
  `'${marker}'`,
  `${marker}\t`,
];
const names = ['version', 'X-Env', 'color', `x_${marker}`, `${marker}"`, 'a b', `${marker}&`, `${marker}=`, 'ANIMAL'];
const regexes = ['can(ary|dy)', '[a-z]+', '(?i)beta', '(a+)+', `${marker}"`, `${marker}[`, '^v[0-9]{1,3}$', `${marker}\\`];
const pathRegexes = ['/items/[0-9]+', '/a/(b|c)', '/(x+)+y', `/${marker}"`, `/${marker}{`, `/${marker}[0-9]{2}$`, '/v[0-9]/.*'];
const paths = ['/', '/a', '/a/b', '/items'];

const value = fc.oneof(fc.constantFrom('one', 'two', 'a b', ...hostile), fc.string({ maxLength: 12 }));
const condition = fc.oneof(
  fc.record({ name: fc.constantFrom(...names), value }),
  fc.record({ name: fc.constantFrom(...names), type: fc.constant('RegularExpression'), value: fc.constantFrom(...regexes) }),
  fc.record({ name: fc.constantFrom(...names), type: fc.constantFrom('Prefix', `${marker}`), value }),
);
const match = fc.record(
  {
    path: fc.oneof(
      fc.record({ type: fc.constantFrom('PathPrefix', 'Exact'), value: fc.constantFrom(...paths) }),
      fc.record({ type: fc.constant('RegularExpression'), value: fc.constantFrom(...pathRegexes) }),
    ),
    headers: fc.array(condition, { maxLength: 3 }),
    queryParams: fc.array(condition, { maxLength: 2 }),
    method: fc.constantFrom('GET', 'POST', 'PATCH', `GET${marker}`, 'get'),
  },
  { requiredKeys: [] },
);
const headerList = fc.array(fc.record({ name: fc.constantFrom(...names, 'X-Frame-Options', 'Host', `X-${marker}`), value }), { maxLength: 2 });
const pathValue = fc.constantFrom('/x', '/', `/${marker}`, `/a b${marker}`, `/${marker};`, `/${marker}$1`);
const filter = fc.oneof(
  fc.record({ type: fc.constant('RequestHeaderModifier'), requestHeaderModifier: fc.record({ set: headerList, add: headerList, remove: fc.array(fc.constantFrom(...names), { maxLength: 2 }) }) }),
  fc.record({ type: fc.constant('ResponseHeaderModifier'), responseHeaderModifier: fc.record({ set: headerList, add: headerList, remove: fc.array(fc.constantFrom(...names), { maxLength: 2 }) }) }),
  fc.record({
    type: fc.constant('URLRewrite'),
    urlRewrite: fc.record(
      {
        hostname: fc.constantFrom('example.org', `${marker}.example.org`, `${marker} x`, `${marker};`),
        path: fc.oneof(fc.record({ type: fc.constant('ReplaceFullPath'), replaceFullPath: pathValue }), fc.record({ type: fc.constant('ReplacePrefixMatch'), replacePrefixMatch: pathValue })),
      },
      { requiredKeys: [] },
    ),
  }),
  fc.record({
    type: fc.constant('RequestRedirect'),
    requestRedirect: fc.record(
      {
        hostname: fc.constantFrom('example.org', `${marker};x`),
        statusCode: fc.constantFrom(301, 302, 999),
        path: fc.oneof(fc.record({ type: fc.constant('ReplaceFullPath'), replaceFullPath: pathValue }), fc.record({ type: fc.constant('ReplacePrefixMatch'), replacePrefixMatch: pathValue })),
      },
      { requiredKeys: [] },
    ),
  }),
);
const rule = fc.record({
  matches: fc.array(match, { minLength: 1, maxLength: 3 }),
  filters: fc.array(filter, { maxLength: 2 }),
  backend: fc.constantFrom('one', 'two'),
});

function objectsOf(routes: readonly (readonly { matches: unknown[]; filters: unknown[]; backend: string }[])[]): SourceObject[] {
  return [
    gateway('infra', 'edge', [{ name: 'http', port: 80, protocol: 'HTTP', allowedRoutes: { namespaces: { from: 'All' } } }]),
    service('apps', 'one', '10.0.0.1', [{ port: 80 }]),
    service('apps', 'two', '10.0.0.2', [{ port: 80 }]),
    ...routes.map((rules, index) =>
      object(v1, 'HTTPRoute', 'apps', `route-${index}`, {
        spec: {
          parentRefs: [{ name: 'edge', namespace: 'infra' }],
          hostnames: ['shop.example.test'],
          rules: rules.map((r) => ({ matches: r.matches, filters: r.filters, backendRefs: [{ name: r.backend, port: 80 }] })),
        },
      }),
    ),
  ];
}

/**
 * A line that holds a value's text, once its double-quoted strings are taken out: a comment (no line break
 * reaches one), a map entry, a header directive whose name is one HTTP token, or a URLRewrite or
 * RequestRedirect path. A path is in the path characters (translate/checks/allowlist.ts `isSafePath`), none of
 * which ends an nginx word: the rewrite's replacement is the path then the rest of the URI (`$1`), the
 * redirect's URL a scheme and host (checked names or nginx's variables), the path, then the query.
 */
const pathCharacters = '[A-Za-z0-9._~%!&()*+,=:@/-]';
const quotedLine = new RegExp(
  [
    "^\\s+(# .*|Q (1|Q|\\S+);|default Q;",
    "|(proxy_set_header|add_header|proxy_hide_header|grpc_hide_header) [A-Za-z0-9!#$%&'*+.^_`|~-]+( Q| \\$\\w+)?( always)?;",
    `|rewrite Q \\/${pathCharacters}*(\\$1)? break;`,
    `|return 30[1278] (\\$scheme|https?)://(\\$host|[a-z0-9.-]+)(\\$\\w+|:[0-9]+)?\\/${pathCharacters}*(\\$1)?(\\$is_args\\$args)?;)$`,
  ].join(''),
);
const withoutQuoted = (line: string) => line.replace(/"(?:[^"\\]|\\.)*"/g, 'Q');

describe('HTTPRoute matches and filters', () => {
  it(`always load, and keep values inside quoted strings (${runs} cases)`, async () => {
    const nginx = requireNginx();
    const options = testTranslateOptions({ runDir, ...(nginx.streamModuleFile !== undefined && { streamModulePath: nginx.streamModuleFile }) });
    await fc.assert(
      fc.asyncProperty(fc.array(fc.array(rule, { minLength: 1, maxLength: 3 }), { minLength: 1, maxLength: 3 }), async (routes) => {
        const result = build({ objects: objectsOf(routes) }, options);
        for (const file of result.files) {
          for (const line of file.contents.split('\n').filter((l) => l.includes(marker))) expect(withoutQuoted(line), line).toMatch(quotedLine);
        }
        const check = await checkBuiltFiles(result.files, runDir);
        expect(check.output).toBe('');
        expect(check.ok).toBe(true);
      }),
      { numRuns: runs, seed: process.env.I2N_PROPERTY_SEED ? Number(process.env.I2N_PROPERTY_SEED) : undefined },
    );
  }, Math.max(60_000, runs * 500));
});
