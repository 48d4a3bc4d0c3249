import { existsSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { execa, type ResultPromise } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { FakeApiServer, type JsonObject } from '../support/fake-apiserver.js';
import { nginxGeneration, requireNginx } from '../support/nginx.js';
import { ownAddress } from '../support/peers.js';
import { freePorts } from '../support/ports.js';
import { eventually, ingress, namespace, settled, startSidecar, stopAllSidecars, type RunningSidecar } from '../support/sidecar.js';

/**
 * A rolling update under continuous requests, through the cluster mode and a real nginx: a Deployment
 * of 10 pods behind an Ingress with `affinity: cookie`, every pod replaced one at a time (the old one
 * first turns unready, then terminating, keeps serving 5 s as a preStop sleep does, then closes).
 *
 * On nginx 1.27.3 or later (the pass generation) the sidecar's resolver hands nginx the endpoints:
 * no reload, no failed request, each new pod is sent traffic within two of nginx's resolutions after it
 * turns ready, a pod that turns terminating gets no new request two resolutions later, and a
 * cookie-pinned client moves only off a pod that goes, or onto a pod that just turned ready. The same
 * is measured with the sidecar restarted in the middle (nginx in a container of its own). On older
 * nginx (the distro generation) the endpoints are written in and every change reloads.
 */

const generation = nginxGeneration();
const resolves = generation === 'pass';
const host = 'shop.example.test';
const api = await FakeApiServer.start({ tls: true, token: 'rollout' });
const kubeconfig = await api.writeKubeconfig();
const address = ownAddress();

afterAll(async () => {
  await stopAllSidecars();
  await api.close();
});

type PodState = 'unready' | 'ready' | 'going' | 'closed';

/** Requests sent so far: each carries its number, so that a pod knows how new the requests it gets are. */
let sent = 0;

/** One pod: an HTTP server on its own port that says who it is, and what happened to it, in order. */
class Pod {
  state: PodState = 'unready';
  hits = 0;
  /** The highest `sent` number of a request that reached it (requests carry it in their query). */
  lastSent = 0;
  readonly fresh: boolean;
  private server: http.Server | undefined;
  port = 0;

  constructor(
    readonly name: string,
    generationOfPods: 'old' | 'new',
  ) {
    this.fresh = generationOfPods === 'new';
  }

  async start(): Promise<void> {
    const server = http.createServer((request, response) => {
      this.hits++;
      this.lastSent = Math.max(this.lastSent, Number(new URL(request.url ?? '/', 'http://pod').searchParams.get('sent') ?? 0));
      request.resume();
      response.writeHead(200, { 'content-type': 'text/plain' }).end(this.name);
    });
    server.listen(0, address);
    await new Promise((resolve) => server.once('listening', resolve));
    this.port = (server.address() as { port: number }).port;
    this.server = server;
  }

  async close(): Promise<void> {
    this.state = 'closed';
    const server = this.server;
    if (!server) return;
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }

  slice(): JsonObject {
    const conditions =
      this.state === 'ready'
        ? { ready: true, serving: true, terminating: false }
        : this.state === 'going'
          ? { ready: false, serving: true, terminating: true }
          : { ready: false, serving: false, terminating: false };
    return {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name: `web-${this.name}`, namespace: 'shop', labels: { 'kubernetes.io/service-name': 'web' } },
      addressType: 'IPv4',
      ports: [{ name: 'http', port: this.port, protocol: 'TCP' }],
      endpoints: [{ addresses: [address], conditions, targetRef: { kind: 'Pod', namespace: 'shop', name: this.name } }],
    };
  }
}

interface Traffic {
  requests: number;
  failures: string[];
  /** Cookie-pinned clients: a move that is not off a pod that goes, nor onto a pod that just turned ready. */
  badMoves: string[];
  moves: number;
  stop(): Promise<void>;
}

