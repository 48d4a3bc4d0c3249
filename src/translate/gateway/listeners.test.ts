import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  codes,
  conditions,
  gateway,
  gatewayStatus,
  listenerStatus,
  object,
  parentConditions,
  passthrough,
  referenceGrant,
  runPlan,
  service,
  terminate,
  tlsRoute,
  tlsSecret,
  v1,
} from '../../../test/support/gateway.js';
import { daysFromTestNow } from '../../../test/support/options.js';
import { createCa, issueCertificate, type CertificateFiles } from '../../../test/support/pki.js';

let certs: { app: CertificateFiles; appRsa: CertificateFiles; other: CertificateFiles; expired: CertificateFiles };

beforeAll(async () => {
  const ca = await createCa(await mkdtemp(join(tmpdir(), 'i2n-gw-listeners-')), 'listener CA');
  const [app, appRsa, other, expired] = await Promise.all([
    issueCertificate(ca, { commonName: 'app.example.com', sans: ['app.example.com', '*.example.com'] }),
    issueCertificate(ca, { commonName: 'app.example.com', sans: ['app.example.com'], keyType: 'rsa-2048' }),
    issueCertificate(ca, { commonName: 'other.example.net', sans: ['other.example.net'] }),
    issueCertificate(ca, { commonName: 'old', sans: ['app.example.com'], notBefore: daysFromTestNow(-30), days: 1 }),
  ]);
  certs = { app, appRsa, other, expired };
});

const good = {
  Accepted: 'True/Accepted',
  Conflicted: 'False/NoConflicts',
  ResolvedRefs: 'True/ResolvedRefs',
  Programmed: 'True/Programmed',
};
const tlsRouteKind = [{ group: 'gateway.networking.k8s.io', kind: 'TLSRoute' }];

