import { X509Certificate } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { FakeApiServer, type JsonObject } from '../support/fake-apiserver.js';
import { grpcCall, startGrpcBackend } from '../support/grpc.js';
import { httpGet, httpsGet, parseEcho, startHttpBackend, startTlsBackend, tlsProbe, type Peer } from '../support/peers.js';
import { createCa, issueCertificate, type CertificateAuthority } from '../support/pki.js';
import { eventually, ingress, namespace, service, settled, startSidecar, stopAllSidecars, tlsSecret, writeGatedNginx, type RunningSidecar } from '../support/sidecar.js';
import { requireNginx } from '../support/nginx.js';
import { freePorts } from '../support/ports.js';
import { writePoisonNginx } from '../support/tenants.js';
import { fingerprint } from './harness.js';

/**
 * The cluster mode end to end: a fake API server, the sidecar, and the real nginx it starts. Changes
 * made through the API are served; what cannot be served is reported and never stops the rest.
 */

let api: FakeApiServer;
let kubeconfig: string;
let ca: CertificateAuthority;
const peers: Peer[] = [];
const servers: FakeApiServer[] = [];

beforeAll(async () => {
  ca = await createCa(await mkdtemp(join(tmpdir(), 'i2n-sidecar-pki-')), 'Sidecar CA');
});

afterAll(async () => {
  await stopAllSidecars();
  await Promise.all(peers.map((p) => p.close()));
  await Promise.all(servers.map((s) => s.close()));
});

/** A cluster of its own for each group of tests: objects and the leader Lease do not leak between them. */
async function freshCluster(): Promise<void> {
  // Bookmarks well within the sidecar's idle timeout (1.5 s here), as the real server's minute is within its default.
  api = await FakeApiServer.start({ tls: true, token: 'sidecar-test', bookmarkIntervalMs: 500 });
  servers.push(api);
  kubeconfig = await api.writeKubeconfig();
  for (const ns of ['web', 'data']) api.create(namespace(ns));
}

async function backend(name: string): Promise<Peer> {
  const peer = await startHttpBackend(name);
  peers.push(peer);
  return peer;
}

async function served(sidecar: RunningSidecar, host: string, path = '/'): Promise<string> {
  const response = await httpGet({ port: sidecar.httpPort, host, path }).catch(() => undefined);
  if (!response || response.status !== 200) return `status ${response?.status ?? 'none'}`;
  return parseEcho(response.body).backend;
}

