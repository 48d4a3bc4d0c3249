import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import type { CliRun } from '../support/cli.js';
import { echoBackendOf, httpGet, httpsGet, parseEcho, startHttpBackend, startHttpsBackend, type Peer } from '../support/peers.js';
import { createCa, issueCertificate, tlsSecretManifest, type CertificateAuthority, type CertificateFiles } from '../support/pki.js';
import { freePorts } from '../support/ports.js';
import { startNginx } from '../support/nginx.js';
import { cleanUp, configMapManifest, createTarget, documents, fingerprint, ingressManifest, renderInto, serviceManifest, settle, startPeer, temporaryDir, type Target } from './harness.js';

/**
 * Gateways on ports of their own, as the upstream conformance suite runs them (each Gateway an address
 * of its own): every listener is served on the port it names, with servers of that port's own, beside
 * the Ingresses on --http-port/--https-port. The upstream scenarios that need it, each written from its
 * intent with our own manifests, with real traffic through a real nginx and the statuses of
 * `render --format json`: HTTPRouteMultipleGateways (distinct ports), HTTPRouteListenerPortMatching,
 * HTTPRouteInvalidParentRefNotMatchingListenerPort, GatewayWithAttachedRoutesWithPort8080,
 * HTTPRouteRedirectPortAndScheme, HTTPRouteDisallowedKind and TLSRouteInvalidNoMatchingListener on
 * Gateways of their own ports; and what sharing a port means (HostnameConflict, ProtocolConflict).
 */

afterAll(cleanUp);

const gatewayApi = 'gateway.networking.k8s.io/v1';

let target: Target;
let rendered: CliRun;
let ca: CertificateAuthority;
let gatewayCert: CertificateFiles;
let backendCert: CertificateFiles;
let backends: Record<'v1' | 'v2' | 'v3' | 'ingress', Peer> & { secure: Peer };
/** Ports the Gateways name, none of them the Ingress ports. */
let ports: Record<'first' | 'second' | 'matchA' | 'matchB' | 'p8080' | 'redirectHttp' | 'redirectHttps' | 'secure' | 'tlsOnly' | 'httpOnly' | 'unused', number>;

function gateway(name: string, listeners: readonly Record<string, unknown>[], creationTimestamp = '2025-01-01T00:00:00Z'): string {
  return stringify({ apiVersion: gatewayApi, kind: 'Gateway', metadata: { name, namespace: 'infra', creationTimestamp }, spec: { gatewayClassName: 'ingress2nginx', listeners } });
}

function route(kind: 'HTTPRoute' | 'TLSRoute', name: string, spec: Record<string, unknown>): string {
  return stringify({ apiVersion: gatewayApi, kind, metadata: { name, namespace: 'infra' }, spec });
}

const http = (name: string, port: number, more: Record<string, unknown> = {}) => ({ name, port, protocol: 'HTTP', ...more });
const https = (name: string, port: number, more: Record<string, unknown> = {}) => ({ name, port, protocol: 'HTTPS', tls: { certificateRefs: [{ name: 'gateway-cert' }] }, ...more });
const to = (peer: 'v1' | 'v2' | 'v3' | 'secure') => [{ name: peer, port: backends[peer].port }];
const prefix = (value: string) => [{ path: { type: 'PathPrefix', value } }];
const parent = (name: string, more: Record<string, unknown> = {}) => ({ name, ...more });
const redirect = (path: string, requestRedirect: Record<string, unknown>) => ({ matches: prefix(path), filters: [{ type: 'RequestRedirect', requestRedirect }] });

