import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import dnsPacket from 'dns-packet';
import { answer, EndpointTable, response } from '../src/sidecar/endpoint-answers.js';
import { describeNginx, nginxBuild } from '../src/sidecar/nginx.js';
import type { RawObject } from '../src/sources/cluster/reflector.js';
import { endpointHost, serviceEndpoints, serviceHost, srvService } from '../src/translate/endpoints.js';
import { FakeApiServer, type JsonObject } from '../test/support/fake-apiserver.js';
import { generatedObjects } from './generate.js';
import { freePorts } from '../test/support/ports.js';
import { requireNginx } from '../test/support/nginx.js';

/**
 * `npm run bench:rollout`: a rolling update of 100 pods with 10,000 Ingresses and about 20,000
 * endpoints watched, through the cluster mode (`ingress2nginx run --spawn-nginx`, a process) against the
 * loopback fake API server, on the pinned nginx (1.27.3 or later): once with the endpoints resolved by
 * nginx from the sidecar's resolver (the default), once with them written into the config
 * (`--endpoint-resolver off`: a reload per change, the floor this replaces). For each: reloads, nginx's
 * CPU (master, workers, and the workers that exited after a reload) and peak memory, the sidecar's CPU;
 * then the resolver's own work per change and per round of nginx's questions, in this process.
 * Prints figures; asserts nothing.
 */

const root = fileURLToPath(new URL('../..', import.meta.url));
const binary = join(root, 'bin', 'ingress2nginx');
const rolloutPods = 100;
/** Between the steps of a pod's replacement: pods rarely turn ready faster than this. */
const stepMs = 300;

interface Usage {
  readonly cpuSeconds: number;
  readonly rss: number;
}

const ticks = 100;

/** CPU of a process and of its children it waited for (an nginx master reaps the workers of old generations). */
async function cpuOf(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return [11, 12, 13, 14].reduce((sum, i) => sum + Number(fields[i] ?? 0), 0) / ticks;
}

async function rssOf(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  return Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? 0) * 1024;
}

/** The nginx processes under the sidecar: its master and the master's workers. */
async function nginxProcesses(sidecarPid: number): Promise<{ master?: number; workers: number[] }> {
  const parents = new Map<number, number>();
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '');
    if (!stat.includes('(nginx)')) continue;
    parents.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
  }
  const master = [...parents].find(([, parent]) => parent === sidecarPid)?.[0];
  return { ...(master !== undefined && { master }), workers: [...parents].filter(([, parent]) => parent === master).map(([pid]) => pid) };
}

async function nginxUsage(sidecarPid: number): Promise<Usage> {
  const { master, workers } = await nginxProcesses(sidecarPid);
  if (master === undefined) return { cpuSeconds: 0, rss: 0 };
  let cpuSeconds = await cpuOf(master);
  let rss = await rssOf(master);
  for (const worker of workers) {
    const stat = await readFile(`/proc/${worker}/stat`, 'utf8').catch(() => '');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    cpuSeconds += (Number(fields[11] ?? 0) + Number(fields[12] ?? 0)) / ticks;
    rss += await rssOf(worker);
  }
  return { cpuSeconds, rss };
}

/** `RcvbufErrors` of /proc/net/snmp: UDP datagrams dropped because a socket's receive buffer was full. */
async function udpReceiveBufferErrors(): Promise<number> {
  const lines = (await readFile('/proc/net/snmp', 'utf8')).split('\n').filter((line) => line.startsWith('Udp:'));
  const [names, values] = lines.map((line) => line.split(/\s+/));
  const index = names?.indexOf('RcvbufErrors') ?? -1;
  return index < 0 ? 0 : Number(values?.[index] ?? 0);
}

async function metric(port: number, name: string, labels = ''): Promise<number> {
  const text = await fetch(`http://127.0.0.1:${port}/metrics`).then((r) => r.text(), () => '');
  const line = text.split('\n').find((l) => l.startsWith(`${name}${labels} `));
  return line === undefined ? 0 : Number(line.split(' ').pop());
}

const address = (n: number) => `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`;

/** Two endpoints per Service (the generated one has ports http and https), as a Deployment of two replicas. */
function slices(services: readonly JsonObject[]): JsonObject[] {
  return services.map((service, index) => {
    const { name, namespace } = service['metadata'] as { name: string; namespace: string };
    return endpointSlice(namespace, name, `${name}-a`, [address(100_000 + 2 * index), address(100_001 + 2 * index)]);
  });
}

function endpointSlice(namespace: string, service: string, name: string, ready: readonly string[], terminating: readonly string[] = []): JsonObject {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name, namespace, labels: { 'kubernetes.io/service-name': service } },
    addressType: 'IPv4',
    ports: [
      { name: 'http', port: 8080, protocol: 'TCP' },
      { name: 'https', port: 8443, protocol: 'TCP' },
    ],
    endpoints: [
      ...ready.map((ip) => ({ addresses: [ip], conditions: { ready: true, serving: true, terminating: false } })),
      ...terminating.map((ip) => ({ addresses: [ip], conditions: { ready: false, serving: true, terminating: true } })),
    ],
  };
}

