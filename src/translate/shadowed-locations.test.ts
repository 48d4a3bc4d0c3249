import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import type { Location, Proxy } from '../model/nginx.js';
import { markShadowedLocations } from './shadowed-locations.js';

const proxyTo = (upstream: string, pass = `http://${upstream}`): Proxy => ({
  upstream,
  grpc: false,
  module: 'proxy',
  pass,
  scheme: 'http',
  host: '$i2n_best_host',
  httpVersion: '1.1',
  headers: [],
  inheritsRequestHeaders: true,
  interceptErrors: false,
});

const location = (modifier: Location['modifier'], path: string, upstream: string, more: Partial<Location> = {}): Location => ({
  modifier,
  path,
  comment: `${modifier} ${path}`,
  plainHttp: { redirect: false, serve: true },
  proxy: proxyTo(upstream),
  ...more,
});

const servedBy = (locations: readonly Location[]) =>
  Object.fromEntries(markShadowedLocations(locations).map((l) => [`${l.modifier}${l.path}`, l.servedBy ?? null]));

describe('markShadowedLocations', () => {
  it('marks the paths whose nearest shorter prefix sends them to the same place, and names the location nginx keeps', () => {
    expect(
      servedBy([
        location('', '/', 'web'),
        location('=', '/docs', 'web'),
        location('', '/docs/', 'web'),
        location('', '/docs/v1/', 'web'),
        location('', '/api/', 'api'),
        location('', '/api/v2/', 'web'),
        location('=', '/api/v2', 'web'),
        location('', '/api/v2/old/', 'web'),
      ]),
    ).toEqual({
      '/': null,
      '=/docs': '/',
      '/docs/': '/',
      '/docs/v1/': '/',
      '/api/': null,
      // /api/ would take these: kept.
      '/api/v2/': null,
      '=/api/v2': null,
      '/api/v2/old/': '/api/v2/',
    });
  });

  it('lets an exact path fall back to a prefix location of the same path', () => {
    expect(servedBy([location('', '/', 'api'), location('=', '/x', 'web'), location('', '/x', 'web')])).toEqual({ '/': null, '=/x': '/x', '/x': null });
  });

  it('keeps every location of a server with a regex location', () => {
    expect(servedBy([location('', '/', 'web'), location('', '/docs/', 'web'), location('~*', '"^/items"', 'api')])).toEqual({
      '/': null,
      '/docs/': null,
      '~*"^/items"': null,
    });
  });

  it('keeps a location whose handling differs in anything nginx is told', () => {
    const root = location('', '/', 'web');
    expect(
      servedBy([
        root,
        location('', '/slow/', 'web', { proxy: { ...proxyTo('web'), tuning: { readTimeout: '300s' } } }),
        location('', '/redirected/', 'web', { plainHttp: { redirect: true, serve: false } }),
        location('', '/gone/', 'web', { proxy: undefined, returnStatus: 503 }),
        location('', '/other-comment-and-origin/', 'web', { comment: 'another Ingress' }),
      ]),
    ).toEqual({ '/': null, '/slow/': null, '/redirected/': null, '/gone/': null, '/other-comment-and-origin/': '/' });
  });

  it('keeps a location whose proxy_pass has a URI, which replaces the matched prefix', () => {
    const withUri = { ...proxyTo('web'), pass: 'http://web/base/' };
    expect(servedBy([location('', '/', 'web', { proxy: withUri }), location('', '/docs/', 'web', { proxy: withUri })])).toEqual({ '/': null, '/docs/': null });
  });

  it('never falls back to the plain-HTTP-only ACME location, and keeps what it would take', () => {
    const acme = location('', '/.well-known/acme-challenge/', 'web', { plainHttpOnly: true });
    expect(servedBy([location('', '/', 'web'), acme, location('', '/.well-known/acme-challenge/x/', 'web')])).toEqual({
      '/': null,
      '/.well-known/acme-challenge/': null,
      '/.well-known/acme-challenge/x/': null,
    });
  });

  it('never marks or falls back to named and internal locations', () => {
    const named = location('', '@error-503', 'web', { proxy: undefined, errorPage: { code: 503 } });
    expect(servedBy([location('', '/', 'web'), named])).toEqual({ '/': null, '@error-503': null });
  });
});

/**
 * nginx's choice among `=` and prefix locations (no regexes): an exact match, else the longest prefix.
 * The property: for every request path, the locations left in the config choose one that handles it as
 * the full set would have, and every left-out location names one that is left in.
 */
describe('markShadowedLocations, property', () => {
  const choose = (locations: readonly Location[], uri: string): Location | undefined =>
    locations.find((l) => l.modifier === '=' && l.path === uri) ??
    locations.filter((l) => l.modifier !== '=' && uri.startsWith(l.path)).sort((a, b) => b.path.length - a.path.length)[0];
  const segment = fc.constantFrom('a', 'b', 'ab');
  const path = fc.array(segment, { maxLength: 3 }).chain((parts) =>
    fc.constantFrom(`/${parts.join('/')}`, `/${parts.join('/')}/`).map((p) => p.replace(/\/+/g, '/')),
  );
  const spec = fc.record({ modifier: fc.constantFrom('' as const, '=' as const), path, upstream: fc.constantFrom('web', 'api'), slow: fc.boolean() });

  it('never changes which handling a request gets', () => {
    fc.assert(
      fc.property(fc.uniqueArray(spec, { selector: (s) => `${s.modifier}${s.path}`, maxLength: 8 }), fc.array(path, { minLength: 1, maxLength: 10 }), (specs, uris) => {
        const all = specs.map((s) =>
          location(s.modifier, s.path, s.upstream, s.slow ? { proxy: { ...proxyTo(s.upstream), tuning: { readTimeout: '300s' } } } : {}),
        );
        const marked = markShadowedLocations(all);
        const kept = marked.filter((l) => !l.servedBy);
        for (const l of marked) {
          if (l.servedBy) expect(kept.map((k) => (k.modifier ? `${k.modifier} ${k.path}` : k.path))).toContain(l.servedBy);
        }
        for (const uri of uris) {
          const before = choose(all, uri);
          const after = choose(kept, uri);
          expect(after?.proxy).toEqual(before?.proxy);
        }
      }),
      { numRuns: 2000 },
    );
  });
});
