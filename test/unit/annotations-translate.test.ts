import { describe, expect, it } from 'vitest';
import type { Diagnostic } from '../../src/model/diagnostics.js';
import type { Location, NginxConfig } from '../../src/model/nginx.js';
import type { SourceObject } from '../../src/sources/snapshot.js';
import type { TranslateOptions } from '../../src/translate/options.js';
import { bundledDefaultCertificate } from '../../src/translate/secrets/default-certificate.js';
import { translate } from '../../src/translate/translate.js';
import { gateway, object, passthrough, referenceGrant, service, tlsRoute } from '../support/gateway.js';
import { testTranslateOptions } from '../support/options.js';
import { upstreamName } from '../../src/translate/upstream-names.js';

/**
 * Decisions of the annotation translation that real traffic cannot show on one machine, or shows only
 * slowly: conflicts between Ingresses, what fails closed, and what a canary may and may not do.
 */

const options: TranslateOptions = testTranslateOptions();

interface IngressOptions {
  readonly namespace?: string;
  readonly host: string;
  readonly path?: string;
  readonly service?: string;
  readonly created?: string;
  readonly annotations?: Record<string, string>;
  readonly tls?: boolean;
}

function ingress(name: string, spec: IngressOptions): SourceObject {
  const namespace = spec.namespace ?? 'web';
  const base = object(
    'networking.k8s.io/v1',
    'Ingress',
    namespace,
    name,
    {
      spec: {
        ingressClassName: 'nginx',
        ...(spec.tls && { tls: [{ hosts: [spec.host] }] }),
        rules: [
          {
            host: spec.host,
            http: { paths: [{ path: spec.path ?? '/', pathType: 'Prefix', backend: { service: { name: spec.service ?? 'app', port: { number: 80 } } } }] },
          },
        ],
      },
    },
    { creationTimestamp: spec.created ?? '2025-01-01T00:00:00Z' },
  );
  const annotations = Object.fromEntries(Object.entries(spec.annotations ?? {}).map(([k, v]) => [`nginx.ingress.kubernetes.io/${k}`, v]));
  return { ...base, metadata: { ...base.metadata, annotations } };
}

const services = (namespace = 'web') => [
  service(namespace, 'app', '10.96.0.10', [{ port: 80 }, { port: 443 }]),
  service(namespace, 'app-v2', '10.96.0.11', [{ port: 80 }, { port: 443 }]),
];

function run(objects: readonly SourceObject[], extra: Partial<TranslateOptions> = {}) {
  return translate({ objects }, { ...options, ...extra });
}

function locationOf(model: NginxConfig, host: string, path = '/'): Location | undefined {
  return model.http.virtualHosts.find((h) => h.serverName === host)?.locations.find((l) => l.path === path);
}

function codes(diagnostics: readonly Diagnostic[], severity: Diagnostic['severity'] = 'error'): string[] {
  return diagnostics.filter((d) => d.severity === severity).map((d) => `${d.code} ${d.resource?.namespace}/${d.resource?.name}`);
}

describe('auth-tls: one client CA per host', () => {
  it('the oldest Ingress decides; a newer one naming another CA answers 503 on the host, with an error', () => {
    const objects = [
      ...services(),
      caSecretReal('ca-one'),
      caSecretReal('ca-two'),
      ingress('first', { host: 'app.example.test', path: '/a', created: '2024-01-01T00:00:00Z', annotations: { 'auth-tls-secret': 'ca-one' } }),
      ingress('second', { host: 'app.example.test', path: '/b', annotations: { 'auth-tls-secret': 'ca-two' } }),
      ingress('plain', { host: 'app.example.test', path: '/c' }),
    ];
    const { model, diagnostics } = run(objects);
    const host = model.http.virtualHosts.find((h) => h.serverName === 'app.example.test')!;
    expect(host.clientCertificate).toEqual({ caFile: 'ca/web_ca-one.crt', verify: 'optional_no_ca', depth: 1 });
    expect(locationOf(model, 'app.example.test', '/a/')?.behaviour?.clientCertificate).toMatchObject({ requireCertificate: true });
    expect(locationOf(model, 'app.example.test', '/b/')).toMatchObject({ returnStatus: 503 });
    expect(locationOf(model, 'app.example.test', '/c/')?.behaviour?.clientCertificate).toBeUndefined();
    expect(codes(diagnostics)).toEqual(['auth-tls-conflict web/second']);
  });

  it('fails closed: a missing CA Secret, or auth-tls-* without a secret, leaves the Ingress out', () => {
    const { model, diagnostics } = run([
      ...services(),
      ingress('missing', { host: 'a.example.test', annotations: { 'auth-tls-secret': 'nowhere' } }),
      ingress('no-secret', { host: 'b.example.test', annotations: { 'auth-tls-verify-client': 'on' } }),
    ]);
    expect(model.http.virtualHosts).toEqual([]);
    expect(codes(diagnostics).sort()).toEqual([
      'auth-tls-secret-invalid web/missing',
      'auth-tls-without-secret web/no-secret',
      'ingress-skipped web/missing',
      'ingress-skipped web/no-secret',
    ]);
  });
});

