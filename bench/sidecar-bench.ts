import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { cpus, homedir, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { execa, type ResultPromise } from 'execa';
import { checkConfig } from '../src/apply/check.js';
import { describeNginx, nginxBuild, servedGeneration } from '../src/sidecar/nginx.js';
import { deployedContainer, envOf } from '../test/support/deployment.js';
import { FakeApiServer, type JsonObject } from '../test/support/fake-apiserver.js';
import { httpGet, startHttpBackend } from '../test/support/peers.js';
import { ingress, service } from '../test/support/sidecar.js';
import { freePorts } from '../test/support/ports.js';
import { generatedObjects, layout, type GeneratedInput } from './generate.js';
import { incrementalBuild } from './incremental-build.js';

/**
 * `npm run bench` (second part): the cluster mode, as a process (`ingress2nginx run --spawn-nginx`)
 * against the loopback fake API server, with a real nginx. Prints figures; asserts nothing.
 *
 * - change-to-served latency with 1,000 Ingresses: from the API write of one Ingress to nginx serving
 *   the generation that holds it (the control socket answers it), p50 and p99, with the median of each
 *   phase of a sync as the sidecar logs it; on the distro's nginx and on the pass generation's when built;
 * - a burst of 1,000 changes: how many reloads it becomes;
 * - `idle`: a new Ingress in a small cluster, from the API write to its host answering;
 * - `silent`: with production timings, a change made while every open watch stays silent (no events, no
 *   bookmarks): from the write to the host answering (the watchdog cuts a watch silent for 90 s);
 * - reload time (signal until the new generation is served) at 100, 1,000 and 10,000 hosts, from the
 *   sidecar's own histogram;
 * - the sidecar's memory with 10,000 Ingresses, 10,000 Services and 2,000 TLS Secrets watched;
 * - `build`: one changed Ingress among 10,000 built with the cluster mode's memo, in this process
 *   (incremental-build.ts): the build alone, over 20 changes.
 *
 * `--ingress-per-certificate` runs it on the other layout of the bench input (generate.ts): one Ingress
 * per Secret, whose hosts share a server block.
 */

const root = fileURLToPath(new URL('../..', import.meta.url));
const binary = join(root, 'bin', 'ingress2nginx');
const latencyChanges = 40;
const burstChanges = 1000;
const layoutFlag = '--ingress-per-certificate';
const args = process.argv.slice(2);
const perCertificate = args.includes(layoutFlag);
const parts = ['latency', 'idle', 'silent', 'reload', 'build'] as const;
/** One part runs only that part (while working on one of them); default all. */
const part = args.find((arg) => arg !== layoutFlag);
const runs = (name: (typeof parts)[number]) => part === undefined || part === name;
if (args.some((arg) => arg !== layoutFlag && !(parts as readonly string[]).includes(arg)) || args.length > (perCertificate ? 2 : 1)) {
  process.stderr.write(`usage: sidecar-bench.js [${parts.join('|')}] [${layoutFlag}]\n`);
  process.exit(2);
}

/** The phases of a sync in the sidecar's log line (reconciler.ts). */
interface Phases {
  readonly waitedMs: number;
  readonly buildMs: number;
  readonly checkMs: number;
  readonly writeMs: number;
  readonly reloadMs: number;
}

interface Sidecar {
  readonly process: ResultPromise;
  readonly outDir: string;
  readonly runDir: string;
  /** The phases the sidecar logged for each applied sync so far. */
  readonly syncs: Phases[];
  readonly metricsPort: number;
  readonly controlSocket: string;
  stop(): Promise<void>;
}

/** The first `hosts` hosts of the generated cluster: their Ingresses and Services, and the Secrets they use. */
function subset(objects: readonly JsonObject[], hosts: number): JsonObject[] {
  const index = (name: string) => Number(/(\d+)$/.exec(name)?.[1] ?? 0);
  return objects.filter((o) => {
    const name = String((o['metadata'] as { name: string }).name);
    // A Secret, and with --ingress-per-certificate an Ingress, is numbered by its group of hosts.
    if (o['kind'] === 'Secret' || (o['kind'] === 'Ingress' && perCertificate)) return index(name) * layout.hostsPerCertificate < hosts;
    return index(name) < hosts;
  });
}

async function metric(port: number, name: string, label = ''): Promise<number> {
  const text = await fetch(`http://127.0.0.1:${port}/metrics`).then((r) => r.text(), () => undefined);
  // Not up yet: the callers poll.
  if (text === undefined) return 0;
  const line = text.split('\n').find((l) => l.startsWith(`${name}${label} `) && /\s[\d.e+-]+$/.test(l));
  // A renamed series must stop the bench, not print 0 for it.
  if (line === undefined) throw new Error(`/metrics has no ${name}${label}`);
  return Number(line.split(' ').pop());
}

/** nginx >= 1.25.5 from scripts/build-nginx.mjs (or NGINX_NEW_BIN), for the reload figures of the `pass` topology. */
function newNginx(): string | undefined {
  const cache = process.env.I2N_CACHE_DIR || join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'ingress2nginx');
  const binary = process.env.NGINX_NEW_BIN || join(cache, 'nginx-new', 'current', 'sbin', 'nginx');
  return existsSync(binary) ? binary : undefined;
}

