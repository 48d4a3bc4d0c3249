import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { SourceObject } from '../../src/sources/snapshot.js';
import { translate } from '../../src/translate/translate.js';
import { configMap, object, service } from '../support/gateway.js';
import { testTranslateOptions } from '../support/options.js';
import { createCa, type CertificateAuthority } from '../support/pki.js';

/** The warnings of issue 37 that have no defect of their own: each says what a setting lets through. */

const controller = (data: Record<string, string>): SourceObject[] => [configMap('infra', 'controller', data)];
const diagnostics = (objects: readonly SourceObject[]) => translate({ objects }, testTranslateOptions({ configMap: 'infra/controller' })).diagnostics;

describe('use-forwarded-headers with the default proxy-real-ip-cidr', () => {
  it('warns at the key: any client chooses the address whitelist-source-range sees', () => {
    const found = diagnostics(controller({ 'use-forwarded-headers': 'true' })).filter((d) => d.code === 'forwarded-headers-trust-all');
    expect(found).toEqual([
      expect.objectContaining({ severity: 'warning', field: 'data["use-forwarded-headers"]', message: expect.stringMatching(/0\.0\.0\.0\/0, the default\).*whitelist-source-range/) }),
    ]);
    const proxyProtocol = diagnostics(controller({ 'use-proxy-protocol': 'true', 'proxy-real-ip-cidr': '10.0.0.0/8,::/0' })).filter((d) => d.code === 'forwarded-headers-trust-all');
    expect(proxyProtocol).toEqual([expect.objectContaining({ field: 'data["use-proxy-protocol"]', message: expect.stringContaining('(::/0)') })]);
  });

  it('says nothing when the trusted peers are named, or the headers are not used', () => {
    expect(diagnostics(controller({ 'use-forwarded-headers': 'true', 'proxy-real-ip-cidr': '10.0.0.0/8' })).map((d) => d.code)).not.toContain('forwarded-headers-trust-all');
    expect(diagnostics(controller({ 'proxy-real-ip-cidr': '0.0.0.0/0' })).map((d) => d.code)).not.toContain('forwarded-headers-trust-all');
  });
});

describe('redirects to the request URL', () => {
  const ingress = (annotations: Record<string, string>): SourceObject => {
    const base = object('networking.k8s.io/v1', 'Ingress', 'web', 'app', {
      spec: { ingressClassName: 'nginx', rules: [{ host: 'app.example.test', http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'web', port: { number: 80 } } } }] } }] },
    });
    return { ...base, metadata: { ...base.metadata, annotations: Object.fromEntries(Object.entries(annotations).map(([k, v]) => [`nginx.ingress.kubernetes.io/${k}`, v])) } };
  };
  const build = (annotations: Record<string, string>) => translate({ objects: [service('web', 'web', '10.0.0.1', [{ port: 80 }]), ingress(annotations)] }, testTranslateOptions()).model;

  it("app-root and auth-signin name the host nginx matched, never the client's Host header as sent", () => {
    const appRoot = build({ 'app-root': '/app' });
    const location = appRoot.http.virtualHosts[0]!.locations.find((l) => l.path === '/')!;
    expect(location.behaviour?.appRoot).toBe('$scheme://$host$i2n_request_port/app');
    expect(appRoot.http.extensions.maps.map((m) => m.variable)).toContain('i2n_request_port');
    const signin = build({ 'auth-url': 'http://web.web.svc.cluster.local/auth', 'auth-signin': 'https://login.example.test/start' });
    const auth = signin.http.virtualHosts[0]!.locations.find((l) => l.path === '/')!.behaviour?.externalAuth;
    expect(auth?.signin).toBe('https://login.example.test/start?rd=$scheme://$host$i2n_request_port$i2n_return_uri');
    expect(signin.http.extensions.maps.map((m) => m.variable)).toEqual(expect.arrayContaining(['i2n_request_port', 'i2n_return_uri']));
  });
});

describe('auth-tls on a shared host', () => {
  let owners: CertificateAuthority;
  let guests: CertificateAuthority;
  beforeAll(async () => {
    const dir = await mkdtemp(join(tmpdir(), 'i2n-auth-tls-'));
    [owners, guests] = await Promise.all([createCa(dir, 'Owner CA'), createCa(dir, 'Guest CA')]);
  });

  const caSecret = (namespace: string, ca: CertificateAuthority) => object('v1', 'Secret', namespace, 'client-ca', { stringData: { 'ca.crt': ca.certPem } });
  const site = (namespace: string, name: string, path: string, created: string, annotations: Record<string, string> = {}): SourceObject => {
    const base = object(
      'networking.k8s.io/v1',
      'Ingress',
      namespace,
      name,
      { spec: { ingressClassName: 'nginx', rules: [{ host: 'shared.example.test', http: { paths: [{ path, pathType: 'Prefix', backend: { service: { name: 'web', port: { number: 80 } } } }] } }] } },
      { creationTimestamp: created },
    );
    return { ...base, metadata: { ...base.metadata, annotations: Object.fromEntries(Object.entries(annotations).map(([k, v]) => [`nginx.ingress.kubernetes.io/${k}`, v])) } };
  };
  const build = (objects: SourceObject[]) => {
    const result = translate({ objects: [service('web', 'web', '10.0.0.1', [{ port: 80 }]), service('guest', 'web', '10.0.0.2', [{ port: 80 }]), caSecret('web', owners), caSecret('guest', guests), ...objects] }, testTranslateOptions());
    const host = result.model.http.virtualHosts.find((h) => h.serverName === 'shared.example.test')!;
    return { result, host, proxied: (path: string) => host.locations.find((l) => l.path === path)?.proxy !== undefined };
  };
  const mtls = { 'auth-tls-secret': 'client-ca' };

  it("a guest's CA is never what the owner's clients are asked for: the guest's paths answer 503", () => {
    const { result, host, proxied } = build([site('web', 'owner', '/', '2024-01-01T00:00:00Z'), site('guest', 'guest', '/guest', '2024-02-01T00:00:00Z', mtls)]);
    expect(host.clientCertificate).toBeUndefined();
    expect([proxied('/'), proxied('/guest')]).toEqual([true, false]);
    expect(result.diagnostics).toContainEqual(expect.objectContaining({ code: 'auth-tls-conflict', resource: { kind: 'Ingress', namespace: 'guest', name: 'guest' }, message: expect.stringContaining('belongs to namespace web') }));
  });

  it("the owner's namespace decides even when a guest asked first", () => {
    const { host, proxied } = build([
      site('web', 'owner', '/', '2024-01-01T00:00:00Z'),
      site('guest', 'guest', '/guest', '2024-02-01T00:00:00Z', mtls),
      site('web', 'secure', '/secure', '2024-03-01T00:00:00Z', mtls),
    ]);
    expect(host.clientCertificate?.caFile).toMatch(/web_client-ca/);
    expect([proxied('/secure'), proxied('/guest')]).toEqual([true, false]);
  });
});