beforeAll(async () => {
  ca = await createCa(await temporaryDir(), 'own ports CA');
  gatewayCert = await issueCertificate(ca, { commonName: '*.example.test', sans: ['*.example.test'] });
  backendCert = await issueCertificate(ca, { commonName: 'tunnel.example.test', sans: ['tunnel.example.test'] });
  backends = await settle({
    v1: startPeer(startHttpBackend('v1')),
    v2: startPeer(startHttpBackend('v2')),
    v3: startPeer(startHttpBackend('v3')),
    ingress: startPeer(startHttpBackend('ingress')),
    secure: startPeer(startHttpsBackend({ name: 'secure', cert: backendCert.certPem, key: backendCert.keyPem })),
  });
  target = await createTarget();
  const free = await freePorts(11);
  const names = ['first', 'second', 'matchA', 'matchB', 'p8080', 'redirectHttp', 'redirectHttps', 'secure', 'tlsOnly', 'httpOnly', 'unused'] as const;
  ports = Object.fromEntries(names.map((name, i) => [name, free[i]])) as typeof ports;

  const manifests = documents(
    configMapManifest('ingress-nginx', 'controller', { 'worker-processes': '1' }),
    ...(['v1', 'v2', 'v3', 'secure', 'ingress'] as const).map((name) => serviceManifest('infra', name, backends[name])),
    tlsSecretManifest({ name: 'gateway-cert', namespace: 'infra', certificate: gatewayCert }),
    // An Ingress on the Ingress HTTP port for a host name the Gateways route too: it stays the Ingress's there.
    ingressManifest({
      name: 'web',
      namespace: 'infra',
      rules: [{ host: 'same.example.test', paths: [{ path: '/', pathType: 'Prefix', backend: { service: 'ingress', port: backends.ingress.port } }] }],
    }),

    // HTTPRouteMultipleGateways: one route on two Gateways, each Gateway with a route of its own for `/`.
    gateway('first', [http('http', ports.first)]),
    gateway('second', [http('http', ports.second)]),
    route('HTTPRoute', 'shared', { parentRefs: [parent('first'), parent('second')], hostnames: ['same.example.test'], rules: [{ matches: prefix('/shared'), backendRefs: to('v1') }] }),
    route('HTTPRoute', 'first-only', { parentRefs: [parent('first')], hostnames: ['same.example.test'], rules: [{ backendRefs: to('v2') }] }),
    route('HTTPRoute', 'second-only', { parentRefs: [parent('second')], hostnames: ['same.example.test'], rules: [{ backendRefs: to('v3') }] }),

    // HTTPRouteListenerPortMatching and HTTPRouteInvalidParentRefNotMatchingListenerPort: routes bound by `port`.
    gateway('matching', [http('a', ports.matchA), http('b', ports.matchB)]),
    route('HTTPRoute', 'on-a', { parentRefs: [parent('matching', { port: ports.matchA })], rules: [{ backendRefs: to('v1') }] }),
    route('HTTPRoute', 'on-b', { parentRefs: [parent('matching', { port: ports.matchB })], rules: [{ backendRefs: to('v2') }] }),
    route('HTTPRoute', 'on-no-listener', { parentRefs: [parent('matching', { port: ports.unused })], rules: [{ matches: prefix('/none'), backendRefs: to('v3') }] }),

    // GatewayWithAttachedRoutesWithPort8080 (the port is a free one here).
    gateway('port-8080', [http('http', ports.p8080)]),
    route('HTTPRoute', 'attached', { parentRefs: [parent('port-8080')], rules: [{ backendRefs: to('v1') }] }),

    // HTTPRouteRedirectPortAndScheme: a redirect without a port keeps the listener's, one with a scheme
    // only takes the scheme's well-known port.
    gateway('redirects', [http('http', ports.redirectHttp), https('https', ports.redirectHttps, { hostname: 'redirect.example.test' })]),
    route('HTTPRoute', 'redirect-http', {
      parentRefs: [parent('redirects', { sectionName: 'http' })],
      hostnames: ['redirect.example.test'],
      rules: [
        redirect('/scheme-nil-and-port-nil', {}),
        redirect('/scheme-nil-and-port-8443', { port: 8443 }),
        redirect('/scheme-https-and-port-nil', { scheme: 'https' }),
        redirect('/scheme-https-and-port-own', { scheme: 'https', port: ports.redirectHttps }),
      ],
    }),
    route('HTTPRoute', 'redirect-https', {
      parentRefs: [parent('redirects', { sectionName: 'https' })],
      hostnames: ['redirect.example.test'],
      rules: [redirect('/scheme-nil-and-port-nil', {}), redirect('/scheme-http-and-port-nil', { scheme: 'http' })],
    }),

    // A port of one Gateway's own with HTTPS (no host name: its certificate for unknown names) beside a
    // TLS Passthrough listener; a newer Gateway's listeners there conflict, by host name and by protocol.
    gateway('secure', [https('https', ports.secure), { name: 'tunnel', port: ports.secure, protocol: 'TLS', hostname: 'tunnel.example.test', tls: { mode: 'Passthrough' } }]),
    route('HTTPRoute', 'secure-app', { parentRefs: [parent('secure', { sectionName: 'https' })], hostnames: ['app.example.test'], rules: [{ backendRefs: to('v2') }] }),
    route('TLSRoute', 'tunnel', { parentRefs: [parent('secure', { sectionName: 'tunnel' })], hostnames: ['tunnel.example.test'], rules: [{ backendRefs: to('secure') }] }),
    gateway('secure-newer', [https('https', ports.secure), http('plain', ports.secure, { hostname: 'plain.example.test' })], '2025-02-01T00:00:00Z'),

    // HTTPRouteDisallowedKind and TLSRouteInvalidNoMatchingListener, each Gateway on a port of its own.
    gateway('tls-only', [{ name: 'tls', port: ports.tlsOnly, protocol: 'TLS', tls: { mode: 'Passthrough' }, allowedRoutes: { kinds: [{ kind: 'TLSRoute' }] } }]),
    route('HTTPRoute', 'disallowed-kind', { parentRefs: [parent('tls-only')], rules: [{ backendRefs: to('v1') }] }),
    gateway('http-only', [http('http', ports.httpOnly)]),
    route('TLSRoute', 'no-tls-listener', { parentRefs: [parent('http-only')], hostnames: ['tls.example.test'], rules: [{ backendRefs: to('secure') }] }),
  );
  rendered = await renderInto(target, manifests, ['--configmap', 'ingress-nginx/controller', '--format', 'json']);
  expect(rendered.stderr).not.toContain('internal error');
  expect(rendered.exitCode, rendered.stderr).toBe(0);
  const listened = [target.httpPort, target.httpsPort, ...Object.entries(ports).filter(([name]) => name !== 'unused').map(([, port]) => port)];
  await startNginx({ prefix: target.prefix, conf: target.conf, ports: listened });
});