describe('Gateway and listener status', () => {
  it('accepts and programs a Passthrough listener; its port is listed even without routes', () => {
    const { plan, diagnostics } = runPlan([gateway('infra', 'gw', [passthrough('tls', 8443)])]);
    expect(diagnostics).toEqual([]);
    expect(conditions(gatewayStatus(plan, 'infra', 'gw').conditions)).toEqual({ Accepted: 'True/Accepted', Programmed: 'True/Programmed' });
    const listener = listenerStatus(plan, 'infra', 'gw', 'tls');
    expect(conditions(listener.conditions)).toEqual(good);
    expect(listener.supportedKinds).toEqual(tlsRouteKind);
    expect(listener.attachedRoutes).toBe(0);
    expect(plan.ports).toEqual([{ port: 8443, routes: [], isolatedHostnames: [] }]);
  });

  it.each(['TCP', 'UDP'])('does not accept protocol %s (UnsupportedProtocol)', (protocol) => {
    const { plan, diagnostics } = runPlan([
      gateway('infra', 'gw', [{ name: 'other', port: 9000, protocol }, passthrough('tls', 8443)]),
    ]);
    const listener = listenerStatus(plan, 'infra', 'gw', 'other');
    expect(conditions(listener.conditions)).toMatchObject({ Accepted: 'False/UnsupportedProtocol', Programmed: 'False/Invalid' });
    expect(listener.supportedKinds).toEqual([]);
    expect(conditions(gatewayStatus(plan, 'infra', 'gw').conditions)).toEqual({ Accepted: 'True/ListenersNotValid', Programmed: 'True/Programmed' });
    expect(diagnostics).toEqual([
      expect.objectContaining({ severity: 'warning', code: 'unsupported-protocol', field: 'spec.listeners[0].protocol' }),
    ]);
    expect(plan.ports.map((p) => p.port)).toEqual([8443]);
  });

  it('serves HTTP and HTTPS on any port: a port other than the Ingress ports gets servers of its own', () => {
    const { plan, diagnostics } = runPlan(
      [
        gateway('infra', 'gw', [
          { name: 'web', port: 8080, protocol: 'HTTP' },
          { name: 'secure', port: 8443, protocol: 'HTTPS', hostname: 'app.example.com', tls: { certificateRefs: [{ name: 'cert' }] } },
          { name: 'ingress-web', port: 80, protocol: 'HTTP' },
        ]),
        tlsSecret('infra', 'cert', certs.app),
      ],
      { httpPort: 80, httpsPort: 443, plainHttpPorts: [80] },
    );
    expect(diagnostics).toEqual([]);
    for (const name of ['web', 'secure', 'ingress-web']) expect(conditions(listenerStatus(plan, 'infra', 'gw', name).conditions)).toEqual(good);
    expect(plan.http.ownPorts.map(({ port, tls }) => ({ port, tls }))).toEqual([
      { port: 8080, tls: false },
      { port: 8443, tls: true },
    ]);
  });

  it('keeps one port to plain HTTP or TLS: the later listener of the other kind is a ProtocolConflict', () => {
    const { plan, diagnostics } = runPlan(
      [
        gateway('infra', 'old', [{ name: 'web', port: 8080, protocol: 'HTTP' }], { creationTimestamp: '2025-01-01T00:00:00Z' }),
        gateway('infra', 'new', [passthrough('tls', 8080, 'a.example.com'), { name: 'web', port: 443, protocol: 'HTTP' }], { creationTimestamp: '2025-02-01T00:00:00Z' }),
      ],
      { httpPort: 80, httpsPort: 443, plainHttpPorts: [80] },
    );
    expect(conditions(listenerStatus(plan, 'infra', 'old', 'web').conditions)).toEqual(good);
    for (const name of ['tls', 'web']) {
      expect(conditions(listenerStatus(plan, 'infra', 'new', name).conditions)).toMatchObject({ Conflicted: 'True/ProtocolConflict', Programmed: 'False/Invalid' });
    }
    expect(diagnostics).toContainEqual(
      expect.objectContaining({ code: 'protocol-conflict', message: expect.stringContaining('listener web of Gateway infra/old (older, or first by namespace/name) already serves plain HTTP on port 8080') }),
    );
    expect(diagnostics).toContainEqual(expect.objectContaining({ code: 'protocol-conflict', message: expect.stringContaining('port 443 serves TLS for Ingresses') }));
  });

  it('serves HTTP listeners of different Gateways on a port of their own only with host names of their own', () => {
    const { plan } = runPlan(
      [
        gateway('infra', 'a', [{ name: 'any', port: 8080, protocol: 'HTTP' }, { name: 'named', port: 8080, protocol: 'HTTP', hostname: 'a.example.com' }]),
        gateway('infra', 'b', [{ name: 'any', port: 8080, protocol: 'HTTP' }, { name: 'named', port: 8080, protocol: 'HTTP', hostname: 'b.example.com' }]),
      ],
      { httpPort: 80, httpsPort: 443, plainHttpPorts: [80] },
    );
    expect(conditions(listenerStatus(plan, 'infra', 'a', 'any').conditions)).toEqual(good);
    expect(conditions(listenerStatus(plan, 'infra', 'b', 'any').conditions)).toMatchObject({ Conflicted: 'True/HostnameConflict' });
    expect(conditions(listenerStatus(plan, 'infra', 'b', 'named').conditions)).toEqual(good);
  });

  it('does not accept an invalid listener hostname (UnsupportedValue, error)', () => {
    const { plan, diagnostics } = runPlan([gateway('infra', 'gw', [passthrough('tls', 8443, '192.0.2.1')])]);
    expect(conditions(listenerStatus(plan, 'infra', 'gw', 'tls').conditions)).toMatchObject({ Accepted: 'False/UnsupportedValue', Programmed: 'False/Invalid' });
    expect(diagnostics).toContainEqual(expect.objectContaining({ severity: 'error', code: 'unsupported-value', field: 'spec.listeners[0].hostname' }));
  });

  it('defaults tls.mode to Terminate', () => {
    const { plan } = runPlan([gateway('infra', 'gw', [{ name: 'tls', port: 8443, protocol: 'TLS' }])]);
    expect(conditions(listenerStatus(plan, 'infra', 'gw', 'tls').conditions)).toMatchObject({ ResolvedRefs: 'False/InvalidCertificateRef' });
  });

  it('skips Gateways of another class without a word, and reports a malformed one of ours', () => {
    const { plan, diagnostics } = runPlan([
      gateway('infra', 'theirs', [{ name: 'x', port: 1, protocol: 'HTTP' }], { className: 'other' }),
      object(v1, 'Gateway', 'infra', 'broken', { spec: { gatewayClassName: 'ingress2nginx', listeners: [] } }),
    ]);
    expect(plan.statuses.map((s) => `${s.kind} ${s.name}`)).toEqual(['Gateway broken']);
    expect(conditions(gatewayStatus(plan, 'infra', 'broken').conditions)).toEqual({ Accepted: 'False/Invalid', Programmed: 'False/Invalid' });
    expect(diagnostics).toEqual([expect.objectContaining({ severity: 'error', code: 'resource-invalid', field: 'spec.listeners' })]);
  });

  it('warns when the GatewayClass in the input names another controller', () => {
    const { diagnostics } = runPlan([object(v1, 'GatewayClass', '', 'ingress2nginx', { spec: { controllerName: 'example.com/other' } })]);
    expect(codes(diagnostics)).toEqual(['warning:gateway-class-controller-mismatch']);
  });

  it('reports unsupported apiVersions', () => {
    const { diagnostics } = runPlan([object('gateway.networking.k8s.io/v2', 'Gateway', 'infra', 'gw', {})]);
    expect(codes(diagnostics)).toEqual(['error:api-version-unsupported']);
  });
});

