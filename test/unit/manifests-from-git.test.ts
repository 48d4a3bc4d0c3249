import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { mainConfigName } from '../../src/model/nginx.js';
import { build } from '../../src/build/build.js';
import { formatRoutesText } from '../../src/report/routes-format.js';
import { routeTable } from '../../src/report/routes.js';
import type { SourceObject } from '../../src/sources/snapshot.js';
import { bundledDefaultCertificate } from '../../src/translate/secrets/default-certificate.js';
import type { TranslateOptions } from '../../src/translate/options.js';
import { gateway, object, service, terminate, tlsRoute, tlsSecret, v1 } from '../support/gateway.js';
import { testTranslateOptions } from '../support/options.js';
import { createCa, issueCertificate, type CertificateFiles } from '../support/pki.js';

/**
 * Manifests as kept in git (`expectClusterProvided`): a Service without clusterIP is assigned one by the
 * cluster, a TLS Secret missing from the input is made there. Both render with stand-ins and no error;
 * off (`--strict`, the cluster mode), both stay errors.
 */

const fromGit: TranslateOptions = testTranslateOptions({ expectClusterProvided: true });
const strict: TranslateOptions = testTranslateOptions();

let pair: CertificateFiles;
beforeAll(async () => {
  const ca = await createCa(await mkdtemp(join(tmpdir(), 'i2n-from-git-')), 'from-git CA');
  pair = await issueCertificate(ca, { commonName: 'web.example.test', sans: ['web.example.test'] });
});

function serviceWithout(clusterIP: string | undefined, name = 'web'): SourceObject {
  return object('v1', 'Service', 'apps', name, { spec: { ...(clusterIP !== undefined && { clusterIP }), ports: [{ name: 'http', port: 8080 }] } });
}

function ingress(annotations: Record<string, string> = {}, tls = true, passthrough = false): SourceObject {
  const base = object('networking.k8s.io/v1', 'Ingress', 'apps', 'web', {
    spec: {
      ingressClassName: 'nginx',
      ...(tls && { tls: [{ hosts: ['web.example.test'], secretName: 'web-tls' }] }),
      rules: [{ host: 'web.example.test', http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'web', port: { name: 'http' } } } }] } }],
    },
  });
  const all = { ...annotations, ...(passthrough && { 'nginx.ingress.kubernetes.io/ssl-passthrough': 'true' }) };
  return { ...base, metadata: { ...base.metadata, annotations: all } };
}

function run(options: TranslateOptions, ...objects: SourceObject[]) {
  const result = build({ objects }, options);
  const conf = result.files.find((f) => f.path === mainConfigName)!.contents;
  return { result, conf, codes: result.diagnostics.filter((d) => d.severity !== 'info').map((d) => `${d.severity} ${d.code}`) };
}

