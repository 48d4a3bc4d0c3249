import tls from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import type { CliRun } from '../support/cli.js';
import { startNginx, type RunningNginx } from '../support/nginx.js';
import {
  httpsGet,
  parseEcho,
  startHttpBackend,
  startTcpEcho,
  startTlsBackend,
  tlsProbe,
  type Peer,
  type TlsProbeResult,
} from '../support/peers.js';
import { createCa, issueCertificate, tlsSecretManifest, type CertificateAuthority, type CertificateFiles } from '../support/pki.js';
import { freePorts } from '../support/ports.js';
import {
  cleanUp,
  configMapManifest,
  createTarget,
  documents,
  fingerprint,
  ingressManifest,
  renderInto,
  serviceManifest,
  settle,
  startPeer,
  temporaryDir,
  type Target,
} from './harness.js';

/**
 * Real TLS traffic through a real nginx started from `render` output for Gateway API resources:
 * TLSRoutes on Passthrough and Terminate listeners, BackendTLSPolicy re-encryption, hostname
 * intersection and precedence, weighted backends, rejection by closing the connection, mixed listener
 * modes on one port, Gateway listeners beside Ingresses on the HTTPS port, and cross-namespace
 * backendRefs with and without a ReferenceGrant. One render, one nginx, one worker.
 *
 * Ports (all free high ports):
 * - `ports.pass`  Gateway infra/edge, Passthrough listeners only (a TLS-only port)
 * - `ports.term`  Gateway infra/term, one Terminate listener (a TLS-only port)
 * - `ports.mixed` Gateway apps/mixed, a Passthrough and a Terminate listener on the same port
 * - `target.httpsPort` the Ingress HTTPS port, also carrying Gateway infra/shared's listeners
 */

afterAll(cleanUp);

const gatewayApi = 'gateway.networking.k8s.io/v1';
const BUNDLED_DEFAULT_CN = 'ingress2nginx default certificate';
const POLICY_HOSTNAME = 'backend.internal.example.test';

let target: Target;
let rendered: CliRun;
let nginx: RunningNginx;
let ca: CertificateAuthority;
let certs: Awaited<ReturnType<typeof issueCertificates>>;
let backends: Awaited<ReturnType<typeof startBackends>>;
let ports: { pass: number; term: number; mixed: number };

// ------------------------------------------------------------------------------------ manifests

interface ListenerInput {
  readonly name: string;
  readonly port: number;
  readonly hostname?: string;
  readonly mode: 'Passthrough' | 'Terminate';
  /** Terminate: a kubernetes.io/tls Secret in the Gateway's namespace. */
  readonly secret?: string;
  /** Default: the Gateway API default, `Same`. */
  readonly from?: 'All' | 'Same';
}

function gatewayManifest(namespace: string, name: string, listeners: readonly ListenerInput[]): string {
  return stringify({
    apiVersion: gatewayApi,
    kind: 'Gateway',
    metadata: { name, namespace },
    spec: {
      gatewayClassName: 'ingress2nginx',
      listeners: listeners.map((l) => ({
        name: l.name,
        port: l.port,
        protocol: 'TLS',
        ...(l.hostname !== undefined && { hostname: l.hostname }),
        tls: { mode: l.mode, ...(l.secret !== undefined && { certificateRefs: [{ kind: 'Secret', name: l.secret }] }) },
        ...(l.from !== undefined && { allowedRoutes: { namespaces: { from: l.from } } }),
      })),
    },
  });
}

interface RouteBackendInput {
  readonly service: string;
  readonly port: number;
  /** Default: the route's namespace. */
  readonly namespace?: string;
  readonly weight?: number;
}

interface RouteInput {
  readonly namespace: string;
  readonly name: string;
  readonly parent: { readonly namespace: string; readonly name: string; readonly sectionName: string };
  readonly hostnames: readonly string[];
  readonly backends: readonly RouteBackendInput[];
  readonly creationTimestamp?: string;
}

function tlsRouteManifest(route: RouteInput): string {
  return stringify({
    apiVersion: gatewayApi,
    kind: 'TLSRoute',
    metadata: {
      name: route.name,
      namespace: route.namespace,
      ...(route.creationTimestamp !== undefined && { creationTimestamp: route.creationTimestamp }),
    },
    spec: {
      parentRefs: [route.parent],
      hostnames: route.hostnames,
      rules: [
        {
          backendRefs: route.backends.map((b) => ({
            name: b.service,
            port: b.port,
            ...(b.namespace !== undefined && { namespace: b.namespace }),
            ...(b.weight !== undefined && { weight: b.weight }),
          })),
        },
      ],
    },
  });
}

function backendTlsPolicyManifest(namespace: string, name: string, service: string, caConfigMap: string, hostname: string): string {
  return stringify({
    apiVersion: gatewayApi,
    kind: 'BackendTLSPolicy',
    metadata: { name, namespace },
    spec: {
      targetRefs: [{ group: '', kind: 'Service', name: service }],
      validation: { caCertificateRefs: [{ group: '', kind: 'ConfigMap', name: caConfigMap }], hostname },
    },
  });
}

/** Lets TLSRoutes in `fromNamespace` use the Service `service` in `namespace`. */
function referenceGrantManifest(namespace: string, name: string, fromNamespace: string, service: string): string {
  return stringify({
    apiVersion: 'gateway.networking.k8s.io/v1beta1',
    kind: 'ReferenceGrant',
    metadata: { name, namespace },
    spec: {
      from: [{ group: 'gateway.networking.k8s.io', kind: 'TLSRoute', namespace: fromNamespace }],
      to: [{ group: '', kind: 'Service', name: service }],
    },
  });
}