/** Requests, as browsers send them: each client keeps the affinity cookie it got; a few new clients all the time. */
function sendTraffic(port: number, pods: Map<string, Pod>, pinnedClients = 24): Traffic {
  const traffic: Traffic = { requests: 0, failures: [], badMoves: [], moves: 0, stop: async () => {} };
  let running = true;
  const get = (cookie?: string) =>
    new Promise<{ status: number; body: string; cookie?: string }>((resolve, reject) => {
      const request = http.request({ host: '127.0.0.1', port, path: `/?sent=${++sent}`, headers: { host, ...(cookie && { cookie }) }, agent: false }, (response) => {
        let body = '';
        response.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
        response.on('end', () => {
          const set = response.headers['set-cookie']?.[0]?.split(';')[0];
          resolve({ status: response.statusCode ?? 0, body, ...(set !== undefined && { cookie: set }) });
        });
      });
      request.on('error', reject);
      request.end();
    });
  const send = async (cookie?: string) => {
    traffic.requests++;
    try {
      const answered = await get(cookie);
      if (answered.status !== 200) traffic.failures.push(`${answered.status} ${answered.body.slice(0, 80)}`);
      return answered;
    } catch (error) {
      traffic.failures.push((error as Error).message);
      return undefined;
    }
  };
  const client = async () => {
    const first = await send();
    if (!first?.cookie) return;
    let pod = first.body;
    while (running) {
      const answered = await send(first.cookie);
      if (answered && answered.status === 200 && answered.body !== pod) {
        traffic.moves++;
        const from = pods.get(pod);
        const to = pods.get(answered.body);
        const offAGoingPod = from !== undefined && from.state !== 'ready';
        const ontoAReadyNewPod = to !== undefined && to.fresh;
        if (!offAGoingPod && !ontoAReadyNewPod) traffic.badMoves.push(`${pod} (${from?.state}) -> ${answered.body} (${to?.state})`);
        pod = answered.body;
      }
      await delay(20);
    }
  };
  const newcomers = async () => {
    while (running) {
      await send();
      await delay(20);
    }
  };
  const loops = [...Array.from({ length: pinnedClients }, client), newcomers()];
  traffic.stop = async () => {
    running = false;
    await Promise.all(loops);
  };
  return traffic;
}

function webService(): JsonObject {
  return { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: 'shop' }, spec: { clusterIP: '10.96.0.30', ports: [{ name: 'http', port: 80, targetPort: 'http' }] } };
}

/** A sidecar with Services reached at their endpoints, its resolver on free loopback ports. */
async function endpointsSidecar(run: { spawnNginx?: boolean } = {}): Promise<Parameters<typeof startSidecar>[0]> {
  const [resolverPort, noEndpointsPort] = (await freePorts(2)) as [number, number];
  return {
    api,
    kubeconfig,
    translate: { upstreams: 'endpoints', endpointResolver: { address: `127.0.0.1:${resolverPort}`, noEndpointsPort } },
    run: { upstreams: 'endpoints', ...run },
  };
}

/** SRV questions the resolver answered: how many times nginx has resolved the upstreams so far. */
const resolutions = (sidecar: RunningSidecar) => sidecar.metric('ingress2nginx_endpoint_resolver_answers_total', { type: 'SRV', rcode: 'NOERROR' });
const rounds = (sidecar: RunningSidecar) => sidecar.metric('ingress2nginx_render_duration_seconds_count');
const reloads = (sidecar: RunningSidecar) => sidecar.metric('ingress2nginx_reloads_total', { result: 'success' });

/**
 * Replaces every old pod by a new one, one at a time: the new one starts unready and turns ready; then the
 * old one turns unready, then terminating, serves 5 s more and closes, while the next new pod starts.
 * `watch` follows each step against nginx's resolutions; `midway` runs once half the pods are replaced.
 */
