import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  backendTlsPolicy,
  codes,
  conditions,
  configMap,
  gateway,
  parentConditions,
  passthrough,
  policyStatus,
  runPlan,
  service,
  terminate,
  tlsRoute,
  tlsSecret,
} from '../../../test/support/gateway.js';
import { createCa, issueCertificate, type CertificateFiles } from '../../../test/support/pki.js';
import type { SourceObject } from '../../sources/snapshot.js';
import { upstreamName } from '../upstream-names.js';

let caPem = '';
let serverCert: CertificateFiles;

beforeAll(async () => {
  const ca = await createCa(await mkdtemp(join(tmpdir(), 'i2n-gw-policies-')), 'policy CA');
  caPem = ca.certPem;
  serverCert = await issueCertificate(ca, { commonName: 'secure.example.com', sans: ['secure.example.com'] });
});

const all = { allowedRoutes: { namespaces: { from: 'All' } } };

function setup(backendRefs: Record<string, unknown>[] = [{ name: 'app', port: 8443 }], sectionName = 'tls'): SourceObject[] {
  return [
    gateway('infra', 'gw', [terminate('tls', 443, 'secure.example.com', [{ name: 'cert' }], all), passthrough('pass', 8443, 'secure.example.com', all)]),
    tlsSecret('infra', 'cert', serverCert),
    tlsRoute('apps', 'app', { parentRefs: [{ name: 'gw', namespace: 'infra', sectionName }], hostnames: ['secure.example.com'], backendRefs }),
    service('apps', 'app', '10.0.0.1', [{ port: 8443, name: 'https' }, { port: 9443, name: 'admin' }]),
    service('apps', 'other', '10.0.0.2', [{ port: 8443, name: 'https' }]),
  ];
}

const caConfigMap = () => configMap('apps', 'backend-ca', { 'ca.crt': caPem });

function policy(name: string, validation: Record<string, unknown>, targetRefs: Record<string, unknown>[] = [{ group: '', kind: 'Service', name: 'app' }], timestamp = '') {
  return backendTlsPolicy('apps', name, { targetRefs, validation }, { creationTimestamp: timestamp });
}

const withConfigMap = { hostname: 'app.internal', caCertificateRefs: [{ group: '', kind: 'ConfigMap', name: 'backend-ca' }] };
const ancestorRef = { group: 'gateway.networking.k8s.io', kind: 'Gateway', namespace: 'infra', name: 'gw' };

function entry(plan: ReturnType<typeof runPlan>['plan'], port = 443) {
  return plan.ports.find((p) => p.port === port)?.routes[0];
}