const gatewayClassManifest = stringify({
  apiVersion: gatewayApi,
  kind: 'GatewayClass',
  metadata: { name: 'ingress2nginx' },
  spec: { controllerName: 'ingress2nginx.dev/controller' },
});

// ------------------------------------------------------------------------ certificates, backends

function issueCertificates(ca: CertificateAuthority, otherCa: CertificateAuthority) {
  const leaf = (authority: CertificateAuthority, name: string): Promise<CertificateFiles> =>
    issueCertificate(authority, { commonName: name, sans: [name] });
  return settle({
    tunnel: leaf(ca, 'tunnel.example.test'),
    wildApp: leaf(ca, 'app.wild.example.test'),
    wildAny: leaf(ca, '*.wild.example.test'),
    wildExact: leaf(ca, 'exact.wild.example.test'),
    wildDeep: leaf(ca, '*.deep.wild.example.test'),
    weights: leaf(ca, '*.weights.example.test'),
    cross: leaf(ca, '*.cross.example.test'),
    termListener: leaf(ca, '*.term.example.test'),
    backendInternal: leaf(ca, POLICY_HOSTNAME),
    backendForeign: leaf(otherCa, POLICY_HOSTNAME),
    backendMisnamed: leaf(ca, 'misnamed.internal.example.test'),
    mixedPass: leaf(ca, 'pass.mixed.example.test'),
    mixedTerm: leaf(ca, 'term.mixed.example.test'),
    sharedGw: leaf(ca, 'gw.shared.example.test'),
    sharedGwTerm: leaf(ca, 'gwterm.shared.example.test'),
    ingPassthrough: leaf(ca, 'ing.shared.example.test'),
    web: leaf(ca, 'web.shared.example.test'),
  });
}

function startBackends(c: Awaited<ReturnType<typeof issueCertificates>>) {
  const tlsBackend = (name: string, certificate: CertificateFiles): Promise<Peer> =>
    startPeer(startTlsBackend({ name, cert: certificate.certPem, key: certificate.keyPem }));
  return settle({
    tunnel: tlsBackend('tunnel', c.tunnel),
    wildapp: tlsBackend('wildapp', c.wildApp),
    wildany: tlsBackend('wildany', c.wildAny),
    wildexact: tlsBackend('wildexact', c.wildExact),
    wilddeep: tlsBackend('wilddeep', c.wildDeep),
    heavy: tlsBackend('heavy', c.weights),
    light: tlsBackend('light', c.weights),
    idle: tlsBackend('idle', c.weights),
    halfreal: tlsBackend('halfreal', c.weights),
    granted: tlsBackend('granted', c.cross),
    ungranted: tlsBackend('ungranted', c.cross),
    hidden: tlsBackend('hidden', c.cross),
    secure: tlsBackend('secure', c.backendInternal),
    foreign: tlsBackend('foreign', c.backendForeign),
    misnamed: tlsBackend('misnamed', c.backendMisnamed),
    nocm: tlsBackend('nocm', c.backendInternal),
    badcm: tlsBackend('badcm', c.backendInternal),
    mixedtls: tlsBackend('mixedtls', c.mixedPass),
    sharedtls: tlsBackend('sharedtls', c.sharedGw),
    ingtls: tlsBackend('ingtls', c.ingPassthrough),
    echo: startPeer(startTcpEcho()),
    web: startPeer(startHttpBackend('web')),
  });
}