/** The pid of nginx's master: the child of the sidecar that runs `nginx … daemon off`. */
async function nginxMaster(sidecarPid: number): Promise<number | undefined> {
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '');
    const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    if (parent === sidecarPid && stat.includes('(nginx)')) return Number(entry);
  }
  return undefined;
}

/** The NODE_OPTIONS of the sidecar container in deploy/base/deployment.yaml. */
async function deployedNodeOptions(): Promise<string> {
  return envOf(await deployedContainer('ingress2nginx'), 'NODE_OPTIONS') ?? '';
}

async function startSidecar(api: FakeApiServer, work: string, extra: readonly string[] = []): Promise<Sidecar & { readonly httpPort: number }> {
  const [httpPort, httpsPort, metricsPort] = (await freePorts(3)) as [number, number, number];
  const runDir = await mkdtemp('/tmp/i2n-bench-');
  const outDir = join(work, `out-${httpPort}`);
  const child = execa(
    binary,
    [
      'run',
      ...['-o', outDir, '--run-dir', runDir, '--kubeconfig', await api.writeKubeconfig(), '--spawn-nginx'],
      ...['--http-port', String(httpPort), '--https-port', String(httpsPort), '--metrics-address', `127.0.0.1:${metricsPort}`, '--log-format', 'json'],
      ...extra,
    ],
    // Stopping waits for nginx to quit, which takes seconds with 10,000 SSL contexts to free: execa's
    // default SIGKILL after 5 s would leave that nginx running (with its memory) under later runs.
    // The heap is the one deploy/ gives the sidecar: its memory and build times depend on it.
    { env: { NODE_OPTIONS: await deployedNodeOptions() }, reject: false, buffer: false, stdout: 'pipe', stderr: 'inherit', forceKillAfterDelay: 120_000 },
  );
  const syncs: Sidecar['syncs'] = [];
  let rest = '';
  child.stdout?.setEncoding('utf8');
  child.stdout?.on('data', (chunk: string) => {
    const lines = (rest + chunk).split('\n');
    rest = lines.pop() ?? '';
    for (const line of lines) {
      if (!line.includes('nginx serves the new config')) continue;
      const { waitedMs, buildMs, checkMs, writeMs, reloadMs } = JSON.parse(line) as Phases;
      syncs.push({ waitedMs, buildMs, checkMs, writeMs, reloadMs });
    }
  });
  for (;;) {
    const ready = await fetch(`http://127.0.0.1:${metricsPort}/readyz`).then((r) => r.status === 200, () => false);
    if (ready) break;
    if (child.exitCode !== null) throw new Error('the sidecar exited before it was ready');
    await delay(100);
  }
  return {
    process: child,
    outDir,
    runDir,
    syncs,
    httpPort,
    metricsPort,
    controlSocket: `${runDir}/control.sock`,
    async stop() {
      child.kill('SIGTERM');
      await child;
      await rm(runDir, { recursive: true, force: true });
    },
  };
}

