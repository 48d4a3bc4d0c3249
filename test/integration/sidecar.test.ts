import { once } from 'node:events';
import { mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { FakeApiServer } from '../support/fake-apiserver.js';
import { httpGet, httpsGet, parseEcho, startHttpBackend, startTlsBackend, tlsProbe, type Peer } from '../support/peers.js';
import { createCa, issueCertificate, type CertificateAuthority } from '../support/pki.js';
import { eventually, ingress, namespace, service, settled, startSidecar, stopAllSidecars, tlsSecret, type RunningSidecar } from '../support/sidecar.js';
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

  it('keeps serving the last good config when nginx -t fails for a reason no resource explains, and applies the next good change', async () => {
    const tools = await writePoisonNginx(await mkdtemp(join(tmpdir(), 'i2n-poison-')), requireNginx().binary);
    const peer = await backend('steadfast');
    api.create(service('data', 'steadfast', peer));
    api.create(ingress('data', 'steadfast', 'steadfast.example.test', { service: 'steadfast', port: peer.port }));
    const controller = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'controller', namespace: 'data' }, data: { 'ssl-ciphers': 'HIGH:!aNULL' } };
    api.create(controller);
    const sidecar = await startSidecar({ api, kubeconfig, translate: { configMap: 'data/controller' }, run: { nginxBin: tools.binary } });
    expect(await eventually(() => served(sidecar, 'steadfast.example.test'), (b) => b === 'steadfast')).toBe('steadfast');
    await settled(sidecar);
    const failures = await sidecar.metric('ingress2nginx_reloads_total', { result: 'failure' });

    // OpenSSL ignores an unknown name in a list that selects others, so the allow-list lets it through.
    api.update({ ...controller, data: { 'ssl-ciphers': 'HIGH:!aNULL:!poison-cipher' } });
    api.create(ingress('data', 'blocked', 'blocked.example.test', { service: 'steadfast', port: peer.port }));
    expect(await eventually(() => sidecar.metric('ingress2nginx_reloads_total', { result: 'failure' }), (n) => n > failures)).toBeGreaterThan(failures);
    expect(await served(sidecar, 'steadfast.example.test')).toBe('steadfast');
    expect(await served(sidecar, 'blocked.example.test')).toBe('status 404');
    expect(sidecar.logs()).toMatch(/nginx -t refused the config.*poison-cipher/);

    api.update({ ...controller, data: { 'ssl-ciphers': 'HIGH:!aNULL' } });
    expect(await eventually(() => served(sidecar, 'blocked.example.test'), (b) => b === 'steadfast')).toBe('steadfast');
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

  it('--namespace watches only those namespaces', async () => {
    const sidecar = await startSidecar({ api, kubeconfig, run: { namespaces: ['data'] } });
    await eventually(() => sidecar.probe('/readyz'), (s) => s === 200);
    await settled(sidecar);
    expect(await served(sidecar, 'same.example.test')).toBe('status 404');
    const conf = await readFile(join(sidecar.outDir, 'nginx.conf'), 'utf8');
    expect(conf).toContain('other.example.test');
    expect(conf).not.toContain('same.example.test');
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