describe('Terminate certificates (listener ResolvedRefs)', () => {
  const terminating = (refs: Record<string, unknown>[], hostname: string | undefined = 'app.example.com') =>
    gateway('infra', 'gw', [terminate('tls', 8443, hostname, refs, { allowedRoutes: { namespaces: { from: 'All' } } })]);
  const route = tlsRoute('apps', 'app', { hostnames: ['app.example.com'] });
  const backend = service('apps', 'app', '10.0.0.1', [{ port: 8443 }]);

  it('serves a valid kubernetes.io/tls Secret from the Gateway namespace', () => {
    const { plan, diagnostics, files } = runPlan([terminating([{ name: 'cert' }]), tlsSecret('infra', 'cert', certs.app), route, backend]);
    expect(diagnostics).toEqual([]);
    expect(conditions(listenerStatus(plan, 'infra', 'gw', 'tls').conditions)).toEqual(good);
    expect(plan.ports[0]?.routes).toEqual([
      expect.objectContaining({
        hostname: 'app.example.com',
        mode: 'Terminate',
        certificates: [{ certificate: 'tls/infra_cert.pem', certificateKey: 'tls/infra_cert.pem' }],
      }),
    ]);
    expect(files.map((f) => [f.path, f.mode])).toEqual([['tls/infra_cert.pem', 0o600]]);
  });

  it.each([
    ['no certificateRefs', [], [], 'tls'],
    ['a missing Secret', [{ name: 'missing' }], [], 'tls.certificateRefs[0]'],
    ['a Secret of another type', [{ name: 'cert' }], ['Opaque'], 'tls.certificateRefs[0]'],
    ['a reference to another kind', [{ name: 'cert', kind: 'ConfigMap' }], [], 'tls.certificateRefs[0]'],
    ['an expired certificate', [{ name: 'old' }], [], 'tls.certificateRefs[0]'],
  ])('refuses %s (InvalidCertificateRef) and does not program the listener', (_what, refs, secretType, field) => {
    const { plan, diagnostics, files } = runPlan([
      terminating(refs),
      tlsSecret('infra', 'cert', certs.app, secretType[0]),
      tlsSecret('infra', 'old', certs.expired),
      route,
      backend,
    ]);
    expect(conditions(listenerStatus(plan, 'infra', 'gw', 'tls').conditions)).toEqual({
      ...good,
      ResolvedRefs: 'False/InvalidCertificateRef',
      Programmed: 'False/Invalid',
    });
    expect(diagnostics).toContainEqual(
      expect.objectContaining({ severity: 'error', code: 'invalid-certificate-ref', field: `spec.listeners[0].${field}` }),
    );
    expect(plan.ports).toEqual([]);
    expect(files).toEqual([]);
  });

  it('needs a ReferenceGrant for a Secret in another namespace (RefNotPermitted)', () => {
    const objects = [terminating([{ name: 'cert', namespace: 'certs' }]), tlsSecret('certs', 'cert', certs.app), route, backend];
    const refused = runPlan(objects);
    expect(conditions(listenerStatus(refused.plan, 'infra', 'gw', 'tls').conditions)).toMatchObject({
      ResolvedRefs: 'False/RefNotPermitted',
      Programmed: 'False/Invalid',
    });
    expect(refused.diagnostics).toContainEqual(expect.objectContaining({ severity: 'error', code: 'ref-not-permitted' }));

    const fromGateways = [{ group: 'gateway.networking.k8s.io', kind: 'Gateway', namespace: 'infra' }];
    const granted = runPlan([...objects, referenceGrant('certs', 'allow', fromGateways, [{ group: '', kind: 'Secret', name: 'cert' }])]);
    expect(conditions(listenerStatus(granted.plan, 'infra', 'gw', 'tls').conditions)).toEqual(good);

    const otherName = runPlan([...objects, referenceGrant('certs', 'allow', fromGateways, [{ group: '', kind: 'Secret', name: 'another' }])]);
    expect(conditions(listenerStatus(otherName.plan, 'infra', 'gw', 'tls').conditions)).toMatchObject({ ResolvedRefs: 'False/RefNotPermitted' });
  });

  it('keeps one certificate per key type', () => {
    const { plan, diagnostics } = runPlan([
      terminating([{ name: 'ec' }, { name: 'rsa' }, { name: 'ec2' }]),
      tlsSecret('infra', 'ec', certs.app),
      tlsSecret('infra', 'rsa', certs.appRsa),
      tlsSecret('infra', 'ec2', certs.app),
      route,
      backend,
    ]);
    expect(plan.ports[0]?.routes[0]?.certificates.map((c) => c.certificate)).toEqual(['tls/infra_ec.pem', 'tls/infra_rsa.pem']);
    expect(diagnostics).toEqual([expect.objectContaining({ severity: 'warning', code: 'certificate-ignored', field: 'spec.listeners[0].tls.certificateRefs[2]' })]);
  });

  it('warns when no certificate covers the listener hostname', () => {
    const { plan, diagnostics } = runPlan([terminating([{ name: 'cert' }]), tlsSecret('infra', 'cert', certs.other), route, backend]);
    expect(conditions(listenerStatus(plan, 'infra', 'gw', 'tls').conditions)).toEqual(good);
    expect(codes(diagnostics)).toEqual(['warning:certificate-hostname-mismatch']);
  });
});

