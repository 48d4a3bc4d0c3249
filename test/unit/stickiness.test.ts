import { describe, expect, it } from 'vitest';
import type { Diagnostic } from '../../src/model/diagnostics.js';
import type { HttpUpstream, Location, NginxConfig } from '../../src/model/nginx.js';
import type { SourceObject } from '../../src/sources/snapshot.js';
import { hashKeyVariables } from '../../src/translate/ingress/annotations/load-balancing.js';
import { parseIngressAnnotations } from '../../src/translate/ingress/annotations/index.js';
import { translate } from '../../src/translate/translate.js';
import { object, service } from '../support/gateway.js';
import { testTranslateOptions } from '../support/options.js';

/** Cookie affinity, upstream-hash-by and load-balance: parsing, precedence, and how upstreams are keyed. */

const prefix = 'nginx.ingress.kubernetes.io/';

function ingress(name: string, annotations: Record<string, string>, path = '/', extra: { canary?: boolean; regex?: boolean } = {}): SourceObject {
  const base = object('networking.k8s.io/v1', 'Ingress', 'shop', name, {
    spec: {
      ingressClassName: 'nginx',
      rules: [{ host: 'shop.example.test', http: { paths: [{ path, pathType: extra.regex ? 'ImplementationSpecific' : 'Prefix', backend: { service: { name: extra.canary ? 'web-v2' : 'web', port: { number: 80 } } } }] } }],
    },
  });
  const all = { ...annotations, ...(extra.canary && { canary: 'true' }), ...(extra.regex && { 'use-regex': 'true' }) };
  return { ...base, metadata: { ...base.metadata, annotations: Object.fromEntries(Object.entries(all).map(([k, v]) => [prefix + k, v])) } };
}

function endpoints(serviceName: string, addresses: readonly string[]): SourceObject {
  return object('discovery.k8s.io/v1', 'EndpointSlice', 'shop', `${serviceName}-x`, {
    addressType: 'IPv4',
    ports: [{ port: 8080 }],
    endpoints: addresses.map((address) => ({ addresses: [address] })),
  }, { labels: { 'kubernetes.io/service-name': serviceName } });
}

const cluster = [
  service('shop', 'web', '10.96.0.10', [{ port: 80 }]),
  service('shop', 'web-v2', '10.96.0.11', [{ port: 80 }]),
  endpoints('web', ['10.1.0.1', '10.1.0.2', '10.1.0.3']),
  endpoints('web-v2', ['10.1.1.1', '10.1.1.2']),
];

function run(objects: readonly SourceObject[], upstreams: 'endpoints' | 'service' = 'endpoints') {
  return translate({ objects: [...cluster, ...objects] }, testTranslateOptions({ upstreams }));
}

function location(model: NginxConfig, path: string): Location {
  const found = model.http.virtualHosts.flatMap((h) => h.locations).find((l) => l.path === path);
  if (!found) throw new Error(`no location ${path}`);
  return found;
}

function upstreamOf(model: NginxConfig, path: string): HttpUpstream {
  const name = location(model, path).proxy?.upstream;
  const found = model.http.upstreams.find((u) => u.name === name);
  if (!found) throw new Error(`no upstream for ${path}`);
  return found;
}

function codes(diagnostics: readonly Diagnostic[]): string[] {
  return diagnostics.filter((d) => d.severity !== 'info').map((d) => `${d.severity} ${d.code}`);
}

/** The Set-Cookie value a location sends to a client without the cookie. */
function setCookie(model: NginxConfig, path: string): string {
  const variable = location(model, path).behaviour?.stickyCookie?.variable;
  const map = model.http.extensions.maps.find((m) => m.variable === variable);
  return map?.entries.find((e) => e.key === '""')?.value ?? '';
}

describe('upstream-hash-by: the safe grammar', () => {
  it.each([
    ['$request_uri', ['request_uri']],
    ['$binary_remote_addr', ['binary_remote_addr']],
    ['${request_uri}-text-value', ['request_uri']],
    ['$request_uri$host', ['request_uri', 'host']],
    ['$http_x_user', ['http_x_user']],
    ['$arg_x', ['arg_x']],
    ['$cookie_session_id', ['cookie_session_id']],
    // nginx reads the name up to the first character that cannot be in one, as this does: `-user` is text.
    ['$http_x-user', ['http_x']],
  ])('accepts %s', (value, variables) => {
    expect(hashKeyVariables(value)).toEqual({ ok: true, variables });
  });

  it.each([
    ['$request_uri" consistent; server 10.0.0.1', 'character'],
    ['$request_uri;', 'character'],
    ['${request_uri', 'variable'],
    ['$', 'variable'],
    ['$i2n_best_host', 'variable'],
    ['$upstream_addr', 'variable'],
    // The docs promise request variables only (issue 37): not the machine's name, not a regex capture.
    ['$hostname', 'variable'],
    ['$request_uri$1', 'variable'],
    ['${1}', 'variable'],
    ['$request_urix', 'variable'],
    ['plain-text', 'no variable'],
    ['{$host}', 'character'],
    ['$host\n', 'character'],
    ['', 'empty'],
    ['$host'.repeat(60), 'longer'],
  ])('refuses %j', (value, problem) => {
    const checked = hashKeyVariables(value);
    expect(checked.ok).toBe(false);
    expect(checked.ok ? '' : checked.problem).toContain(problem);
  });
});

