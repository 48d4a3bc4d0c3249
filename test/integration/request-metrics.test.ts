import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { mkdtemp, readdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeApiServer } from '../support/fake-apiserver.js';
import { httpGet, startTlsBackend, tlsProbe, type Peer } from '../support/peers.js';
import { createCa, issueCertificate } from '../support/pki.js';
import { asScraped, finds, selectorsOf, seriesOf, type Selector } from '../support/promql.js';
import { eventually, ingress, namespace, startSidecar, stopAllSidecars, tlsSecret, type RunningSidecar } from '../support/sidecar.js';

/**
 * The request metrics end to end: requests with known statuses and latencies through the nginx the
 * sidecar runs show up in its /metrics under ingress-nginx's names and labels, exactly as many.
 */

let api: FakeApiServer;
let sidecar: RunningSidecar;
const backends: http.Server[] = [];
let tlsBackend: Peer;
let accessLog: string;
let canaryPort: number;

/** Answers `/<status>/<delay ms>/...` with that status after that delay; anything else 200 at once. */
async function statusBackend(): Promise<number> {
  const server = http.createServer((request, response) => {
    const [, status = '200', delay = '0'] = /^\/(?:[a-z]+\/)?([1-5][0-9]{2})\/([0-9]+)/.exec(request.url ?? '') ?? [];
    request.resume();
    setTimeout(() => {
      response.writeHead(Number(status), { 'content-type': 'text/plain' });
      response.end('x'.repeat(100));
    }, Number(delay));
  });
  backends.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

function serviceAt(ns: string, name: string, port: number) {
  return { apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: ns }, spec: { clusterIP: '127.0.0.1', ports: [{ port }] } };
}

const controller = { controller_class: 'nginx', controller_namespace: 'ingress', controller_pod: 'ingress2nginx-0' };

beforeAll(async () => {
  api = await FakeApiServer.start({ tls: true, token: 'metrics-test', bookmarkIntervalMs: 500 });
  const kubeconfig = await api.writeKubeconfig();
  api.create(namespace('shop'));
  const [apiPort, webPort, apiNextPort] = await Promise.all([statusBackend(), statusBackend(), statusBackend()]);
  api.create(serviceAt('shop', 'api', apiPort));
  api.create(serviceAt('shop', 'web', webPort));
  api.create(serviceAt('shop', 'api-next', apiNextPort));
  canaryPort = apiNextPort;
  const path = (p: string, service: string, port: number) => ({ path: p, pathType: 'Prefix', backend: { service: { name: service, port: { number: port } } } });
  api.create({
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: { name: 'storefront', namespace: 'shop' },
    spec: { ingressClassName: 'nginx', rules: [{ host: 'shop.example.test', http: { paths: [path('/api', 'api', apiPort), path('/', 'web', webPort)] } }] },
  });
  api.create({
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: {
      name: 'storefront-next',
      namespace: 'shop',
      annotations: { 'nginx.ingress.kubernetes.io/canary': 'true', 'nginx.ingress.kubernetes.io/canary-by-header': 'X-Next' },
    },
    spec: { ingressClassName: 'nginx', rules: [{ host: 'shop.example.test', http: { paths: [path('/api', 'api-next', apiNextPort)] } }] },
  });
  const ca = await createCa(await mkdtemp(join(tmpdir(), 'i2n-metrics-pki-')), 'Metrics CA');
  const vault = await issueCertificate(ca, { commonName: 'vault.example.test', sans: ['vault.example.test', '*.db.example.test'] });
  tlsBackend = await startTlsBackend({ name: 'vault', cert: vault.certPem, key: vault.keyPem });
  api.create(serviceAt('shop', 'vault', tlsBackend.port));
  for (const [name, host] of [['vault', 'vault.example.test'], ['db', '*.db.example.test']] as const) {
    api.create({
      apiVersion: 'networking.k8s.io/v1',
      kind: 'Ingress',
      metadata: { name, namespace: 'shop', annotations: { 'nginx.ingress.kubernetes.io/ssl-passthrough': 'true' } },
      spec: { ingressClassName: 'nginx', rules: [{ host, http: { paths: [path('/', 'vault', tlsBackend.port)] } }] },
    });
  }
  // A served certificate, for the expiry series.
  const secure = await issueCertificate(ca, { commonName: 'secure.example.test', sans: ['secure.example.test'] });
  api.create(tlsSecret('shop', 'secure-tls', secure));
  api.create(ingress('shop', 'secure', 'secure.example.test', { service: 'web', port: webPort }, { tlsSecret: 'secure-tls' }));
  accessLog = join(await mkdtemp(join(tmpdir(), 'i2n-access-')), 'access.log');
  sidecar = await startSidecar({ api, kubeconfig, translate: { accessLog }, run: { requestMetrics: true }, env: { POD_NAMESPACE: 'ingress', POD_NAME: 'ingress2nginx-0' } });
  await eventually(async () => (await httpGet({ port: sidecar.httpPort, host: 'shop.example.test', path: '/api/204/0' }).catch(() => undefined))?.status, (s) => s === 204);
});

