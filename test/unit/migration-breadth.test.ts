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
