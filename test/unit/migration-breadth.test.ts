import { describe, expect, it } from 'vitest';
import type { Diagnostic } from '../../src/model/diagnostics.js';
import type { Location, NginxConfig } from '../../src/model/nginx.js';
import type { SourceObject } from '../../src/sources/snapshot.js';
import type { TranslateOptions } from '../../src/translate/options.js';
import { parseIngressAnnotations } from '../../src/translate/ingress/annotations/index.js';
import { translate } from '../../src/translate/translate.js';
import { object, referenceGrant, service } from '../support/gateway.js';
import { testTranslateOptions } from '../support/options.js';

/**
 * Decisions of the migration-breadth annotations (mirroring, ...): what is accepted, what reaches the
 * model, and what a tenant may not point nginx at.
 */

function ingress(name: string, host: string, annotations: Record<string, string>, namespace = 'web'): SourceObject {
  const base = object('networking.k8s.io/v1', 'Ingress', namespace, name, {
    spec: { ingressClassName: 'nginx', rules: [{ host, http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'app', port: { number: 80 } } } }] } }] },
  });
  return { ...base, metadata: { ...base.metadata, annotations: Object.fromEntries(Object.entries(annotations).map(([k, v]) => [`nginx.ingress.kubernetes.io/${k}`, v])) } };
}

const services = [service('web', 'app', '10.96.0.10', [{ port: 80 }]), service('web', 'shadow', '10.96.0.20', [{ port: 8080 }]), service('other', 'shadow', '10.96.0.30', [{ port: 8080 }])];

function run(objects: readonly SourceObject[], extra: Partial<TranslateOptions> = {}) {
  return translate({ objects }, { ...testTranslateOptions(), ...extra });
}

function locations(model: NginxConfig, host: string): readonly Location[] {
  return model.http.virtualHosts.find((h) => h.serverName === host)?.locations ?? [];
}

function errors(diagnostics: readonly Diagnostic[]): string[] {
  return diagnostics.filter((d) => d.severity === 'error').map((d) => `${d.code} ${d.resource?.namespace}/${d.resource?.name}`);
}

describe('mirror-target: parsing', () => {
  const target = (value: string) => parseIngressAnnotations({ 'nginx.ingress.kubernetes.io/mirror-target': value });

  it.each([
    ['https://mirror.example.test$request_uri', 'https://mirror.example.test$request_uri'],
    ['http://10.1.2.3:8080/copy$request_uri', 'http://10.1.2.3:8080/copy$request_uri'],
    ['http://mirror.example.test/copy?$args', 'http://mirror.example.test/copy?$args'],
  ])('accepts %s', (value, url) => {
    const parsed = target(value);
    expect(parsed.issues).toEqual([expect.objectContaining({ code: 'annotation-differs' })]);
    expect(parsed.value.mirror.target?.url).toBe(url);
  });

  it.each([
    ['a host the client chooses', 'http://$host/copy'],
    ['a variable that extends the host', 'http://mirror.example.test$args'],
    ['a variable nginx would expand to anything', 'http://mirror.example.test/$http_x'],
    ['nginx syntax', 'http://mirror.example.test/;return 200'],
    ['another scheme', 'ftp://mirror.example.test/'],
    ['user info', 'http://user@mirror.example.test/'],
  ])('rejects %s, without leaving the Ingress out', (_, value) => {
    const parsed = target(value);
    expect(parsed.value.mirror.target).toBeUndefined();
    expect(parsed.issues).toEqual([expect.objectContaining({ code: 'annotation-invalid', leavesOut: false })]);
  });

  it('reads mirror-request-body on/off and mirror-host as ingress-nginx names them', () => {
    const parsed = parseIngressAnnotations({
      'nginx.ingress.kubernetes.io/mirror-request-body': 'off',
      'nginx.ingress.kubernetes.io/mirror-host': 'Shadow.Example.Test:8080',
    });
    expect(parsed.value.mirror).toEqual({ target: undefined, requestBody: false, host: 'shadow.example.test:8080' });
    expect(parseIngressAnnotations({ 'nginx.ingress.kubernetes.io/mirror-request-body': 'maybe' }).value.mirror.requestBody).toBe(true);
  });
});

