import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import type { Location, Proxy } from '../../model/nginx.js';
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
      // nginx answers /docs/v1 with a 301 to /docs/v1/ while this location is there: kept.
      '/docs/v1/': null,
      '/api/': null,
      // /api/ would take these: kept.
      '/api/v2/': null,
      '=/api/v2': null,
      '/api/v2/old/': null,
    });
  });

  it("keeps nginx's 301 from a path to the path with a slash, and what it would expose", () => {
    expect(
      servedBy([
        location('', '/', 'web'),
        // Each alone: without /a/ the 301 for /a would become a proxied request.
        location('', '/a/', 'web'),
        // A pair: both go, and /b is proxied by / as it was by = /b.
        location('=', '/b', 'web'),
        location('', '/b/', 'web'),
        // /c/ stays (another backend), so = /c must too: without it /c would get the 301.
        location('=', '/c', 'web'),
        location('', '/c/', 'api'),
      ]),
    ).toEqual({ '/': null, '/a/': null, '=/b': '/', '/b/': '/', '=/c': null, '/c/': null });
    // Not proxied: nginx has no 301 to give.
    const unresolved = { proxy: undefined, returnStatus: 503 as const };
    expect(servedBy([location('', '/', 'web', unresolved), location('', '/d/', 'web', unresolved)])).toEqual({ '/': null, '/d/': '/' });
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
        location('', '/other-comment-and-origin', 'web', { comment: 'another Ingress' }),
      ]),
    ).toEqual({ '/': null, '/slow/': null, '/redirected/': null, '/gone/': null, '/other-comment-and-origin': '/' });
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
 * nginx's choice among `=` and prefix locations (no regexes): an exact match; else a prefix location of
 * exactly the path; else, when a proxying location is named the path plus `/`, a 301 to it
 * (`auto_redirect`); else the longest prefix. The property: for every request path, the locations left in
 * the config answer as the full set would have, and every left-out location names one that is left in.
 */
describe('markShadowedLocations, property', () => {
  const choose = (locations: readonly Location[], uri: string): Location | 'redirect' | undefined =>
    locations.find((l) => l.modifier === '=' && l.path === uri) ??
    locations.find((l) => l.modifier !== '=' && l.path === uri) ??
    (locations.some((l) => l.path === `${uri}/` && l.proxy) ? 'redirect' : undefined) ??
    locations.filter((l) => l.modifier !== '=' && uri.startsWith(l.path)).sort((a, b) => b.path.length - a.path.length)[0];
  const answer = (chosen: Location | 'redirect' | undefined) => (chosen === 'redirect' ? chosen : chosen?.proxy);
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
          expect(answer(choose(kept, uri))).toEqual(answer(choose(all, uri)));
        }
      }),
      { numRuns: 2000 },
    );
  });
});