describe('allowedRoutes.kinds (InvalidRouteKinds)', () => {
  it('lists only TLSRoute as supported and reports the rest', () => {
    const { plan, diagnostics } = runPlan([
      gateway('infra', 'gw', [
        passthrough('tls', 8443, undefined, { allowedRoutes: { kinds: [{ kind: 'TLSRoute' }, { kind: 'HTTPRoute' }] } }),
        passthrough('http-only', 9443, undefined, { allowedRoutes: { kinds: [{ kind: 'HTTPRoute' }] } }),
      ]),
    ]);
    const both = listenerStatus(plan, 'infra', 'gw', 'tls');
    expect(both.supportedKinds).toEqual(tlsRouteKind);
    expect(conditions(both.conditions)).toEqual({ ...good, ResolvedRefs: 'False/InvalidRouteKinds' });
    const none = listenerStatus(plan, 'infra', 'gw', 'http-only');
    expect(none.supportedKinds).toEqual([]);
    expect(conditions(none.conditions)).toMatchObject({ ResolvedRefs: 'False/InvalidRouteKinds' });
    expect(diagnostics).toEqual([
      expect.objectContaining({ severity: 'warning', code: 'invalid-route-kinds', field: 'spec.listeners[0].allowedRoutes.kinds[1]' }),
      expect.objectContaining({ severity: 'warning', code: 'invalid-route-kinds', field: 'spec.listeners[1].allowedRoutes.kinds[0]' }),
    ]);
  });
});