afterAll(async () => {
  await stopAllSidecars();
  await Promise.all(backends.map((server) => new Promise((resolve) => server.close(resolve))));
  await tlsBackend.close();
  await api.close();
});

async function send(count: number, path: string, options: { host?: string; method?: string; headers?: Record<string, string> } = {}): Promise<void> {
  for (let i = 0; i < count; i++) {
    await httpGet({
      port: sidecar.httpPort,
      host: options.host ?? 'shop.example.test',
      path,
      ...(options.method !== undefined && { method: options.method }),
      ...(options.headers !== undefined && { headers: options.headers }),
    });
  }
}

/** The sample once the sidecar has counted `expected` (a bounded wait for nginx's buffers, written each second, not an assertion). */
async function counted(name: string, labels: Record<string, string>, expected: number): Promise<number> {
  return eventually(() => sidecar.metric(name, { ...controller, ...labels }), (n) => n >= expected);
}

describe('request metrics', () => {
  const api200 = { namespace: 'shop', ingress: 'storefront', service: 'api', path: '/api', host: 'shop.example.test', canary: '' };

  it('counts requests by status, method and Ingress path (never the URI), with request durations of at least their latency', async () => {
    await send(5, '/api/200/0');
    await send(3, '/api/503/0/orders/42');
    await send(2, '/api/201/300', { method: 'POST' });
    await send(4, '/catalogue/404/0');

    expect(await counted('nginx_ingress_controller_requests', { ...api200, method: 'GET', status: '200' }, 5)).toBe(5);
    expect(await counted('nginx_ingress_controller_requests', { ...api200, method: 'GET', status: '503' }, 3)).toBe(3);
    expect(await counted('nginx_ingress_controller_requests', { ...api200, method: 'POST', status: '201' }, 2)).toBe(2);
    const web = { ...api200, service: 'web', path: '/', method: 'GET', status: '404' };
    expect(await counted('nginx_ingress_controller_requests', web, 4)).toBe(4);

    const slow = { ...api200, method: 'POST', status: '201' };
    expect(await sidecar.metric('nginx_ingress_controller_request_duration_seconds_count', { ...controller, ...slow })).toBe(2);
    // Each waited 300 ms at the backend: none can be in a bucket below that, and the sum is at least 0.6 s.
    expect(await sidecar.metric('nginx_ingress_controller_request_duration_seconds_bucket', { ...controller, ...slow, le: '0.25' })).toBe(0);
    expect(await sidecar.metric('nginx_ingress_controller_request_duration_seconds_bucket', { ...controller, ...slow, le: '+Inf' })).toBe(2);
    expect(await sidecar.metric('nginx_ingress_controller_request_duration_seconds_sum', { ...controller, ...slow })).toBeGreaterThanOrEqual(0.6);
    expect(await sidecar.metric('nginx_ingress_controller_response_duration_seconds_bucket', { ...controller, ...slow, le: '0.25' })).toBe(0);
    expect(await sidecar.metric('nginx_ingress_controller_response_duration_seconds_count', { ...controller, ...slow })).toBe(2);
    for (const name of ['connect_duration_seconds', 'header_duration_seconds', 'request_size', 'response_size', 'bytes_sent']) {
      expect(await sidecar.metric(`nginx_ingress_controller_${name}_count`, { ...controller, ...api200, method: 'GET', status: '503' }), name).toBe(3);
    }
    // The response is 100 bytes of body and its headers: more than the last length bucket (100).
    expect(await sidecar.metric('nginx_ingress_controller_response_size_bucket', { ...controller, ...api200, method: 'GET', status: '200', le: '100' })).toBe(0);
  });

  it("labels what a canary served with the canary's upstream, as ingress-nginx names it, under the main Ingress's path", async () => {
    await send(3, '/api/202/0', { headers: { 'X-Next': 'always' } });
    await send(2, '/api/202/0', { headers: { 'X-Next': 'never' } });
    const canary = { ...api200, method: 'GET', status: '202', canary: `shop-api-next-${canaryPort}` };
    expect(await counted('nginx_ingress_controller_requests', canary, 3)).toBe(3);
    expect(await counted('nginx_ingress_controller_requests', { ...api200, method: 'GET', status: '202' }, 2)).toBe(2);
  });

  it("writes the access log in ingress-nginx's default format, with the Ingress's upstream name", async () => {
    await send(1, '/api/418/0/teapot');
    const line = await eventually(
      () => readFileSync(accessLog, 'utf8').split('\n').find((l) => l.includes('/api/418/0/teapot')),
      (found) => found !== undefined,
    );
    // $remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent" $request_length
    // $request_time [$proxy_upstream_name] [$proxy_alternative_upstream_name] $upstream_addr $upstream_response_length
    // $upstream_response_time $upstream_status $req_id
    expect(line).toMatch(
      /^127\.0\.0\.1 - - \[[^\]]+\] "GET \/api\/418\/0\/teapot HTTP\/1\.1" 418 \d+ "-" "-" \d+ \d+\.\d{3} \[shop-api-\d+\] \[\] 127\.0\.0\.1:\d+ \d+ \d+\.\d{3} 418 [0-9a-f]{32}$/,
    );
  });

  it('bounds what clients choose: an unknown host and an invented method are counted with those labels replaced', async () => {
    const dropped = (label: string) => sidecar.metric('ingress2nginx_request_label_values_dropped_total', { label });
    const [hostsBefore, methodsBefore] = await Promise.all([dropped('host'), dropped('method')]);
    await send(2, '/', { host: 'random-1.example.test' });
    await send(1, '/api/200/0', { method: 'PURGE' });
    const noRoute = { namespace: '', ingress: '', service: '', path: '', host: '', canary: '', method: 'GET', status: '404' };
    expect(await counted('nginx_ingress_controller_requests', noRoute, 2)).toBe(2);
    expect(await counted('nginx_ingress_controller_requests', { ...api200, method: 'OTHER', status: '200' }, 1)).toBe(1);
    expect(await dropped('host')).toBe(hostsBefore + 2);
    expect(await dropped('method')).toBe(methodsBefore + 1);
    expect(await sidecar.metrics()).not.toContain('random-1');
  });

  it('counts passthrough connections per SNI name served, a wildcard under its own name, with the bytes both ways', async () => {
    const connect = (servername: string) => tlsProbe({ port: sidecar.httpsPort, servername, send: 'hello\n' });
    for (let i = 0; i < 3; i++) expect((await connect('vault.example.test')).outcome).toBe('connected');
    for (const name of ['a.db.example.test', 'b.db.example.test']) expect((await connect(name)).outcome).toBe('connected');
    const vault = { ...controller, server_name: 'vault.example.test' };
    const db = { ...controller, server_name: '*.db.example.test' };
    expect(await eventually(() => sidecar.metric('ingress2nginx_passthrough_session_duration_seconds_count', vault), (n) => n >= 3)).toBe(3);
    expect(await eventually(() => sidecar.metric('ingress2nginx_passthrough_session_duration_seconds_count', db), (n) => n >= 2)).toBe(2);
    const connections = (labels: Record<string, string>) => sidecar.metric('ingress2nginx_passthrough_connections_total', labels);
    expect((await connections({ ...vault, status: '200' })) + (await connections({ ...vault, status: '500' }))).toBe(3);
    // The TLS bytes each way: at least a record per connection.
    expect(await sidecar.metric('ingress2nginx_passthrough_received_bytes_total', vault)).toBeGreaterThan(3 * 5);
    expect(await sidecar.metric('ingress2nginx_passthrough_sent_bytes_total', vault)).toBeGreaterThan(3 * 5);
    expect(await sidecar.metrics()).not.toContain('a.db.example.test');
  });

  it("never counts a forged SNI under another name: a bar in the client's name stays in the name (issue 37)", async () => {
    const vault = { ...controller, server_name: 'vault.example.test' };
    const db = { ...controller, server_name: '*.db.example.test' };
    const before = await sidecar.metric('ingress2nginx_passthrough_received_bytes_total', vault);
    const dbBefore = await sidecar.metric('ingress2nginx_passthrough_session_duration_seconds_count', db);
    // Routed by the wildcard *.db.example.test; read the old way, its first field was vault's name.
    const forged = 'vault.example.test|200|3000000000|3000000000|1|x.db.example.test';
    expect((await tlsProbe({ port: sidecar.httpsPort, servername: forged, send: 'hello\n' })).outcome).not.toBe('error');
    expect(await eventually(() => sidecar.metric('ingress2nginx_passthrough_session_duration_seconds_count', db), (n) => n >= dbBefore + 1)).toBe(dbBefore + 1);
    expect(await sidecar.metric('ingress2nginx_passthrough_received_bytes_total', vault)).toBe(before);
  });

  it('exports nginx\'s connections, requests and processes, and the reloads, under ingress-nginx\'s names', async () => {
    const sample = (name: string, labels: Record<string, string> = {}) => sidecar.metric(`nginx_ingress_controller_${name}`, { ...controller, ...labels });
    expect(await sample('nginx_process_num_procs')).toBeGreaterThanOrEqual(2);
    expect(await sample('nginx_process_resident_memory_bytes')).toBeGreaterThan(0);
    expect(await sample('nginx_process_oldest_start_time_seconds')).toBeGreaterThan(0);
    expect(await sample('nginx_process_connections_total', { state: 'accepted' })).toBeGreaterThanOrEqual(14);
    // The request for the status itself is active while nginx answers it.
    expect(await sample('nginx_process_connections', { state: 'active' })).toBeGreaterThanOrEqual(1);
    expect(await sample('nginx_process_requests_total')).toBeGreaterThanOrEqual(14);
    expect(await sample('success')).toBeGreaterThanOrEqual(1);
    expect(await sample('config_last_reload_successful')).toBe(1);
    expect(await sample('config_hash')).toBeGreaterThan(0);
    expect(await sidecar.metrics()).toMatch(/^nginx_ingress_controller_nginx_process_cpu_seconds_total\{[^}]*controller_pod="ingress2nginx-0"[^}]*\} [0-9.e+-]+$/m);
  });
});