describe('mirror-target: where the copy may go', () => {
  it('reaches a Service of the input at its upstream, with the Host of its DNS name', () => {
    const { model, diagnostics } = run([...services, ingress('shop', 'a.example.test', { 'mirror-target': 'http://shadow.web.svc.cluster.local:8080$request_uri' })]);
    expect(errors(diagnostics)).toEqual([]);
    const served = locations(model, 'a.example.test');
    const endpoint = served.find((l) => l.mirrorEndpoint)!;
    const upstream = endpoint.mirrorEndpoint!.upstream!;
    expect(upstream).toMatch(/_web_shadow_8080$/);
    expect(endpoint.mirrorEndpoint).toEqual({ pass: `http://${upstream}$request_uri`, host: 'shadow.web.svc.cluster.local', upstream, requestBody: true });
    expect(served.find((l) => l.path === '/')?.behaviour?.mirror).toEqual({ endpoint: endpoint.path, requestBody: true });
    expect(model.http.upstreams.map((u) => u.name)).toContain(upstream);
  });

  it.each([
    ['a metadata address', 'http://169.254.169.254/latest', {}],
    ['loopback', 'http://127.0.0.1:9000/', {}],
    ['another namespace\'s Service without a ReferenceGrant', 'http://shadow.other.svc.cluster.local:8080/', {}],
    ['a name that is no Service of the input, without --resolver', 'http://mirror.example.com/', {}],
    ['a cluster name that is no Service', 'http://10-0-0-1.web.pod.cluster.local/', { resolvers: ['10.96.0.53'] }],
  ])('refuses %s: the Ingress is served without the mirror', (_, url, extra) => {
    const { model, diagnostics } = run([...services, ingress('shop', 'a.example.test', { 'mirror-target': url })], extra);
    expect(errors(diagnostics)).toEqual(['mirror-target-unreachable web/shop']);
    const served = locations(model, 'a.example.test');
    expect(served.find((l) => l.path === '/')?.proxy).toBeDefined();
    expect(served.some((l) => l.mirrorEndpoint !== undefined || l.behaviour?.mirror !== undefined)).toBe(false);
  });

  it('reaches another namespace\'s Service when a ReferenceGrant there allows it, and a name per request with --resolver', () => {
    const grant = referenceGrant('other', 'from-web', [{ group: 'networking.k8s.io', kind: 'Ingress', namespace: 'web' }], [{ group: '', kind: 'Service' }]);
    const granted = run([...services, grant, ingress('shop', 'a.example.test', { 'mirror-target': 'http://shadow.other.svc.cluster.local:8080/' })]);
    expect(errors(granted.diagnostics)).toEqual([]);
    const byName = run([...services, ingress('shop', 'a.example.test', { 'mirror-target': 'https://mirror.example.com$request_uri' })], { resolvers: ['10.96.0.53'] });
    expect(locations(byName.model, 'a.example.test').find((l) => l.mirrorEndpoint)?.mirrorEndpoint).toEqual({
      pass: '$i2n_mirror_target',
      resolve: 'https://mirror.example.com$request_uri',
      host: 'mirror.example.com',
      sslServerName: 'mirror.example.com',
      requestBody: true,
    });
  });
});

describe('auth-* extras', () => {
  const parse = (annotations: Record<string, string>) => parseIngressAnnotations(Object.fromEntries(Object.entries(annotations).map(([k, v]) => [`nginx.ingress.kubernetes.io/${k}`, v])));

  it('reads the cache key, durations, redirect header, sign-in parameter and cookie switch', () => {
    const parsed = parse({
      'auth-cache-key': '$remote_user$http_authorization-${cookie_session}',
      'auth-cache-duration': '200 202 10m, 401   30s',
      'auth-request-redirect': 'https://shop.example.test/back?x=1',
      'auth-signin-redirect-param': 'return_to',
      'auth-always-set-cookie': 'true',
    });
    expect(parsed.value.externalAuth).toMatchObject({
      cacheKey: '$remote_user$http_authorization-${cookie_session}',
      cacheDuration: ['200 202 10m', '401 30s'],
      requestRedirect: 'https://shop.example.test/back?x=1',
      signinRedirectParam: 'return_to',
      alwaysSetCookie: true,
    });
    expect(parse({}).value.externalAuth).toMatchObject({ cacheDuration: ['200 202 401 5m'], signinRedirectParam: 'rd', alwaysSetCookie: false, enableGlobalAuth: true });
  });

  it.each([
    ['auth-cache-key', '$request_body'],
    ['auth-cache-key', '$http_x"; deny all'],
    ['auth-cache-key', 'a b'],
    ['auth-cache-duration', '5m 200'],
    ['auth-cache-duration', '200 5m; proxy_pass x'],
    ['auth-request-redirect', '$scheme://x'],
    ['auth-signin-redirect-param', 'rd&x='],
  ])('rejects %s %j', (name, value) => {
    const issues = parse({ 'auth-url': 'http://10.1.2.3/check', [name]: value }).issues.filter((issue) => issue.code === 'annotation-invalid');
    expect(issues.map((issue) => issue.annotation)).toEqual([`nginx.ingress.kubernetes.io/${name}`]);
  });

  it('keys cached answers by the Ingress and the host as well, in one zone', () => {
    const { model } = run([...services, ingress('shop', 'a.example.test', { 'auth-url': 'http://shadow.web.svc.cluster.local:8080/auth', 'auth-cache-key': '$http_authorization' })]);
    const endpoint = locations(model, 'a.example.test').find((l) => l.authEndpoint)?.authEndpoint;
    expect(endpoint?.cache).toEqual({ zone: 'i2n_auth_cache', key: 'web/shop:$host:$http_authorization', valid: ['200 202 401 5m'] });
    expect(model.http.extensions.cacheZones.map((zone) => zone.name)).toEqual(['i2n_auth_cache']);
  });
});