beforeAll(async () => {
  const dir = await temporaryDir();
  const [mainCa, otherCa] = await Promise.all([createCa(dir, 'Gateway Integration CA'), createCa(dir, 'Unrelated CA')]);
  ca = mainCa;
  certs = await issueCertificates(ca, otherCa);
  backends = await startBackends(certs);

  target = await createTarget();
  const [pass, term, mixed] = (await freePorts(3)) as [number, number, number];
  ports = { pass, term, mixed };
  const all = [target.httpPort, target.httpsPort, pass, term, mixed];
  if (new Set(all).size !== all.length) throw new Error(`port picked twice: ${all.join(', ')}`);

  const svc = (namespace: string, name: keyof typeof backends): string => serviceManifest(namespace, name, backends[name]);
  const to = (name: keyof typeof backends, more: Omit<RouteBackendInput, 'service' | 'port'> = {}): RouteBackendInput => ({
    service: name,
    port: backends[name].port,
    ...more,
  });
  const edgeGw = (sectionName: string) => ({ namespace: 'infra', name: 'edge', sectionName });
  const termGw = (sectionName: string) => ({ namespace: 'infra', name: 'term', sectionName });

  const manifests = documents(
    // One worker: nginx's weighted round robin is then a single deterministic sequence.
    configMapManifest('ingress-nginx', 'controller', { 'worker-processes': '1' }),
    gatewayClassManifest,

    // --- ports.pass: Passthrough listeners of Gateway infra/edge, routes in namespace apps
    gatewayManifest('infra', 'edge', [
      { name: 'tunnel', port: pass, hostname: 'tunnel.example.test', mode: 'Passthrough', from: 'All' },
      { name: 'wild', port: pass, hostname: '*.wild.example.test', mode: 'Passthrough', from: 'All' },
      { name: 'weights', port: pass, hostname: '*.weights.example.test', mode: 'Passthrough', from: 'All' },
      { name: 'cross', port: pass, hostname: '*.cross.example.test', mode: 'Passthrough', from: 'All' },
      { name: 'direct', port: pass, hostname: 'direct.example.test', mode: 'Passthrough', from: 'All' },
      // Listener isolation: the narrower listener owns its names even where it has no route for them.
      { name: 'iso-broad', port: pass, hostname: '*.iso.example.test', mode: 'Passthrough', from: 'All' },
      { name: 'iso-narrow', port: pass, hostname: '*.team.iso.example.test', mode: 'Passthrough', from: 'All' },
    ]),
    tlsRouteManifest({ namespace: 'apps', name: 'iso-any', parent: edgeGw('iso-broad'), hostnames: ['*.iso.example.test'], backends: [to('wildany')] }),
    tlsRouteManifest({
      namespace: 'apps',
      name: 'iso-team',
      parent: edgeGw('iso-narrow'),
      hostnames: ['app.team.iso.example.test'],
      backends: [to('wildexact')],
    }),
    ...(['tunnel', 'wildapp', 'wildany', 'wildexact', 'wilddeep', 'heavy', 'light', 'idle', 'halfreal'] as const).map((name) => svc('apps', name)),
    tlsRouteManifest({ namespace: 'apps', name: 'tunnel', parent: edgeGw('tunnel'), hostnames: ['tunnel.example.test'], backends: [to('tunnel')] }),
    // A Passthrough route to a Service that a BackendTLSPolicy targets (below): the policy does not apply.
    tlsRouteManifest({ namespace: 'apps', name: 'direct', parent: edgeGw('direct'), hostnames: ['direct.example.test'], backends: [to('secure')] }),
    // Intersection: only app.wild.example.test is inside the listener; app.outside.test is not.
    tlsRouteManifest({
      namespace: 'apps',
      name: 'wild-app',
      parent: edgeGw('wild'),
      hostnames: ['app.wild.example.test', 'app.outside.test'],
      backends: [to('wildapp')],
    }),
    // *.example.test ∩ *.wild.example.test = *.wild.example.test. The oldest route, yet the exact and the
    // longer-wildcard routes below win their names.
    tlsRouteManifest({
      namespace: 'apps',
      name: 'wild-any',
      parent: edgeGw('wild'),
      hostnames: ['*.example.test'],
      backends: [to('wildany')],
      creationTimestamp: '2020-01-01T00:00:00Z',
    }),
    tlsRouteManifest({
      namespace: 'apps',
      name: 'wild-exact',
      parent: edgeGw('wild'),
      hostnames: ['exact.wild.example.test'],
      backends: [to('wildexact')],
      creationTimestamp: '2025-01-01T00:00:00Z',
    }),
    tlsRouteManifest({
      namespace: 'apps',
      name: 'wild-deep',
      parent: edgeGw('wild'),
      hostnames: ['*.deep.wild.example.test'],
      backends: [to('wilddeep')],
      creationTimestamp: '2025-01-01T00:00:00Z',
    }),
    tlsRouteManifest({
      namespace: 'apps',
      name: 'split',
      parent: edgeGw('weights'),
      hostnames: ['split.weights.example.test'],
      backends: [to('heavy', { weight: 3 }), to('light', { weight: 1 }), to('idle', { weight: 0 })],
    }),
    tlsRouteManifest({
      namespace: 'apps',
      name: 'half',
      parent: edgeGw('weights'),
      hostnames: ['half.weights.example.test'],
      backends: [to('halfreal', { weight: 1 }), { service: 'missing', port: 8443, weight: 1 }],
    }),
    tlsRouteManifest({
      namespace: 'apps',
      name: 'void',
      parent: edgeGw('weights'),
      hostnames: ['void.weights.example.test'],
      backends: [{ service: 'missing', port: 8443 }],
    }),
    // Cross-namespace backends: vault grants TLSRoutes from apps its Service `granted` only; secrets grants nothing.
    svc('vault', 'granted'),
    svc('vault', 'ungranted'),
    svc('secrets', 'hidden'),
    referenceGrantManifest('vault', 'apps-to-granted', 'apps', 'granted'),
    tlsRouteManifest({
      namespace: 'apps',
      name: 'granted',
      parent: edgeGw('cross'),
      hostnames: ['granted.cross.example.test'],
      backends: [to('granted', { namespace: 'vault' })],
    }),
    tlsRouteManifest({
      namespace: 'apps',
      name: 'ungranted',
      parent: edgeGw('cross'),
      hostnames: ['ungranted.cross.example.test'],
      backends: [to('ungranted', { namespace: 'vault' })],
    }),
    tlsRouteManifest({
      namespace: 'apps',
      name: 'nogrant',
      parent: edgeGw('cross'),
      hostnames: ['nogrant.cross.example.test'],
      backends: [to('hidden', { namespace: 'secrets' })],
    }),

    // --- ports.term: one Terminate listener of Gateway infra/term
    tlsSecretManifest({ name: 'term-tls', namespace: 'infra', certificate: certs.termListener }),
    gatewayManifest('infra', 'term', [
      { name: 'term', port: term, hostname: '*.term.example.test', mode: 'Terminate', secret: 'term-tls', from: 'All' },
    ]),
    ...(['echo', 'secure', 'foreign', 'misnamed', 'nocm', 'badcm'] as const).map((name) => svc('apps', name)),
    configMapManifest('apps', 'backend-ca', { 'ca.crt': ca.certPem }),
    configMapManifest('apps', 'malformed-ca', { 'ca.crt': 'not a PEM certificate\n' }),
    backendTlsPolicyManifest('apps', 'secure-tls', 'secure', 'backend-ca', POLICY_HOSTNAME),
    backendTlsPolicyManifest('apps', 'foreign-tls', 'foreign', 'backend-ca', POLICY_HOSTNAME),
    backendTlsPolicyManifest('apps', 'misnamed-tls', 'misnamed', 'backend-ca', POLICY_HOSTNAME),
    // Invalid policies: the CA ConfigMap is missing, or its ca.crt is not a certificate.
    backendTlsPolicyManifest('apps', 'nocm-tls', 'nocm', 'does-not-exist', POLICY_HOSTNAME),
    backendTlsPolicyManifest('apps', 'badcm-tls', 'badcm', 'malformed-ca', POLICY_HOSTNAME),
    tlsRouteManifest({ namespace: 'apps', name: 'echo', parent: termGw('term'), hostnames: ['echo.term.example.test'], backends: [to('echo')] }),
    tlsRouteManifest({
      namespace: 'apps',
      name: 'reencrypt',
      parent: termGw('term'),
      hostnames: ['reencrypt.term.example.test'],
      backends: [to('secure')],
    }),
    // Re-encrypting to a backend set with a missing member: that share must be closed, not retried.
    tlsRouteManifest({
      namespace: 'apps',
      name: 'reencrypt-half',
      parent: termGw('term'),
      hostnames: ['half.term.example.test'],
      backends: [to('secure', { weight: 1 }), { service: 'missing', port: 8443, weight: 1 }],
    }),
    tlsRouteManifest({ namespace: 'apps', name: 'wrong-ca', parent: termGw('term'), hostnames: ['wrong-ca.term.example.test'], backends: [to('foreign')] }),
    tlsRouteManifest({
      namespace: 'apps',
      name: 'wrong-name',
      parent: termGw('term'),
      hostnames: ['wrong-name.term.example.test'],
      backends: [to('misnamed')],
    }),
    tlsRouteManifest({ namespace: 'apps', name: 'nocm', parent: termGw('term'), hostnames: ['nocm.term.example.test'], backends: [to('nocm')] }),
    tlsRouteManifest({ namespace: 'apps', name: 'badcm', parent: termGw('term'), hostnames: ['badcm.term.example.test'], backends: [to('badcm')] }),

    // --- ports.mixed: Gateway apps/mixed, Passthrough and Terminate on one port, default allowedRoutes (Same)
    svc('apps', 'mixedtls'),
    tlsSecretManifest({ name: 'mixed-tls', namespace: 'apps', certificate: certs.mixedTerm }),
    gatewayManifest('apps', 'mixed', [
      { name: 'pass', port: mixed, hostname: 'pass.mixed.example.test', mode: 'Passthrough' },
      { name: 'term', port: mixed, hostname: 'term.mixed.example.test', mode: 'Terminate', secret: 'mixed-tls' },
    ]),
    tlsRouteManifest({
      namespace: 'apps',
      name: 'mixed-pass',
      parent: { namespace: 'apps', name: 'mixed', sectionName: 'pass' },
      hostnames: ['pass.mixed.example.test'],
      backends: [to('mixedtls')],
    }),
    tlsRouteManifest({
      namespace: 'apps',
      name: 'mixed-term',
      parent: { namespace: 'apps', name: 'mixed', sectionName: 'term' },
      hostnames: ['term.mixed.example.test'],
      backends: [to('echo')],
    }),

    // --- the Ingress HTTPS port: Gateway infra/shared's listeners beside Ingress passthrough and termination
    svc('apps', 'sharedtls'),
    tlsSecretManifest({ name: 'shared-term-tls', namespace: 'infra', certificate: certs.sharedGwTerm }),
    gatewayManifest('infra', 'shared', [
      { name: 'pass', port: target.httpsPort, hostname: 'gw.shared.example.test', mode: 'Passthrough', from: 'All' },
      { name: 'term', port: target.httpsPort, hostname: 'gwterm.shared.example.test', mode: 'Terminate', secret: 'shared-term-tls', from: 'All' },
    ]),
    tlsRouteManifest({
      namespace: 'apps',
      name: 'shared-pass',
      parent: { namespace: 'infra', name: 'shared', sectionName: 'pass' },
      hostnames: ['gw.shared.example.test'],
      backends: [to('sharedtls')],
    }),
    tlsRouteManifest({
      namespace: 'apps',
      name: 'shared-term',
      parent: { namespace: 'infra', name: 'shared', sectionName: 'term' },
      hostnames: ['gwterm.shared.example.test'],
      backends: [to('echo')],
    }),
    svc('web', 'ingtls'),
    svc('web', 'web'),
    tlsSecretManifest({ name: 'web-tls', namespace: 'web', certificate: certs.web }),
    ingressManifest({
      namespace: 'web',
      name: 'ing-passthrough',
      annotations: { 'ssl-passthrough': 'true' },
      rules: [{ host: 'ing.shared.example.test', paths: [{ path: '/', pathType: 'Prefix', backend: { service: 'ingtls', port: backends.ingtls.port } }] }],
    }),
    ingressManifest({
      namespace: 'web',
      name: 'web',
      tls: [{ hosts: ['web.shared.example.test'], secretName: 'web-tls' }],
      rules: [{ host: 'web.shared.example.test', paths: [{ path: '/', pathType: 'Prefix', backend: { service: 'web', port: backends.web.port } }] }],
    }),
  );

  rendered = await renderInto(target, manifests, ['--configmap', 'ingress-nginx/controller', '--format', 'json']);
  expect(rendered.stderr).not.toContain('internal error');
  // Exit 1: the deliberately broken references (missing Services, missing ReferenceGrants, invalid CA
  // ConfigMaps) are input errors; the configuration is written all the same.
  expect(rendered.exitCode, rendered.stderr).toBe(1);
  nginx = await startNginx({ prefix: target.prefix, conf: target.conf, ports: all });
});

