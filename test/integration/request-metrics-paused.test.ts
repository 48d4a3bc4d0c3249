import { chmod, mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa, type ResultPromise } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeApiServer } from '../support/fake-apiserver.js';
import { requireNginx } from '../support/nginx.js';
import { freePorts } from '../support/ports.js';
import { eventually, ingress, namespace } from '../support/sidecar.js';

/**
 * A stopped sidecar does not slow nginx: `ingress2nginx run --spawn-nginx` as a process, paused with
 * SIGSTOP while requests go through the nginx it started. nginx appends its per-request lines to a file
 * in buffers; no request waits for the reader, and once it runs again it counts every one.
 */

const binary = join(import.meta.dirname, '..', '..', 'bin', 'ingress2nginx');
const requests = 3000;
let scratch: string;
let api: FakeApiServer;
let backend: http.Server;
let child: ResultPromise;
let httpPort: number;
let metricsPort: number;

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'i2n-paused-'));
  await chmod(scratch, 0o755);
  api = await FakeApiServer.start({ tls: true, token: 'paused', bookmarkIntervalMs: 500 });
  const kubeconfig = await api.writeKubeconfig();
  backend = http.createServer((_request, response) => response.end('ok'));
  await new Promise<void>((resolve) => backend.listen(0, '127.0.0.1', resolve));
  const backendPort = (backend.address() as AddressInfo).port;
  api.create(namespace('web'));
  api.create({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'app', namespace: 'web' }, spec: { clusterIP: '127.0.0.1', ports: [{ port: backendPort }] } });
  api.create(ingress('web', 'app', 'app.example.test', { service: 'app', port: backendPort }));
  const [http_, https_, metrics_] = (await freePorts(3)) as [number, number, number];
  [httpPort, metricsPort] = [http_, metrics_];
  const runDir = await mkdtemp('/tmp/i2n-paused-');
  child = execa(
    binary,
    [
      'run',
      ...['-o', join(scratch, 'out'), '--run-dir', runDir, '--kubeconfig', kubeconfig, '--spawn-nginx', '--nginx-bin', requireNginx().binary],
      ...['--http-port', String(http_), '--https-port', String(https_), '--metrics-address', `127.0.0.1:${metrics_}`, '--log-format', 'json'],
    ],
    { reject: false, buffer: false, stdout: 'ignore', stderr: 'ignore', forceKillAfterDelay: false },
  );
  await eventually(() => get().catch(() => 0), (status) => status === 200, 60_000);
  // Requests until one is counted: the sidecar labels lines once it knows the config nginx runs.
  await eventually(
    async () => {
      await get();
      return counted();
    },
    (n) => n > 0,
    30_000,
  );
});

afterAll(async () => {
  child.kill('SIGCONT');
  child.kill('SIGTERM');
  await child;
  await new Promise((resolve) => backend.close(resolve));
  await api.close();
  await rm(scratch, { recursive: true, force: true });
});

const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });

/** Requests the Ingress answered, which the sidecar must count. */
let answered = 0;

function get(): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = http.get({ host: '127.0.0.1', port: httpPort, path: '/', headers: { host: 'app.example.test' }, agent }, (response) => {
      response.resume();
      if (response.statusCode === 200) answered++;
      response.once('end', () => resolve(response.statusCode ?? 0));
    });
    request.once('error', reject);
  });
}

/** Requests to the Ingress counted so far. */
async function counted(): Promise<number> {
  const text = await fetch(`http://127.0.0.1:${metricsPort}/metrics`).then((r) => r.text());
  return text
    .split('\n')
    .filter((line) => line.startsWith('nginx_ingress_controller_requests{') && line.includes('ingress="app"'))
    .reduce((sum, line) => sum + Number(line.split(' ').pop()), 0);
}

describe('a paused sidecar', () => {
  it('does not stop nginx from answering every request, and counts them all once it runs again', async () => {
    child.kill('SIGSTOP');
    const statuses = new Map<number, number>();
    for (let sent = 0; sent < requests; sent += 100) {
      const batch = await Promise.all(Array.from({ length: 100 }, () => get()));
      for (const status of batch) statuses.set(status, (statuses.get(status) ?? 0) + 1);
    }
    expect([...statuses]).toEqual([[200, requests]]);
    child.kill('SIGCONT');
    expect(await eventually(counted, (n) => n >= answered)).toBe(answered);
  });
});
