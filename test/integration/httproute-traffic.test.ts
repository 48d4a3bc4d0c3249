import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import type { CliRun } from '../support/cli.js';
import { echoBackendOf, httpGet, httpsGet, startHttpBackend, startTlsBackend, tlsProbe, type Peer } from '../support/peers.js';
import { createCa, issueCertificate, tlsSecretManifest, type CertificateAuthority, type CertificateFiles } from '../support/pki.js';
import {
  cleanUp,
  configMapManifest,
  createTarget,
  documents,
  fingerprint,
  renderInto,
  serviceManifest,
  settle,
  startPeer,
  startTarget,
  temporaryDir,
  type Target,
} from './harness.js';

/**
 * Real HTTP and HTTPS traffic through a real nginx for HTTPRoutes on HTTP and HTTPS listeners, one test
 * per scenario of the upstream Gateway API conformance suite's GATEWAY-HTTP core profile that is built,
 * written from the scenario's intent (requests and expected answers), with our own manifests. One render,
 * one nginx with one worker (weighted round robin is then one deterministic sequence).
 *
 * Every listener is on the Ingress ports (`--http-port`, `--https-port`), where the http servers listen;
 * the conformance suite gives each Gateway an address of its own, here all Gateways share one nginx, so
 * each scenario uses host names of its own.
 */

afterAll(cleanUp);

const gatewayApi = 'gateway.networking.k8s.io/v1';

let target: Target;
let rendered: CliRun;
let ca: CertificateAuthority;
let secureCert: CertificateFiles;
let backends: Record<'v1' | 'v2' | 'v3' | 'granted' | 'ungranted', Peer>;
let tunnel: Peer;

function gateway(namespace: string, name: string, listeners: readonly Record<string, unknown>[]): string {
  return stringify({ apiVersion: gatewayApi, kind: 'Gateway', metadata: { name, namespace }, spec: { gatewayClassName: 'ingress2nginx', listeners } });
}

interface Rule {
  readonly matches?: readonly Record<string, unknown>[];
  readonly filters?: readonly Record<string, unknown>[];
  /** Absent: the rule has no backendRefs field at all. */
  readonly backendRefs?: readonly Record<string, unknown>[];
}

function httpRoute(
  namespace: string,
  name: string,
  spec: { parentRefs: readonly Record<string, unknown>[]; hostnames?: readonly string[]; rules: readonly Rule[] },
  creationTimestamp?: string,
): string {
  return stringify({
    apiVersion: gatewayApi,
    kind: 'HTTPRoute',
    metadata: { name, namespace, ...(creationTimestamp !== undefined && { creationTimestamp }) },
    spec,
  });
}

/** A backendRef to one of the echo backends (Service `name` in `namespace` when given). */
function to(name: keyof typeof backends, more: Record<string, unknown> = {}): Record<string, unknown> {
  return { name, port: backends[name].port, ...more };
}

const exact = (value: string) => ({ path: { type: 'Exact', value } });
const prefix = (value: string) => ({ path: { type: 'PathPrefix', value } });
const edge = (sectionName: string) => ({ name: 'edge', namespace: 'infra', sectionName });

