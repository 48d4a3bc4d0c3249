import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import type { CliRun } from '../support/cli.js';
import { echoBackendOf, httpGet, httpsGet, ownAddress, parseEcho, startDelayedBackend, startHttpBackend, startHttpsBackend, type Peer } from '../support/peers.js';
import { createCa, issueCertificate, tlsSecretManifest, type CertificateAuthority, type CertificateFiles } from '../support/pki.js';
import { cleanUp, configMapManifest, createTarget, documents, fingerprint, renderInto, settle, startPeer, startTarget, temporaryDir, type Target } from './harness.js';

/**
 * The GATEWAY-HTTP core scenarios of the upstream conformance suite that httproute-traffic.test.ts does
 * not hold: Service types, a route on several Gateways, ReferenceGrants that do not grant, and the
 * Gateway scenarios (attached routes, route kinds, certificates and their grants, protocols). Written
 * from each scenario's intent with our own manifests; real traffic through a real nginx where the
 * scenario sends traffic, the statuses of `render --format json` where it checks status.
 *
 * Rendered with `--upstreams endpoints`, so that a headless Service and one without a selector (whose
 * EndpointSlices are written by hand) are reached at their endpoints, as in the cluster. All Gateways
 * share one nginx here (the suite gives each its own address), so their listeners on one port carry
 * host names of their own. `--strict`, so that a Secret missing from the input counts as missing.
 */

afterAll(cleanUp);

const gatewayApi = 'gateway.networking.k8s.io/v1';

let target: Target;
let rendered: CliRun;
let ca: CertificateAuthority;
let grantedCert: CertificateFiles;
let backends: Record<'v1' | 'v2' | 'v3' | 'web' | 'slow' | 'secure', Peer>;
let address: string;

/** A Service (port 8080, named `http`) and its EndpointSlice at one of the backends. */
function service(namespace: string, name: string, peer: Peer, spec: Record<string, unknown> = { clusterIP: '10.96.0.10' }): string {
  return documents(
    stringify({ apiVersion: 'v1', kind: 'Service', metadata: { name, namespace }, spec: { ...spec, ports: [{ name: 'http', port: 8080, targetPort: peer.port }] } }),
    stringify({
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name: `${name}-ip4`, namespace, labels: { 'kubernetes.io/service-name': name } },
      addressType: 'IPv4',
      ports: [{ name: 'http', port: peer.port }],
      endpoints: [{ addresses: [address], conditions: { ready: true } }],
    }),
  );
}

function gateway(name: string, listeners: readonly Record<string, unknown>[]): string {
  return stringify({ apiVersion: gatewayApi, kind: 'Gateway', metadata: { name, namespace: 'infra' }, spec: { gatewayClassName: 'ingress2nginx', listeners } });
}

function httpRoute(namespace: string, name: string, spec: Record<string, unknown>): string {
  return stringify({ apiVersion: gatewayApi, kind: 'HTTPRoute', metadata: { name, namespace }, spec });
}

function grant(namespace: string, name: string, from: Record<string, string>, to: Record<string, string>): string {
  return stringify({ apiVersion: 'gateway.networking.k8s.io/v1beta1', kind: 'ReferenceGrant', metadata: { name, namespace }, spec: { from: [from], to: [to] } });
}

function backendTlsPolicy(service: string, caConfigMap: string, hostname: string): string {
  return stringify({
    apiVersion: gatewayApi,
    kind: 'BackendTLSPolicy',
    metadata: { name: service, namespace: 'infra' },
    spec: { targetRefs: [{ group: '', kind: 'Service', name: service }], validation: { caCertificateRefs: [{ group: '', kind: 'ConfigMap', name: caConfigMap }], hostname } },
  });
}

const toV = (name: 'v1' | 'v2' | 'v3', more: Record<string, unknown> = {}) => ({ name, port: 8080, ...more });
const exact = (value: string) => ({ path: { type: 'Exact', value } });
const prefix = (value: string) => ({ path: { type: 'PathPrefix', value } });
/** The rules' timeout in the timeout scenarios: long enough for an answer at once on a busy machine. */
const timeoutMs = 1500;
const parent = (name: string, more: Record<string, unknown> = {}) => ({ name, namespace: 'infra', ...more });