/**
 * Waits until nginx serves a generation not in `seen` (and adds it). Every change here makes a config
 * never served before. During a reload the old workers still answer for a moment, with the generation
 * before: waiting only for "not the last one" took such an answer for the next change served, sent the
 * next change early and let the sidecar coalesce them (3 changes gave 1 reload at 10,000 hosts).
 */
async function nextGeneration(socket: string, seen: Set<string>): Promise<string> {
  const deadline = Date.now() + generationTimeoutMs;
  let last: string | undefined;
  while (Date.now() < deadline) {
    last = await servedGeneration(socket);
    if (last !== undefined && !seen.has(last)) {
      seen.add(last);
      return last;
    }
    await delay(2);
  }
  throw new Error(`no new generation served within ${generationTimeoutMs / 1000} s (the last one served: ${last ?? 'none'}); did nginx reject the change?`);
}

/** The generation nginx serves now, as the first one seen; waits until it answers. */
async function servedSoFar(socket: string): Promise<Set<string>> {
  const seen = new Set<string>();
  await nextGeneration(socket, seen);
  return seen;
}

/** Longer than a sync at 10,000 hosts with an SSL context per host (build, nginx -t and reload: about 11 s). */
const generationTimeoutMs = 120_000;

/** Waits until no reload has happened for `quietMs`. */
async function quiet(port: number, quietMs: number): Promise<void> {
  let last = -1;
  let since = Date.now();
  for (;;) {
    const reloads = await metric(port, 'ingress2nginx_reloads_total', '{result="success"}');
    if (reloads !== last) {
      last = reloads;
      since = Date.now();
    } else if (Date.now() - since > quietMs) return;
    await delay(100);
  }
}

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

/**
 * Resident memory now and at its peak (VmHWM). nginx's master builds the new config while it holds the old
 * one, so its peak is about two configs: that is what a memory limit on the container has to allow.
 */
async function vmPeak(pid: number): Promise<{ rss: number; peak: number }> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0) * 1024;
  return { rss: kb('VmRSS'), peak: kb('VmHWM') };
}

/** How long the sidecar is left idle before its steady memory is read. */
const idleMs = 20_000;

/**
 * Resident memory once the sidecar has been idle `idleMs`: V8 leaves a build's garbage in the heap until
 * its memory reducer collects it, about 8 s into an idle spell, so what is resident right after a sync is
 * the live set plus the garbage of the last builds, not what the sidecar holds while nothing changes.
 */
async function idleRss(pid: number): Promise<number> {
  await delay(idleMs);
  return (await vmPeak(pid)).rss;
}

/**
 * The Ingress with its first path renamed. With --ingress-per-certificate that takes its first host out of
 * the block it shared with the others: one block more for each Ingress touched.
 */
function touch(ingress: JsonObject, round: number): JsonObject {
  const metadata = ingress['metadata'] as { name: string; namespace: string };
  const spec = structuredClone(ingress['spec']) as { rules: { http: { paths: { path: string }[] } }[] };
  const paths = spec.rules[0]?.http.paths;
  if (paths?.[0]) paths[0].path = `/bench-${round}`;
  return { ...ingress, metadata: { name: metadata['name'], namespace: metadata['namespace'] }, spec: spec as unknown as JsonObject };
}

async function withCluster<T>(objects: readonly JsonObject[], body: (api: FakeApiServer, ingresses: JsonObject[]) => Promise<T>): Promise<T> {
  const api = await FakeApiServer.start({ tls: true, token: 'bench' });
  try {
    const namespaces = new Set(objects.map((o) => String((o['metadata'] as { namespace: string }).namespace)));
    for (const name of namespaces) api.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    for (const object of objects) api.create(object);
    return await body(api, objects.filter((o) => o['kind'] === 'Ingress' && (o['metadata'] as { annotations?: Record<string, string> }).annotations?.['nginx.ingress.kubernetes.io/ssl-passthrough'] !== 'true'));
  } finally {
    await api.close();
  }
}