interface RolloutFigures {
  readonly reloads: number;
  /** Questions the resolver answered during the rollout. */
  readonly answers: number;
  /** UDP datagrams the kernel dropped for a full receive buffer (the machine's, during the rollout). */
  readonly udpDrops: number;
  readonly nginxCpu: number;
  readonly nginxPeakRss: number;
  readonly sidecarCpu: number;
  readonly seconds: number;
}

/** The rollout: the Service `deployment` goes from 100 old pods to 100 new ones, one at a time, each step three slice updates. */
async function rollout(api: FakeApiServer, namespace: string, deployment: string): Promise<void> {
  const old = Array.from({ length: rolloutPods }, (_, i) => address(50_000 + i));
  const fresh: string[] = [];
  for (let i = 0; i < rolloutPods; i++) {
    fresh.push(address(60_000 + i));
    const staying = old.slice(i + 1);
    api.update(endpointSlice(namespace, deployment, `${deployment}-a`, [...staying, ...fresh], [old[i] as string]));
    await delay(stepMs);
    api.update(endpointSlice(namespace, deployment, `${deployment}-a`, [...staying, ...fresh]));
    await delay(stepMs);
  }
}

async function run(objects: readonly JsonObject[], nginxBin: string, extra: readonly string[], work: string): Promise<RolloutFigures> {
  const api = await FakeApiServer.start({ tls: true, token: 'bench' });
  try {
    const namespaces = new Set(objects.map((o) => String((o['metadata'] as { namespace: string }).namespace)));
    for (const name of namespaces) api.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    for (const object of objects) api.create(object);
    const target = objects.find((o) => o['kind'] === 'EndpointSlice') as JsonObject;
    const { namespace, labels } = target['metadata'] as { namespace: string; labels: Record<string, string> };
    const deployment = labels['kubernetes.io/service-name'] as string;
    api.update(endpointSlice(namespace, deployment, `${deployment}-a`, Array.from({ length: rolloutPods }, (_, i) => address(50_000 + i))));

    const [httpPort, httpsPort, metricsPort, resolverPort, unavailablePort] = (await freePorts(5)) as [number, number, number, number, number];
    const runDir = await mkdtemp('/tmp/i2n-rollout-');
    const child = execa(
      binary,
      [
        'run',
        ...['-o', join(work, `out-${httpPort}`), '--run-dir', runDir, '--kubeconfig', await api.writeKubeconfig(), '--spawn-nginx', '--nginx-bin', nginxBin],
        ...['--http-port', String(httpPort), '--https-port', String(httpsPort), '--metrics-address', `127.0.0.1:${metricsPort}`, '--log-format', 'json'],
        ...['--upstreams', 'endpoints', '--endpoint-resolver', String(resolverPort), '--unavailable-port', String(unavailablePort)],
        ...extra,
      ],
      { reject: false, buffer: false, stdout: 'ignore', stderr: 'inherit', forceKillAfterDelay: 120_000 },
    );
    try {
      while ((await fetch(`http://127.0.0.1:${metricsPort}/readyz`).then((r) => r.status, () => 0)) !== 200) await delay(200);
      await quiet(metricsPort);
      const pid = child.pid ?? 0;
      const reloads0 = await metric(metricsPort, 'ingress2nginx_reloads_total', '{result="success"}');
      const answers = () => Promise.all(['SRV', 'A', 'AAAA'].map((type) => metric(metricsPort, 'ingress2nginx_endpoint_resolver_answers_total', `{type="${type}",rcode="NOERROR"}`))).then((n) => n.reduce((a, b) => a + b, 0));
      const answers0 = await answers();
      const drops0 = await udpReceiveBufferErrors();
      const nginx0 = await nginxUsage(pid);
      const sidecar0 = await cpuOf(pid);
      let peak = nginx0.rss;
      let sampling = true;
      const sampler = (async () => {
        while (sampling) {
          peak = Math.max(peak, (await nginxUsage(pid)).rss);
          await delay(200);
        }
      })();
      const started = performance.now();
      await rollout(api, namespace, deployment);
      await quiet(metricsPort);
      const seconds = (performance.now() - started) / 1000;
      sampling = false;
      await sampler;
      const nginx1 = await nginxUsage(pid);
      return {
        reloads: (await metric(metricsPort, 'ingress2nginx_reloads_total', '{result="success"}')) - reloads0,
        answers: (await answers()) - answers0,
        udpDrops: (await udpReceiveBufferErrors()) - drops0,
        nginxCpu: nginx1.cpuSeconds - nginx0.cpuSeconds,
        nginxPeakRss: peak,
        sidecarCpu: (await cpuOf(pid)) - sidecar0,
        seconds,
      };
    } finally {
      child.kill('SIGTERM');
      await child;
      await rm(runDir, { recursive: true, force: true });
    }
  } finally {
    await api.close();
  }
}