// -------------------------------------------------------------------------------------- clients

/** `hello from <name> sni=<sni>\n` from startTlsBackend, or undefined. */
function greeting(data: string): { backend: string; sni: string } | undefined {
  const match = /^hello from (\S+) sni=(\S*)\n$/.exec(data);
  return match ? { backend: match[1] ?? '', sni: match[2] ?? '' } : undefined;
}

/** Who answered a probe: the backend's name from its greeting, or `<outcome>` when none did. */
function answeredBy(probe: TlsProbeResult): string {
  if (probe.outcome !== 'connected') return `<${probe.outcome}>`;
  return greeting(probe.data)?.backend ?? `<connected, no greeting: ${JSON.stringify(probe.data)}>`;
}

/** `count` probes, `concurrency` at a time; how often each answer came back. */
async function tally(options: { port: number; servername: string; count: number; concurrency?: number }): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  const concurrency = options.concurrency ?? 10;
  for (let done = 0; done < options.count; done += concurrency) {
    const batch = Math.min(concurrency, options.count - done);
    const probes = await Promise.all(
      Array.from({ length: batch }, () => tlsProbe({ port: options.port, servername: options.servername, ca: ca.certPem })),
    );
    for (const probe of probes) {
      const who = answeredBy(probe);
      counts[who] = (counts[who] ?? 0) + 1;
      // Every connection that reached a backend carried the client's SNI unchanged.
      if (probe.outcome === 'connected') expect(greeting(probe.data)?.sni).toBe(options.servername);
    }
  }
  return counts;
}