describe('affinity annotations', () => {
  it('reads ingress-nginx names and defaults', () => {
    const { value, issues } = parseIngressAnnotations({ [`${prefix}affinity`]: 'cookie' });
    expect(issues.filter((i) => i.severity !== 'info')).toEqual([]);
    expect(value.affinity).toEqual({
      type: 'cookie',
      mode: 'balanced',
      canaryBehavior: 'sticky',
      cookieName: 'INGRESSCOOKIE',
      cookiePath: undefined,
      cookieDomain: undefined,
      cookieExpires: undefined,
      cookieMaxAge: undefined,
      cookieSecure: false,
      cookieSameSite: undefined,
      conditionalSameSiteNone: false,
      changeOnFailure: false,
    });
  });

  it.each([
    ['affinity', 'Cookie'],
    ['affinity', 'ip'],
    ['affinity-mode', 'sticky'],
    ['session-cookie-name', 'a b'],
    ['session-cookie-name', 'a;b'],
    ['session-cookie-name', 'x$y'],
    ['session-cookie-path', 'cart'],
    ['session-cookie-path', '/a;b'],
    ['session-cookie-path', '/a"b'],
    ['session-cookie-domain', 'exa mple.com'],
    ['session-cookie-max-age', '1h'],
    ['session-cookie-expires', '0abc'],
    ['session-cookie-samesite', 'None; Secure'],
  ])('rejects %s: %j', (name, raw) => {
    const { issues } = parseIngressAnnotations({ [`${prefix}affinity`]: 'cookie', [prefix + name]: raw });
    expect(issues.filter((i) => i.code === 'annotation-invalid').map((i) => i.annotation)).toEqual([prefix + name]);
  });
});

describe('cookie affinity', () => {
  it('hashes over the endpoints by the cookie, else by the request id that the Set-Cookie hands out', () => {
    const { model, diagnostics } = run([ingress('cart', { affinity: 'cookie' }, '/cart')]);
    expect(codes(diagnostics)).toEqual([]);
    const upstream = upstreamOf(model, '/cart/');
    expect(upstream.hashKey).toMatch(/^\$i2n_sticky_[0-9a-f]{12}$/);
    expect(upstream.servers.map((s) => s.address)).toEqual(['10.1.0.1:8080', '10.1.0.2:8080', '10.1.0.3:8080']);
    const key = model.http.extensions.maps.find((m) => `$${m.variable}` === upstream.hashKey);
    expect(key?.entries).toEqual([{ key: '""', value: '$request_id' }]);
    expect(setCookie(model, '/cart/')).toBe('"INGRESSCOOKIE=$request_id; Path=/cart${i2n_sticky_secure}; HttpOnly"');
  });

  it('writes every attribute as ingress-nginx orders them; expires becomes Max-Age when max-age is absent', () => {
    const all = {
      affinity: 'cookie',
      'session-cookie-name': 'route',
      'session-cookie-path': '/app',
      'session-cookie-domain': '.Example.test',
      'session-cookie-max-age': '3600',
      'session-cookie-secure': 'true',
      'session-cookie-samesite': 'strict',
    };
    const { model } = run([ingress('a', all, '/a'), ingress('b', { affinity: 'cookie', 'session-cookie-expires': '60', 'session-cookie-samesite': 'None', 'session-cookie-conditional-samesite-none': 'true' }, '/b')]);
    expect(setCookie(model, '/a/')).toBe('"route=$request_id; Max-Age=3600; Domain=.example.test; Path=/app; Secure; HttpOnly; SameSite=Strict"');
    expect(setCookie(model, '/b/')).toBe('"INGRESSCOOKIE=$request_id; Max-Age=60; Path=/b${i2n_sticky_secure}; HttpOnly${i2n_sticky_samesite_none}"');
    expect(model.http.extensions.maps.find((m) => m.variable === 'i2n_sticky_samesite_none')?.defaultValue).toBe('"; SameSite=None"');
  });

  it('a regex path gives Path=/ with a warning unless session-cookie-path is set', () => {
    const { model, diagnostics } = run([ingress('r', { affinity: 'cookie' }, '/r(/|$)(.*)', { regex: true })]);
    expect(codes(diagnostics)).toEqual(['warning session-cookie-path-missing']);
    const [only] = model.http.virtualHosts.flatMap((h) => h.locations).filter((l) => l.behaviour?.stickyCookie);
    const map = model.http.extensions.maps.find((m) => m.variable === only?.behaviour?.stickyCookie?.variable);
    expect(map?.entries[0]?.value).toContain('; Path=/$');
  });

  it('with --upstreams service nothing is rendered, and a warning says stickiness cannot hold', () => {
    const { model, diagnostics } = run([ingress('cart', { affinity: 'cookie' }, '/cart'), ingress('cat', { 'upstream-hash-by': '$arg_x' }, '/cat')], 'service');
    expect(codes(diagnostics)).toEqual(['warning balancing-needs-endpoints', 'warning balancing-needs-endpoints']);
    expect(diagnostics.find((d) => d.code === 'balancing-needs-endpoints')?.message).toContain('stickiness cannot hold');
    expect(location(model, '/cart/').behaviour?.stickyCookie).toBeUndefined();
    expect(model.http.upstreams.every((u) => u.hashKey === undefined)).toBe(true);
  });
});