async function generate(dir: string): Promise<GeneratedInput> {
  const script = fileURLToPath(new URL('./generate.js', import.meta.url));
  return new Promise((resolve, reject) => {
    const args = [script, dir, ...(perCertificate ? [layoutFlag] : [])];
    execFile(process.execPath, args, { maxBuffer: 1 << 20 }, (error, stdout) => (error ? reject(error) : resolve(JSON.parse(stdout) as GeneratedInput)));
  });
}

/** Until `host` answers 200 over plain HTTP on `port`: how long a change took to be served, in ms from `started`. */
async function servedAfter(port: number, host: string, started: number): Promise<number> {
  const deadline = Date.now() + generationTimeoutMs;
  while (Date.now() < deadline) {
    const status = await httpGet({ port, host }).then((r) => r.status, () => 0);
    if (status === 200) return performance.now() - started;
    await delay(2);
  }
  throw new Error(`${host} was not served within ${generationTimeoutMs / 1000} s`);
}

/** A small cluster (10 Ingresses to a real backend) for the idle and silent-watch figures. */
async function withSmallCluster<T>(body: (api: FakeApiServer, sidecar: Sidecar & { httpPort: number }, port: number) => Promise<T>, work: string): Promise<T> {
  const backend = await startHttpBackend('bench');
  try {
    const objects = [service('small', 'web', backend), ...Array.from({ length: 10 }, (_, i) => ingress('small', `site-${i}`, `site-${i}.small.example.test`, { service: 'web', port: backend.port }))];
    return await withCluster(objects, async (api) => {
      const sidecar = await startSidecar(api, work);
      try {
        await quiet(sidecar.metricsPort, 1500);
        return await body(api, sidecar, backend.port);
      } finally {
        await sidecar.stop();
      }
    });
  } finally {
    await backend.close();
  }
}

/** A new Ingress in a small, idle cluster: from the API write to its host answering. */
async function idleLatency(out: (line?: string) => void, work: string): Promise<void> {
  const rounds = 20;
  const latencies = await withSmallCluster(async (api, sidecar, port) => {
    const measured: number[] = [];
    for (let round = 0; round < rounds; round++) {
      const host = `new-${round}.small.example.test`;
      const started = performance.now();
      api.create(ingress('small', `new-${round}`, host, { service: 'web', port }));
      measured.push(await servedAfter(sidecar.httpPort, host, started));
      await quiet(sidecar.metricsPort, 300);
    }
    return measured;
  }, work);
  out();
  out(`new Ingress to served, idle, 10 Ingresses (${rounds} new ones, one at a time): p50 ${percentile(latencies, 50).toFixed(0)} ms, max ${Math.max(...latencies).toFixed(0)} ms   target ≤ 500 ms`);
}

/**
 * Production timings; every watch open goes silent (no events, no bookmarks), then an Ingress is created:
 * from the write to its host answering. The watchdog cuts a watch 90 s after its last event or bookmark
 * (the fake API server sends bookmarks every 60 s, as the real one), and the new watch, started from
 * the last resourceVersion, brings the change.
 */
async function silentWatch(out: (line?: string) => void, work: string): Promise<void> {
  const took = await withSmallCluster(async (api, sidecar, port) => {
    const release = api.hangWatches({ existing: true, future: false });
    try {
      const started = performance.now();
      api.create(ingress('small', 'during-silence', 'during-silence.small.example.test', { service: 'web', port }));
      return await servedAfter(sidecar.httpPort, 'during-silence.small.example.test', started);
    } finally {
      release();
    }
  }, work);
  out();
  out(`a change made while every watch is silent, to served (production timings): ${(took / 1000).toFixed(1)} s   target ≤ 120 s`);
}