interface Session {
  readonly handshake: boolean;
  readonly fingerprint256?: string;
  /** Everything the server sent until it closed (or until the bound). */
  readonly data: string;
  /** `open`: still open when the bound ran out. */
  readonly ending: 'closed' | 'reset' | 'open' | 'error';
}

/** Bounds how long `tlsSession` waits for the server to close; not an assertion on time. */
const SESSION_BOUND_MS = 5_000;

/**
 * One TLS connection that stays open until the server closes it: tells whether the handshake with the
 * listener completed, what the server sent, and how the connection ended.
 */
function tlsSession(options: { port: number; servername: string }): Promise<Session> {
  return new Promise((resolve) => {
    const socket = tls.connect({ host: '127.0.0.1', port: options.port, servername: options.servername, rejectUnauthorized: false });
    socket.setEncoding('utf8');
    let handshake = false;
    let fingerprint256: string | undefined;
    let data = '';
    let settled = false;
    const finish = (ending: Session['ending']): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ handshake, ...(fingerprint256 !== undefined && { fingerprint256 }), data, ending });
    };
    const timer = setTimeout(() => finish('open'), SESSION_BOUND_MS);
    socket.once('secureConnect', () => {
      handshake = true;
      fingerprint256 = socket.getPeerCertificate().fingerprint256;
    });
    socket.on('data', (chunk: string) => (data += chunk));
    socket.once('close', () => finish('closed'));
    socket.once('error', (error: NodeJS.ErrnoException) => finish(error.code === 'ECONNRESET' || error.code === 'EPIPE' ? 'reset' : 'error'));
  });
}

interface Conditioned {
  readonly conditions: readonly { type: string; status: string; reason: string }[];
}

/** What `render --format json` writes to stdout. */
interface JsonReport {
  readonly diagnostics: readonly {
    severity: string;
    code: string;
    resource: { kind: string; namespace?: string; name: string } | null;
    message: string;
  }[];
  /** Keyed `Kind/namespace/name`; routes have `parents`, policies `ancestors`. */
  readonly status: Record<string, { parents?: readonly Conditioned[]; ancestors?: readonly Conditioned[] }>;
}

function jsonReport(): JsonReport {
  return JSON.parse(rendered.stdout) as JsonReport;
}

/** `{ Accepted: 'True/Accepted', ResolvedRefs: 'False/BackendNotFound' }` of the first parent (or ancestor). */
function conditionsOf(resource: string): Record<string, string> {
  const entry = jsonReport().status[resource];
  const first = entry?.parents?.[0] ?? entry?.ancestors?.[0];
  if (!first) throw new Error(`no status for ${resource} in:\n${rendered.stderr}`);
  return Object.fromEntries(first.conditions.map((c) => [c.type, `${c.status}/${c.reason}`]));
}

// ---------------------------------------------------------------------------------------- tests