describe('a Service without spec.clusterIP, in manifests from git', () => {
  it.each([['absent', undefined], ['empty', '']])('(%s) is no error: a stand-in address in TEST-NET-1, named as such', (_, clusterIP) => {
    const { conf, codes, result } = run(fromGit, serviceWithout(clusterIP), ingress({}, false));
    expect(codes).toEqual([]);
    expect(conf).toMatch(/# Service apps\/web port 8080; its cluster IP is assigned when the manifests are applied, 192\.0\.2\.1 stands in\n\s+upstream \S+ \{\n\s+server 192\.0\.2\.1:8080;/);
    const [row] = routeTable(result).rows.filter((r) => r.host === 'web.example.test');
    expect(row?.answers).toBeUndefined();
    expect(row?.backends).toEqual([{ service: 'apps/web', port: 8080, weight: 1, addresses: [], assignedByCluster: true }]);
    expect(formatRoutesText(routeTable(result))).toContain('apps/web:8080 [cluster IP at apply]');
  });

  it('reaches a passthrough backend the same way', () => {
    const { conf, codes, result } = run(fromGit, serviceWithout(undefined), ingress({}, false, true));
    expect(codes).toEqual([]);
    expect(conf).toContain('web.example.test 192.0.2.1:8080;');
    expect(routeTable(result).rows.find((r) => r.mode === 'passthrough')?.backends[0]?.assignedByCluster).toBe(true);
  });

  it('stays headless with clusterIP: None, and an error without --resolver', () => {
    const { codes, conf } = run(fromGit, serviceWithout('None'), ingress({}, false));
    expect(codes).toEqual(['error backend-unresolved']);
    expect(conf).not.toContain('192.0.2.1');
  });

  it('is an error with --strict (and in the cluster mode), as before', () => {
    const { codes, result } = run(strict, serviceWithout(undefined), ingress({}, false));
    expect(codes).toEqual(['error backend-unresolved']);
    expect(result.diagnostics.find((d) => d.code === 'backend-unresolved')?.message).toContain('has no cluster IP in the input (the cluster assigns one when it is applied; --strict asks for it)');
  });

  it('renders the same bytes whatever the order of the input', () => {
    const objects = [serviceWithout(undefined), serviceWithout(undefined, 'other'), ingress({}, false)];
    expect(run(fromGit, ...objects).conf).toBe(run(fromGit, ...[...objects].reverse()).conf);
  });
});

describe('a TLS Secret missing from manifests from git', () => {
  it('is a warning naming the cert-manager annotation; the host is checked with a stand-in under the Secret\'s own file name', () => {
    const { conf, codes, result } = run(fromGit, serviceWithout('10.96.0.10'), ingress({ 'cert-manager.io/cluster-issuer': 'letsencrypt-prod' }));
    expect(codes).toEqual(['warning tls-secret-from-cluster']);
    const warning = result.diagnostics.find((d) => d.code === 'tls-secret-from-cluster')!;
    expect(warning.message).toContain('Secret apps/web-tls is not in the input: cert-manager makes it (annotation cert-manager.io/cluster-issuer: "letsencrypt-prod" on Ingress apps/web)');
    expect(warning.field).toBe('spec.tls[0].secretName');
    expect(conf).toContain('ssl_certificate tls/apps_web-tls.pem;');
    expect(result.files.find((f) => f.path === 'tls/apps_web-tls.pem')?.contents).toContain(bundledDefaultCertificate);
    const row = routeTable(result).rows.find((r) => r.host === 'web.example.test' && r.mode === 'terminate');
    expect(row?.certificate).toEqual({ source: 'secret', secret: 'apps/web-tls', expectedFrom: expect.stringContaining('cert-manager makes it') });
  });

  it('the stand-in holds the default certificate: --default-certificate\'s when given, as the cluster mode serves until the Secret exists', () => {
    const fallback = tlsSecret('infra', 'fallback', pair);
    const { result } = run({ ...fromGit, defaultCertificate: 'infra/fallback' }, serviceWithout('10.96.0.10'), ingress(), fallback);
    const standIn = result.files.find((f) => f.path === 'tls/apps_web-tls.pem')?.contents;
    expect(standIn).toContain(pair.certPem.trim());
    expect(standIn).toBe(result.files.find((f) => f.path === 'tls/infra_fallback.pem')?.contents);
  });

  it('names the resource in the input that makes it: a cert-manager Certificate, an ExternalSecret', () => {
    const certificate = object('cert-manager.io/v1', 'Certificate', 'apps', 'web-cert', { spec: { secretName: 'web-tls', dnsNames: ['web.example.test'] } });
    const external = object('external-secrets.io/v1beta1', 'ExternalSecret', 'apps', 'web-tls', { spec: { secretStoreRef: { name: 'vault' } } });
    for (const [maker, expected] of [
      [certificate, 'cert-manager makes it (Certificate apps/web-cert in the input)'],
      [external, 'external-secrets makes it (ExternalSecret apps/web-tls in the input)'],
    ] as const) {
      const { result } = run(fromGit, serviceWithout('10.96.0.10'), ingress(), maker);
      expect(result.diagnostics.find((d) => d.code === 'tls-secret-from-cluster')?.message).toContain(expected);
    }
    const { result } = run(fromGit, serviceWithout('10.96.0.10'), ingress());
    expect(result.diagnostics.find((d) => d.code === 'tls-secret-from-cluster')?.message).toContain('expected in the cluster (nothing in the input makes it)');
  });

  it('a Secret that is in the input and bad stays an error; so does a missing one with --strict', () => {
    const bad = tlsSecret('apps', 'web-tls', { certPem: pair.certPem, keyPem: 'not a key' });
    expect(run(fromGit, serviceWithout('10.96.0.10'), ingress(), bad).codes).toEqual(['error tls-secret-invalid']);
    const { codes, conf } = run(strict, serviceWithout('10.96.0.10'), ingress({ 'cert-manager.io/cluster-issuer': 'letsencrypt-prod' }));
    expect(codes).toEqual(['error tls-secret-invalid']);
    expect(conf).not.toContain('tls/apps_web-tls.pem');
  });

  it('a Secret that nginx rejected (quarantined) is missing, not expected from the cluster', () => {
    const good = tlsSecret('apps', 'web-tls', pair);
    const { codes } = run({ ...fromGit, quarantine: new Map([['Secret/apps/web-tls', 'nginx: [emerg] no']]) }, serviceWithout('10.96.0.10'), ingress(), good);
    expect(codes).toContain('error tls-secret-invalid');
    expect(codes).not.toContain('warning tls-secret-from-cluster');
  });

  it('a Gateway listener\'s missing certificateRef is a warning too, and the listener is programmed with a stand-in', () => {
    const objects = [
      gateway('infra', 'gw', [terminate('tls', 443, 'app.example.test', [{ name: 'gw-tls' }], { allowedRoutes: { namespaces: { from: 'All' } } })]),
      tlsRoute('apps', 'app', { hostnames: ['app.example.test'], backendRefs: [{ name: 'app', port: 8443 }] }),
      service('apps', 'app', '10.96.0.11', [{ port: 8443 }]),
      object(v1, 'GatewayClass', '', 'ingress2nginx', { spec: { controllerName: 'ingress2nginx.dev/controller' } }),
    ];
    const { codes, conf, result } = run(fromGit, ...objects);
    expect(codes).toEqual(['warning tls-secret-from-cluster']);
    expect(conf).toContain('ssl_certificate tls/infra_gw-tls.pem;');
    const listener = result.statuses.find((s) => s.kind === 'Gateway')?.listeners?.[0];
    expect(listener?.conditions.find((c) => c.type === 'Programmed')?.status).toBe('True');
    expect(run(strict, ...objects).codes).toContain('error invalid-certificate-ref');
  });
});