beforeAll(async () => {
  const dir = await temporaryDir();
  ca = await createCa(dir, 'HTTPRoute Integration CA');
  const [secure, tunnelCert] = await Promise.all([
    issueCertificate(ca, { commonName: '*.secure.example.test', sans: ['*.secure.example.test'] }),
    issueCertificate(ca, { commonName: 'tunnel.example.test', sans: ['tunnel.example.test'] }),
  ]);
  secureCert = secure;
  backends = await settle({
    v1: startPeer(startHttpBackend('v1')),
    v2: startPeer(startHttpBackend('v2')),
    v3: startPeer(startHttpBackend('v3')),
    granted: startPeer(startHttpBackend('granted')),
    ungranted: startPeer(startHttpBackend('ungranted')),
  });
  tunnel = await startPeer(startTlsBackend({ name: 'tunnel', cert: tunnelCert.certPem, key: tunnelCert.keyPem }));

  target = await createTarget();
  const http = (name: string, hostname?: string, from: 'All' | 'Same' = 'All') => ({
    name,
    port: target.httpPort,
    protocol: 'HTTP',
    ...(hostname !== undefined && { hostname }),
    allowedRoutes: { namespaces: { from } },
  });
  const manifests = documents(
    configMapManifest('ingress-nginx', 'controller', { 'worker-processes': '1' }),
    stringify({ apiVersion: gatewayApi, kind: 'GatewayClass', metadata: { name: 'ingress2nginx' }, spec: { controllerName: 'ingress2nginx.dev/controller' } }),
    tlsSecretManifest({ name: 'secure-tls', namespace: 'infra', certificate: secureCert }),
    gateway('infra', 'edge', [
      http('http'),
      http('very', 'very.specific.com'),
      http('wild', '*.wildcard.io'),
      http('bar', 'bar.com'),
      http('foo-bar', 'foo.bar.com'),
      http('any-bar', '*.bar.com'),
      http('any-foo', '*.foo.com'),
      http('same-only', 'same.example.test', 'Same'),
      {
        name: 'https',
        port: target.httpsPort,
        protocol: 'HTTPS',
        hostname: '*.secure.example.test',
        tls: { certificateRefs: [{ name: 'secure-tls' }] },
        allowedRoutes: { namespaces: { from: 'All' } },
      },
      { name: 'tunnel', port: target.httpsPort, protocol: 'TLS', hostname: 'tunnel.example.test', tls: { mode: 'Passthrough' }, allowedRoutes: { namespaces: { from: 'All' } } },
    ]),
    ...(['v1', 'v2', 'v3'] as const).flatMap((name) => [serviceManifest('apps', name, backends[name]), serviceManifest('infra', name, backends[name])]),
    serviceManifest('vault', 'granted', backends.granted),
    serviceManifest('vault', 'ungranted', backends.ungranted),
    serviceManifest('apps', 'tunnel', tunnel),
    stringify({
      apiVersion: 'gateway.networking.k8s.io/v1beta1',
      kind: 'ReferenceGrant',
      metadata: { name: 'apps-routes', namespace: 'vault' },
      spec: { from: [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', namespace: 'apps' }], to: [{ group: '', kind: 'Service', name: 'granted' }] },
    }),

    // HTTPRouteSimpleSameNamespace: a route in the Gateway's own namespace.
    httpRoute('infra', 'simple', { parentRefs: [edge('http')], hostnames: ['simple.example.test'], rules: [{ backendRefs: [to('v1')] }] }),
    // HTTPRouteExactPathMatching
    httpRoute('apps', 'exact', {
      parentRefs: [edge('http')],
      hostnames: ['exact.example.test'],
      rules: [
        { matches: [exact('/one')], backendRefs: [to('v1')] },
        { matches: [exact('/two')], backendRefs: [to('v2')] },
      ],
    }),
    // HTTPRoutePathMatchOrder: Exact beats any prefix, the longer prefix beats the shorter.
    httpRoute('apps', 'order', {
      parentRefs: [edge('http')],
      hostnames: ['order.example.test'],
      rules: [
        { matches: [prefix('/match')], backendRefs: [to('v3')] },
        { matches: [prefix('/match/prefix')], backendRefs: [to('v1')] },
        { matches: [prefix('/match/prefix/one')], backendRefs: [to('v2')] },
        { matches: [exact('/match')], backendRefs: [to('v1')] },
        { matches: [exact('/match/exact')], backendRefs: [to('v2')] },
        { matches: [exact('/match/exact/one')], backendRefs: [to('v3')] },
      ],
    }),
    // HTTPRouteHostnameIntersection: only the names both listener and route match are served.
    httpRoute('apps', 'specific-on-specific', {
      parentRefs: [edge('very')],
      hostnames: ['non.matching.com', 'very.specific.com'],
      rules: [{ matches: [prefix('/s1')], backendRefs: [to('v1')] }],
    }),
    httpRoute('apps', 'specific-on-wildcard', {
      parentRefs: [edge('wild')],
      hostnames: ['non.matching.com', 'foo.wildcard.io', 'bar.wildcard.io', 'foo.bar.wildcard.io'],
      rules: [{ matches: [prefix('/s2')], backendRefs: [to('v2')] }],
    }),
    httpRoute('apps', 'wildcard-on-specific', {
      parentRefs: [edge('very')],
      hostnames: ['*.specific.com'],
      rules: [{ matches: [prefix('/s3')], backendRefs: [to('v3')] }],
    }),
    httpRoute('apps', 'no-intersection', { parentRefs: [edge('very')], hostnames: ['other.example.test'], rules: [{ backendRefs: [to('v1')] }] }),
    // HTTPRouteListenerHostnameMatching: listeners with different host names on one port, a route each.
    httpRoute('apps', 'on-bar', { parentRefs: [edge('bar')], rules: [{ backendRefs: [to('v1')] }] }),
    httpRoute('apps', 'on-foo-bar', { parentRefs: [edge('foo-bar')], rules: [{ backendRefs: [to('v2')] }] }),
    httpRoute('apps', 'on-wildcards', { parentRefs: [edge('any-bar'), edge('any-foo')], rules: [{ backendRefs: [to('v3')] }] }),
    // HTTPRouteHTTPSListener
    httpRoute('apps', 'secure', { parentRefs: [edge('https')], hostnames: ['app.secure.example.test'], rules: [{ backendRefs: [to('v1')] }] }),
    // TLSRoute on a TLS listener that shares the HTTPS port with the HTTPS listener.
    stringify({
      apiVersion: gatewayApi,
      kind: 'TLSRoute',
      metadata: { name: 'tunnel', namespace: 'apps' },
      spec: { parentRefs: [edge('tunnel')], hostnames: ['tunnel.example.test'], rules: [{ backendRefs: [{ name: 'tunnel', port: tunnel.port }] }] },
    }),
    // HTTPRouteInvalidNonExistentBackendRef, HTTPRouteInvalidBackendRefUnknownKind, HTTPRouteInvalidCrossNamespaceBackendRef
    httpRoute('apps', 'nonexistent', { parentRefs: [edge('http')], hostnames: ['nonexistent.example.test'], rules: [{ backendRefs: [{ name: 'missing', port: 8080 }] }] }),
    httpRoute('apps', 'unknown-kind', {
      parentRefs: [edge('http')],
      hostnames: ['unknown-kind.example.test'],
      rules: [{ backendRefs: [{ group: 'unknown.example.com', kind: 'Bucket', name: 'v1' }] }],
    }),
    httpRoute('apps', 'ungranted', {
      parentRefs: [edge('http')],
      hostnames: ['ungranted.example.test'],
      rules: [{ backendRefs: [to('ungranted', { namespace: 'vault' })] }],
    }),
    // HTTPRouteReferenceGrant
    httpRoute('apps', 'granted', { parentRefs: [edge('http')], hostnames: ['granted.example.test'], rules: [{ backendRefs: [to('granted', { namespace: 'vault' })] }] }),
    // HTTPRoutePartiallyInvalidViaInvalidReferenceGrant: the rule without a grant answers 500, the other one serves.
    httpRoute('apps', 'partly-granted', {
      parentRefs: [edge('http')],
      hostnames: ['partly.example.test'],
      rules: [
        { matches: [prefix('/invalid')], backendRefs: [to('ungranted', { namespace: 'vault' })] },
        { backendRefs: [to('v1')] },
      ],
    }),
    // HTTPRouteInvalidParentRefNotMatchingSectionName, and a listener that admits its own namespace only.
    httpRoute('apps', 'no-such-section', { parentRefs: [edge('nope')], hostnames: ['nosection.example.test'], rules: [{ backendRefs: [to('v1')] }] }),
    httpRoute('apps', 'not-allowed', { parentRefs: [edge('same-only')], rules: [{ backendRefs: [to('v1')] }] }),
    // HTTPRouteInvalidCrossNamespaceParentRef: a Gateway that is not there.
    httpRoute('apps', 'no-gateway', { parentRefs: [{ name: 'absent', namespace: 'infra' }], hostnames: ['nogateway.example.test'], rules: [{ backendRefs: [to('v1')] }] }),
    // HTTPRouteWeight: 70/30/0.
    httpRoute('apps', 'weights', {
      parentRefs: [edge('http')],
      hostnames: ['weights.example.test'],
      rules: [{ backendRefs: [to('v1', { weight: 70 }), to('v2', { weight: 30 }), to('v3', { weight: 0 })] }],
    }),
    // The share of a backend that does not exist is answered 500.
    httpRoute('apps', 'half', {
      parentRefs: [edge('http')],
      hostnames: ['half.example.test'],
      rules: [{ backendRefs: [to('v1', { weight: 1 }), { name: 'missing', port: 8080, weight: 1 }] }],
    }),
    // HTTPRouteOmittedBackendRefs
    httpRoute('apps', 'omitted', {
      parentRefs: [edge('http')],
      hostnames: ['omitted.example.test'],
      rules: [
        { matches: [prefix('/forward')], backendRefs: [to('v1')] },
        { matches: [prefix('/omitted-no-forward')] },
        { matches: [prefix('/empty-no-forward')], backendRefs: [] },
      ],
    }),
    // HTTPRouteRedirectHostAndStatus, with the 303/307/308 codes, scheme and port of RequestRedirect.
    httpRoute('apps', 'redirects', {
      parentRefs: [edge('http')],
      hostnames: ['redirect.example.test'],
      rules: [
        { matches: [prefix('/hostname-redirect')], filters: [{ type: 'RequestRedirect', requestRedirect: { hostname: 'example.org' } }] },
        { matches: [prefix('/host-and-status')], filters: [{ type: 'RequestRedirect', requestRedirect: { hostname: 'example.org', statusCode: 301 } }] },
        { matches: [prefix('/see-other')], filters: [{ type: 'RequestRedirect', requestRedirect: { statusCode: 303 } }] },
        { matches: [prefix('/temporary')], filters: [{ type: 'RequestRedirect', requestRedirect: { statusCode: 307 } }] },
        { matches: [prefix('/permanent')], filters: [{ type: 'RequestRedirect', requestRedirect: { statusCode: 308, scheme: 'https' } }] },
        { matches: [prefix('/port')], filters: [{ type: 'RequestRedirect', requestRedirect: { port: 8443 } }] },
        { matches: [prefix('/path')], filters: [{ type: 'RequestRedirect', requestRedirect: { path: { type: 'ReplaceFullPath', replaceFullPath: '/x' } } }] },
      ],
    }),
    // HTTPRouteMatchingAcrossRoutes: two routes share a host, each with its paths.
    httpRoute('apps', 'across-one', { parentRefs: [edge('http')], hostnames: ['across.example.test'], rules: [{ matches: [prefix('/')], backendRefs: [to('v1')] }] }),
    httpRoute('apps', 'across-two', { parentRefs: [edge('http')], hostnames: ['across.example.test'], rules: [{ matches: [prefix('/v2')], backendRefs: [to('v2')] }] }),
    // An Ingress and an HTTPRoute on one host and path: the older Ingress keeps the path, the route the rest.
    stringify({
      apiVersion: 'networking.k8s.io/v1',
      kind: 'Ingress',
      metadata: { name: 'shared', namespace: 'apps', creationTimestamp: '2020-01-01T00:00:00Z' },
      spec: {
        ingressClassName: 'nginx',
        rules: [{ host: 'shared.example.test', http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'v1', port: { number: backends.v1.port } } } }] } }],
      },
    }),
    httpRoute(
      'apps',
      'shared',
      {
        parentRefs: [edge('http')],
        hostnames: ['shared.example.test'],
        rules: [
          { matches: [prefix('/')], backendRefs: [to('v2')] },
          { matches: [prefix('/only-route')], backendRefs: [to('v3')] },
        ],
      },
      '2025-01-01T00:00:00Z',
    ),
  );

  rendered = await renderInto(target, manifests, ['--configmap', 'ingress-nginx/controller', '--format', 'json']);
  expect(rendered.stderr).not.toContain('internal error');
  // Exit 1: the deliberately broken references are input errors; the configuration is written all the same.
  expect(rendered.exitCode, rendered.stderr).toBe(1);
  await startTarget(target);
});

