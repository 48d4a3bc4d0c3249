import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import type { CliRun } from '../support/cli.js';
import { grpcCall, grpcStatus, startGrpcBackend, type GrpcCall, type GrpcPeer } from '../support/grpc.js';
import { requireNginx } from '../support/nginx.js';
import { eventually } from '../support/sidecar.js';
import { echoBackendOf, httpGet, startHttpBackend, type Peer } from '../support/peers.js';
import { createCa, issueCertificate, tlsSecretManifest, type CertificateAuthority } from '../support/pki.js';
import { cleanUp, configMapManifest, createTarget, documents, renderInto, serviceManifest, settle, startPeer, startTarget, temporaryDir, type Target } from './harness.js';

/**
 * Real gRPC calls (@grpc/grpc-js) through a real nginx for GRPCRoutes, one test per scenario of the
 * upstream conformance suite's GRPCRoute tests that is built, written from each scenario's intent with
 * our own manifests: exact method matching, header matching, listener host names, weights, header
 * modifiers, an unusable backend, BackendTLSPolicy, and an HTTPRoute beside a GRPCRoute. Over TLS (HTTP/2
 * by ALPN) on every nginx; cleartext HTTP/2 with prior knowledge where nginx has it (1.25.1+). One render,
 * one nginx with one worker (weighted round robin is then one deterministic sequence).
 */

afterAll(cleanUp);

const gatewayApi = 'gateway.networking.k8s.io/v1';

let target: Target;
let rendered: CliRun;
let ca: CertificateAuthority;
let backends: Record<'v1' | 'v2' | 'v3' | 'secure' | 'mirror', GrpcPeer>;
let web: Peer;

/** nginx takes cleartext HTTP/2 beside HTTP/1.x on one port from 1.25.1. */
function cleartextHttp2(): boolean {
  const [major = 0, minor = 0, patch = 0] = requireNginx().version.split('.').map(Number);
  return major > 1 || (major === 1 && (minor > 25 || (minor === 25 && patch >= 1)));
}

function grpcRoute(name: string, spec: Record<string, unknown>, creationTimestamp?: string): string {
  return stringify({ apiVersion: gatewayApi, kind: 'GRPCRoute', metadata: { name, namespace: 'infra', ...(creationTimestamp && { creationTimestamp }) }, spec });
}

const parent = (sectionName?: string) => ({ name: 'grpc', ...(sectionName !== undefined && { sectionName }) });
const method = (service: string, name?: string, type?: string) => ({ method: { service, ...(name !== undefined && { method: name }), ...(type !== undefined && { type }) } });