describe('render', () => {
  it('reports exactly the broken references and invalid policies as errors, and nothing else as an error', () => {
    const errors = jsonReport()
      .diagnostics.filter((d) => d.severity === 'error')
      .map((d) => `${d.code} ${d.resource?.kind ?? ''} ${d.resource?.namespace ?? ''}/${d.resource?.name ?? ''}`)
      .sort();
    expect(errors).toEqual([
      'backend-not-found TLSRoute apps/half',
      'backend-not-found TLSRoute apps/reencrypt-half',
      'backend-not-found TLSRoute apps/void',
      'backend-tls-policy-unusable TLSRoute apps/badcm',
      'backend-tls-policy-unusable TLSRoute apps/nocm',
      'invalid-ca-certificate-ref BackendTLSPolicy apps/badcm-tls',
      'invalid-ca-certificate-ref BackendTLSPolicy apps/nocm-tls',
      'no-valid-ca-certificate BackendTLSPolicy apps/badcm-tls',
      'no-valid-ca-certificate BackendTLSPolicy apps/nocm-tls',
      'ref-not-permitted TLSRoute apps/nogrant',
      'ref-not-permitted TLSRoute apps/ungranted',
    ]);
  });

  it('gives the routes and policies the status their traffic below shows', () => {
    expect(conditionsOf('TLSRoute/apps/tunnel')).toEqual({ Accepted: 'True/Accepted', ResolvedRefs: 'True/ResolvedRefs' });
    expect(conditionsOf('TLSRoute/apps/void')).toEqual({ Accepted: 'True/Accepted', ResolvedRefs: 'False/BackendNotFound' });
    expect(conditionsOf('TLSRoute/apps/half')).toEqual({ Accepted: 'True/Accepted', ResolvedRefs: 'False/BackendNotFound' });
    expect(conditionsOf('TLSRoute/apps/granted')).toEqual({ Accepted: 'True/Accepted', ResolvedRefs: 'True/ResolvedRefs' });
    expect(conditionsOf('TLSRoute/apps/ungranted')).toEqual({ Accepted: 'True/Accepted', ResolvedRefs: 'False/RefNotPermitted' });
    expect(conditionsOf('TLSRoute/apps/nogrant')).toEqual({ Accepted: 'True/Accepted', ResolvedRefs: 'False/RefNotPermitted' });
    // The policies themselves are valid: a wrong CA or name shows only when nginx meets the backend.
    for (const policy of ['secure-tls', 'foreign-tls', 'misnamed-tls']) {
      expect(conditionsOf(`BackendTLSPolicy/apps/${policy}`)).toEqual({ Accepted: 'True/Accepted', ResolvedRefs: 'True/ResolvedRefs' });
    }
    for (const policy of ['nocm-tls', 'badcm-tls']) {
      expect(conditionsOf(`BackendTLSPolicy/apps/${policy}`)).toEqual({
        Accepted: 'False/NoValidCACertificate',
        ResolvedRefs: 'False/InvalidCACertificateRef',
      });
    }
  });
});

describe('Passthrough listener', () => {
  it("hands the client's TLS to the backend: the client sees the backend's own certificate, the backend the original SNI", async () => {
    const probe = await tlsProbe({ port: ports.pass, servername: 'tunnel.example.test', ca: ca.certPem });
    expect(probe).toMatchObject({ outcome: 'connected', authorized: true, data: 'hello from tunnel sni=tunnel.example.test\n' });
    expect(probe.peerCertificate?.fingerprint256).toBe(fingerprint(certs.tunnel.certPem));
  });

  it('ignores a BackendTLSPolicy on the backend: the TLS stays the client\'s, end to end', async () => {
    const probe = await tlsProbe({ port: ports.pass, servername: 'direct.example.test', ca: ca.certPem });
    expect(probe).toMatchObject({ outcome: 'connected', data: 'hello from secure sni=direct.example.test\n' });
    expect(probe.peerCertificate?.fingerprint256).toBe(fingerprint(certs.backendInternal.certPem));
  });
});

describe('Terminate listener', () => {
  it("terminates with the listener's certificate and hands the plaintext to a TCP backend", async () => {
    const probe = await tlsProbe({ port: ports.term, servername: 'echo.term.example.test', ca: ca.certPem, send: 'ping through the gateway\n' });
    expect(probe).toMatchObject({ outcome: 'connected', authorized: true, data: 'ping through the gateway\n' });
    expect(probe.peerCertificate?.fingerprint256).toBe(fingerprint(certs.termListener.certPem));
  });

  it('re-encrypts to a backend targeted by a BackendTLSPolicy and sends the policy hostname as SNI', async () => {
    const probe = await tlsProbe({ port: ports.term, servername: 'reencrypt.term.example.test', ca: ca.certPem });
    expect(probe).toMatchObject({ outcome: 'connected', authorized: true, data: `hello from secure sni=${POLICY_HOSTNAME}\n` });
    // The client talks TLS with the listener, not with the backend.
    expect(probe.peerCertificate?.fingerprint256).toBe(fingerprint(certs.termListener.certPem));
  });

  it("closes the missing backend's share of a re-encrypting route instead of retrying it on the real backend", async () => {
    const count = 40;
    const probes: TlsProbeResult[] = [];
    for (let done = 0; done < count; done += 10) {
      probes.push(
        ...(await Promise.all(Array.from({ length: 10 }, () => tlsProbe({ port: ports.term, servername: 'half.term.example.test', ca: ca.certPem })))),
      );
    }
    const reached = probes.filter((p) => greeting(p.data)?.backend === 'secure').length;
    const closed = probes.filter((p) => p.data === '').length;
    console.info(`re-encrypting weights 1 real / 1 missing over ${count} connections: ${reached} reached, ${closed} closed`);
    expect(reached + closed).toBe(count);
    // Tolerance as for passthrough: the closed share must lie in [0.35, 0.65] (ideal 0.5).
    expect(closed / count).toBeGreaterThanOrEqual(0.35);
    expect(closed / count).toBeLessThanOrEqual(0.65);
  });

  it("closes the client's connection after the listener handshake when the backend certificate is from another CA", async () => {
    const session = await tlsSession({ port: ports.term, servername: 'wrong-ca.term.example.test' });
    expect(session).toMatchObject({ handshake: true, fingerprint256: fingerprint(certs.termListener.certPem), data: '' });
    expect(['closed', 'reset']).toContain(session.ending);
    await nginx.waitForStderr(new RegExp(`upstream SSL certificate verify error: .*upstream: "127\\.0\\.0\\.1:${backends.foreign.port}"`));
  });

  it("closes the client's connection after the listener handshake when the backend certificate does not name the policy hostname", async () => {
    const session = await tlsSession({ port: ports.term, servername: 'wrong-name.term.example.test' });
    expect(session).toMatchObject({ handshake: true, fingerprint256: fingerprint(certs.termListener.certPem), data: '' });
    expect(['closed', 'reset']).toContain(session.ending);
    await nginx.waitForStderr(
      new RegExp(`upstream SSL certificate does not match "backend\\.internal\\.example\\.test".*upstream: "127\\.0\\.0\\.1:${backends.misnamed.port}"`),
    );
  });

  it('closes every connection to a backend whose BackendTLSPolicy has no valid CA (missing or malformed ConfigMap), never sending plaintext', async () => {
    for (const servername of ['nocm.term.example.test', 'badcm.term.example.test']) {
      const probe = await tlsProbe({ port: ports.term, servername });
      expect(probe.outcome, `${servername}: ${JSON.stringify(probe)}`).toBe('closed');
    }
  });

  it('closes unmatched SNI on a Terminate-only port without presenting a certificate', async () => {
    expect(await tlsProbe({ port: ports.term, servername: 'nobody.term.example.test' })).toMatchObject({ outcome: 'closed' });
  });
});