/** Latency and a burst with 1,000 Ingresses, on one nginx. */
async function latencyAt1000(all: readonly JsonObject[], generation: NginxGeneration, out: (line?: string) => void, work: string): Promise<void> {
  await withCluster(subset(all, 1000), async (api, ingresses) => {
    const sidecar = await startSidecar(api, work, generation.args);
    const syncsBefore = sidecar.syncs.length;
    const latencies: number[] = [];
    const seen = await servedSoFar(sidecar.controlSocket);
    for (let round = 0; round < latencyChanges; round++) {
      const target = ingresses[(round * 37) % ingresses.length] as JsonObject;
      const started = performance.now();
      api.update(touch(target, round));
      await nextGeneration(sidecar.controlSocket, seen);
      latencies.push(performance.now() - started);
      await delay(50);
    }
    out();
    out(`${generation.name}:`);
    out(`change to served, 1,000 Ingresses (${latencyChanges} changes, one at a time): p50 ${percentile(latencies, 50).toFixed(0)} ms, p99 ${percentile(latencies, 99).toFixed(0)} ms, max ${Math.max(...latencies).toFixed(0)} ms   target p50 ≤ 1,000 ms`);
    const syncs = sidecar.syncs.slice(syncsBefore);
    const median = (pick: (s: Phases) => number) => percentile(syncs.map(pick), 50).toFixed(0);
    out(
      `  median per sync: debounce ${median((s) => s.waitedMs)} ms, build ${median((s) => s.buildMs)} ms, staging + nginx -t ${median((s) => s.checkMs)} ms ` +
        `(${syncs.filter((s) => s.checkMs === 0).length} of ${syncs.length} reloaded without it), write ${median((s) => s.writeMs)} ms, reload until served ${median((s) => s.reloadMs)} ms`,
    );

    // How fast this machine is now: nginx parses this config in about the time its reload takes.
    const parse = performance.now();
    await checkConfig(sidecar.outDir, sidecar.runDir, generation.binary);
    out(`  (nginx -t of the same config, for the machine's speed now: ${(performance.now() - parse).toFixed(0)} ms)`);

    await quiet(sidecar.metricsPort, 1500);
    const before = await metric(sidecar.metricsPort, 'ingress2nginx_reloads_total', '{result="success"}');
    const burstStart = performance.now();
    for (let change = 0; change < burstChanges; change++) api.update(touch(ingresses[change % ingresses.length] as JsonObject, 1000 + change));
    // The first reload of the burst can take longer than the quiet period: wait for it before waiting for quiet.
    await nextGeneration(sidecar.controlSocket, seen);
    await quiet(sidecar.metricsPort, 2000);
    const reloads = (await metric(sidecar.metricsPort, 'ingress2nginx_reloads_total', '{result="success"}')) - before;
    out(`burst of ${burstChanges} changes: ${reloads} reload(s), all served ${((performance.now() - burstStart - 2000) / 1000).toFixed(1)} s after the first write`);
    await sidecar.stop();
  });
}

interface NginxGeneration {
  readonly name: string;
  readonly binary: string;
  /** Arguments of `run` that pick it. */
  readonly args: string[];
}

/** The distro's nginx, and the one of the pass generation when scripts/build-nginx.mjs built it. */
async function nginxGenerations(out: (line?: string) => void): Promise<NginxGeneration[]> {
  const generations: NginxGeneration[] = [{ name: `${describeNginx(await nginxBuild('nginx'))} (PROXY/unix hand-off)`, binary: 'nginx', args: [] }];
  const fresh = newNginx();
  if (fresh) generations.push({ name: `${describeNginx(await nginxBuild(fresh))} (pass hand-off)`, binary: fresh, args: ['--nginx-bin', fresh] });
  else out('note: no nginx >= 1.25.5 (run node scripts/build-nginx.mjs): figures for the PROXY/unix topology only');
  return generations;
}