beforeAll(async () => {
  address = ownAddress();
  const dir = await temporaryDir();
  ca = await createCa(dir, 'HTTPRoute scenarios CA');
  grantedCert = await issueCertificate(ca, { commonName: '*.granted.example.test', sans: ['*.granted.example.test'] });
  const backendCert = await issueCertificate(ca, { commonName: 'backend.example.test', sans: ['backend.example.test'] });
  backends = await settle({
    v1: startPeer(startHttpBackend('v1', address)),
    v2: startPeer(startHttpBackend('v2', address)),
    v3: startPeer(startHttpBackend('v3', address)),
    web: startPeer(startHttpBackend('web', address)),
    slow: startPeer(startDelayedBackend('slow', address)),
    secure: startPeer(startHttpsBackend({ name: 'secure', cert: backendCert.certPem, key: backendCert.keyPem, host: address })),
  });
  target = await createTarget();
  const http = (name: string, hostname: string, more: Record<string, unknown> = {}) => ({
    name,
    port: target.httpPort,
    protocol: 'HTTP',
    hostname,
    allowedRoutes: { namespaces: { from: 'All' } },
    ...more,
  });
  const https = (hostname: string, certificateRef: Record<string, unknown>) => ({
    name: 'https',
    port: target.httpsPort,
    protocol: 'HTTPS',
    hostname,
    tls: { certificateRefs: [certificateRef] },
    allowedRoutes: { namespaces: { from: 'All' } },
  });
  const onlyInfra = { namespaces: { from: 'Selector', selector: { matchLabels: { 'kubernetes.io/metadata.name': 'infra' } } }, kinds: [{ kind: 'HTTPRoute' }] };
  const gatewayFrom = { group: 'gateway.networking.k8s.io', kind: 'Gateway', namespace: 'infra' };
  const toSecret = { group: '', kind: 'Secret' };

  const manifests = documents(
    configMapManifest('ingress-nginx', 'controller', { 'worker-processes': '1' }),
    stringify({ apiVersion: gatewayApi, kind: 'GatewayClass', metadata: { name: 'ingress2nginx' }, spec: { controllerName: 'ingress2nginx.dev/controller' } }),
    ...(['v1', 'v2', 'v3'] as const).map((name) => service('infra', name, backends[name])),
    service('web-backend', 'web', backends.web),
    gateway('same', [http('http', 'types.example.test', { allowedRoutes: { namespaces: { from: 'Same' } } })]),

    // HTTPRouteServiceTypes: a Service without selector and with EndpointSlices written by hand, a
    // headless one, and a headless one with EndpointSlices written by hand.
    service('infra', 'manual-endpointslices', backends.v1),
    service('infra', 'headless', backends.v1, { clusterIP: 'None', selector: { app: 'v1' } }),
    service('infra', 'headless-manual-endpointslices', backends.v1, { clusterIP: 'None' }),
    httpRoute('infra', 'service-types', {
      parentRefs: [parent('same')],
      rules: ['manual-endpointslices', 'headless', 'headless-manual-endpointslices'].map((name) => ({
        matches: [exact(`/${name}`)],
        backendRefs: [{ name, port: 8080 }],
      })),
    }),

    // HTTPRouteMultipleGateways: one route on two Gateways, and a route of each Gateway's own.
    gateway('first', [http('http', 'first.example.test', { allowedRoutes: { namespaces: { from: 'Same' } } })]),
    gateway('second', [http('http', 'second.example.test')]),
    httpRoute('infra', 'shared', { parentRefs: [parent('first'), parent('second')], rules: [{ matches: [prefix('/shared')], backendRefs: [toV('v1')] }] }),
    httpRoute('infra', 'first-only', { parentRefs: [parent('first')], rules: [{ matches: [prefix('/')], backendRefs: [toV('v2')] }] }),
    httpRoute('infra', 'second-only', { parentRefs: [parent('second')], rules: [{ matches: [prefix('/')], backendRefs: [toV('v3')] }] }),
    // HTTP listeners of two Gateways on one port and host name are served as one.
    gateway('merged-a', [http('http', 'merged.example.test')]),
    gateway('merged-b', [http('http', 'merged.example.test')]),
    httpRoute('infra', 'on-merged-a', { parentRefs: [parent('merged-a')], rules: [{ matches: [prefix('/a')], backendRefs: [toV('v1')] }] }),
    httpRoute('infra', 'on-merged-b', { parentRefs: [parent('merged-b')], rules: [{ matches: [prefix('/b')], backendRefs: [toV('v2')] }] }),

    // HTTPRouteInvalidReferenceGrant: grants that each get one field wrong grant nothing.
    gateway('grants', [http('http', 'grants.example.test')]),
    grant('infra', 'wrong-namespace', { group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', namespace: 'infra' }, { group: '', kind: 'Service', name: 'web' }),
    grant('web-backend', 'wrong-from-group', { group: 'example.com', kind: 'HTTPRoute', namespace: 'infra' }, { group: '', kind: 'Service', name: 'web' }),
    grant('web-backend', 'wrong-from-kind', { group: 'gateway.networking.k8s.io', kind: 'Gateway', namespace: 'infra' }, { group: '', kind: 'Service', name: 'web' }),
    grant('web-backend', 'wrong-from-namespace', { group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', namespace: 'elsewhere' }, { group: '', kind: 'Service', name: 'web' }),
    grant('web-backend', 'wrong-to-group', { group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', namespace: 'infra' }, { group: 'example.com', kind: 'Service', name: 'web' }),
    grant('web-backend', 'wrong-to-kind', { group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', namespace: 'infra' }, { group: '', kind: 'Secret', name: 'web' }),
    grant('web-backend', 'wrong-to-name', { group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', namespace: 'infra' }, { group: '', kind: 'Service', name: 'other' }),
    httpRoute('infra', 'not-granted', { parentRefs: [parent('grants')], rules: [{ backendRefs: [{ name: 'web', namespace: 'web-backend', port: 8080 }] }] }),

    // HTTPRouteDisallowedKind: a Gateway whose one listener takes TLSRoutes only.
    gateway('tls-only', [
      { name: 'tls', port: target.httpsPort, protocol: 'TLS', hostname: 'tls-only.example.test', tls: { mode: 'Passthrough' }, allowedRoutes: { namespaces: { from: 'Same' }, kinds: [{ kind: 'TLSRoute' }] } },
    ]),
    httpRoute('infra', 'disallowed-kind', { parentRefs: [parent('tls-only')], rules: [{ backendRefs: [toV('v1')] }] }),

    // GatewayWithAttachedRoutes: listeners count the routes attached to them, also while the listener is
    // not programmed (a certificate that is not there); a route whose host names miss the listener's is not.
    gateway('one-route', [http('http', 'one-route.example.test', { allowedRoutes: onlyInfra })]),
    httpRoute('infra', 'route-1', { parentRefs: [parent('one-route')], rules: [{ backendRefs: [toV('v1')] }] }),
    gateway('two-routes', [http('http', 'two-routes.example.test', { allowedRoutes: onlyInfra })]),
    httpRoute('infra', 'route-2', { parentRefs: [parent('two-routes')], rules: [{ backendRefs: [toV('v1')] }] }),
    httpRoute('infra', 'route-3', { parentRefs: [parent('two-routes')], rules: [{ backendRefs: [toV('v1')] }] }),
    httpRoute('infra', 'route-not-accepted', { parentRefs: [parent('two-routes')], hostnames: ['not-accepted.example.test'], rules: [{ backendRefs: [toV('v1')] }] }),
    gateway('unresolved', [{ ...https('unresolved.example.test', { name: 'does-not-exist' }), allowedRoutes: onlyInfra }]),
    httpRoute('infra', 'route-4', { parentRefs: [parent('unresolved', { sectionName: 'https' })], rules: [{ backendRefs: [{ name: 'does-not-exist', port: 8080 }] }] }),

    // GatewayInvalidRouteKind
    gateway('only-invalid-kind', [http('http', 'invalid-kind.example.test', { allowedRoutes: { namespaces: { from: 'All' }, kinds: [{ kind: 'InvalidRoute' }] } })]),
    gateway('some-invalid-kind', [
      http('http', 'some-invalid-kind.example.test', { allowedRoutes: { namespaces: { from: 'All' }, kinds: [{ kind: 'InvalidRoute' }, { kind: 'HTTPRoute' }] } }),
    ]),

    // GatewayInvalidTLSConfiguration: a Secret that is not there, of another group or kind, or malformed.
    gateway('nonexistent-secret', [https('nonexistent.example.test', { name: 'nonexistent-certificate' })]),
    gateway('unsupported-group', [https('group.example.test', { group: 'wrong.example.com', kind: 'Secret', name: 'granted' })]),
    gateway('unsupported-kind', [https('kind.example.test', { group: '', kind: 'WrongKind', name: 'granted' })]),
    gateway('malformed-secret', [https('malformed.example.test', { name: 'malformed-certificate' })]),
    stringify({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'malformed-certificate', namespace: 'infra' },
      type: 'kubernetes.io/tls',
      data: { 'tls.crt': Buffer.from('Hello world\n').toString('base64'), 'tls.key': Buffer.from('Hello world\n').toString('base64') },
    }),

    // GatewaySecretReferenceGrantSpecific, …AllInNamespace, …MissingReferenceGrant, …InvalidReferenceGrant:
    // the certificate of another namespace, granted by name, for all Secrets there, not at all, and by
    // grants that each get one field wrong. Each Gateway takes one host name of the certificate.
    tlsSecretManifest({ name: 'certificate', namespace: 'certs', certificate: grantedCert }),
    gateway('secret-specific', [https('specific.granted.example.test', { name: 'certificate', namespace: 'certs' })]),
    httpRoute('infra', 'granted-certificate', { parentRefs: [parent('secret-specific')], rules: [{ backendRefs: [toV('v1')] }] }),
    tlsSecretManifest({ name: 'certificate', namespace: 'certs-ungranted', certificate: grantedCert }),
    gateway('secret-missing', [https('missing.granted.example.test', { name: 'certificate', namespace: 'certs-ungranted' })]),
    grant('certs', 'specific', gatewayFrom, { ...toSecret, name: 'certificate' }),
    grant('certs-all', 'all', gatewayFrom, toSecret),
    tlsSecretManifest({ name: 'certificate', namespace: 'certs-all', certificate: grantedCert }),
    gateway('secret-all', [https('all.granted.example.test', { name: 'certificate', namespace: 'certs-all' })]),
    httpRoute('infra', 'all-granted-certificate', { parentRefs: [parent('secret-all')], rules: [{ backendRefs: [toV('v2')] }] }),
    tlsSecretManifest({ name: 'certificate', namespace: 'certs-wrong', certificate: grantedCert }),
    gateway('secret-wrong', [https('wrong.granted.example.test', { name: 'certificate', namespace: 'certs-wrong' })]),
    grant('certs', 'wrong-namespace', gatewayFrom, { ...toSecret, name: 'certificate' }),
    grant('certs-wrong', 'wrong-from-group', { ...gatewayFrom, group: 'example.com' }, { ...toSecret, name: 'certificate' }),
    grant('certs-wrong', 'wrong-from-kind', { ...gatewayFrom, kind: 'HTTPRoute' }, { ...toSecret, name: 'certificate' }),
    grant('certs-wrong', 'wrong-from-namespace', { ...gatewayFrom, namespace: 'elsewhere' }, { ...toSecret, name: 'certificate' }),
    grant('certs-wrong', 'wrong-to-group', gatewayFrom, { group: 'example.com', kind: 'Secret', name: 'certificate' }),
    grant('certs-wrong', 'wrong-to-kind', gatewayFrom, { group: '', kind: 'Service', name: 'certificate' }),
    grant('certs-wrong', 'wrong-to-name', gatewayFrom, { ...toSecret, name: 'other' }),

    // HTTPRouteInvalidParentRefSectionNameNotMatchingPort: the listener by name, on a port it does not have.
    httpRoute('infra', 'section-port-mismatch', {
      parentRefs: [parent('same', { sectionName: 'http', port: target.httpPort + 1 })],
      hostnames: ['types.example.test'],
      rules: [{ matches: [prefix('/mismatch')], backendRefs: [toV('v2')] }],
    }),

    // HTTPRouteHostnameIntersection, the cases httproute-traffic.test.ts does not have: a wildcard route
    // on a wildcard listener, host names that meet no listener, and a listener without a host name.
    gateway('intersection', [http('specific', 'very.specific.com'), http('another', '*.anotherwildcard.io')]),
    httpRoute('infra', 'wildcard-on-wildcard', { parentRefs: [parent('intersection')], hostnames: ['*.anotherwildcard.io'], rules: [{ matches: [prefix('/s4')], backendRefs: [toV('v1')] }] }),
    httpRoute('infra', 'no-intersecting-hosts', {
      parentRefs: [parent('intersection')],
      hostnames: ['specific.but.wrong.com', 'wildcard.io'],
      rules: [{ matches: [prefix('/s5')], backendRefs: [toV('v2')] }],
    }),
    gateway('intersection-all', [{ name: 'http', port: target.httpPort, protocol: 'HTTP', allowedRoutes: { namespaces: { from: 'Same' } } }]),
    httpRoute('infra', 'any-listener-host', {
      parentRefs: [parent('intersection-all')],
      hostnames: ['first.com', 'sub.first.com', 'second.com', 'sub.second.com'],
      rules: [{ backendRefs: [toV('v2')] }],
    }),

    // HTTPRouteTimeoutRequest, HTTPRouteTimeoutBackendRequest (extended): a backend slower than the
    // rule's timeout is answered 504; 0s is no timeout.
    service('infra', 'slow', backends.slow),
    httpRoute('infra', 'timeouts', {
      parentRefs: [parent('same')],
      hostnames: ['types.example.test'],
      rules: [
        { matches: [prefix('/request-timeout')], backendRefs: [{ name: 'slow', port: 8080 }], timeouts: { request: `${timeoutMs}ms` } },
        { matches: [prefix('/disable-request-timeout')], backendRefs: [{ name: 'slow', port: 8080 }], timeouts: { request: '0s' } },
        { matches: [prefix('/backend-timeout')], backendRefs: [{ name: 'slow', port: 8080 }], timeouts: { backendRequest: `${timeoutMs}ms` } },
        { matches: [prefix('/disable-backend-timeout')], backendRefs: [{ name: 'slow', port: 8080 }], timeouts: { request: '0s', backendRequest: '0s' } },
      ],
    }),

    // BackendTLSPolicy (extended) on HTTPRoute backends: TLS to the backend, verified against the
    // policy's CA and hostname (sent as SNI); a name the certificate does not have fails (502); a
    // policy without a usable CA answers 500, never plaintext.
    service('infra', 'secure', backends.secure),
    service('infra', 'secure-wrong-name', backends.secure),
    service('infra', 'secure-no-ca', backends.secure),
    configMapManifest('infra', 'backend-ca', { 'ca.crt': ca.certPem }),
    backendTlsPolicy('secure', 'backend-ca', 'backend.example.test'),
    backendTlsPolicy('secure-wrong-name', 'backend-ca', 'other.example.test'),
    backendTlsPolicy('secure-no-ca', 'missing-ca', 'backend.example.test'),
    httpRoute('infra', 'backend-tls', {
      parentRefs: [parent('same')],
      hostnames: ['types.example.test'],
      rules: ['secure', 'secure-wrong-name', 'secure-no-ca'].map((name) => ({ matches: [prefix(`/${name}`)], backendRefs: [{ name, port: 8080 }] })),
    }),

    // GatewayListenerUnsupportedProtocol: a Gateway with one valid listener and one of an unknown protocol.
    gateway('unknown-protocol', [http('http', 'protocol.example.test'), { name: 'invalid', port: 1111, protocol: 'INVALID' }]),
  );

  // --strict: a Secret missing from the input is missing, as in the cluster mode (without it, render
  // takes it for one the cluster makes when the manifests are applied, e.g. by cert-manager).
  rendered = await renderInto(target, manifests, ['--configmap', 'ingress-nginx/controller', '--upstreams', 'endpoints', '--strict', '--format', 'json']);
  expect(rendered.stderr).not.toContain('internal error');
  expect(rendered.exitCode, rendered.stderr).toBe(1);
  await startTarget(target);
});

// -------------------------------------------------------------------------------------- helpers

async function plain(host: string, path = '/'): Promise<string> {
  return echoBackendOf(await httpGet({ port: target.httpPort, host, path }));
}

type Conditions = readonly { type: string; status: string; reason: string }[];
interface JsonReport {
  readonly status: Record<
    string,
    {
      readonly conditions?: Conditions;
      readonly parents?: readonly { parentRef: { name: string }; conditions: Conditions }[];
      readonly listeners?: readonly { name: string; attachedRoutes: number; supportedKinds: readonly { kind: string }[]; conditions: Conditions }[];
    }
  >;
}

const summary = (conditions: Conditions | undefined) => Object.fromEntries((conditions ?? []).map((c) => [c.type, `${c.status}/${c.reason}`]));

/** `{ Accepted: 'True/Accepted', … }` of the route's parent (the first, or the one of `gateway`). */
function routeConditions(name: string, gateway?: string): Record<string, string> {
  const parents = (JSON.parse(rendered.stdout) as JsonReport).status[`HTTPRoute/infra/${name}`]?.parents ?? [];
  return summary((gateway === undefined ? parents[0] : parents.find((p) => p.parentRef.name === gateway))?.conditions);
}

/** The Gateway's conditions, and each listener's with its attached routes and supported kinds. */
function gatewayStatus(name: string) {
  const status = (JSON.parse(rendered.stdout) as JsonReport).status[`Gateway/infra/${name}`];
  return {
    conditions: summary(status?.conditions),
    listeners: Object.fromEntries(
      (status?.listeners ?? []).map((l) => [l.name, { attachedRoutes: l.attachedRoutes, supportedKinds: l.supportedKinds.map((k) => k.kind), ...summary(l.conditions) }]),
    ),
  };
}

// -------------------------------------------------------------------------------------- scenarios

describe('GATEWAY-HTTP core scenarios, with real traffic (--upstreams endpoints)', () => {
  it('HTTPRouteServiceTypes: a Service with EndpointSlices written by hand, a headless one, and both', async () => {
    expect(routeConditions('service-types')).toEqual({ Accepted: 'True/Accepted', ResolvedRefs: 'True/ResolvedRefs' });
    for (const path of ['/manual-endpointslices', '/headless', '/headless-manual-endpointslices']) expect(await plain('types.example.test', path), path).toBe('v1');
  });

  it('HTTPRouteMultipleGateways: a route on two Gateways serves on both; each Gateway keeps its own route', async () => {
    for (const gateway of ['first', 'second']) expect(routeConditions('shared', gateway), gateway).toEqual({ Accepted: 'True/Accepted', ResolvedRefs: 'True/ResolvedRefs' });
    expect(await plain('first.example.test', '/shared')).toBe('v1');
    expect(await plain('first.example.test', '/')).toBe('v2');
    expect(await plain('second.example.test', '/shared')).toBe('v1');
    expect(await plain('second.example.test', '/')).toBe('v3');
    for (const gateway of ['merged-a', 'merged-b']) expect(gatewayStatus(gateway).listeners['http'], gateway).toMatchObject({ Conflicted: 'False/NoConflicts', Programmed: 'True/Programmed' });
    expect(await plain('merged.example.test', '/a')).toBe('v1');
    expect(await plain('merged.example.test', '/b')).toBe('v2');
  });

  it('HTTPRouteInvalidReferenceGrant: grants with one field wrong grant nothing (RefNotPermitted, 500)', async () => {
    expect(routeConditions('not-granted')).toEqual({ Accepted: 'True/Accepted', ResolvedRefs: 'False/RefNotPermitted' });
    expect(await plain('grants.example.test')).toBe('500');
    expect(backends.web.port).toBeGreaterThan(0);
  });

  it('HTTPRouteDisallowedKind: an HTTPRoute does not attach to a listener for TLSRoutes only', () => {
    expect(routeConditions('disallowed-kind')).toEqual({ Accepted: 'False/NotAllowedByListeners', ResolvedRefs: 'True/ResolvedRefs' });
    expect(gatewayStatus('tls-only').listeners['tls']).toMatchObject({ attachedRoutes: 0 });
  });

  it('GatewayWithAttachedRoutes: listeners count their routes, also while not programmed', () => {
    expect(gatewayStatus('one-route').listeners['http']).toMatchObject({ attachedRoutes: 1, supportedKinds: ['HTTPRoute'], Accepted: 'True/Accepted', ResolvedRefs: 'True/ResolvedRefs' });
    expect(gatewayStatus('two-routes').listeners['http']).toMatchObject({ attachedRoutes: 2, supportedKinds: ['HTTPRoute'], Accepted: 'True/Accepted', ResolvedRefs: 'True/ResolvedRefs' });
    expect(routeConditions('route-not-accepted')).toMatchObject({ Accepted: 'False/NoMatchingListenerHostname' });
    expect(gatewayStatus('unresolved').listeners['https']).toMatchObject({
      attachedRoutes: 1,
      supportedKinds: ['HTTPRoute'],
      ResolvedRefs: 'False/InvalidCertificateRef',
      Programmed: expect.stringMatching(/^False\//),
    });
    expect(routeConditions('route-4')).toMatchObject({ ResolvedRefs: 'False/BackendNotFound' });
  });

  it('GatewayInvalidRouteKind: an unknown kind is InvalidRouteKinds and left out of supportedKinds', () => {
    expect(gatewayStatus('only-invalid-kind').listeners['http']).toMatchObject({ attachedRoutes: 0, supportedKinds: [], ResolvedRefs: 'False/InvalidRouteKinds' });
    expect(gatewayStatus('some-invalid-kind').listeners['http']).toMatchObject({ attachedRoutes: 0, supportedKinds: ['HTTPRoute'], ResolvedRefs: 'False/InvalidRouteKinds' });
  });

  it('GatewayInvalidTLSConfiguration: a missing, foreign or malformed certificate Secret is InvalidCertificateRef', () => {
    for (const name of ['nonexistent-secret', 'unsupported-group', 'unsupported-kind', 'malformed-secret']) {
      expect(gatewayStatus(name).listeners['https'], name).toMatchObject({ attachedRoutes: 0, supportedKinds: ['HTTPRoute', 'GRPCRoute'], ResolvedRefs: 'False/InvalidCertificateRef' });
    }
  });

  it('GatewaySecretReferenceGrantSpecific and …AllInNamespace: a granted certificate of another namespace is served', async () => {
    for (const [gateway, host, backend] of [
      ['secret-specific', 'specific.granted.example.test', 'v1'],
      ['secret-all', 'all.granted.example.test', 'v2'],
    ] as const) {
      expect(gatewayStatus(gateway).listeners['https'], gateway).toMatchObject({ ResolvedRefs: 'True/ResolvedRefs', Programmed: 'True/Programmed' });
      const response = await httpsGet({ port: target.httpsPort, servername: host, ca: ca.certPem });
      expect(echoBackendOf(response), host).toBe(backend);
      expect(response.peerCertificate?.fingerprint256).toBe(fingerprint(grantedCert.certPem));
    }
  });

  it('GatewaySecretMissingReferenceGrant and …InvalidReferenceGrant: no grant, or grants with one field wrong, is RefNotPermitted', () => {
    for (const name of ['secret-missing', 'secret-wrong']) {
      expect(gatewayStatus(name).listeners['https'], name).toMatchObject({ ResolvedRefs: 'False/RefNotPermitted', Programmed: expect.stringMatching(/^False\//) });
    }
  });

  it('HTTPRouteInvalidParentRefSectionNameNotMatchingPort: a listener named right on the wrong port is NoMatchingParent', async () => {
    expect(routeConditions('section-port-mismatch')).toMatchObject({ Accepted: 'False/NoMatchingParent' });
    expect(await plain('types.example.test', '/mismatch')).toBe('404');
  });

  it('HTTPRouteHostnameIntersection: a wildcard route on a wildcard listener, no intersection, a listener without host name', async () => {
    for (const host of ['foo.anotherwildcard.io', 'a.b.anotherwildcard.io']) expect(await plain(host, '/s4'), host).toBe('v1');
    for (const host of ['anotherwildcard.io', 'very.specific.com']) expect(await plain(host, '/s4'), host).toBe('404');
    expect(routeConditions('no-intersecting-hosts')).toMatchObject({ Accepted: 'False/NoMatchingListenerHostname' });
    for (const host of ['specific.but.wrong.com', 'wildcard.io']) expect(await plain(host, '/s5'), host).toBe('404');
    for (const host of ['first.com', 'sub.first.com', 'second.com', 'sub.second.com']) expect(await plain(host), host).toBe('v2');
    for (const host of ['third.com', 'sub.sub.first.com']) expect(await plain(host), host).toBe('404');
  });

  it('HTTPRouteTimeoutRequest, HTTPRouteTimeoutBackendRequest: a backend slower than the timeout is answered 504; 0s is none', async () => {
    const slowerThanTimeout = `delay=${timeoutMs * 40}`;
    const longerThanTimeout = `delay=${timeoutMs + 500}`;
    for (const kind of ['request', 'backend']) {
      expect(await plain('types.example.test', `/${kind}-timeout`), kind).toBe('slow');
      expect(await plain('types.example.test', `/${kind}-timeout?${slowerThanTimeout}`), kind).toBe('504');
      expect(await plain('types.example.test', `/disable-${kind}-timeout?${longerThanTimeout}`), kind).toBe('slow');
    }
  });

  it('BackendTLSPolicy on HTTPRoute backends: verified TLS with the policy hostname as SNI; a wrong name 502; no CA 500', async () => {
    const response = await httpGet({ port: target.httpPort, host: 'types.example.test', path: '/secure' });
    expect(response.status).toBe(200);
    expect(parseEcho(response.body)).toMatchObject({ backend: 'secure', servername: 'backend.example.test' });
    expect(await plain('types.example.test', '/secure-wrong-name')).toBe('502');
    expect(await plain('types.example.test', '/secure-no-ca')).toBe('500');
    const report = JSON.parse(rendered.stdout) as { status: Record<string, { ancestors?: { ancestorRef: { name: string }; conditions: Conditions }[] }> };
    const policy = (name: string) => report.status[`BackendTLSPolicy/infra/${name}`]?.ancestors?.map((a) => ({ gateway: a.ancestorRef.name, ...summary(a.conditions) }));
    expect(policy('secure')).toEqual([{ gateway: 'same', Accepted: 'True/Accepted', ResolvedRefs: 'True/ResolvedRefs' }]);
    expect(policy('secure-no-ca')).toEqual([{ gateway: 'same', Accepted: 'False/NoValidCACertificate', ResolvedRefs: 'False/InvalidCACertificateRef' }]);
  });

  it('GatewayListenerUnsupportedProtocol: the unknown protocol is UnsupportedProtocol; the Gateway is Accepted with ListenersNotValid', async () => {
    const status = gatewayStatus('unknown-protocol');
    expect(status.conditions).toMatchObject({ Accepted: 'True/ListenersNotValid' });
    expect(status.listeners['invalid']).toMatchObject({ Accepted: 'False/UnsupportedProtocol' });
    expect(status.listeners['http']).toMatchObject({ Accepted: 'True/Accepted', Programmed: 'True/Programmed' });
  });
});