describe('hostname intersection and precedence', () => {
  it('serves a route hostname inside the wildcard listener hostname', async () => {
    const probe = await tlsProbe({ port: ports.pass, servername: 'app.wild.example.test', ca: ca.certPem });
    expect(probe).toMatchObject({ outcome: 'connected', authorized: true, data: 'hello from wildapp sni=app.wild.example.test\n' });
  });

  it("closes a route hostname outside the listener hostname (connection closed, no TLS alert)", async () => {
    const probe = await tlsProbe({ port: ports.pass, servername: 'app.outside.test' });
    expect(probe.outcome, JSON.stringify(probe)).toBe('closed');
  });

  it('serves other names through the wildcard route (*.example.test narrowed to the listener)', async () => {
    const probe = await tlsProbe({ port: ports.pass, servername: 'other.wild.example.test', ca: ca.certPem });
    expect(answeredBy(probe)).toBe('wildany');
    // Outside the listener the wildcard route does not reach.
    expect((await tlsProbe({ port: ports.pass, servername: 'other.example.test' })).outcome).toBe('closed');
  });

  it("closes a name under a narrower listener that has no route for it, instead of using a broader listener's route", async () => {
    expect(answeredBy(await tlsProbe({ port: ports.pass, servername: 'x.iso.example.test' }))).toBe('wildany');
    expect(answeredBy(await tlsProbe({ port: ports.pass, servername: 'app.team.iso.example.test' }))).toBe('wildexact');
    expect((await tlsProbe({ port: ports.pass, servername: 'other.team.iso.example.test' })).outcome).toBe('closed');
  });

  it('lets an exact-hostname route beat an older wildcard route for the same name', async () => {
    const probe = await tlsProbe({ port: ports.pass, servername: 'exact.wild.example.test', ca: ca.certPem });
    expect(probe).toMatchObject({ outcome: 'connected', authorized: true, data: 'hello from wildexact sni=exact.wild.example.test\n' });
  });

  it('lets a longer wildcard route beat an older shorter one', async () => {
    const probe = await tlsProbe({ port: ports.pass, servername: 'x.deep.wild.example.test', ca: ca.certPem });
    expect(probe).toMatchObject({ outcome: 'connected', authorized: true, data: 'hello from wilddeep sni=x.deep.wild.example.test\n' });
  });
});

describe('unmatched SNI on a TLS-only port', () => {
  it('closes the connection (no TLS alert) for an unknown name', async () => {
    const probe = await tlsProbe({ port: ports.pass, servername: 'nobody.example.test' });
    expect(probe.outcome, JSON.stringify(probe)).toBe('closed');
  });

  it('closes the connection for a client that sends no SNI', async () => {
    expect((await tlsProbe({ port: ports.pass })).outcome).toBe('closed');
  });
});