/** Labels a published query names that ingress-nginx's own series lack too: the filter only works at "All". */
const labelsIngressNginxLacks: Readonly<Record<string, readonly string[]>> = {
  nginx_ingress_controller_ssl_expire_time_seconds: ['ingress'],
};

function missingSeries(queries: readonly string[], series: ReturnType<typeof seriesOf>): string[] {
  const missing: string[] = [];
  for (const query of queries) {
    const selectors = selectorsOf(query);
    if (selectors.length === 0) missing.push(`no selector read from: ${query}`);
    for (const selector of selectors) {
      const lacking = labelsIngressNginxLacks[selector.metric] ?? [];
      const asked: Selector = { ...selector, matchers: selector.matchers.filter((m) => !lacking.includes(m.label)) };
      if (!series.some((s) => finds(asked, s))) missing.push(`${selector.metric} {${selector.matchers.map((m) => m.label).join(',')}} by (${selector.groupedBy.join(',')}) in: ${query}`);
    }
  }
  return missing;
}

describe('dashboards', () => {
  it("finds our series, with their labels, for every query of ingress-nginx's two published dashboards", async () => {
    const vendored = JSON.parse(readFileSync(new URL('../vendor/ingress-nginx-dashboards/queries.json', import.meta.url), 'utf8')) as { dashboards: Record<string, string[]> };
    expect(Object.keys(vendored.dashboards).sort()).toEqual(['nginx.json', 'request-handling-performance.json']);
    const series = seriesOf(await sidecar.metrics()).map(asScraped);
    for (const [dashboard, queries] of Object.entries(vendored.dashboards)) expect(missingSeries(queries, series), dashboard).toEqual([]);
  });

  it('ships dashboards whose every query finds our series', async () => {
    const dir = new URL('../../deploy/grafana/', import.meta.url);
    const files = (await readdir(dir)).filter((f) => f.endsWith('.json')).sort();
    expect(files.length).toBeGreaterThanOrEqual(2);
    const series = seriesOf(await sidecar.metrics()).map(asScraped);
    for (const file of files) {
      const dashboard = JSON.parse(await readFile(new URL(file, dir), 'utf8')) as unknown;
      const queries: string[] = [];
      const walk = (node: unknown): void => {
        if (Array.isArray(node)) node.forEach(walk);
        else if (node && typeof node === 'object') {
          for (const [key, value] of Object.entries(node)) {
            if ((key === 'expr' || key === 'query') && typeof value === 'string' && value !== 'prometheus') queries.push(value);
            else walk(value);
          }
        }
      };
      walk(dashboard);
      expect(queries.length, file).toBeGreaterThan(5);
      expect(missingSeries(queries, series), file).toEqual([]);
    }
  });
});