describe('precedence and upstream keys', () => {
  it('affinity beats upstream-hash-by beats load-balance, with a warning naming what has no effect', () => {
    const { model, diagnostics } = run([
      ingress('all', { affinity: 'cookie', 'upstream-hash-by': '$request_uri', 'load-balance': 'least_conn' }, '/all'),
      ingress('two', { 'upstream-hash-by': '$request_uri', 'load-balance': 'least_conn' }, '/two'),
      ingress('one', { 'load-balance': 'least_conn' }, '/one'),
      ingress('ewma', { 'load-balance': 'ewma' }, '/ewma'),
    ]);
    expect(diagnostics.filter((d) => d.code === 'balancing-overridden').map((d) => `${d.resource?.name}: ${d.message}`)).toEqual([
      'all: upstream-hash-by and load-balance have no effect: affinity decides how this Ingress\'s backends are balanced, as in ingress-nginx',
      'two: load-balance has no effect: upstream-hash-by decides how this Ingress\'s backends are balanced, as in ingress-nginx',
    ]);
    expect(upstreamOf(model, '/all/').hashKey).toMatch(/^\$i2n_sticky_/);
    expect(upstreamOf(model, '/two/')).toMatchObject({ hashKey: '$request_uri' });
    expect(upstreamOf(model, '/one/')).toMatchObject({ leastConn: true });
    expect(upstreamOf(model, '/ewma/')).not.toHaveProperty('leastConn');
    expect(upstreamOf(model, '/ewma/')).not.toHaveProperty('hashKey');
  });

  it('Ingresses of one Service that balance differently get upstreams of their own; alike ones share', () => {
    const { model } = run([
      ingress('plain', {}, '/plain'),
      ingress('sticky-a', { affinity: 'cookie' }, '/a'),
      ingress('sticky-b', { affinity: 'cookie', 'session-cookie-path': '/' }, '/b'),
      ingress('other-cookie', { affinity: 'cookie', 'session-cookie-name': 'other' }, '/c'),
      ingress('hash', { 'upstream-hash-by': '$arg_x' }, '/d'),
      ingress('hash-too', { 'upstream-hash-by': '$arg_x' }, '/e'),
      ingress('hash-other', { 'upstream-hash-by': '$arg_y' }, '/f'),
    ]);
    const name = (path: string) => upstreamOf(model, path).name;
    expect(upstreamOf(model, '/plain/')).not.toHaveProperty('hashKey');
    expect(name('/a/')).toBe(name('/b/'));
    expect(setCookie(model, '/a/')).not.toBe(setCookie(model, '/b/'));
    expect(new Set(['/plain/', '/a/', '/c/', '/d/', '/f/'].map(name)).size).toBe(5);
    expect(name('/d/')).toBe(name('/e/'));
    expect(location(model, '/plain/').behaviour?.stickyCookie).toBeUndefined();
    expect(model.http.upstreams).toHaveLength(5);
  });
});

describe('canaries of a sticky main', () => {
  const main = ingress('main', { affinity: 'cookie' }, '/');
  it('sticky (the default): the weight is split by the affinity key, and the canary is balanced the same way', () => {
    const { model } = run([main, ingress('canary', { 'canary-weight': '20' }, '/', { canary: true })]);
    const split = model.http.extensions.splits[0];
    expect(split?.source).toBe(upstreamOf(model, '/').hashKey);
    const canary = model.http.upstreams.find((u) => u.name === location(model, '/').proxy?.canary?.upstream);
    expect(canary?.hashKey).toBe(split?.source);
    expect(canary?.servers.map((s) => s.address)).toEqual(['10.1.1.1:8080', '10.1.1.2:8080']);
  });

  it('legacy: a random split per request, and a round-robin canary', () => {
    const { model, diagnostics } = run([main, ingress('canary', { 'canary-weight': '20', 'affinity-canary-behavior': 'legacy' }, '/', { canary: true })]);
    expect(codes(diagnostics)).toEqual([]);
    expect(model.http.extensions.splits[0]?.source).toBe('${request_id}');
    const canary = model.http.upstreams.find((u) => u.name === location(model, '/').proxy?.canary?.upstream);
    expect(canary).toBeDefined();
    expect(canary).not.toHaveProperty('hashKey');
  });
});