async function main(): Promise<void> {
  const work = await mkdtemp(join(tmpdir(), 'ingress2nginx-sidecar-bench-'));
  const lines: string[] = [];
  const out = (line = '') => {
    lines.push(line);
    console.log(line);
  };
  try {
    out(`ingress2nginx cluster-mode bench — node ${process.version}, ${cpus().length} CPU(s), load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
    out(`the sidecar runs with deploy/'s NODE_OPTIONS: ${(await deployedNodeOptions()) || '(none)'}`);
    if (perCertificate) out('input: one Ingress per certificate, naming the five hosts it covers (generate.ts --ingress-per-certificate)');
    // The generated input (10,000 hosts) only for the parts that use it.
    if (runs('latency') || runs('reload') || runs('build')) await generate(join(work, 'input'));
    if (runs('build')) await incrementalBuild(join(work, 'input'), out);
    const all = runs('latency') || runs('reload') ? (await generatedObjects(join(work, 'input'))) as JsonObject[] : [];

    const generations = await nginxGenerations(out);
    if (runs('latency')) for (const generation of generations) await latencyAt1000(all, generation, out, work);

    if (runs('idle')) await idleLatency(out, work);
    if (runs('silent')) await silentWatch(out, work);
    if (!runs('reload')) return;
    const variants = generations.flatMap((g) => [
      { ...g, label: perCertificate ? 'SSL context per server block' : 'SSL context per host' },
      { ...g, args: [...g.args, '--certificates-per-handshake'], label: 'certificates per handshake' },
    ]);
    for (const variant of variants) {
    out();
    out(`reload time (signal until nginx serves the new generation), from the sidecar's histogram: ${variant.name}, ${variant.label}`);
    for (const hosts of [100, 1000, 10_000]) {
      const changes = hosts >= 10_000 ? 3 : 8;
      await withCluster(subset(all, hosts), async (api, ingresses) => {
        const sidecar = await startSidecar(api, work, variant.args);
        const sum0 = await metric(sidecar.metricsPort, 'ingress2nginx_reload_duration_seconds_sum');
        const count0 = await metric(sidecar.metricsPort, 'ingress2nginx_reload_duration_seconds_count');
        const seen = await servedSoFar(sidecar.controlSocket);
        for (let round = 0; round < changes; round++) {
          api.update(touch(ingresses[round] as JsonObject, 5000 + round));
          await nextGeneration(sidecar.controlSocket, seen);
        }
        await quiet(sidecar.metricsPort, 1000);
        const sum = (await metric(sidecar.metricsPort, 'ingress2nginx_reload_duration_seconds_sum')) - sum0;
        const count = (await metric(sidecar.metricsPort, 'ingress2nginx_reload_duration_seconds_count')) - count0;
        const memory = await vmPeak(sidecar.process.pid ?? 0);
        // The goal is stated at 10,000 hosts; the idle wait is not spent on the smaller ones.
        const idle = hosts >= 10_000 ? await idleRss(sidecar.process.pid ?? 0) : undefined;
        const master = await nginxMaster(sidecar.process.pid ?? 0);
        const masterMemory = master === undefined ? undefined : await vmPeak(master);
        const heap = await metric(sidecar.metricsPort, 'nodejs_heap_size_used_bytes');
        const external = await metric(sidecar.metricsPort, 'nodejs_external_memory_bytes');
        const check = percentile(sidecar.syncs.map((s) => s.checkMs), 50);
        const build = percentile(sidecar.syncs.slice(1).map((s) => s.buildMs), 50);
        out(
          `  ${String(hosts).padStart(6)} hosts: reload ${((sum / Math.max(count, 1)) * 1000).toFixed(0)} ms mean over ${count}, ` +
            `build ${build.toFixed(0)} ms median after the first sync, staging + nginx -t ${check.toFixed(0)} ms median` +
            `; nginx master peak ${masterMemory ? (masterMemory.peak / 1e6).toFixed(0) : '?'} MB (VmHWM; target ≤ 500 MB), ${masterMemory ? (masterMemory.rss / 1e6).toFixed(0) : '?'} MB after` +
            `; sidecar RSS ${(memory.rss / 1e6).toFixed(0)} MB after the syncs` +
            (idle === undefined ? '' : `, ${(idle / 1e6).toFixed(0)} MB steady (after ${idleMs / 1000} s idle)`) +
            `, peak ${(memory.peak / 1e6).toFixed(0)} MB (heap used ${(heap / 1e6).toFixed(0)} MB, external ${(external / 1e6).toFixed(0)} MB)`,
        );
        const stopping = performance.now();
        await sidecar.stop();
        out(`          stopping the sidecar and its nginx took ${((performance.now() - stopping) / 1000).toFixed(1)} s`);
      });
    }
    }
    out('  (targets at 10,000 hosts: nginx -t and reload ≤ 2 s each, master ≤ 500 MB; sidecar RSS ≤ 500 MB steady, ≤ 700 MB at peak)');
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

await main();