describe('global-auth-url and the cross-namespace auth-url flag', () => {
  const controller = (data: Record<string, string>) => object('v1', 'ConfigMap', 'ingress-nginx', 'controller', { data });
  const withController: Partial<TranslateOptions> = { configMap: 'ingress-nginx/controller' };

  it('guards an Ingress without auth-url unless it opts out, with another namespace\'s Service and no ReferenceGrant', () => {
    const objects = [
      ...services,
      controller({ 'global-auth-url': 'http://shadow.other.svc.cluster.local:8080/check', 'global-auth-signin': 'https://login.example.test/start', 'global-auth-signin-redirect-param': 'back' }),
      ingress('guarded', 'a.example.test', {}),
      ingress('open', 'b.example.test', { 'enable-global-auth': 'false' }),
    ];
    const { model, diagnostics } = run(objects, withController);
    expect(errors(diagnostics)).toEqual([]);
    const guarded = locations(model, 'a.example.test').find((l) => l.path === '/')?.behaviour?.externalAuth;
    expect(guarded?.signin).toBe('https://login.example.test/start?back=$scheme://$host$i2n_request_port$i2n_return_uri');
    expect(locations(model, 'a.example.test').find((l) => l.authEndpoint)?.comment).toBe('global-auth-url of Ingress web/guarded');
    expect(locations(model, 'b.example.test').find((l) => l.path === '/')?.behaviour?.externalAuth).toBeUndefined();
  });

  it('lets auth-url name another namespace\'s Service only with a ReferenceGrant, or with --allow-cross-namespace-auth-url', () => {
    const objects = [...services, ingress('sso', 'a.example.test', { 'auth-url': 'http://shadow.other.svc.cluster.local:8080/check' })];
    expect(errors(run(objects).diagnostics)).toEqual(['auth-url-unreachable web/sso', 'ingress-skipped web/sso']);
    const allowed = run(objects, { allowCrossNamespaceAuthUrl: true });
    expect(errors(allowed.diagnostics)).toEqual([]);
    expect(locations(allowed.model, 'a.example.test').find((l) => l.authEndpoint)?.authEndpoint?.upstream).toMatch(/_other_shadow_8080$/);
  });
});

describe('ssl-ciphers and ssl-prefer-server-ciphers', () => {
  const tlsIngress = (name: string, created: string, annotations: Record<string, string>, path = '/'): SourceObject => {
    const base = object(
      'networking.k8s.io/v1',
      'Ingress',
      'web',
      name,
      {
        spec: {
          ingressClassName: 'nginx',
          tls: [{ hosts: ['a.example.test'] }],
          rules: [{ host: 'a.example.test', http: { paths: [{ path, pathType: 'Prefix', backend: { service: { name: 'app', port: { number: 80 } } } }] } }],
        },
      },
      { creationTimestamp: created },
    );
    return { ...base, metadata: { ...base.metadata, annotations: Object.fromEntries(Object.entries(annotations).map(([k, v]) => [`nginx.ingress.kubernetes.io/${k}`, v])) } };
  };

  it('the oldest Ingress on the host decides, with its own SSL context; a newer one asking otherwise is told', () => {
    const { model, diagnostics } = run([
      ...services,
      tlsIngress('newer', '2025-06-01T00:00:00Z', { 'ssl-ciphers': 'HIGH' }, '/b'),
      tlsIngress('older', '2025-01-01T00:00:00Z', { 'ssl-ciphers': 'ECDHE-ECDSA-AES128-GCM-SHA256', 'ssl-prefer-server-ciphers': 'false' }, '/a'),
    ]);
    const host = model.http.virtualHosts.find((h) => h.serverName === 'a.example.test' && h.tls !== undefined);
    expect(host).toMatchObject({ sslCiphers: 'ECDHE-ECDSA-AES128-GCM-SHA256', sslPreferServerCiphers: 'off' });
    expect(host?.sharesDefaultTls).toBeUndefined();
    expect(diagnostics.filter((d) => d.code === 'server-tls-not-used').map((d) => d.resource?.name)).toEqual(['newer']);
  });

  it('rejects a cipher list OpenSSL would not load, keeping the host on the ConfigMap\'s', () => {
    const { model, diagnostics } = run([...services, tlsIngress('bogus', '2025-01-01T00:00:00Z', { 'ssl-ciphers': 'BOGUS' })]);
    expect(errors(diagnostics)).toEqual(['annotation-invalid web/bogus']);
    expect(model.http.virtualHosts.find((h) => h.tls !== undefined)?.sslCiphers).toBeUndefined();
  });
});