// -------------------------------------------------------------------------------------- clients

async function plain(host: string, path = '/'): Promise<string> {
  return echoBackendOf(await httpGet({ port: target.httpPort, host, path }));
}

async function tally(host: string, count: number): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (let i = 0; i < count; i++) {
    const answer = await plain(host);
    counts[answer] = (counts[answer] ?? 0) + 1;
  }
  return counts;
}

interface JsonReport {
  readonly diagnostics: readonly { severity: string; code: string; resource: { kind: string; namespace?: string; name: string } | null }[];
  readonly status: Record<string, { parents?: readonly { conditions: readonly { type: string; status: string; reason: string }[] }[] }>;
}

/** `{ Accepted: 'True/Accepted', … }` of the route's first parent. */
function parentConditions(route: string): Record<string, string> {
  const report = JSON.parse(rendered.stdout) as JsonReport;
  const parent = report.status[`HTTPRoute/apps/${route}`]?.parents?.[0];
  return Object.fromEntries((parent?.conditions ?? []).map((c) => [c.type, `${c.status}/${c.reason}`]));
}

// -------------------------------------------------------------------------------------- scenarios

describe('GATEWAY-HTTP core scenarios, with real traffic', () => {
  it('HTTPRouteSimpleSameNamespace: a route in the Gateway namespace serves its host', async () => {
    expect(await plain('simple.example.test')).toBe('v1');
    const report = JSON.parse(rendered.stdout) as JsonReport;
    const parent = report.status['HTTPRoute/infra/simple']?.parents?.[0];
    expect(parent?.conditions.map((c) => `${c.type}=${c.status}`)).toEqual(['Accepted=True', 'ResolvedRefs=True']);
  });

  it('HTTPRouteCrossNamespace: a route in another namespace attaches where allowedRoutes admits All', async () => {
    expect(parentConditions('exact')).toEqual({ Accepted: 'True/Accepted', ResolvedRefs: 'True/ResolvedRefs' });
  });

  it('HTTPRouteExactPathMatching: Exact matches the path only, case-sensitively', async () => {
    expect(await plain('exact.example.test', '/one')).toBe('v1');
    expect(await plain('exact.example.test', '/two')).toBe('v2');
    for (const path of ['/', '/one/example', '/two/', '/Two']) expect(await plain('exact.example.test', path), path).toBe('404');
  });

  it('HTTPRoutePathMatchOrder: Exact before prefixes, longer prefixes before shorter, element-wise', async () => {
    const answers: Record<string, string> = {};
    for (const path of ['/match/exact/one', '/match/exact', '/match', '/match/prefix/one/any', '/match/prefix/any', '/match/any', '/matchless']) {
      answers[path] = await plain('order.example.test', path);
    }
    expect(answers).toEqual({
      '/match/exact/one': 'v3',
      '/match/exact': 'v2',
      '/match': 'v1',
      '/match/prefix/one/any': 'v2',
      '/match/prefix/any': 'v1',
      '/match/any': 'v3',
      '/matchless': '404',
    });
  });

  it('HTTPRouteHostnameIntersection: only the host names both listener and route match are served', async () => {
    expect(await plain('very.specific.com', '/s1')).toBe('v1');
    expect(await plain('very.specific.com:1234', '/s1')).toBe('v1');
    expect(await plain('non.matching.com', '/s1')).toBe('404');
    expect(await plain('foo.wildcard.io', '/s1')).toBe('404');
    expect(await plain('very.specific.com', '/non-matching-prefix')).toBe('404');
    for (const host of ['foo.wildcard.io', 'bar.wildcard.io', 'foo.bar.wildcard.io']) expect(await plain(host, '/s2'), host).toBe('v2');
    for (const host of ['non.matching.com', 'wildcard.io', 'very.specific.com']) expect(await plain(host, '/s2'), host).toBe('404');
    expect(await plain('very.specific.com', '/s3')).toBe('v3');
    expect(parentConditions('no-intersection')).toMatchObject({ Accepted: 'False/NoMatchingListenerHostname' });
    expect(await plain('other.example.test')).toBe('404');
  });

  it('HTTPRouteListenerHostnameMatching: listeners with different host names on one port, a route each', async () => {
    const answers: Record<string, string> = {};
    for (const host of ['bar.com', 'foo.bar.com', 'baz.bar.com', 'boo.bar.com', 'multiple.prefixes.bar.com', 'multiple.prefixes.foo.com', 'foo.com', 'no.matching.host']) {
      answers[host] = await plain(host);
    }
    expect(answers).toEqual({
      'bar.com': 'v1',
      'foo.bar.com': 'v2',
      'baz.bar.com': 'v3',
      'boo.bar.com': 'v3',
      'multiple.prefixes.bar.com': 'v3',
      'multiple.prefixes.foo.com': 'v3',
      'foo.com': '404',
      'no.matching.host': '404',
    });
  });

  it('HTTPRouteHTTPSListener: HTTPS with the listener certificate; the TLS listener on the same port keeps its passthrough', async () => {
    const response = await httpsGet({ port: target.httpsPort, servername: 'app.secure.example.test', ca: ca.certPem });
    expect(echoBackendOf(response)).toBe('v1');
    expect(response.peerCertificate?.fingerprint256).toBe(fingerprint(secureCert.certPem));
    const probe = await tlsProbe({ port: target.httpsPort, servername: 'tunnel.example.test', ca: ca.certPem });
    expect(probe.outcome).toBe('connected');
    expect(probe.data).toMatch(/^hello from tunnel /);
    // Through an HTTPS listener only: plain HTTP is redirected to HTTPS.
    const redirect = await httpGet({ port: target.httpPort, host: 'app.secure.example.test' });
    expect(redirect.status).toBe(308);
  });

  it('HTTPRouteInvalidNonExistentBackendRef, …UnknownKind, …CrossNamespaceBackendRef: 500, with the reason in ResolvedRefs', async () => {
    expect(await plain('nonexistent.example.test')).toBe('500');
    expect(parentConditions('nonexistent')).toEqual({ Accepted: 'True/Accepted', ResolvedRefs: 'False/BackendNotFound' });
    expect(await plain('unknown-kind.example.test')).toBe('500');
    expect(parentConditions('unknown-kind')).toEqual({ Accepted: 'True/Accepted', ResolvedRefs: 'False/InvalidKind' });
    expect(await plain('ungranted.example.test')).toBe('500');
    expect(parentConditions('ungranted')).toEqual({ Accepted: 'True/Accepted', ResolvedRefs: 'False/RefNotPermitted' });
    expect(backends.ungranted).toBeDefined();
  });

  it('HTTPRouteReferenceGrant and HTTPRoutePartiallyInvalidViaInvalidReferenceGrant', async () => {
    expect(await plain('granted.example.test')).toBe('granted');
    expect(parentConditions('granted')).toEqual({ Accepted: 'True/Accepted', ResolvedRefs: 'True/ResolvedRefs' });
    expect(await plain('partly.example.test', '/invalid')).toBe('500');
    expect(await plain('partly.example.test', '/')).toBe('v1');
    expect(parentConditions('partly-granted')).toEqual({ Accepted: 'True/Accepted', ResolvedRefs: 'False/RefNotPermitted' });
  });

  it('HTTPRouteInvalidParentRefNotMatchingSectionName, HTTPRouteInvalidCrossNamespaceParentRef, and a listener for its own namespace only', async () => {
    expect(parentConditions('no-such-section')).toMatchObject({ Accepted: 'False/NoMatchingParent' });
    expect(await plain('nosection.example.test')).toBe('404');
    expect(parentConditions('no-gateway')).toMatchObject({ Accepted: 'False/NoMatchingParent' });
    expect(await plain('nogateway.example.test')).toBe('404');
    expect(parentConditions('not-allowed')).toMatchObject({ Accepted: 'False/NotAllowedByListeners' });
    expect(await plain('same.example.test')).toBe('404');
  });

  it('HTTPRouteWeight: requests split 70/30/0 by weight', async () => {
    expect(await tally('weights.example.test', 100)).toEqual({ v1: 70, v2: 30 });
  });

  it('the share of a backend that cannot be used is answered 500, not sent to the others', async () => {
    expect(await tally('half.example.test', 20)).toEqual({ v1: 10, '500': 10 });
  });

  it('HTTPRouteOmittedBackendRefs: a rule without backendRefs (omitted or empty) answers 500', async () => {
    expect(await plain('omitted.example.test', '/forward')).toBe('v1');
    expect(await plain('omitted.example.test', '/omitted-no-forward')).toBe('500');
    expect(await plain('omitted.example.test', '/empty-no-forward')).toBe('500');
  });

  it('HTTPRouteRedirectHostAndStatus, and RequestRedirect with 303/307/308, scheme and port', async () => {
    const redirect = async (path: string) => {
      const response = await httpGet({ port: target.httpPort, host: 'redirect.example.test', path: `${path}/x?q=1` });
      return `${response.status} ${response.headers.location ?? ''}`;
    };
    const port = target.httpPort;
    expect(await redirect('/hostname-redirect')).toBe(`302 http://example.org:${port}/hostname-redirect/x?q=1`);
    expect(await redirect('/host-and-status')).toBe(`301 http://example.org:${port}/host-and-status/x?q=1`);
    expect(await redirect('/see-other')).toBe(`303 http://redirect.example.test:${port}/see-other/x?q=1`);
    expect(await redirect('/temporary')).toBe(`307 http://redirect.example.test:${port}/temporary/x?q=1`);
    expect(await redirect('/permanent')).toBe('308 https://redirect.example.test/permanent/x?q=1');
    expect(await redirect('/port')).toBe('302 http://redirect.example.test:8443/port/x?q=1');
    expect(await redirect('/path')).toBe(`302 http://redirect.example.test:${port}/x?q=1`);
    expect(parentConditions('redirects')).toEqual({ Accepted: 'True/Accepted', ResolvedRefs: 'True/ResolvedRefs' });
  });

  it('HTTPRouteMatchingAcrossRoutes: two routes on one host, each serving its paths', async () => {
    expect(await plain('across.example.test', '/')).toBe('v1');
    expect(await plain('across.example.test', '/example')).toBe('v1');
    expect(await plain('across.example.test', '/v2')).toBe('v2');
    expect(await plain('across.example.test', '/v2/example')).toBe('v2');
  });

  it('an Ingress and an HTTPRoute on one host and path: the older keeps the path, the loser is told', async () => {
    expect(await plain('shared.example.test', '/')).toBe('v1');
    expect(await plain('shared.example.test', '/only-route')).toBe('v3');
    const report = JSON.parse(rendered.stdout) as JsonReport;
    expect(report.diagnostics).toContainEqual(
      expect.objectContaining({ code: 'path-conflict', resource: expect.objectContaining({ kind: 'HTTPRoute', namespace: 'apps', name: 'shared' }) }),
    );
  });
});