describe('listener conflicts across Gateways', () => {
  it('gives a port and hostname to the oldest Gateway; the other listener is Conflicted and not programmed', () => {
    const route = (name: string, gw: string) =>
      tlsRoute('infra', name, { parentRefs: [{ name: gw }], hostnames: ['a.example.com'], backendRefs: [{ name: 'app', port: 8443 }] });
    const { plan, diagnostics } = runPlan([
      gateway('infra', 'new', [passthrough('tls', 443, 'a.example.com')], { creationTimestamp: '2025-02-01T00:00:00Z' }),
      gateway('infra', 'old', [passthrough('tls', 443, 'a.example.com')], { creationTimestamp: '2025-01-01T00:00:00Z' }),
      route('via-new', 'new'),
      route('via-old', 'old'),
      service('infra', 'app', '10.0.0.1', [{ port: 8443 }]),
    ]);
    expect(conditions(listenerStatus(plan, 'infra', 'old', 'tls').conditions)).toEqual(good);
    expect(conditions(listenerStatus(plan, 'infra', 'new', 'tls').conditions)).toEqual({
      ...good,
      Conflicted: 'True/HostnameConflict',
      Programmed: 'False/Invalid',
    });
    expect(conditions(gatewayStatus(plan, 'infra', 'new').conditions)).toEqual({ Accepted: 'False/ListenersNotValid', Programmed: 'False/Invalid' });
    // The route still attaches (attachment does not depend on listener status), but carries no traffic.
    expect(listenerStatus(plan, 'infra', 'new', 'tls').attachedRoutes).toBe(1);
    expect(plan.ports[0]?.routes.map((r) => `${r.hostname} ${r.route.name}`)).toEqual(['a.example.com via-old']);
    expect(diagnostics).toContainEqual(
      expect.objectContaining({ severity: 'warning', code: 'hostname-conflict', resource: { kind: 'Gateway', namespace: 'infra', name: 'new' } }),
    );
  });

  it('settles equal ages by namespace/name, and counts Passthrough against Terminate', () => {
    const { plan } = runPlan([
      gateway('b', 'gw', [passthrough('tls', 443, 'a.example.com', { allowedRoutes: { namespaces: { from: 'All' } } })]),
      gateway('a', 'gw', [terminate('tls', 443, 'a.example.com', [])]),
    ]);
    expect(conditions(listenerStatus(plan, 'b', 'gw', 'tls').conditions)).toMatchObject({ Conflicted: 'True/HostnameConflict' });
    expect(conditions(listenerStatus(plan, 'a', 'gw', 'tls').conditions)).toMatchObject({ Conflicted: 'False/NoConflicts' });
  });

  it('conflicts two listeners without hostname on one port, but not different hostnames', () => {
    const { plan } = runPlan([
      gateway('infra', 'one', [passthrough('any', 443), passthrough('a', 443, 'a.example.com'), passthrough('wild', 443, '*.example.com')]),
      gateway('infra', 'two', [passthrough('any', 443), passthrough('b', 443, 'b.example.com')]),
    ]);
    expect(conditions(listenerStatus(plan, 'infra', 'two', 'any').conditions)).toMatchObject({ Conflicted: 'True/HostnameConflict' });
    for (const name of ['any', 'a', 'wild']) {
      expect(conditions(listenerStatus(plan, 'infra', 'one', name).conditions)).toEqual(good);
    }
    expect(conditions(listenerStatus(plan, 'infra', 'two', 'b').conditions)).toEqual(good);
  });

  it('conflicts the later of two listeners with one port and hostname inside one Gateway (not possible through the API server)', () => {
    const { plan, diagnostics } = runPlan([gateway('infra', 'gw', [passthrough('first', 443, 'a.example.com'), passthrough('second', 443, 'a.example.com')])]);
    expect(conditions(listenerStatus(plan, 'infra', 'gw', 'first').conditions)).toEqual(good);
    expect(conditions(listenerStatus(plan, 'infra', 'gw', 'second').conditions)).toMatchObject({ Conflicted: 'True/HostnameConflict' });
    expect(conditions(gatewayStatus(plan, 'infra', 'gw').conditions)).toEqual({ Accepted: 'True/ListenersNotValid', Programmed: 'True/Programmed' });
    expect(diagnostics).toEqual([expect.objectContaining({ field: 'spec.listeners[1]', message: expect.stringContaining('of this Gateway (listed earlier)') })]);
  });

  it('conflicts a TLS listener on the plain-HTTP port of the Ingress side (ProtocolConflict)', () => {
    const { plan, diagnostics } = runPlan([gateway('infra', 'gw', [passthrough('tls', 80)])], { plainHttpPorts: [80] });
    expect(conditions(listenerStatus(plan, 'infra', 'gw', 'tls').conditions)).toMatchObject({
      Conflicted: 'True/ProtocolConflict',
      Programmed: 'False/Invalid',
    });
    expect(diagnostics).toContainEqual(expect.objectContaining({ severity: 'warning', code: 'protocol-conflict' }));
  });
});