describe('external auth: nginx must reach the service without DNS at load time', () => {
  it.each([
    ['a name that is no Service of the input', 'http://auth.example.com/check', 'auth-url-unreachable'],
    ['$host', 'https://$host/oauth2/auth', 'auth-url-unreachable'],
    ['a metadata address', 'http://169.254.169.254/latest', 'auth-url-unreachable'],
    ['a Service that is not in the input', 'http://nothere.web.svc.cluster.local/auth', 'auth-url-unreachable'],
  ])('refuses %s without --resolver, leaving the Ingress out', (_, url, code) => {
    const { model, diagnostics } = run([...services(), ingress('sso', { host: 'a.example.test', annotations: { 'auth-url': url } })]);
    expect(model.http.virtualHosts).toEqual([]);
    expect(codes(diagnostics)).toContain(`${code} web/sso`);
  });

  it('resolves per request with --resolver, and never reaches the node or metadata addresses', () => {
    const resolved = run([...services(), ingress('sso', { host: 'a.example.test', annotations: { 'auth-url': 'https://$host/oauth2/auth' } })], { resolvers: ['10.96.0.53'] });
    const endpoint = resolved.model.http.virtualHosts[0]!.locations.find((l) => l.authEndpoint)!.authEndpoint!;
    // $host only through a map of the names the Ingress serves: the client's Host never picks the target.
    const served = endpoint.servedHost!;
    expect(endpoint).toMatchObject({ pass: '$i2n_auth_target', resolve: `https://$${served}/oauth2/auth`, host: `$${served}`, sslServerName: `$${served}` });
    expect(resolved.model.http.extensions.maps.find((m) => m.variable === served)).toMatchObject({
      source: '$host',
      hostnames: true,
      entries: [{ key: 'a.example.test', value: '$host' }],
      defaultValue: '""',
    });
    const metadata = run([...services(), ingress('sso', { host: 'a.example.test', annotations: { 'auth-url': 'http://metadata.google.internal/' } })], { resolvers: ['10.96.0.53'] });
    expect(codes(metadata.diagnostics)).toContain('auth-url-unreachable web/sso');
  });

  it('reaches a Service of the input at its upstream; in another namespace only with a ReferenceGrant there, as any backend', () => {
    const sso = ingress('sso', { host: 'a.example.test', annotations: { 'auth-url': 'http://app.auth.svc.cluster.local/check' } });
    const refused = run([...services('auth'), ...services(), sso]);
    expect(codes(refused.diagnostics)).toContain('auth-url-unreachable web/sso');
    expect(refused.diagnostics.find((d) => d.code === 'auth-url-unreachable')?.message).toContain('no ReferenceGrant in auth allows Ingresses from web');
    const grant = referenceGrant('auth', 'ingresses-from-web', [{ group: 'networking.k8s.io', kind: 'Ingress', namespace: 'web' }], [{ group: '', kind: 'Service', name: 'app' }]);
    const { model } = run([...services('auth'), ...services(), sso, grant]);
    expect(model.http.upstreams.map((u) => u.name)).toContain(upstreamName('auth_app_80'));
  });
});

describe('server-alias and from-to-www-redirect never take a host', () => {
  it('an alias another Ingress claims stays with it, and the alias Ingress is told', () => {
    const { model, diagnostics } = run([
      ...services(),
      ...services('team-b'),
      ingress('owner', { namespace: 'team-b', host: 'b.example.test', created: '2026-01-01T00:00:00Z' }),
      ingress('aliased', { host: 'a.example.test', created: '2024-01-01T00:00:00Z', annotations: { 'server-alias': 'b.example.test, c.example.test', 'from-to-www-redirect': 'true' } }),
      ingress('www-owner', { host: 'www.a.example.test' }),
    ]);
    expect(locationOf(model, 'b.example.test')?.comment).toBe('team-b/owner Prefix /');
    expect(locationOf(model, 'c.example.test')?.comment).toBe('web/aliased Prefix /');
    expect(locationOf(model, 'www.a.example.test')?.comment).toBe('web/www-owner Prefix /');
    expect(codes(diagnostics, 'warning')).toEqual(['host-alias-taken web/aliased', 'host-alias-taken web/aliased']);
  });

  it('a TLSRoute name is not taken either', () => {
    const { model } = run([
      ...services(),
      gateway('infra', 'gw', [passthrough('tls', 443, undefined, { allowedRoutes: { namespaces: { from: 'All' } } })]),
      tlsRoute('web', 'r', { hostnames: ['b.example.test'], backendRefs: [{ name: 'app', port: 443 }] }),
      ingress('aliased', { host: 'a.example.test', annotations: { 'server-alias': 'b.example.test' } }),
    ]);
    expect(model.http.virtualHosts.map((h) => h.serverName)).toEqual(['a.example.test']);
  });
});