// -------------------------------------------------------------------------------------- helpers

type Conditions = readonly { type: string; status: string; reason: string }[];
interface JsonReport {
  readonly status: Record<
    string,
    {
      readonly conditions?: Conditions;
      readonly parents?: readonly { parentRef: { name: string }; conditions: Conditions }[];
      readonly listeners?: readonly { name: string; attachedRoutes: number; conditions: Conditions }[];
    }
  >;
}

const summary = (conditions: Conditions | undefined) => Object.fromEntries((conditions ?? []).map((c) => [c.type, `${c.status}/${c.reason}`]));

function status(kind: string, name: string) {
  return (JSON.parse(rendered.stdout) as JsonReport).status[`${kind}/infra/${name}`];
}

function routeConditions(kind: 'HTTPRoute' | 'TLSRoute', name: string): Record<string, string> {
  return summary(status(kind, name)?.parents?.[0]?.conditions);
}

function listener(gatewayName: string, name: string): Record<string, unknown> {
  const found = status('Gateway', gatewayName)?.listeners?.find((l) => l.name === name);
  return { attachedRoutes: found?.attachedRoutes, ...summary(found?.conditions) };
}

const programmed = { Accepted: 'True/Accepted', Conflicted: 'False/NoConflicts', ResolvedRefs: 'True/ResolvedRefs', Programmed: 'True/Programmed' };

async function backendAt(port: number, host: string, path = '/'): Promise<string> {
  return echoBackendOf(await httpGet({ port, host, path }));
}

async function locationAt(port: number, path: string, overTls: boolean): Promise<string | undefined> {
  const response = overTls
    ? await httpsGet({ port, servername: 'redirect.example.test', path, ca: ca.certPem })
    : await httpGet({ port, host: 'redirect.example.test', path });
  expect(response.status, path).toBe(302);
  return response.headers.location as string | undefined;
}

// -------------------------------------------------------------------------------------- scenarios