describe('an Ingress through its life', () => {
  let sidecar: RunningSidecar;
  let one: Peer;
  let two: Peer;

  beforeAll(async () => {
    await freshCluster();
    [one, two] = await Promise.all([backend('one'), backend('two')]);
    api.create(service('web', 'one', one));
    api.create(service('web', 'two', two));
    sidecar = await startSidecar({ api, kubeconfig, run: { publishAddresses: ['192.0.2.10', 'lb.example.test'] } });
  });

  it('is served once created, becomes ready, and its status carries the published addresses', async () => {
    expect(await eventually(() => sidecar.probe('/readyz'), (s) => s === 200)).toBe(200);
    expect(await sidecar.probe('/healthz')).toBe(200);
    const starting = JSON.parse(sidecar.logs().split('\n').find((line) => line.includes('"msg":"starting"'))!);
    expect(starting).toMatchObject({ nginx: expect.stringMatching(/^\d+\.\d+\.\d+$/), tls: expect.stringMatching(/^OpenSSL \d+\.\d+\.\d+$/) });
    api.create(ingress('web', 'life', 'life.example.test', { service: 'one', port: one.port }));
    expect(await eventually(() => served(sidecar, 'life.example.test'), (b) => b === 'one')).toBe('one');
    const status = await eventually(
      () => api.get({ apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', namespace: 'web', name: 'life' })?.['status'],
      (s) => JSON.stringify(s ?? {}).includes('192.0.2.10'),
    );
    expect(status).toEqual({ loadBalancer: { ingress: [{ ip: '192.0.2.10' }, { hostname: 'lb.example.test' }] } });
  });

  it('serves a modification', async () => {
    api.update(ingress('web', 'life', 'life.example.test', { service: 'two', port: two.port }));
    expect(await eventually(() => served(sidecar, 'life.example.test'), (b) => b === 'two')).toBe('two');
  });

  it('stops serving it once deleted', async () => {
    api.delete({ apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', namespace: 'web', name: 'life' });
    expect(await eventually(() => served(sidecar, 'life.example.test'), (b) => b === 'status 404')).toBe('status 404');
  });

  it('does not reload for changes that do not change the config', async () => {
    api.create(ingress('web', 'steady', 'steady.example.test', { service: 'one', port: one.port }));
    await eventually(() => served(sidecar, 'steady.example.test'), (b) => b === 'one');
    await settled(sidecar);
    const reloads = await sidecar.metric('ingress2nginx_reloads_total', { result: 'success' });
    const rounds = await sidecar.metric('ingress2nginx_render_duration_seconds_count');
    const svc = api.get({ apiVersion: 'v1', kind: 'Service', namespace: 'web', name: 'one' })!;
    api.update({ ...svc, metadata: { ...(svc['metadata'] as object), annotations: { unrelated: 'change' } } });
    api.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'unrelated', namespace: 'web' }, data: { a: 'b' } });
    await eventually(() => sidecar.metric('ingress2nginx_render_duration_seconds_count'), (n) => n > rounds);
    expect(await sidecar.metric('ingress2nginx_reloads_total', { result: 'success' })).toBe(reloads);
  });
});

describe('Secrets', () => {
  beforeAll(freshCluster);

  it('serves a rotated certificate', async () => {
    const peer = await backend('secure');
    const [first, second] = await Promise.all([
      issueCertificate(ca, { commonName: 'secure.example.test', sans: ['secure.example.test'] }),
      issueCertificate(ca, { commonName: 'secure.example.test', sans: ['secure.example.test'] }),
    ]);
    api.create(service('web', 'secure', peer));
    api.create(tlsSecret('web', 'secure-tls', first));
    api.create(ingress('web', 'secure', 'secure.example.test', { service: 'secure', port: peer.port }, { tlsSecret: 'secure-tls' }));
    const sidecar = await startSidecar({ api, kubeconfig });
    const servedCertificate = async () =>
      (await httpsGet({ port: sidecar.httpsPort, servername: 'secure.example.test', path: '/' }).catch(() => undefined))?.peerCertificate?.fingerprint256;
    expect(await eventually(servedCertificate, (f) => f === fingerprint(first.certPem))).toBe(fingerprint(first.certPem));
    api.update(tlsSecret('web', 'secure-tls', second));
    expect(await eventually(servedCertificate, (f) => f === fingerprint(second.certPem))).toBe(fingerprint(second.certPem));

    // ingress-nginx's metric, name and labels: the absolute expiry time, so "expires within 10 days" alerts keep working.
    const leaf = new X509Certificate(second.certPem);
    const expiry = await eventually(
      async () => (await sidecar.metrics()).split('\n').filter((line) => line.startsWith('nginx_ingress_controller_ssl_expire_time_seconds{')),
      (lines) => lines.some((line) => line.includes(`-${BigInt(`0x${leaf.serialNumber}`)}"`)),
    );
    expect(expiry).toEqual([
      `nginx_ingress_controller_ssl_expire_time_seconds{namespace="web",class="nginx",host="secure.example.test",secret_name="secure-tls",identifier="-${BigInt(`0x${leaf.serialNumber}`)}"} ${Date.parse(leaf.validTo) / 1000}`,
    ]);
    await sidecar.stop();
  });
});

describe('metrics', () => {
  beforeAll(freshCluster);

  it('uses the standard process and Node.js names, and has every counter at 0 for its label values from the start', async () => {
    const sidecar = await startSidecar({ api, kubeconfig });
    await eventually(() => sidecar.probe('/readyz'), (s) => s === 200);
    const text = await sidecar.metrics();
    for (const name of ['process_cpu_seconds_total', 'process_resident_memory_bytes', 'nodejs_heap_size_used_bytes', 'nodejs_eventloop_lag_seconds']) {
      expect(text).toMatch(new RegExp(`^${name}(\\{[^}]*\\})? `, 'm'));
    }
    expect(text).not.toMatch(/^ingress2nginx_(process|nodejs)_/m);
    expect(text).toMatch(/^ingress2nginx_reloads_total\{result="failure"\} 0$/m);
    for (const kind of ['Ingress', 'Secret', 'Service', 'TLSRoute']) {
      expect(text).toMatch(new RegExp(`^ingress2nginx_watch_restarts_total\\{kind="${kind}"\\} 0$`, 'm'));
    }
    await sidecar.stop();
  });
});

describe('a bad Ingress beside good ones', () => {
  beforeAll(freshCluster);

  it('keeps the good ones served, and reports the bad one in the log, a metric and an Event', async () => {
    const peer = await backend('good');
    api.create(service('data', 'good', peer));
    api.create(ingress('data', 'good', 'good.example.test', { service: 'good', port: peer.port }));
    api.create(ingress('data', 'bad', 'bad.example.test', { service: 'good', port: peer.port }, { annotations: { 'nginx.ingress.kubernetes.io/configuration-snippet': 'return 200;' } }));
    const sidecar = await startSidecar({ api, kubeconfig });
    expect(await eventually(() => served(sidecar, 'good.example.test'), (b) => b === 'good')).toBe('good');
    expect(await served(sidecar, 'bad.example.test')).toBe('status 404');
    expect(await eventually(() => sidecar.metric('ingress2nginx_diagnostics', { severity: 'error' }), (n) => n >= 2)).toBeGreaterThanOrEqual(2);
    const aboutBad = (list: Record<string, unknown>[]) =>
      list.find((e) => (e['regarding'] as { name: string }).name === 'bad' && e['reason'] === 'SnippetRefused');
    const events = await eventually(() => api.list('events.k8s.io/v1', 'Event', 'data'), (list) => aboutBad(list) !== undefined);
    expect(aboutBad(events)).toMatchObject({ type: 'Warning', action: 'Render', reportingController: 'ingress2nginx.dev/controller' });
    expect(sidecar.logs()).not.toContain('return 200;');
    // Logged once when it appears, not at every round.
    const leftOut = () => sidecar.logs().split('\n').filter((line) => line.includes('"msg":"not served as written"') && line.includes('"resource":"Ingress data/bad"') && line.includes('"code":"snippet-refused"'));
    expect(leftOut()).toHaveLength(1);
    expect(JSON.parse(leftOut()[0]!)).toMatchObject({ level: 'warn', code: 'snippet-refused' });
    api.create(ingress('data', 'later', 'later.example.test', { service: 'good', port: peer.port }));
    expect(await eventually(() => served(sidecar, 'later.example.test'), (b) => b === 'good')).toBe('good');
    expect(leftOut()).toHaveLength(1);
    await sidecar.stop();
  });
});

describe('TLSRoute', () => {
  beforeAll(freshCluster);

  it('is served once created and gone once deleted, and its status names our controller', async () => {
    const cert = await issueCertificate(ca, { commonName: 'route.example.test', sans: ['route.example.test'] });
    const peer = await startTlsBackend({ name: 'route', cert: cert.certPem, key: cert.keyPem });
    peers.push(peer);
    api.create({ apiVersion: 'gateway.networking.k8s.io/v1', kind: 'GatewayClass', metadata: { name: 'ingress2nginx' }, spec: { controllerName: 'ingress2nginx.dev/controller' } });
    api.create(service('data', 'route', peer));
    const sidecar = await startSidecar({ api, kubeconfig });
    api.create({
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'Gateway',
      metadata: { name: 'gw', namespace: 'data' },
      spec: { gatewayClassName: 'ingress2nginx', listeners: [{ name: 'tls', port: sidecar.httpsPort, protocol: 'TLS', tls: { mode: 'Passthrough' } }] },
    });
    api.create({
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'TLSRoute',
      metadata: { name: 'route', namespace: 'data' },
      spec: { parentRefs: [{ name: 'gw' }], hostnames: ['route.example.test'], rules: [{ backendRefs: [{ name: 'route', port: peer.port }] }] },
    });
    const probe = () => tlsProbe({ port: sidecar.httpsPort, servername: 'route.example.test' });
    expect((await eventually(probe, (p) => p.data.startsWith('hello from route'))).data).toBe('hello from route sni=route.example.test\n');
    const status = await eventually(
      () => api.get({ apiVersion: 'gateway.networking.k8s.io/v1', kind: 'TLSRoute', namespace: 'data', name: 'route' })?.['status'] as { parents?: { controllerName: string }[] } | undefined,
      (s) => (s?.parents ?? []).length > 0,
    );
    expect(status?.parents?.[0]?.controllerName).toBe('ingress2nginx.dev/controller');
    api.delete({ apiVersion: 'gateway.networking.k8s.io/v1', kind: 'TLSRoute', namespace: 'data', name: 'route' });
    expect((await eventually(probe, (p) => !p.data.startsWith('hello from route'))).data).not.toContain('hello from route');
    await sidecar.stop();
  });
});

describe('GRPCRoute', () => {
  beforeAll(freshCluster);

  it('is read from the cluster, served over TLS (HTTP/2 by ALPN), and gone once deleted, with its status written back per parent', async () => {
    const peer = await startGrpcBackend('grpc-backend', '127.0.0.1');
    peers.push(peer);
    const cert = await issueCertificate(ca, { commonName: 'grpc.example.test', sans: ['grpc.example.test'] });
    api.create({ apiVersion: 'gateway.networking.k8s.io/v1', kind: 'GatewayClass', metadata: { name: 'ingress2nginx' }, spec: { controllerName: 'ingress2nginx.dev/controller' } });
    api.create(service('web', 'grpc', peer));
    api.create(tlsSecret('web', 'grpc-tls', cert));
    const sidecar = await startSidecar({ api, kubeconfig });
    api.create({
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'Gateway',
      metadata: { name: 'gw', namespace: 'web' },
      spec: { gatewayClassName: 'ingress2nginx', listeners: [{ name: 'https', port: sidecar.httpsPort, protocol: 'HTTPS', tls: { certificateRefs: [{ name: 'grpc-tls' }] } }] },
    });
    const route = { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'GRPCRoute', namespace: 'web', name: 'grpc' };
    api.create({
      apiVersion: route.apiVersion,
      kind: route.kind,
      metadata: { name: route.name, namespace: route.namespace },
      spec: { parentRefs: [{ name: 'gw' }], hostnames: ['grpc.example.test'], rules: [{ matches: [{ method: { service: 'echo.v1.Echo' } }], backendRefs: [{ name: 'grpc', port: peer.port }] }] },
    });
    const call = async () => {
      const result = await grpcCall({ port: sidecar.httpsPort, authority: 'grpc.example.test', path: '/echo.v1.Echo/Ping', caPem: ca.certPem });
      return result.echo?.backend ?? `code ${result.code}`;
    };
    expect(await eventually(call, (b) => b === 'grpc-backend')).toBe('grpc-backend');
    type Parents = { parents?: { controllerName: string; conditions: { type: string; status: string }[] }[] } | undefined;
    const status = await eventually(
      () => api.get(route)?.['status'] as Parents,
      (s) => (s?.parents ?? []).length > 0,
    );
    expect(status?.parents?.[0]?.controllerName).toBe('ingress2nginx.dev/controller');
    expect(status?.parents?.[0]?.conditions.map((c) => `${c.type}=${c.status}`)).toEqual(['Accepted=True', 'ResolvedRefs=True']);
    api.delete(route);
    expect(await eventually(call, (b) => b !== 'grpc-backend')).toMatch(/^code /);
    await sidecar.stop();
  });
});

describe('HTTPRoute', () => {
  beforeAll(freshCluster);

  it('is served on an HTTP listener once created and gone once deleted, with its status written back per parent', async () => {
    const peer = await backend('routed');
    api.create({ apiVersion: 'gateway.networking.k8s.io/v1', kind: 'GatewayClass', metadata: { name: 'ingress2nginx' }, spec: { controllerName: 'ingress2nginx.dev/controller' } });
    api.create(service('web', 'routed', peer));
    const sidecar = await startSidecar({ api, kubeconfig });
    api.create({
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'Gateway',
      metadata: { name: 'gw', namespace: 'web' },
      spec: { gatewayClassName: 'ingress2nginx', listeners: [{ name: 'http', port: sidecar.httpPort, protocol: 'HTTP' }] },
    });
    const route = { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'HTTPRoute', namespace: 'web', name: 'route' };
    api.create({
      apiVersion: route.apiVersion,
      kind: route.kind,
      metadata: { name: route.name, namespace: route.namespace },
      spec: { parentRefs: [{ name: 'gw' }], hostnames: ['routed.example.test'], rules: [{ backendRefs: [{ name: 'routed', port: peer.port }] }] },
    });
    expect(await eventually(() => served(sidecar, 'routed.example.test'), (b) => b === 'routed')).toBe('routed');
    type Parents = { parents?: { controllerName: string; conditions: { type: string; status: string }[] }[] } | undefined;
    const status = await eventually(
      () => api.get(route)?.['status'] as Parents,
      (s) => (s?.parents ?? []).length > 0,
    );
    expect(status?.parents?.[0]?.controllerName).toBe('ingress2nginx.dev/controller');
    expect(status?.parents?.[0]?.conditions.map((c) => `${c.type}=${c.status}`)).toEqual(['Accepted=True', 'ResolvedRefs=True']);
    api.delete(route);
    expect(await eventually(() => served(sidecar, 'routed.example.test'), (b) => b !== 'routed')).toBe('status 404');
    await sidecar.stop();
  });

  it('HTTPRouteObservedGenerationBump, GatewayObservedGenerationBump, GatewayModifyListeners: every condition names the generation it was computed from', async () => {
    const [first, second] = await Promise.all([backend('first'), backend('second')]);
    api.create(service('web', 'first', first));
    api.create(service('web', 'second', second));
    const sidecar = await startSidecar({ api, kubeconfig });
    const gatewayRef = { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'Gateway', namespace: 'web', name: 'bump' };
    const gatewaySpec = (listeners: JsonObject[]): JsonObject => ({ gatewayClassName: 'ingress2nginx', listeners });
    const httpListener: JsonObject = { name: 'http', port: sidecar.httpPort, protocol: 'HTTP' };
    api.create({ apiVersion: gatewayRef.apiVersion, kind: gatewayRef.kind, metadata: { name: gatewayRef.name, namespace: 'web' }, spec: gatewaySpec([httpListener]) });
    const routeRef = { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'HTTPRoute', namespace: 'web', name: 'bump' };
    const routeSpec = (service: string, port: number) => ({ parentRefs: [{ name: 'bump' }], hostnames: ['bump.example.test'], rules: [{ backendRefs: [{ name: service, port }] }] });
    api.create({ apiVersion: routeRef.apiVersion, kind: routeRef.kind, metadata: { name: routeRef.name, namespace: 'web' }, spec: routeSpec('first', first.port) });

    type Conditions = readonly { type: string; observedGeneration: number }[];
    /** The object's generation and the observedGeneration of every condition in its status. */
    const generations = (ref: typeof routeRef) => {
      const object = api.get(ref) as unknown as { metadata: { generation: number }; status?: { parents?: { conditions: Conditions }[]; conditions?: Conditions; listeners?: { conditions: Conditions }[] } };
      const status = object.status ?? {};
      const conditions = [...(status.conditions ?? []), ...(status.parents ?? []).flatMap((p) => p.conditions), ...(status.listeners ?? []).flatMap((l) => l.conditions)];
      return { generation: object.metadata.generation, observed: [...new Set(conditions.map((c) => c.observedGeneration))] };
    };
    const current = (g: ReturnType<typeof generations>) => g.observed.length === 1 && g.observed[0] === g.generation;

    expect(await eventually(() => served(sidecar, 'bump.example.test'), (b) => b === 'first')).toBe('first');
    expect(await eventually(() => generations(routeRef), current)).toEqual({ generation: 1, observed: [1] });
    expect(await eventually(() => generations(gatewayRef), current)).toEqual({ generation: 1, observed: [1] });

    const route = api.get(routeRef) as { metadata: JsonObject };
    api.update({ apiVersion: routeRef.apiVersion, kind: routeRef.kind, metadata: route.metadata, spec: routeSpec('second', second.port) });
    const gateway = api.get(gatewayRef) as { metadata: JsonObject };
    const extra: JsonObject = { name: 'extra', port: sidecar.httpPort, protocol: 'HTTP', hostname: 'extra.example.test' };
    api.update({ apiVersion: gatewayRef.apiVersion, kind: gatewayRef.kind, metadata: gateway.metadata, spec: gatewaySpec([httpListener, extra]) });

    expect(await eventually(() => served(sidecar, 'bump.example.test'), (b) => b === 'second')).toBe('second');
    expect(await eventually(() => generations(routeRef), current)).toEqual({ generation: 2, observed: [2] });
    expect(await eventually(() => generations(gatewayRef), current)).toEqual({ generation: 2, observed: [2] });
    // GatewayModifyListeners: the listener added is in the status, programmed.
    const listeners = (api.get(gatewayRef) as unknown as { status: { listeners: { name: string; conditions: { type: string; status: string }[] }[] } }).status.listeners;
    expect(listeners.map((l) => `${l.name} ${l.conditions.find((c) => c.type === 'Programmed')?.status}`)).toEqual(['http True', 'extra True']);
    await sidecar.stop();
  });
});

describe('when nginx refuses', () => {
  beforeAll(freshCluster);

  it('leaves out a resource nginx -t rejects and serves the rest, with nginx-rejected in an Event', async () => {
    const tools = await writePoisonNginx(await mkdtemp(join(tmpdir(), 'i2n-poison-')), requireNginx().binary);
    const peer = await backend('fine');
    api.create(service('web', 'fine', peer));
    api.create(ingress('web', 'fine', 'fine.example.test', { service: 'fine', port: peer.port }));
    api.create(ingress('web', 'poisoned', 'poison-1.example.test', { service: 'fine', port: peer.port }));
    const sidecar = await startSidecar({ api, kubeconfig, run: { nginxBin: tools.binary } });
    expect(await eventually(() => served(sidecar, 'fine.example.test'), (b) => b === 'fine')).toBe('fine');
    const events = await eventually(
      () => api.list('events.k8s.io/v1', 'Event', 'web'),
      (list) => list.some((e) => e['reason'] === 'NginxRejected'),
    );
    expect(events.find((e) => e['reason'] === 'NginxRejected')).toMatchObject({ regarding: { kind: 'Ingress', name: 'poisoned' } });
    await sidecar.stop();
  });

  it('keeps serving the last good config when nginx refuses a reload for a reason no resource explains, and applies the next good change', async () => {
    const gated = await writeGatedNginx(await mkdtemp(join(tmpdir(), 'i2n-gate-')), requireNginx().binary);
    const peer = await backend('steadfast');
    api.create(service('data', 'steadfast', peer));
    api.create(ingress('data', 'steadfast', 'steadfast.example.test', { service: 'steadfast', port: peer.port }));
    const sidecar = await startSidecar({ api, kubeconfig, run: { nginxBin: gated.binary } });
    expect(await eventually(() => served(sidecar, 'steadfast.example.test'), (b) => b === 'steadfast')).toBe('steadfast');
    await settled(sidecar);
    const failures = await sidecar.metric('ingress2nginx_reloads_total', { result: 'failure' });

    // From now on nginx refuses every config, the one it serves included: nothing in the cluster explains it.
    await gated.refuseAll();
    api.create(ingress('data', 'blocked', 'blocked.example.test', { service: 'steadfast', port: peer.port }));
    expect(await eventually(() => sidecar.metric('ingress2nginx_reloads_total', { result: 'failure' }), (n) => n > failures)).toBe(failures + 1);
    await settled(sidecar);
    expect(await served(sidecar, 'steadfast.example.test')).toBe('steadfast');
    expect(await served(sidecar, 'blocked.example.test')).toBe('status 404');
    expect(sidecar.logs()).toMatch(/nginx did not take the reload; checking the config with nginx -t/);
    expect(sidecar.logs()).toMatch(/nginx -t refused the config.*i2n_test_gate_refuses_every_config/);
    expect(await readFile(join(sidecar.outDir, 'nginx.conf'), 'utf8')).not.toContain('blocked.example.test');

    await gated.open();
    api.create(ingress('data', 'next', 'next.example.test', { service: 'steadfast', port: peer.port }));
    expect(await eventually(() => served(sidecar, 'next.example.test'), (b) => b === 'steadfast')).toBe('steadfast');
    expect(await served(sidecar, 'blocked.example.test')).toBe('steadfast');
    await sidecar.stop();
  });

  it('reloads a change without nginx -t first; when nginx refuses it, finds the resource to blame, leaves it out and reloads the rest', async () => {
    const gated = await writeGatedNginx(await mkdtemp(join(tmpdir(), 'i2n-gate-')), requireNginx().binary);
    // nginx refuses any config whose folder holds the key file of a Secret named poison-*.
    await gated.refuseKeyFiles('tls/*poison*.pem');
    const peer = await backend('calm');
    api.create(service('web', 'calm', peer));
    api.create(ingress('web', 'calm', 'calm.example.test', { service: 'calm', port: peer.port }));
    const sidecar = await startSidecar({ api, kubeconfig, run: { nginxBin: gated.binary } });
    expect(await eventually(() => served(sidecar, 'calm.example.test'), (b) => b === 'calm')).toBe('calm');
    await settled(sidecar);

    const servedLines = () => sidecar.logs().trim().split('\n').filter((l) => l.includes('nginx serves the new config'));
    const before = servedLines().length;
    api.create(ingress('web', 'quick', 'quick.example.test', { service: 'calm', port: peer.port }));
    expect(await eventually(() => served(sidecar, 'quick.example.test'), (b) => b === 'calm')).toBe('calm');
    const quick = JSON.parse((await eventually(servedLines, (lines) => lines.length > before)).at(-1)!) as { checkMs: number };
    expect(quick.checkMs).toBe(0);

    const cert = await issueCertificate(ca, { commonName: 'risky.example.test', sans: ['risky.example.test'] });
    api.create(tlsSecret('web', 'poison-tls', cert));
    api.create(ingress('web', 'risky', 'risky.example.test', { service: 'calm', port: peer.port }, { tlsSecret: 'poison-tls' }));
    const blamed = (list: Record<string, unknown>[]) =>
      list.filter((e) => e['reason'] === 'NginxRejected' && /^(poison-tls|risky)$/.test((e['regarding'] as { name: string }).name));
    expect(await eventually(() => blamed(api.list('events.k8s.io/v1', 'Event', 'web')), (found) => found.length > 0)).not.toEqual([]);
    await settled(sidecar);
    expect(await served(sidecar, 'calm.example.test')).toBe('calm');
    expect(sidecar.logs()).toContain('nginx did not take the reload; checking the config with nginx -t');
    expect(sidecar.logs()).toMatch(/"msg":"quarantined: nginx rejects this resource, it is left out".*"resource":"(Secret web\/poison-tls|Ingress web\/risky)"/);
    expect(await sidecar.metric('ingress2nginx_reloads_total', { result: 'failure' })).toBe(1);
    await sidecar.stop();
  });

  it('restores the last good files when nginx does not take a reload, and serves on', async () => {
    const peer = await backend('survivor');
    api.create(service('data', 'survivor', peer));
    api.create(ingress('data', 'survivor', 'survivor.example.test', { service: 'survivor', port: peer.port }));
    api.create({ apiVersion: 'gateway.networking.k8s.io/v1', kind: 'GatewayClass', metadata: { name: 'ingress2nginx' }, spec: { controllerName: 'ingress2nginx.dev/controller' } });
    const sidecar = await startSidecar({ api, kubeconfig });
    expect(await eventually(() => served(sidecar, 'survivor.example.test'), (b) => b === 'survivor')).toBe('survivor');
    await settled(sidecar);
    const goodConf = await readFile(join(sidecar.outDir, 'nginx.conf'), 'utf8');
    const failures = await sidecar.metric('ingress2nginx_reloads_total', { result: 'failure' });

    // A Gateway listener on a port another process holds: nginx -t passes (it binds nothing), the reload
    // does not (nginx keeps its old config), so the new generation is never served.
    const [busyPort] = (await freePorts(1)) as [number];
    const blocker = net.createServer().listen(busyPort, '0.0.0.0');
    await once(blocker, 'listening');
    const gateway = {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'Gateway',
      metadata: { name: 'busy', namespace: 'data' },
      spec: { gatewayClassName: 'ingress2nginx', listeners: [{ name: 'tls', port: busyPort, protocol: 'TLS', tls: { mode: 'Passthrough' } }] },
    };
    api.create(gateway);
    expect(await eventually(() => sidecar.metric('ingress2nginx_reloads_total', { result: 'failure' }), (n) => n > failures, 30_000)).toBeGreaterThan(failures);
    await settled(sidecar);
    expect(await readFile(join(sidecar.outDir, 'nginx.conf'), 'utf8')).toBe(goodConf);
    expect(await served(sidecar, 'survivor.example.test')).toBe('survivor');

    blocker.close();
    api.delete({ apiVersion: 'gateway.networking.k8s.io/v1', kind: 'Gateway', namespace: 'data', name: 'busy' });
    api.create(ingress('data', 'later', 'later.example.test', { service: 'survivor', port: peer.port }));
    expect(await eventually(() => served(sidecar, 'later.example.test'), (b) => b === 'survivor')).toBe('survivor');
    await sidecar.stop();
  });
});

describe('the same bytes as render', () => {
  beforeAll(freshCluster);

  it('renders from the watched objects exactly what render makes of the same objects in files', async () => {
    const cert = await issueCertificate(ca, { commonName: 'same.example.test', sans: ['same.example.test'] });
    const peer = await backend('same');
    api.create(service('web', 'same', peer));
    api.create(tlsSecret('web', 'same-tls', cert));
    api.create(ingress('web', 'same', 'same.example.test', { service: 'same', port: peer.port }, { tlsSecret: 'same-tls' }));
    api.create(ingress('data', 'other', 'other.example.test', { service: 'missing', port: 80 }));
    const sidecar = await startSidecar({ api, kubeconfig });
    // Plain HTTP to a host with TLS is redirected: that it answers 308 shows the config is live.
    await eventually(() => served(sidecar, 'same.example.test'), (b) => b === 'status 308');
    await settled(sidecar);

    // The objects as the API serves them, written out as manifests.
    const manifests = [
      ...api.list('v1', 'Service'),
      ...api.list('v1', 'Secret'),
      ...api.list('networking.k8s.io/v1', 'Ingress'),
    ].map((o) => JSON.stringify(o));
    const input = await mkdtemp(join(tmpdir(), 'i2n-same-'));
    await writeFile(join(input, 'objects.json'), `{"apiVersion":"v1","kind":"List","items":[${manifests.join(',')}]}`);
    const out = join(input, 'out');
    const rendered = await runCli(
      ['render', '-f', input, '-o', out, '--run-dir', sidecar.runDir, '--http-port', String(sidecar.httpPort), '--https-port', String(sidecar.httpsPort)],
      // The sidecar checks certificates at the machine's clock; so does this render.
      { now: new Date() },
    );
    expect(rendered.stderr).not.toContain('internal error');
    expect(await readFile(join(out, 'nginx.conf'), 'utf8')).toBe(await readFile(join(sidecar.outDir, 'nginx.conf'), 'utf8'));
    await sidecar.stop();
  });

  it('--namespace watches only those namespaces, also where a resource refers to a Secret elsewhere', async () => {
    api.create(ingress('data', 'elsewhere', 'elsewhere.example.test', { service: 'missing', port: 80 }, { annotations: { 'nginx.ingress.kubernetes.io/proxy-ssl-secret': 'web/same-tls' } }));
    api.clearRequests();
    const sidecar = await startSidecar({ api, kubeconfig, run: { namespaces: ['data'] }, translate: { allowCrossNamespaceSecrets: true } });
    await eventually(() => sidecar.probe('/readyz'), (s) => s === 200);
    await settled(sidecar);
    expect(await served(sidecar, 'same.example.test')).toBe('status 404');
    const conf = await readFile(join(sidecar.outDir, 'nginx.conf'), 'utf8');
    expect(conf).toContain('other.example.test');
    expect(conf).not.toContain('same.example.test');
    const reads = api.requests((r) => r.verb === 'list' || r.verb === 'watch' || r.verb === 'get');
    expect(reads.filter((r) => r.namespace !== undefined && r.namespace !== 'data' && r.resource !== 'leases')).toEqual([]);
    await sidecar.stop();
  });

  it("follows the TCP services ConfigMap in the operator's namespace, outside --namespace, and serves its changes", async () => {
    const peer = await backend('tcp');
    api.create(service('data', 'tcp-echo', peer));
    const [port = 0, next = 0] = await freePorts(2);
    api.create(namespace('infra'));
    const tcpServices = (data: Record<string, string>) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'tcp-services', namespace: 'infra' }, data });
    api.create(tcpServices({ [String(port)]: `data/tcp-echo:${peer.port}` }));
    const sidecar = await startSidecar({ api, kubeconfig, run: { namespaces: ['data'] }, translate: { tcpServicesConfigMap: 'infra/tcp-services' } });
    await eventually(() => sidecar.probe('/readyz'), (s) => s === 200);
    await settled(sidecar);
    const conf = () => readFile(join(sidecar.outDir, 'nginx.conf'), 'utf8');
    expect(await conf()).toContain(`listen ${port};`);
    api.update(tcpServices({ [String(next)]: `data/tcp-echo:${peer.port}` }));
    const changed = await eventually(conf, (text) => text.includes(`listen ${next};`) && !text.includes(`listen ${port};`));
    expect(changed).toContain(`listen ${next};`);
    expect(changed).not.toContain(`listen ${port};`);
    const reads = api.requests((r) => (r.verb === 'list' || r.verb === 'watch') && r.namespace === 'infra');
    expect(new Set(reads.map((r) => r.resource))).toEqual(new Set(['configmaps']));
    await sidecar.stop();
  });

  it("follows the add-headers ConfigMap the controller ConfigMap names, in the operator's namespace, outside --namespace", async () => {
    const configMap = (name: string, data: Record<string, string>) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'ops' }, data });
    api.create(namespace('ops'));
    api.create(configMap('header-settings', { 'add-headers': 'ops/response-headers' }));
    api.create(configMap('response-headers', { 'X-Team': 'first' }));
    const sidecar = await startSidecar({ api, kubeconfig, run: { namespaces: ['data'] }, translate: { configMap: 'ops/header-settings' } });
    await eventually(() => sidecar.probe('/readyz'), (s) => s === 200);
    const conf = () => readFile(join(sidecar.outDir, 'nginx.conf'), 'utf8');
    expect(await eventually(conf, (text) => text.includes('add_header X-Team "first" always;'))).toContain('add_header X-Team "first" always;');
    api.update(configMap('response-headers', { 'X-Team': 'second' }));
    expect(await eventually(conf, (text) => text.includes('add_header X-Team "second" always;'))).not.toContain('"first"');
    await sidecar.stop();
  });

  it('renders a snippet while its namespace carries the label --snippet-namespace-selector asks for, and refuses it once the label is gone', async () => {
    const peer = await backend('snippet');
    api.create(service('data', 'snippet', peer));
    api.create(ingress('data', 'snippet', 'snippet.example.test', { service: 'snippet', port: peer.port }, { annotations: { 'nginx.ingress.kubernetes.io/configuration-snippet': 'add_header X-Snippet-Test on;' } }));
    const labelled = (labels: Record<string, string>) => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'data', labels } });
    api.update(labelled({ snippets: 'allowed' }));
    // Without the Gateway API the Namespaces are watched for the selector alone.
    api.removeGroup();
    const sidecar = await startSidecar({ api, kubeconfig, translate: { snippets: { allow: true, namespaceSelector: { snippets: 'allowed' } } } });
    await eventually(() => sidecar.probe('/readyz'), (s) => s === 200);
    const conf = () => readFile(join(sidecar.outDir, 'nginx.conf'), 'utf8');
    expect(await eventually(conf, (text) => text.includes('add_header X-Snippet-Test on;'))).toContain('add_header X-Snippet-Test on;');
    api.update(labelled({}));
    expect(await eventually(conf, (text) => !text.includes('X-Snippet-Test') && !text.includes('snippet.example.test'))).not.toContain('X-Snippet-Test');
    await sidecar.stop();
    api.addGroup();
  });

  it('never reads Secrets of another namespace that a tenant names, unless cross-namespace Secrets are allowed', async () => {
    api.create({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'bootstrap-token-abcdef', namespace: 'kube-system' }, type: 'Opaque', stringData: { auth: 'admin:{PLAIN}x' } });
    api.create(
      ingress('web', 'nosy', 'nosy.example.test', { service: 'missing', port: 80 }, { annotations: { 'nginx.ingress.kubernetes.io/auth-type': 'basic', 'nginx.ingress.kubernetes.io/auth-secret': 'kube-system/bootstrap-token-abcdef' } }),
    );
    api.clearRequests();
    const sidecar = await startSidecar({ api, kubeconfig });
    await eventually(() => sidecar.probe('/readyz'), (s) => s === 200);
    await settled(sidecar);
    expect(api.requests((r) => r.namespace === 'kube-system')).toEqual([]);
    await sidecar.stop();
  });
});

describe('stopping', () => {
  beforeAll(freshCluster);

  it('exits 0 and leaves no staging folder or lock behind', async () => {
    const sidecar = await startSidecar({ api, kubeconfig });
    await eventually(() => sidecar.probe('/readyz'), (s) => s === 200);
    expect(await sidecar.stop()).toBe(0);
    expect((await readdir(sidecar.outDir)).filter((f) => f.startsWith('.'))).toEqual([]);
  });
});