beforeAll(async () => {
  const dir = await temporaryDir();
  ca = await createCa(dir, 'GRPCRoute CA');
  const listenerCert = await issueCertificate(ca, {
    commonName: 'grpc.example.test',
    sans: ['*.grpc.example.test', '*.inter.grpc.example.test', '*.wild.grpc.example.test', '*.x.wild.grpc.example.test', 'multi.second.example.test', 'bar.com', 'foo.bar.com', '*.bar.com', '*.foo.com', 'multiple.prefixes.bar.com', 'multiple.prefixes.foo.com', 'foo.com'],
  });
  const backendCert = await issueCertificate(ca, { commonName: 'backend.example.test', sans: ['backend.example.test'] });
  backends = await settle({
    v1: startPeer(startGrpcBackend('v1', '127.0.0.1')),
    v2: startPeer(startGrpcBackend('v2', '127.0.0.1')),
    v3: startPeer(startGrpcBackend('v3', '127.0.0.1')),
    secure: startPeer(startGrpcBackend('secure', '127.0.0.1', { cert: backendCert.certPem, key: backendCert.keyPem })),
    mirror: startPeer(startGrpcBackend('mirror', '127.0.0.1')),
  });
  web = await startPeer(startHttpBackend('web'));
  target = await createTarget();
  // serviceManifest: the Service's port is the backend's own, on 127.0.0.1.
  const to = (name: 'v1' | 'v2' | 'v3' | 'secure' | 'mirror' | 'absent', more: Record<string, unknown> = {}) => ({ name, port: name === 'absent' ? 50051 : backends[name].port, ...more });
  const https = (name: string, hostname: string) => ({
    name,
    port: target.httpsPort,
    protocol: 'HTTPS',
    hostname,
    tls: { certificateRefs: [{ name: 'listener-cert' }] },
    allowedRoutes: { namespaces: { from: 'Same' } },
  });
  const manifests = documents(
    configMapManifest('ingress-nginx', 'controller', { 'worker-processes': '1' }),
    stringify({ apiVersion: gatewayApi, kind: 'GatewayClass', metadata: { name: 'ingress2nginx' }, spec: { controllerName: 'ingress2nginx.dev/controller' } }),
    tlsSecretManifest({ name: 'listener-cert', namespace: 'infra', certificate: listenerCert }),
    ...(['v1', 'v2', 'v3', 'secure', 'mirror'] as const).map((name) => serviceManifest('infra', name, backends[name])),
    serviceManifest('infra', 'web', web),
    stringify({
      apiVersion: gatewayApi,
      kind: 'Gateway',
      metadata: { name: 'grpc', namespace: 'infra' },
      spec: {
        gatewayClassName: 'ingress2nginx',
        listeners: [
          https('https', '*.grpc.example.test'),
          { name: 'http', port: target.httpPort, protocol: 'HTTP', hostname: '*.grpc.example.test', allowedRoutes: { namespaces: { from: 'Same' } } },
          // GRPCRouteListenerHostnameMatching: four listeners on one port, each with a host name.
          https('listener-1', 'bar.com'),
          https('listener-2', 'foo.bar.com'),
          https('listener-3', '*.bar.com'),
          https('listener-4', '*.foo.com'),
        ],
      },
    }),

    // GRPCExactMethodMatching: service and method exactly; another method of the service is not matched.
    // GRPCRouteNamedRule: a rule may have a name.
    grpcRoute('exact-method', {
      parentRefs: [parent('https')],
      hostnames: ['exact.grpc.example.test'],
      rules: [
        { name: 'ping', matches: [method('echo.v1.Echo', 'Ping')], backendRefs: [to('v1')] },
        { matches: [method('echo.v1.Echo', 'Other')], backendRefs: [to('v2')] },
      ],
    }),

    // GRPCRouteHeaderMatching: headers ANDed, the rule with more header matches first, a regex value.
    grpcRoute('headers', {
      parentRefs: [parent('https')],
      hostnames: ['headers.grpc.example.test'],
      rules: [
        { matches: [{ headers: [{ name: 'version', value: 'one' }] }], backendRefs: [to('v1')] },
        { matches: [{ headers: [{ name: 'version', value: 'two' }] }], backendRefs: [to('v2')] },
        { matches: [{ headers: [{ name: 'version', value: 'two' }, { name: 'color', value: 'orange' }] }], backendRefs: [to('v3')] },
        { matches: [{ headers: [{ name: 'color', type: 'RegularExpression', value: 'bl(ue|ack)' }] }], backendRefs: [to('v1')] },
      ],
    }),

    // GRPCRouteListenerHostnameMatching
    grpcRoute('backend-v1', { parentRefs: [parent('listener-1')], rules: [{ backendRefs: [to('v1')] }] }),
    grpcRoute('backend-v2', { parentRefs: [parent('listener-2')], rules: [{ backendRefs: [to('v2')] }] }),
    grpcRoute('backend-v3', { parentRefs: [parent('listener-3'), parent('listener-4')], rules: [{ backendRefs: [to('v3')] }] }),

    // The gRPC precedence: service and method before the service alone, before a method regex; the order
    // of the rules does not matter.
    grpcRoute('precedence', {
      parentRefs: [parent('https')],
      hostnames: ['precedence.grpc.example.test'],
      rules: [
        { matches: [method('', 'Ping', 'RegularExpression')], backendRefs: [to('v3')] },
        { matches: [method('echo.v1.Regex')], backendRefs: [to('v2')] },
        { matches: [method('echo.v1.Regex', 'Ping')], backendRefs: [to('v1')] },
      ],
    }),

    // GRPCRouteMultipleRoutesAttachmentSameHostnameIntersection: the route's own host name decides over
    // the intersection, and over age: an exact name over a wildcard, a longer wildcard over a shorter.
    grpcRoute('wildcard-older', { parentRefs: [parent('https')], hostnames: ['*.inter.grpc.example.test'], rules: [{ backendRefs: [to('v1')] }] }, '2025-01-01T00:00:00Z'),
    grpcRoute('exact-newer', { parentRefs: [parent('https')], hostnames: ['abc.inter.grpc.example.test'], rules: [{ backendRefs: [to('v2')] }] }, '2025-06-01T00:00:00Z'),
    grpcRoute('short-wildcard-older', { parentRefs: [parent('https')], hostnames: ['*.wild.grpc.example.test'], rules: [{ backendRefs: [to('v1')] }] }, '2025-01-01T00:00:00Z'),
    grpcRoute('long-wildcard-newer', { parentRefs: [parent('https')], hostnames: ['*.x.wild.grpc.example.test'], rules: [{ backendRefs: [to('v2')] }] }, '2025-06-01T00:00:00Z'),

    // GRPCRouteMultipleGateways: one route on the listeners of two Gateways.
    stringify({
      apiVersion: gatewayApi,
      kind: 'Gateway',
      metadata: { name: 'second', namespace: 'infra' },
      spec: { gatewayClassName: 'ingress2nginx', listeners: [https('https', '*.second.example.test')] },
    }),
    grpcRoute('two-gateways', {
      parentRefs: [parent('https'), { name: 'second' }],
      hostnames: ['multi.grpc.example.test', 'multi.second.example.test'],
      rules: [{ backendRefs: [to('v3')] }],
    }),

    // GRPCRouteWeight; GRPCRouteRequestHeaderModifier and response headers; BackendNotFound.
    grpcRoute('weights', { parentRefs: [parent('https')], hostnames: ['weights.grpc.example.test'], rules: [{ backendRefs: [to('v1', { weight: 3 }), to('v2', { weight: 1 })] }] }),
    grpcRoute('modifiers', {
      parentRefs: [parent('https')],
      hostnames: ['modifiers.grpc.example.test'],
      rules: [
        {
          filters: [
            { type: 'RequestHeaderModifier', requestHeaderModifier: { set: [{ name: 'x-set', value: 'by-route' }], add: [{ name: 'x-add', value: 'added' }], remove: ['x-remove'] } },
            { type: 'ResponseHeaderModifier', responseHeaderModifier: { add: [{ name: 'x-answered-by', value: 'nginx' }] } },
          ],
          backendRefs: [to('v1')],
        },
      ],
    }),
    // GRPCRouteAllBackendsWeightZero
    grpcRoute('weight-zero', { parentRefs: [parent('https')], hostnames: ['zero.grpc.example.test'], rules: [{ backendRefs: [to('v1', { weight: 0 }), to('v2', { weight: 0 })] }] }),
    // GRPCRouteRequestMirror (extended): every call is copied to the mirror, whose answer is dropped.
    grpcRoute('mirrored', {
      parentRefs: [parent('https')],
      hostnames: ['mirror.grpc.example.test'],
      rules: [{ filters: [{ type: 'RequestMirror', requestMirror: { backendRef: to('mirror') } }], backendRefs: [to('v1')] }],
    }),
    grpcRoute('half-missing', { parentRefs: [parent('https')], hostnames: ['half.grpc.example.test'], rules: [{ backendRefs: [to('v1'), to('absent')] }] }),
    grpcRoute('missing-backend', { parentRefs: [parent('https')], hostnames: ['missing.grpc.example.test'], rules: [{ backendRefs: [to('absent')] }] }),

    // BackendTLSPolicy on a GRPCRoute backend: grpcs://, verified against the CA and the policy's host name.
    configMapManifest('infra', 'backend-ca', { 'ca.crt': ca.certPem }),
    stringify({
      apiVersion: gatewayApi,
      kind: 'BackendTLSPolicy',
      metadata: { name: 'secure', namespace: 'infra' },
      spec: { targetRefs: [{ group: '', kind: 'Service', name: 'secure' }], validation: { caCertificateRefs: [{ group: '', kind: 'ConfigMap', name: 'backend-ca' }], hostname: 'backend.example.test' } },
    }),
    grpcRoute('secure', { parentRefs: [parent('https')], hostnames: ['secure.grpc.example.test'], rules: [{ backendRefs: [to('secure')] }] }),

    // An HTTPRoute and an older GRPCRoute on one host name and listener: the GRPCRoute keeps it.
    grpcRoute('older-grpc', { parentRefs: [parent('https')], hostnames: ['shared.grpc.example.test'], rules: [{ backendRefs: [to('v1')] }] }, '2025-01-01T00:00:00Z'),
    stringify({
      apiVersion: gatewayApi,
      kind: 'HTTPRoute',
      metadata: { name: 'newer-http', namespace: 'infra', creationTimestamp: '2025-06-01T00:00:00Z' },
      spec: { parentRefs: [parent('https')], hostnames: ['shared.grpc.example.test'], rules: [{ backendRefs: [{ name: 'web', port: web.port }] }] },
    }),

    // Cleartext HTTP/2 through the HTTP listener, beside an HTTPRoute that HTTP/1.1 clients use.
    grpcRoute('cleartext', { parentRefs: [parent('http')], hostnames: ['h2c.grpc.example.test'], rules: [{ backendRefs: [to('v2')] }] }),
    stringify({
      apiVersion: gatewayApi,
      kind: 'HTTPRoute',
      metadata: { name: 'plain-web', namespace: 'infra' },
      spec: { parentRefs: [parent('http')], hostnames: ['web.grpc.example.test'], rules: [{ backendRefs: [{ name: 'web', port: web.port }] }] },
    }),
  );
  rendered = await renderInto(target, manifests, ['--configmap', 'ingress-nginx/controller', '--format', 'json']);
  expect(rendered.stderr).not.toContain('internal error');
  expect(rendered.exitCode, rendered.stderr).toBe(1);
  await startTarget(target);
});