describe('BackendTLSPolicy on Terminate routes', () => {
  it('re-encrypts with the CA of a ConfigMap, written 0600 beside nginx.conf', () => {
    const { plan, diagnostics, files } = runPlan([...setup(), caConfigMap(), policy('tls', withConfigMap)]);
    expect(diagnostics).toEqual([]);
    expect(entry(plan)?.backendTls).toEqual({ trustedCertificate: 'ca/configmap_apps_backend-ca.crt', hostname: 'app.internal', policy: 'apps/tls' });
    expect(files.find((f) => f.path === 'ca/configmap_apps_backend-ca.crt')).toEqual({
      path: 'ca/configmap_apps_backend-ca.crt',
      contents: caPem.trim() + '\n',
      mode: 0o600,
    });
    const status = policyStatus(plan, 'apps', 'tls');
    expect(status?.ancestors.map((a) => [a.ancestorRef, a.controllerName, conditions(a.conditions)])).toEqual([
      [ancestorRef, 'ingress2nginx.dev/controller', { Accepted: 'True/Accepted', ResolvedRefs: 'True/ResolvedRefs' }],
    ]);
  });

  it('trusts the system bundle for wellKnownCACertificates: System', () => {
    const { plan, diagnostics } = runPlan([...setup(), policy('tls', { hostname: 'app.internal', wellKnownCACertificates: 'System' })]);
    expect(diagnostics).toEqual([]);
    expect(entry(plan)?.backendTls).toEqual({ trustedCertificate: '/etc/ssl/certs/ca-certificates.crt', hostname: 'app.internal', policy: 'apps/tls' });
  });

  it('leaves a route without policy in plain TCP, and a Passthrough route untouched', () => {
    const plain = runPlan(setup());
    expect(entry(plain.plan)?.backendTls).toBeUndefined();
    const passing = runPlan([...setup(undefined, 'pass'), caConfigMap(), policy('tls', withConfigMap)]);
    expect(entry(passing.plan, 8443)).toEqual(expect.objectContaining({ mode: 'Passthrough', rejectedWeight: 0 }));
    expect(entry(passing.plan, 8443)?.backendTls).toBeUndefined();
    // The policy affects no traffic of ours: no status, and no file.
    expect(policyStatus(passing.plan, 'apps', 'tls')).toBeUndefined();
    expect(passing.files.map((f) => f.path)).toEqual(['tls/infra_cert.pem']);
  });

  it.each([
    ['a missing ConfigMap', [], 'ConfigMap apps/backend-ca is not in the input'],
    ['a ConfigMap without ca.crt', [configMap('apps', 'backend-ca', { 'tls.crt': 'x' })], 'has no ca.crt'],
    ['a ConfigMap whose ca.crt does not parse', [configMap('apps', 'backend-ca', { 'ca.crt': 'not a certificate' })], 'holds no PEM certificate'],
  ])('refuses %s: NoValidCACertificate + InvalidCACertificateRef, and closes the connections', (_what, extra, problem) => {
    const { plan, diagnostics, files } = runPlan([...setup(), ...extra, policy('tls', withConfigMap)]);
    expect(conditions(policyStatus(plan, 'apps', 'tls')?.ancestors[0]?.conditions ?? [])).toEqual({
      Accepted: 'False/NoValidCACertificate',
      ResolvedRefs: 'False/InvalidCACertificateRef',
    });
    expect(entry(plan)).toEqual(expect.objectContaining({ backends: [], rejectedWeight: 1 }));
    expect(entry(plan)?.backendTls).toBeUndefined();
    expect(codes(diagnostics)).toEqual(['error:backend-tls-policy-unusable', 'error:invalid-ca-certificate-ref', 'error:no-valid-ca-certificate']);
    expect(diagnostics.find((d) => d.code === 'invalid-ca-certificate-ref')).toEqual(
      expect.objectContaining({ field: 'spec.validation.caCertificateRefs[0]', message: expect.stringContaining(problem) }),
    );
    // The route's own references are fine.
    expect(parentConditions(plan, 'apps', 'app')).toEqual({ Accepted: 'True/Accepted', ResolvedRefs: 'True/ResolvedRefs' });
    expect(files.map((f) => f.path)).toEqual(['tls/infra_cert.pem']);
  });

  it('refuses a CA reference of another kind (InvalidKind)', () => {
    const { plan, diagnostics } = runPlan([...setup(), policy('tls', { hostname: 'app.internal', caCertificateRefs: [{ group: '', kind: 'Secret', name: 'ca' }] })]);
    expect(conditions(policyStatus(plan, 'apps', 'tls')?.ancestors[0]?.conditions ?? [])).toEqual({
      Accepted: 'False/NoValidCACertificate',
      ResolvedRefs: 'False/InvalidKind',
    });
    expect(codes(diagnostics)).toContain('error:invalid-kind');
    expect(entry(plan)?.backends).toEqual([]);
  });

  it.each([
    ['subjectAltNames', { ...withConfigMap, subjectAltNames: [{ type: 'Hostname', hostname: 'x' }] }, 'spec.validation.subjectAltNames'],
    ['a wildcard hostname', { ...withConfigMap, hostname: '*.internal' }, 'spec.validation.hostname'],
    ['both CA sources', { ...withConfigMap, wellKnownCACertificates: 'System' }, 'spec.validation'],
    ['no CA source', { hostname: 'app.internal' }, 'spec.validation'],
    ['an unknown well-known set', { hostname: 'app.internal', wellKnownCACertificates: 'Mozilla' }, 'spec.validation.wellKnownCACertificates'],
  ])('refuses %s (Accepted=False, Invalid) and closes the connections', (_what, validation, field) => {
    const { plan, diagnostics } = runPlan([...setup(), caConfigMap(), policy('tls', validation)]);
    expect(conditions(policyStatus(plan, 'apps', 'tls')?.ancestors[0]?.conditions ?? [])).toMatchObject({ Accepted: 'False/Invalid' });
    expect(diagnostics).toContainEqual(expect.objectContaining({ severity: 'error', code: 'backend-tls-policy-invalid', field }));
    expect(entry(plan)?.backends).toEqual([]);
  });

  it('gives a Service to the oldest policy; the other is Conflicted', () => {
    const { plan, diagnostics } = runPlan([
      ...setup(),
      caConfigMap(),
      policy('newer', { hostname: 'newer.internal', wellKnownCACertificates: 'System' }, undefined, '2025-02-01T00:00:00Z'),
      policy('older', withConfigMap, undefined, '2025-01-01T00:00:00Z'),
    ]);
    expect(entry(plan)?.backendTls?.policy).toBe('apps/older');
    expect(conditions(policyStatus(plan, 'apps', 'older')?.ancestors[0]?.conditions ?? [])).toEqual({
      Accepted: 'True/Accepted',
      ResolvedRefs: 'True/ResolvedRefs',
    });
    expect(conditions(policyStatus(plan, 'apps', 'newer')?.ancestors[0]?.conditions ?? [])).toEqual({
      Accepted: 'False/Conflicted',
      ResolvedRefs: 'True/ResolvedRefs',
    });
    expect(diagnostics).toEqual([
      expect.objectContaining({ severity: 'warning', code: 'conflicted', resource: expect.objectContaining({ name: 'newer' }), field: 'spec.targetRefs[0]' }),
    ]);
  });

  it('prefers a policy for the Service port (sectionName) over one for the whole Service, without conflict', () => {
    const { plan, diagnostics } = runPlan([
      ...setup(),
      caConfigMap(),
      policy('whole', { hostname: 'whole.internal', wellKnownCACertificates: 'System' }, undefined, '2020-01-01T00:00:00Z'),
      policy('port', withConfigMap, [{ group: '', kind: 'Service', name: 'app', sectionName: 'https' }]),
      policy('admin', withConfigMap, [{ group: '', kind: 'Service', name: 'app', sectionName: 'admin' }]),
    ]);
    expect(diagnostics).toEqual([]);
    expect(entry(plan)?.backendTls?.policy).toBe('apps/port');
    expect(policyStatus(plan, 'apps', 'whole')).toBeUndefined();
    expect(policyStatus(plan, 'apps', 'admin')).toBeUndefined();
  });

  it('closes a route whose backends disagree on backend TLS', () => {
    const { plan, diagnostics } = runPlan([
      ...setup([
        { name: 'app', port: 8443, weight: 2 },
        { name: 'other', port: 8443, weight: 3 },
      ]),
      caConfigMap(),
      policy('tls', withConfigMap),
    ]);
    expect(entry(plan)).toEqual(expect.objectContaining({ backends: [], rejectedWeight: 5 }));
    expect(diagnostics).toEqual([expect.objectContaining({ severity: 'error', code: 'backend-tls-mixed', resource: expect.objectContaining({ kind: 'TLSRoute' }) })]);
  });

  it('accepts backends whose policies agree, and closes only the share of a backend with an invalid policy', () => {
    const agreeing = runPlan([
      ...setup([{ name: 'app', port: 8443 }, { name: 'other', port: 8443 }]),
      caConfigMap(),
      policy('tls', withConfigMap, [
        { group: '', kind: 'Service', name: 'app' },
        { group: '', kind: 'Service', name: 'other' },
      ]),
    ]);
    expect(agreeing.diagnostics).toEqual([]);
    expect(entry(agreeing.plan)?.backends.map((b) => b.upstream)).toEqual([upstreamName('apps_app_8443'), upstreamName('apps_other_8443')].sort());

    const partly = runPlan([
      ...setup([{ name: 'app', port: 8443, weight: 2 }, { name: 'other', port: 8443, weight: 3 }]),
      caConfigMap(),
      policy('good', withConfigMap),
      policy('bad', { hostname: 'x.internal', caCertificateRefs: [{ group: '', kind: 'ConfigMap', name: 'missing' }] }, [{ group: '', kind: 'Service', name: 'other' }]),
    ]);
    expect(entry(partly.plan)).toEqual(
      expect.objectContaining({ backends: [expect.objectContaining({ upstream: upstreamName('apps_app_8443'), weight: 2 })], rejectedWeight: 3 }),
    );
    expect(entry(partly.plan)?.backendTls?.policy).toBe('apps/good');
  });

  it('does not look at policies that do not affect our traffic, even malformed ones', () => {
    const { plan, diagnostics } = runPlan([
      ...setup(),
      backendTlsPolicy('apps', 'foreign', { targetRefs: [{ group: '', kind: 'Service', name: 'unrelated' }] }),
    ]);
    expect(diagnostics).toEqual([]);
    expect(policyStatus(plan, 'apps', 'foreign')).toBeUndefined();
  });

  it('closes the connections of a malformed policy that targets our backend', () => {
    const { plan, diagnostics } = runPlan([
      ...setup(),
      backendTlsPolicy('apps', 'broken', { targetRefs: [{ group: '', kind: 'Service', name: 'app' }], validation: {} }),
    ]);
    expect(codes(diagnostics)).toEqual(['error:backend-tls-policy-unusable', 'error:resource-invalid']);
    expect(conditions(policyStatus(plan, 'apps', 'broken')?.ancestors[0]?.conditions ?? [])).toEqual({ Accepted: 'False/Invalid' });
    expect(entry(plan)?.backends).toEqual([]);
  });
});