/** Until no round has started for 3 s and no reload is in flight. */
async function quiet(port: number): Promise<void> {
  let last = -1;
  let since = performance.now();
  for (;;) {
    const rounds = await metric(port, 'ingress2nginx_render_duration_seconds_count');
    if (rounds !== last) {
      last = rounds;
      since = performance.now();
    } else if (performance.now() - since > 3000) return;
    await delay(250);
  }
}

/** The resolver's own work, in this process: the table made again after a change, and one round of nginx's questions. */
function resolverWork(objects: readonly JsonObject[], out: (line: string) => void): void {
  const raw = objects as unknown as RawObject[];
  const services = raw.filter((o) => o.kind === 'Service');
  const endpointSlices = raw.filter((o) => o.kind === 'EndpointSlice');
  const rebuilds: number[] = [];
  let table = EndpointTable.of(services, endpointSlices);
  for (let i = 0; i < 20; i++) {
    const started = performance.now();
    table = EndpointTable.of(services, endpointSlices);
    rebuilds.push(performance.now() - started);
  }
  // One round: an SRV question per upstream block (http port 80, stream port 443) and an A question per endpoint.
  const questions: { name: string; type: 'SRV' | 'A' }[] = [];
  for (const service of services) {
    const { name, namespace = '' } = service.metadata;
    questions.push({ name: `_${srvService('http', 80)}._tcp.${serviceHost(namespace, name)}`, type: 'SRV' });
    const slice = endpointSlices.find((s) => (s.metadata as { labels?: Record<string, string> }).labels?.['kubernetes.io/service-name'] === name && s.metadata.namespace === namespace);
    for (const endpoint of serviceEndpoints(slice ? [slice as never] : [], 'http').endpoints) {
      questions.push({ name: endpointHost(namespace, name, endpoint), type: 'A' });
    }
  }
  const round = (wire: boolean) => {
    const started = performance.now();
    for (const [id, question] of questions.entries()) {
      const asked = { ...question, class: 'IN' as const };
      const answered = answer(asked, table, 10054);
      if (wire && answered) dnsPacket.encode(response(dnsPacket.decode(dnsPacket.encode({ id, type: 'query', questions: [asked] })), answered));
    }
    return performance.now() - started;
  };
  const first = round(false);
  const kept = round(false);
  const withWire = round(true);
  rebuilds.sort((a, b) => a - b);
  out(`resolver, in this process: the table made again after a change ${rebuilds[10]?.toFixed(1)} ms (median of 20; ${services.length} Services, ${endpointSlices.length} EndpointSlices)`);
  out(`  one round of nginx's questions (${questions.length}: an SRV per Service port, an A per endpoint; nginx asks each about every 2 s):`);
  out(`  ${first.toFixed(0)} ms of decisions right after a change (endpoints picked again), ${kept.toFixed(0)} ms with the table kept, ${withWire.toFixed(0)} ms with the wire format (decode the question, encode the answer)`);
}

async function main(): Promise<void> {
  const work = await mkdtemp(join(tmpdir(), 'ingress2nginx-rollout-bench-'));
  const out = (line = '') => console.log(line);
  try {
    const nginx = requireNginx('pass');
    out(`ingress2nginx rollout bench — node ${process.version}, ${cpus().length} CPU(s), load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
    out(`nginx: ${describeNginx(await nginxBuild(nginx.binary))}`);
    const input = join(work, 'input');
    await new Promise((resolve, reject) =>
      execFile(process.execPath, [fileURLToPath(new URL('./generate.js', import.meta.url)), input], { maxBuffer: 1 << 20 }, (error, stdout) => (error ? reject(error) : resolve(stdout))),
    );
    const generated = (await generatedObjects(input)) as JsonObject[];
    const objects = [...generated, ...slices(generated.filter((o) => o['kind'] === 'Service'))];
    const endpoints = 2 * objects.filter((o) => o['kind'] === 'EndpointSlice').length + rolloutPods - 2;
    out(`input: ${objects.filter((o) => o['kind'] === 'Ingress').length} Ingresses, ${endpoints} endpoints; a rollout of ${rolloutPods} pods of one Service (two slice updates per pod, ${stepMs} ms apart)`);
    out();
    resolverWork(objects, out);
    for (const [label, extra] of [
      ['endpoints resolved by nginx (the default)', []],
      ['endpoints written into the config (--endpoint-resolver off)', ['--endpoint-resolver', 'off']],
    ] as const) {
      const figures = await run(objects, nginx.binary, extra, work);
      out();
      out(`${label}: the rollout took ${figures.seconds.toFixed(0)} s`);
      out(`  reloads ${figures.reloads}; resolver answers ${figures.answers} (${(figures.answers / figures.seconds).toFixed(0)}/s), UDP datagrams dropped for a full buffer ${figures.udpDrops}; nginx CPU ${figures.nginxCpu.toFixed(1)} s (master, workers and exited workers), peak RSS ${(figures.nginxPeakRss / 1e6).toFixed(0)} MB (master + workers)`);
      out(`  sidecar CPU ${figures.sidecarCpu.toFixed(1)} s (${((figures.sidecarCpu / (2 * rolloutPods)) * 1000).toFixed(0)} ms per slice update: its rounds, and the resolver's answers)`);
    }
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

await main();