// -------------------------------------------------------------------------------------- helpers

/** A call over TLS through the HTTPS listeners; the backend's name, or the status code when it failed. */
async function overTls(authority: string, path: string, metadata?: GrpcCall['metadata']): Promise<string> {
  const result = await grpcCall({ port: target.httpsPort, authority, path, caPem: ca.certPem, ...(metadata && { metadata }) });
  return result.echo ? result.echo.backend : `status ${grpcStatus[result.code]}`;
}

type Conditions = readonly { type: string; status: string; reason: string }[];
interface JsonReport {
  readonly status: Record<string, { readonly parents?: readonly { conditions: Conditions }[]; readonly listeners?: readonly { name: string; attachedRoutes: number; supportedKinds: readonly { kind: string }[] }[] }>;
}

function routeConditions(kind: string, name: string): Record<string, string> {
  const parents = (JSON.parse(rendered.stdout) as JsonReport).status[`${kind}/infra/${name}`]?.parents ?? [];
  return Object.fromEntries((parents[0]?.conditions ?? []).map((c) => [c.type, `${c.status}/${c.reason}`]));
}

// ----------------------------------------------------------------------------------------- scenarios

describe('GRPCRoute over TLS (HTTP/2 by ALPN)', () => {
  it('GRPCExactMethodMatching: service and method select the backend; another method of the service is not matched', async () => {
    expect(await overTls('exact.grpc.example.test', '/echo.v1.Echo/Ping')).toBe('v1');
    expect(await overTls('exact.grpc.example.test', '/echo.v1.Echo/Other')).toBe('v2');
    // No route for it: nginx answers 404, which gRPC reads as UNIMPLEMENTED.
    expect(await overTls('exact.grpc.example.test', '/echo.v1.Echo/Missing')).toBe('status UNIMPLEMENTED');
    expect(await overTls('exact.grpc.example.test', '/other.v1.Other/Ping')).toBe('status UNIMPLEMENTED');
  });

  it('GRPCRouteHeaderMatching: headers are ANDed, more header matches win, values match exactly or by regex', async () => {
    const host = 'headers.grpc.example.test';
    expect(await overTls(host, '/echo.v1.Echo/Ping', { version: 'one' })).toBe('v1');
    expect(await overTls(host, '/echo.v1.Echo/Ping', { version: 'two' })).toBe('v2');
    expect(await overTls(host, '/echo.v1.Echo/Ping', { version: 'two', color: 'orange' })).toBe('v3');
    expect(await overTls(host, '/echo.v1.Echo/Ping', { color: 'blue' })).toBe('v1');
    expect(await overTls(host, '/echo.v1.Echo/Ping', { color: 'black' })).toBe('v1');
    expect(await overTls(host, '/echo.v1.Echo/Ping', { version: 'three' })).toBe('status UNIMPLEMENTED');
    expect(await overTls(host, '/echo.v1.Echo/Ping', { color: 'blueish' })).toBe('status UNIMPLEMENTED');
    expect(await overTls(host, '/echo.v1.Echo/Ping')).toBe('status UNIMPLEMENTED');
  });

  it('GRPCRouteListenerHostnameMatching: each listener host name carries its own routes', async () => {
    expect(await overTls('bar.com', '/echo.v1.Echo/Ping')).toBe('v1');
    expect(await overTls('foo.bar.com', '/echo.v1.Echo/Ping')).toBe('v2');
    for (const host of ['baz.bar.com', 'boo.bar.com', 'multiple.prefixes.bar.com', 'bar.foo.com', 'multiple.prefixes.foo.com']) {
      expect(await overTls(host, '/echo.v1.Echo/Ping'), host).toBe('v3');
    }
    // No listener has foo.com: no backend answers (the default server's certificate is not trusted, or 404).
    expect(await overTls('foo.com', '/echo.v1.Echo/Ping')).toMatch(/^status /);
  });

  it('gives service and method precedence over the service alone, and the service over a method regex', async () => {
    const host = 'precedence.grpc.example.test';
    expect(await overTls(host, '/echo.v1.Regex/Ping')).toBe('v1');
    expect(await overTls(host, '/echo.v1.Regex/Other')).toBe('v2');
    expect(await overTls(host, '/echo.v1.Echo/Ping')).toBe('v3');
    expect(await overTls(host, '/echo.v1.Echo/Other')).toBe('status UNIMPLEMENTED');
  });

  it('GRPCRouteMultipleRoutesAttachmentSameHostnameIntersection: the more specific route host name wins, whatever the age', async () => {
    expect(await overTls('abc.inter.grpc.example.test', '/echo.v1.Echo/Ping')).toBe('v2');
    expect(await overTls('other.inter.grpc.example.test', '/echo.v1.Echo/Ping')).toBe('v1');
    expect(await overTls('abc.x.wild.grpc.example.test', '/echo.v1.Echo/Ping')).toBe('v2');
    expect(await overTls('abc.wild.grpc.example.test', '/echo.v1.Echo/Ping')).toBe('v1');
  });

  it('GRPCRouteMultipleGateways: one route is served through the listeners of two Gateways', async () => {
    expect(await overTls('multi.grpc.example.test', '/echo.v1.Echo/Ping')).toBe('v3');
    expect(await overTls('multi.second.example.test', '/echo.v1.Echo/Ping')).toBe('v3');
    const parents = (JSON.parse(rendered.stdout) as JsonReport).status['GRPCRoute/infra/two-gateways']?.parents ?? [];
    expect(parents.map((p) => p.conditions.find((c) => c.type === 'Accepted')?.status)).toEqual(['True', 'True']);
  });

  it('GRPCRouteWeight: splits calls by weight', async () => {
    const seen: string[] = [];
    for (let i = 0; i < 8; i++) seen.push(await overTls('weights.grpc.example.test', '/echo.v1.Echo/Ping'));
    expect(seen.filter((b) => b === 'v1')).toHaveLength(6);
    expect(seen.filter((b) => b === 'v2')).toHaveLength(2);
  });

  it('GRPCRouteRequestHeaderModifier: sets, adds and removes request metadata; response headers are added', async () => {
    const result = await grpcCall({
      port: target.httpsPort,
      authority: 'modifiers.grpc.example.test',
      path: '/echo.v1.Echo/Ping',
      caPem: ca.certPem,
      metadata: { 'x-set': 'by-client', 'x-add': 'from-client', 'x-remove': 'gone', 'x-kept': 'kept' },
    });
    expect(result.code).toBe(grpcStatus.OK);
    expect(result.echo?.metadata).toMatchObject({ 'x-set': 'by-route', 'x-kept': 'kept' });
    expect(result.echo?.metadata['x-add']).toMatch(/from-client.*added|added.*from-client/);
    expect(result.echo?.metadata['x-remove']).toBeUndefined();
    expect(result.headers['x-answered-by']).toBe('nginx');
  });

  it('GRPCRouteAllBackendsWeightZero: answers UNAVAILABLE when every backend has weight 0', async () => {
    expect(await overTls('zero.grpc.example.test', '/echo.v1.Echo/Ping')).toBe('status UNAVAILABLE');
  });

  it('GRPCRouteRequestMirror: copies each call, path and metadata, to the mirror and answers from the backend', async () => {
    const before = backends.mirror.calls.length;
    expect(await overTls('mirror.grpc.example.test', '/echo.v1.Echo/Other', { 'x-trace': 'mirrored' })).toBe('v1');
    // nginx sends the copy beside the call: it may arrive after the answer.
    const copies = await eventually(() => backends.mirror.calls.slice(before), (calls) => calls.length > 0);
    expect(copies).toHaveLength(1);
    expect(copies[0]).toMatchObject({ path: '/echo.v1.Echo/Other', metadata: { 'x-trace': 'mirrored' } });
  });

  it('answers calls for a backend that is not there with UNAVAILABLE, and says BackendNotFound', async () => {
    expect(await overTls('missing.grpc.example.test', '/echo.v1.Echo/Ping')).toBe('status UNAVAILABLE');
    expect(routeConditions('GRPCRoute', 'missing-backend')).toMatchObject({ Accepted: 'True/Accepted', ResolvedRefs: 'False/BackendNotFound' });
    // Beside a usable backend, the missing one's share of the calls fails the same way.
    const seen: string[] = [];
    for (let i = 0; i < 4; i++) seen.push(await overTls('half.grpc.example.test', '/echo.v1.Echo/Ping'));
    expect(seen.sort()).toEqual(['status UNAVAILABLE', 'status UNAVAILABLE', 'v1', 'v1']);
  });

  it('speaks TLS to a backend a BackendTLSPolicy names, verified (grpcs://)', async () => {
    expect(await overTls('secure.grpc.example.test', '/echo.v1.Echo/Ping')).toBe('secure');
  });

  it('keeps a host name of one listener for the older of a GRPCRoute and an HTTPRoute', async () => {
    expect(await overTls('shared.grpc.example.test', '/echo.v1.Echo/Ping')).toBe('v1');
    expect(routeConditions('GRPCRoute', 'older-grpc')).toMatchObject({ Accepted: 'True/Accepted' });
    expect(routeConditions('HTTPRoute', 'newer-http')).toMatchObject({ Accepted: 'False/NotAllowedByListeners' });
  });

  it('lists GRPCRoute among the kinds of HTTP and HTTPS listeners, and counts the routes attached', () => {
    const listeners = (JSON.parse(rendered.stdout) as JsonReport).status['Gateway/infra/grpc']?.listeners ?? [];
    const byName = Object.fromEntries(listeners.map((l) => [l.name, { attachedRoutes: l.attachedRoutes, kinds: l.supportedKinds.map((k) => k.kind) }]));
    expect(byName['https']).toEqual({ attachedRoutes: 16, kinds: ['HTTPRoute', 'GRPCRoute'] });
    expect(byName['listener-3']).toEqual({ attachedRoutes: 1, kinds: ['HTTPRoute', 'GRPCRoute'] });
    expect(byName['http']?.kinds).toEqual(['HTTPRoute', 'GRPCRoute']);
  });
});

describe('GRPCRoute through an HTTP listener (cleartext HTTP/2 with prior knowledge)', () => {
  it('serves gRPC beside HTTP/1.1 on the plain port where nginx can (1.25.1+), and says why not elsewhere', async () => {
    // HTTP/1.1 on the same port keeps working either way.
    expect(echoBackendOf(await httpGet({ port: target.httpPort, host: 'web.grpc.example.test', path: '/' }))).toBe('web');
    const result = await grpcCall({ port: target.httpPort, authority: 'h2c.grpc.example.test', path: '/echo.v1.Echo/Ping' });
    if (cleartextHttp2()) {
      expect(result.echo?.backend).toBe('v2');
      expect(routeConditions('GRPCRoute', 'cleartext')).toMatchObject({ Accepted: 'True/Accepted' });
    } else {
      expect(result.code).not.toBe(grpcStatus.OK);
      expect(routeConditions('GRPCRoute', 'cleartext')).toMatchObject({ Accepted: 'False/UnsupportedValue' });
    }
  });
});