async function roll(old: Pod[], pods: Map<string, Pod>, watch: RolloutWatch, midway?: () => Promise<void>): Promise<void> {
  const closing: Promise<void>[] = [];
  for (const [index, leaving] of old.entries()) {
    const arriving = new Pod(`new-${index}`, 'new');
    await arriving.start();
    pods.set(arriving.name, arriving);
    api.create(arriving.slice());
    await delay(100);
    arriving.state = 'ready';
    api.update(arriving.slice());
    await watch.servedSoon(arriving);
    leaving.state = 'going';
    // Unready first (probe fails), then terminating: both leave the ready set.
    api.update({ ...leaving.slice(), endpoints: [{ addresses: [address], conditions: { ready: false, serving: true, terminating: false } }] });
    await delay(200);
    api.update(leaving.slice());
    closing.push(watch.forgottenSoon(leaving).then(() => api.delete({ apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', namespace: 'shop', name: `web-${leaving.name}` })));
    if (index === Math.floor(old.length / 2) - 1) await midway?.();
  }
  await Promise.all(closing);
}

interface RolloutWatch {
  /** Resolves once the pod has been sent a request; records how many resolutions that took. */
  servedSoon(pod: Pod): Promise<void>;
  /** Waits 5 s (the preStop sleep), closes the pod; records whether it got requests two resolutions after it went. */
  forgottenSoon(pod: Pod): Promise<void>;
}

function rolloutWatch(sidecar: () => RunningSidecar, findings: { slowStarts: string[]; lateRequests: string[] }): RolloutWatch {
  return {
    async servedSoon(pod) {
      const before = await resolutions(sidecar());
      await eventually(() => pod.hits, (hits) => hits > 0, 20_000);
      const after = await resolutions(sidecar());
      // The resolution in flight when it turned ready may predate it: the one after must bring it.
      if (after - before > 2) findings.slowStarts.push(`${pod.name}: first request after ${after - before} resolutions`);
    },
    async forgottenSoon(pod) {
      const gone = await resolutions(sidecar());
      await eventually(() => resolutions(sidecar()), (n) => n >= gone + 2, 20_000);
      // A request sent from now on is new: nginx has resolved the pod's going twice. (One sent before may
      // still arrive, on a machine this busy.)
      const cutoff = sent;
      await delay(5000);
      if (pod.lastSent > cutoff) findings.lateRequests.push(`${pod.name}: a request sent two resolutions after it went reached it`);
      await pod.close();
    },
  };
}

/** For the restart: the resolver's count starts again with the sidecar, so only the pods are followed. */
const podsOnlyWatch: RolloutWatch = {
  servedSoon: (pod) => eventually(() => pod.hits, (hits) => hits > 0, 20_000).then(() => undefined),
  async forgottenSoon(pod) {
    await delay(5000);
    await pod.close();
  },
};

async function startPods(pods: Map<string, Pod>): Promise<Pod[]> {
  const old = Array.from({ length: 10 }, (_, i) => new Pod(`old-${i}`, 'old'));
  for (const pod of old) {
    await pod.start();
    pod.state = 'ready';
    pods.set(pod.name, pod);
  }
  return old;
}

function setUpShop(old: Pod[]): void {
  api.create(namespace('shop'));
  api.create(webService());
  for (const pod of old) api.create(pod.slice());
  api.create(ingress('shop', 'web', host, { service: 'web', port: 80 }, { annotations: { 'nginx.ingress.kubernetes.io/affinity': 'cookie' } }));
}

async function tearDownShop(pods: Map<string, Pod>): Promise<void> {
  const refs = [
    ...[...pods.values()].map((pod) => ({ apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', namespace: 'shop', name: `web-${pod.name}` })),
    { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', namespace: 'shop', name: 'web' },
    { apiVersion: 'v1', kind: 'Service', namespace: 'shop', name: 'web' },
    { apiVersion: 'v1', kind: 'Namespace', name: 'shop' },
  ];
  for (const ref of refs) if (api.get(ref)) api.delete(ref);
  for (const pod of pods.values()) await pod.close();
}

// Each generation runs the suite that applies to it: neither skips.
if (resolves)
  describe('a rollout with the endpoint resolver (nginx 1.27.3 or later)', () => {
  it('reloads nothing and fails no request; new pods get traffic, going pods lose it, pinned clients stay', async () => {
    const pods = new Map<string, Pod>();
    const old = await startPods(pods);
    setUpShop(old);
    const sidecar = await startSidecar(await endpointsSidecar());
    try {
      await settled(sidecar);
      const reloadsBefore = await reloads(sidecar);
      const roundsBefore = await rounds(sidecar);
      const traffic = sendTraffic(sidecar.httpPort, pods);
      await eventually(() => old.every((p) => p.hits > 0), Boolean, 20_000);
      const findings = { slowStarts: [] as string[], lateRequests: [] as string[] };
      await roll(old, pods, rolloutWatch(() => sidecar, findings));
      await traffic.stop();
      await settled(sidecar);

      expect(traffic.failures).toEqual([]);
      expect(await reloads(sidecar)).toBe(reloadsBefore);
      // No URL names an address: an endpoint change changes no byte, so it does not even build.
      expect(await rounds(sidecar)).toBe(roundsBefore);
      expect(findings).toEqual({ slowStarts: [], lateRequests: [] });
      expect(traffic.badMoves).toEqual([]);
      expect(traffic.requests).toBeGreaterThan(1000);
      expect(traffic.moves).toBeGreaterThan(0);
    } finally {
      await sidecar.stop();
      await tearDownShop(pods);
    }
  }, 180_000);

  it('loses no request when the sidecar restarts in the middle, nginx running in a container of its own', async () => {
    const pods = new Map<string, Pod>();
    const old = await startPods(pods);
    setUpShop(old);
    const options = await endpointsSidecar({ spawnNginx: false });
    let sidecar = await startSidecar(options);
    const nginx = await externalNginx(sidecar);
    try {
      await settled(sidecar);
      const traffic = sendTraffic(sidecar.httpPort, pods);
      await eventually(() => old.every((p) => p.hits > 0), Boolean, 20_000);
      const samePod = { outDir: sidecar.outDir, runDir: sidecar.runDir, httpPort: sidecar.httpPort, httpsPort: sidecar.httpsPort };
      await roll(old, pods, podsOnlyWatch, async () => {
        await sidecar.stop();
        await delay(3000);
        sidecar = await startSidecar({ ...options, samePod });
      });
      await traffic.stop();
      await settled(sidecar);
      expect(traffic.failures).toEqual([]);
      expect(traffic.badMoves).toEqual([]);
      expect(traffic.requests).toBeGreaterThan(1000);
      // The restarted sidecar found the config nginx serves and wrote nothing new.
      expect(await reloads(sidecar)).toBe(0);
    } finally {
      await sidecar.stop();
      nginx.process.kill('SIGTERM');
      await nginx.process;
      await tearDownShop(pods);
    }
  }, 180_000);
});

/** nginx as deploy/ runs it: its own process, started on the config the sidecar wrote, not the sidecar's child. */
async function externalNginx(sidecar: RunningSidecar): Promise<{ readonly process: ResultPromise }> {
  const conf = join(sidecar.outDir, 'nginx.conf');
  await eventually(() => existsSync(conf), Boolean);
  return { process: execa(requireNginx().binary, ['-p', sidecar.outDir, '-c', conf, '-g', 'daemon off;'], { reject: false }) };
}

if (!resolves)
  describe('a rollout on nginx older than 1.27.3', () => {
  it('writes the endpoints in: each change reloads nginx, and the resolver is not started', async () => {
    const pods = new Map<string, Pod>();
    const old = await startPods(pods);
    setUpShop(old);
    const sidecar = await startSidecar(await endpointsSidecar());
    await settled(sidecar);
    const before = await reloads(sidecar);
    const arriving = new Pod('new-0', 'new');
    await arriving.start();
    arriving.state = 'ready';
    pods.set(arriving.name, arriving);
    api.create(arriving.slice());
    await eventually(() => reloads(sidecar), (n) => n > before);
    expect(sidecar.logs()).toContain('nginx is older than 1.27.3');
    expect(sidecar.logs()).not.toContain('endpoint resolver listening');
    await sidecar.stop();
    await tearDownShop(pods);
  }, 60_000);
});