describe('canaries', () => {
  const main = (annotations: Record<string, string> = {}) => ingress('main', { host: 'app.example.test', created: '2024-01-01T00:00:00Z', annotations });
  const canary = (name: string, annotations: Record<string, string>, more: Partial<IngressOptions> = {}) =>
    ingress(name, { host: 'app.example.test', service: 'app-v2', annotations: { canary: 'true', ...annotations }, ...more });

  it('never changes the main Ingress TLS: its spec.tls is ignored, with a warning', () => {
    const { model, diagnostics } = run([...services(), main(), canary('c', { 'canary-weight': '10' }, { tls: true })]);
    expect(model.http.virtualHosts[0]!.tls?.certificate).toBe('tls/default.pem');
    expect(model.http.virtualHosts[0]!.hsts).toBe(false);
    expect(diagnostics.find((d) => d.code === 'canary-ignores')?.message).toContain('spec.tls');
  });

  it('the oldest canary of a location is used; another is told', () => {
    const { model, diagnostics } = run([
      ...services(),
      main(),
      canary('older', { 'canary-by-header': 'X-A' }, { created: '2024-06-01T00:00:00Z' }),
      canary('newer', { 'canary-by-header': 'X-B' }, { created: '2025-06-01T00:00:00Z' }),
    ]);
    expect(model.http.extensions.maps.map((m) => m.source)).toEqual(['$http_x_a']);
    expect(codes(diagnostics, 'warning')).toContain('canary-conflict web/newer');
  });

  it('with a verified HTTPS main, the canary gets its own TLS upstream and is verified by its own name', () => {
    const objects = [
      ...services(),
      caSecretReal('trust'),
      main({ 'backend-protocol': 'HTTPS', 'proxy-ssl-verify': 'on', 'proxy-ssl-secret': 'web/trust' }),
      canary('c', { 'canary-weight': '50' }),
    ];
    const { model } = run(objects);
    const proxy = locationOf(model, 'app.example.test')!.proxy!;
    expect(proxy.pass).toMatch(/^https:\/\/\$i2n_canary_[0-9a-f]{12}_weight$/);
    expect(proxy.canary?.upstream).toMatch(/^[a-z]{2}_web_app-v2_80_tls_[0-9a-f]{10}$/);
    expect(proxy.ssl?.name).toMatch(/^\$i2n_canary_[0-9a-f]{12}_ssl_name$/);
    const names = model.http.extensions.maps.find((m) => m.variable.endsWith('_ssl_name'))!;
    expect(names.entries.map((e) => e.value)).toEqual(['app-v2.web.svc.cluster.local']);
    expect(names.defaultValue).toBe('app.web.svc.cluster.local');
    expect(model.http.upstreams.map((u) => u.name)).toEqual(expect.arrayContaining([proxy.upstream, proxy.canary!.upstream]));
  });

  it('weight alone: 0 leaves the main backend, the total or more switches it', () => {
    const none = run([...services(), main(), canary('c', { 'canary-weight': '0' })]);
    expect(locationOf(none.model, 'app.example.test')!.proxy!.pass).toBe(`http://${upstreamName('web_app_80')}`);
    const all = run([...services(), main(), canary('c', { 'canary-weight': '500', 'canary-weight-total': '500' })]);
    expect(locationOf(all.model, 'app.example.test')!.proxy!.pass).toBe(`http://${upstreamName('web_app-v2_80')}`);
    const share = run([...services(), main(), canary('c', { 'canary-weight': '1', 'canary-weight-total': '3' })]);
    // Totals up to 100 count as 100, as in ingress-nginx.
    expect(share.model.http.extensions.splits[0]?.share).toBe('1');
  });
});

describe('a rejected value that guards nothing falls back instead of leaving the Ingress out', () => {
  it('ssl-redirect "no": the ConfigMap default (redirect), with an error', () => {
    const { model, diagnostics } = run([...services(), ingress('typo', { host: 'a.example.test', tls: true, annotations: { 'ssl-redirect': 'no' } })]);
    expect(locationOf(model, 'a.example.test')?.plainHttp.redirect).toBe(true);
    expect(codes(diagnostics)).toEqual(['annotation-invalid web/typo']);
  });
});

/** A CA Secret whose ca.crt parses: the bundled default certificate is self-signed, so it serves as one. */
function caSecretReal(name: string): SourceObject {
  return object('v1', 'Secret', 'web', name, { stringData: { 'ca.crt': bundledDefaultCertificate } });
}