describe('Gateways on ports of their own, beside the Ingress ports (real traffic)', () => {
  it('HTTPRouteMultipleGateways: routes of two Gateways for one host name on different ports never merge, and the Ingress keeps its port', async () => {
    expect(await backendAt(ports.first, 'same.example.test')).toBe('v2');
    expect(await backendAt(ports.second, 'same.example.test')).toBe('v3');
    expect(await backendAt(ports.first, 'same.example.test', '/shared')).toBe('v1');
    expect(await backendAt(ports.second, 'same.example.test', '/shared')).toBe('v1');
    expect(await backendAt(target.httpPort, 'same.example.test', '/shared')).toBe('ingress');
    expect(routeConditions('HTTPRoute', 'shared')).toEqual({ Accepted: 'True/Accepted', ResolvedRefs: 'True/ResolvedRefs' });
  });

  it('tells the backend the port the request came to (X-Forwarded-Port), on ports of their own and the Ingress port', async () => {
    const forwardedPort = async (port: number) => parseEcho((await httpGet({ port, host: 'same.example.test' })).body).headers['x-forwarded-port'];
    expect(await forwardedPort(ports.first)).toBe(String(ports.first));
    expect(await forwardedPort(ports.second)).toBe(String(ports.second));
    expect(await forwardedPort(target.httpPort)).toBe(String(target.httpPort));
    const overTls = await httpsGet({ port: ports.secure, servername: 'app.example.test', ca: ca.certPem });
    expect(parseEcho(overTls.body).headers['x-forwarded-port']).toBe(String(ports.secure));
  });

  it('HTTPRouteListenerPortMatching: a parentRef port binds the route to the listener on that port only', async () => {
    expect(await backendAt(ports.matchA, 'any.example.test')).toBe('v1');
    expect(await backendAt(ports.matchB, 'any.example.test')).toBe('v2');
    expect(listener('matching', 'a')).toEqual({ attachedRoutes: 1, ...programmed });
    expect(listener('matching', 'b')).toEqual({ attachedRoutes: 1, ...programmed });
  });

  it('HTTPRouteInvalidParentRefNotMatchingListenerPort: a port no listener has is NoMatchingParent, and serves nothing', async () => {
    expect(routeConditions('HTTPRoute', 'on-no-listener')).toMatchObject({ Accepted: 'False/NoMatchingParent' });
    expect(await backendAt(ports.matchA, 'any.example.test', '/none')).toBe('v1');
  });

  it('GatewayWithAttachedRoutesWithPort8080: a listener on a port of its own is programmed and counts its route', async () => {
    expect(summary(status('Gateway', 'port-8080')?.conditions)).toEqual({ Accepted: 'True/Accepted', Programmed: 'True/Programmed' });
    expect(listener('port-8080', 'http')).toEqual({ attachedRoutes: 1, ...programmed });
    expect(await backendAt(ports.p8080, 'whatever.example.test')).toBe('v1');
  });

  it("HTTPRouteRedirectPortAndScheme: without a port the listener's port is kept; a scheme alone takes its well-known port", async () => {
    const host = 'redirect.example.test';
    expect(await locationAt(ports.redirectHttp, '/scheme-nil-and-port-nil', false)).toBe(`http://${host}:${ports.redirectHttp}/scheme-nil-and-port-nil`);
    expect(await locationAt(ports.redirectHttp, '/scheme-nil-and-port-8443', false)).toBe(`http://${host}:8443/scheme-nil-and-port-8443`);
    expect(await locationAt(ports.redirectHttp, '/scheme-https-and-port-nil', false)).toBe(`https://${host}/scheme-https-and-port-nil`);
    expect(await locationAt(ports.redirectHttp, '/scheme-https-and-port-own', false)).toBe(`https://${host}:${ports.redirectHttps}/scheme-https-and-port-own`);
    expect(await locationAt(ports.redirectHttps, '/scheme-nil-and-port-nil', true)).toBe(`https://${host}:${ports.redirectHttps}/scheme-nil-and-port-nil`);
    expect(await locationAt(ports.redirectHttps, '/scheme-http-and-port-nil', true)).toBe(`http://${host}/scheme-http-and-port-nil`);
  });

  it("an HTTPS port of one Gateway's own: routes by SNI, passes TLS through beside it, and answers unknown names with the Gateway's certificate", async () => {
    const routed = await httpsGet({ port: ports.secure, servername: 'app.example.test', ca: ca.certPem });
    expect(echoBackendOf(routed)).toBe('v2');
    expect(routed.peerCertificate?.fingerprint256).toBe(fingerprint(gatewayCert.certPem));
    const tunnel = await httpsGet({ port: ports.secure, servername: 'tunnel.example.test', ca: ca.certPem });
    expect(echoBackendOf(tunnel)).toBe('secure');
    expect(tunnel.peerCertificate?.fingerprint256).toBe(fingerprint(backendCert.certPem));
    const unknown = await httpsGet({ port: ports.secure, servername: 'unknown.example.test', ca: ca.certPem });
    expect(unknown.status).toBe(404);
    expect(unknown.peerCertificate?.fingerprint256).toBe(fingerprint(gatewayCert.certPem));
  });

  it('a newer Gateway on that port: a listener without a host name of its own is HostnameConflict, plain HTTP there is ProtocolConflict', () => {
    expect(listener('secure', 'https')).toEqual({ attachedRoutes: 1, ...programmed });
    expect(listener('secure-newer', 'https')).toMatchObject({ Conflicted: 'True/HostnameConflict', Programmed: 'False/Invalid' });
    expect(listener('secure-newer', 'plain')).toMatchObject({ Conflicted: 'True/ProtocolConflict', Programmed: 'False/Invalid' });
  });

  it('HTTPRouteDisallowedKind and TLSRouteInvalidNoMatchingListener: Gateways of their own ports accept, the route of the wrong kind is NotAllowedByListeners', () => {
    expect(listener('tls-only', 'tls')).toMatchObject({ Accepted: 'True/Accepted', Conflicted: 'False/NoConflicts', Programmed: 'True/Programmed' });
    expect(routeConditions('HTTPRoute', 'disallowed-kind')).toMatchObject({ Accepted: 'False/NotAllowedByListeners' });
    expect(listener('http-only', 'http')).toMatchObject({ Accepted: 'True/Accepted', Programmed: 'True/Programmed' });
    expect(routeConditions('TLSRoute', 'no-tls-listener')).toMatchObject({ Accepted: 'False/NotAllowedByListeners' });
  });
});