describe('weighted backends', () => {
  it('splits connections 3:1 and never sends any to a weight-0 backend', async () => {
    const count = 200;
    const counts = await tally({ port: ports.pass, servername: 'split.weights.example.test', count });
    console.info(`weights 3/1/0 over ${count} connections: ${JSON.stringify(counts)}`);
    // Only the two weighted backends answer, every connection is answered by one of them.
    expect(Object.keys(counts).sort()).toEqual(['heavy', 'light']);
    expect((counts.heavy ?? 0) + (counts.light ?? 0)).toBe(count);
    // Tolerance: the heavy share must lie in [0.6, 0.9] (ideal 0.75). With one worker nginx's smooth
    // weighted round robin repeats heavy, heavy, light, heavy, so the split is exact; the band only
    // allows for a change of balancer or worker count, and still fails a 1:1 or all-to-one split.
    const heavyShare = (counts.heavy ?? 0) / count;
    expect(heavyShare).toBeGreaterThanOrEqual(0.6);
    expect(heavyShare).toBeLessThanOrEqual(0.9);
  });

  it("closes the missing backend's share of connections and sends the rest to the real one", async () => {
    const count = 100;
    const counts = await tally({ port: ports.pass, servername: 'half.weights.example.test', count });
    console.info(`weights 1 real / 1 missing over ${count} connections: ${JSON.stringify(counts)}`);
    // Nothing else happens: a connection either reaches halfreal or is closed (never a TLS alert).
    expect(Object.keys(counts).sort()).toEqual(['<closed>', 'halfreal']);
    // Tolerance: the closed share must lie in [0.35, 0.65] (ideal 0.5; exact with one worker).
    const closedShare = (counts['<closed>'] ?? 0) / count;
    expect(closedShare).toBeGreaterThanOrEqual(0.35);
    expect(closedShare).toBeLessThanOrEqual(0.65);
  });

  it('closes every connection of a route whose only backend is missing', async () => {
    expect(await tally({ port: ports.pass, servername: 'void.weights.example.test', count: 20 })).toEqual({ '<closed>': 20 });
  });
});

describe('mixed Passthrough and Terminate listeners on one port', () => {
  it('passes one host through', async () => {
    const probe = await tlsProbe({ port: ports.mixed, servername: 'pass.mixed.example.test', ca: ca.certPem });
    expect(probe).toMatchObject({ outcome: 'connected', authorized: true, data: 'hello from mixedtls sni=pass.mixed.example.test\n' });
    expect(probe.peerCertificate?.fingerprint256).toBe(fingerprint(certs.mixedPass.certPem));
  });

  it('terminates the other', async () => {
    const probe = await tlsProbe({ port: ports.mixed, servername: 'term.mixed.example.test', ca: ca.certPem, send: 'mixed\n' });
    expect(probe).toMatchObject({ outcome: 'connected', authorized: true, data: 'mixed\n' });
    expect(probe.peerCertificate?.fingerprint256).toBe(fingerprint(certs.mixedTerm.certPem));
  });

  it('closes names neither listener has', async () => {
    expect((await tlsProbe({ port: ports.mixed, servername: 'other.mixed.example.test' })).outcome).toBe('closed');
  });
});

describe('Gateway listeners and Ingresses on the Ingress HTTPS port', () => {
  it('passes a TLSRoute host through to its backend', async () => {
    const probe = await tlsProbe({ port: target.httpsPort, servername: 'gw.shared.example.test', ca: ca.certPem });
    expect(probe).toMatchObject({ outcome: 'connected', authorized: true, data: 'hello from sharedtls sni=gw.shared.example.test\n' });
    expect(probe.peerCertificate?.fingerprint256).toBe(fingerprint(certs.sharedGw.certPem));
  });

  it('passes an Ingress passthrough host through to its own backend', async () => {
    const probe = await tlsProbe({ port: target.httpsPort, servername: 'ing.shared.example.test', ca: ca.certPem });
    expect(probe).toMatchObject({ outcome: 'connected', authorized: true, data: 'hello from ingtls sni=ing.shared.example.test\n' });
    expect(probe.peerCertificate?.fingerprint256).toBe(fingerprint(certs.ingPassthrough.certPem));
  });

  it("terminates a TLSRoute host with its listener's certificate", async () => {
    const probe = await tlsProbe({ port: target.httpsPort, servername: 'gwterm.shared.example.test', ca: ca.certPem, send: 'shared\n' });
    expect(probe).toMatchObject({ outcome: 'connected', authorized: true, data: 'shared\n' });
    expect(probe.peerCertificate?.fingerprint256).toBe(fingerprint(certs.sharedGwTerm.certPem));
  });

  it("still terminates an Ingress host with its Secret's certificate and proxies HTTP to its backend", async () => {
    const response = await httpsGet({ port: target.httpsPort, servername: 'web.shared.example.test', path: '/hi', ca: ca.certPem });
    expect(response.status, response.body).toBe(200);
    expect(response.peerCertificate?.fingerprint256).toBe(fingerprint(certs.web.certPem));
    expect(parseEcho(response.body)).toMatchObject({ backend: 'web', path: '/hi' });
  });

  it('answers unknown SNI there with the default certificate (the Ingress default server), not by closing', async () => {
    const probe = await tlsProbe({ port: target.httpsPort, servername: 'nobody.shared.example.test', awaitData: false });
    expect(probe.outcome).toBe('connected');
    expect(probe.peerCertificate?.subjectCN).toBe(BUNDLED_DEFAULT_CN);
  });
});

describe('cross-namespace backendRefs', () => {
  it('reaches a Service in another namespace that a ReferenceGrant opens to the route', async () => {
    const probe = await tlsProbe({ port: ports.pass, servername: 'granted.cross.example.test', ca: ca.certPem });
    expect(probe).toMatchObject({ outcome: 'connected', authorized: true, data: 'hello from granted sni=granted.cross.example.test\n' });
  });

  it('closes connections to a Service the namespace has a ReferenceGrant for, but not for that Service', async () => {
    const probe = await tlsProbe({ port: ports.pass, servername: 'ungranted.cross.example.test' });
    expect(probe.outcome, JSON.stringify(probe)).toBe('closed');
  });

  it('closes connections to a Service in a namespace without any ReferenceGrant', async () => {
    const probe = await tlsProbe({ port: ports.pass, servername: 'nogrant.cross.example.test' });
    expect(probe.outcome, JSON.stringify(probe)).toBe('closed');
  });
});