describe('attachedRoutes', () => {
  it('counts the routes accepted per listener, once each', () => {
    const all = { allowedRoutes: { namespaces: { from: 'All' } } };
    const { plan } = runPlan([
      gateway('infra', 'gw', [passthrough('a', 443, 'a.example.com', all), passthrough('b', 443, '*.b.example.com', all), passthrough('c', 8443, undefined)]),
      // Attaches to a (by sectionName and again by port: counted once).
      tlsRoute('apps', 'one', { parentRefs: [{ name: 'gw', namespace: 'infra', sectionName: 'a' }, { name: 'gw', namespace: 'infra', port: 443 }], hostnames: ['a.example.com'] }),
      // Attaches to a and b through the whole Gateway; c does not admit namespace apps.
      tlsRoute('apps', 'two', { hostnames: ['a.example.com', 'x.b.example.com'] }),
      // Matches no hostname: not counted.
      tlsRoute('apps', 'three', { hostnames: ['c.example.org'] }),
    ]);
    expect(['a', 'b', 'c'].map((name) => listenerStatus(plan, 'infra', 'gw', name).attachedRoutes)).toEqual([2, 1, 0]);
  });
});

describe('HTTP and HTTPS listeners (served by the http servers)', () => {
  const httpRouteKind = [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute' }];
  const ports = { httpPort: 80, httpsPort: 443 };

  it('accepts and programs HTTP on the HTTP port and HTTPS on the HTTPS port beside TLS listeners there; only TLS listeners make an SNI port plan', () => {
    const { plan, diagnostics } = runPlan(
      [
        gateway('infra', 'gw', [
          { name: 'web', port: 80, protocol: 'HTTP' },
          { name: 'secure', port: 443, protocol: 'HTTPS', hostname: 'app.example.com', tls: { certificateRefs: [{ name: 'cert' }] } },
          passthrough('tunnel', 443, 'tunnel.example.com'),
        ]),
        tlsSecret('infra', 'cert', certs.app),
      ],
      ports,
    );
    expect(diagnostics).toEqual([]);
    for (const name of ['web', 'secure', 'tunnel']) expect(conditions(listenerStatus(plan, 'infra', 'gw', name).conditions)).toEqual(good);
    const kinds = [...httpRouteKind, { group: 'gateway.networking.k8s.io', kind: 'GRPCRoute' }];
    expect(listenerStatus(plan, 'infra', 'gw', 'web').supportedKinds).toEqual(kinds);
    expect(listenerStatus(plan, 'infra', 'gw', 'secure').supportedKinds).toEqual(kinds);
    expect(plan.ports).toEqual([{ port: 443, routes: [], isolatedHostnames: ['tunnel.example.com'] }]);
  });

  it('serves HTTP listeners of different Gateways on one port and host name as one; inside one Gateway they conflict', () => {
    const { plan } = runPlan(
      [
        gateway('infra', 'one', [{ name: 'web', port: 80, protocol: 'HTTP' }, { name: 'again', port: 80, protocol: 'HTTP' }]),
        gateway('infra', 'two', [{ name: 'web', port: 80, protocol: 'HTTP' }]),
      ],
      ports,
    );
    expect(conditions(listenerStatus(plan, 'infra', 'one', 'web').conditions)).toEqual(good);
    expect(conditions(listenerStatus(plan, 'infra', 'two', 'web').conditions)).toEqual(good);
    expect(conditions(listenerStatus(plan, 'infra', 'one', 'again').conditions)).toMatchObject({ Conflicted: 'True/HostnameConflict' });
  });

  it('refuses HTTPS without a usable certificate (InvalidCertificateRef) and HTTPS Passthrough (UnsupportedValue)', () => {
    const { plan, diagnostics } = runPlan(
      [
        gateway('infra', 'gw', [
          { name: 'nocert', port: 443, protocol: 'HTTPS', hostname: 'a.example.com' },
          { name: 'missing', port: 443, protocol: 'HTTPS', hostname: 'b.example.com', tls: { certificateRefs: [{ name: 'missing' }] } },
          { name: 'pass', port: 443, protocol: 'HTTPS', hostname: 'c.example.com', tls: { mode: 'Passthrough' } },
        ]),
      ],
      ports,
    );
    expect(conditions(listenerStatus(plan, 'infra', 'gw', 'nocert').conditions)).toMatchObject({ ResolvedRefs: 'False/InvalidCertificateRef', Programmed: 'False/Invalid' });
    expect(conditions(listenerStatus(plan, 'infra', 'gw', 'missing').conditions)).toMatchObject({ ResolvedRefs: 'False/InvalidCertificateRef', Programmed: 'False/Invalid' });
    expect(conditions(listenerStatus(plan, 'infra', 'gw', 'pass').conditions)).toMatchObject({ Accepted: 'False/UnsupportedValue' });
    expect(codes(diagnostics)).toEqual(['error:invalid-certificate-ref', 'error:invalid-certificate-ref', 'error:unsupported-value']);
  });

  it('lists HTTPRoute as the one kind of an HTTP listener and refuses TLSRoute there (InvalidRouteKinds)', () => {
    const { plan, diagnostics } = runPlan(
      [gateway('infra', 'gw', [{ name: 'web', port: 80, protocol: 'HTTP', allowedRoutes: { kinds: [{ kind: 'HTTPRoute' }, { kind: 'TLSRoute' }] } }])],
      ports,
    );
    const listener = listenerStatus(plan, 'infra', 'gw', 'web');
    expect(listener.supportedKinds).toEqual(httpRouteKind);
    expect(conditions(listener.conditions)).toMatchObject({ ResolvedRefs: 'False/InvalidRouteKinds' });
    expect(codes(diagnostics)).toEqual(['warning:invalid-route-kinds']);
  });

  it('does not attach a TLSRoute to an HTTP listener (NotAllowedByListeners)', () => {
    const { plan } = runPlan(
      [
        gateway('infra', 'gw', [{ name: 'web', port: 80, protocol: 'HTTP', allowedRoutes: { namespaces: { from: 'All' } } }]),
        tlsRoute('apps', 'app', { parentRefs: [{ name: 'gw', namespace: 'infra' }], hostnames: ['app.example.com'] }),
        service('apps', 'app', '10.0.0.1', [{ port: 8443 }]),
      ],
      ports,
    );
    expect(parentConditions(plan, 'apps', 'app')).toMatchObject({ Accepted: 'False/NotAllowedByListeners' });
    expect(listenerStatus(plan, 'infra', 'gw', 'web').attachedRoutes).toBe(0);
  });
});
