import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { servedGeneration } from '../../src/sidecar/nginx.js';
import { defaultRunTiming, runSidecar, type RunOptions, type RunTiming } from '../../src/sidecar/run.js';
import type { FakeApiServer, JsonObject } from './fake-apiserver.js';
import { requireNginx } from './nginx.js';
import type { Peer } from './peers.js';
import { freePorts } from './ports.js';
import { testBaseTranslateOptions } from './options.js';

/**
 * The cluster mode in-process against a fake API server, with a real nginx it spawns: one "Pod".
 * Timings are short, so that watchdogs, relists and the lease play out within a test.
 */

export const testTiming: RunTiming = {
  ...defaultRunTiming,
  reflector: { ...defaultRunTiming.reflector, watchTimeoutSeconds: 30, idleTimeoutMs: 1500, relistIntervalMs: 60_000, backoffInitialMs: 50, backoffMaxMs: 400 },
  debounceMs: 30,
  maxDelayMs: 300,
  reloadTimeoutMs: 3000,
  discoveryIntervalMs: 300,
  leaseDurationSeconds: 2,
  leaseRetryPeriodMs: 200,
  leaseRenewDeadlineMs: 1500,
};

export interface RunningSidecar {
  readonly httpPort: number;
  readonly httpsPort: number;
  readonly outDir: string;
  readonly runDir: string;
  readonly metricsPort: number;
  /** Everything logged so far (JSON lines). */
  logs(): string;
  metrics(): Promise<string>;
  /** The value of one sample of `/metrics` (0 when absent). */
  metric(name: string, labels?: Readonly<Record<string, string>>): Promise<number>;
  probe(path: '/healthz' | '/readyz'): Promise<number>;
  /** SIGTERM, as it were: resolves with the exit code. */
  stop(): Promise<number>;
}

export interface SidecarOptions {
  readonly api: FakeApiServer;
  readonly kubeconfig: string;
  readonly translate?: Partial<RunOptions['translate']>;
  readonly run?: Partial<Omit<RunOptions, 'translate' | 'timing'>>;
  readonly timing?: Partial<RunTiming>;
  /** The Pod's environment (`POD_NAME`, `POD_NAMESPACE`). */
  readonly env?: NodeJS.ProcessEnv;
  /** The folders and ports of a sidecar before it: a restart in the same Pod (new ones otherwise). */
  readonly samePod?: Pick<RunningSidecar, 'outDir' | 'runDir' | 'httpPort' | 'httpsPort'>;
}

const running = new Set<RunningSidecar>();
const folders: string[] = [];

export async function startSidecar(options: SidecarOptions): Promise<RunningSidecar> {
  const nginx = requireNginx();
  const { outDir, runDir, httpPort, httpsPort } = options.samePod ?? (await newPod());
  let logs = '';
  let stop!: () => void;
  const stopRequested = new Promise<void>((resolve) => (stop = resolve));
  let listening!: (port: number) => void;
  const metricsPort = new Promise<number>((resolve) => (listening = resolve));
  const exit = runSidecar(
    {
      output: outDir,
      translate: testBaseTranslateOptions({ httpPort, httpsPort, runDir, ...options.translate }),
      kubeconfig: options.kubeconfig,
      namespaces: [],
      spawnNginx: true,
      nginxBin: nginx.binary,
      metricsHost: '127.0.0.1',
      metricsPort: 0,
      publishAddresses: [],
      updateStatus: true,
      electionId: 'ingress2nginx',
      electionNamespace: 'default',
      upstreams: 'service',
      logFormat: 'json',
      logLevel: 'debug',
      ...options.run,
      timing: { ...testTiming, ...options.timing },
    },
    { env: options.env ?? {}, log: (line) => (logs += line), stopRequested, onListening: listening },
  );
  exit.catch(() => listening(-1));
  const port = await metricsPort;
  if (port === -1) throw await exit.then(() => new Error('the sidecar stopped before it listened'), (error: unknown) => error);
  const url = (path: string) => `http://127.0.0.1:${port}${path}`;
  const sidecar: RunningSidecar = {
    httpPort,
    httpsPort,
    outDir,
    runDir,
    metricsPort: port,
    logs: () => logs,
    metrics: () => fetch(url('/metrics')).then((r) => r.text()),
    async metric(name, labels = {}) {
      const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
      for (const line of (await sidecar.metrics()).split('\n')) {
        const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{([^}]*)\})? (\S+)$/.exec(line);
        if (!match || match[1] !== name) continue;
        const present = (match[2] ?? '').split(',');
        if (wanted.every((w) => present.includes(w))) return Number(match[3]);
      }
      return 0;
    },
    probe: (path) => fetch(url(path)).then((r) => r.status),
    async stop() {
      running.delete(sidecar);
      stop();
      return exit;
    },
  };
  running.add(sidecar);
  return sidecar;
}

async function newPod(): Promise<Pick<RunningSidecar, 'outDir' | 'runDir' | 'httpPort' | 'httpsPort'>> {
  const base = await mkdtemp(join(tmpdir(), 'i2n-sidecar-'));
  await chmod(base, 0o755);
  const runDir = await mkdtemp('/tmp/i2n-s-');
  await chmod(runDir, 0o755);
  folders.push(base, runDir);
  const [httpPort, httpsPort] = (await freePorts(2)) as [number, number];
  return { outDir: join(base, 'out'), runDir, httpPort, httpsPort };
}

/**
 * Waits until the sidecar is quiet: nginx serves the generation written in the output folder, and no
 * round has started for a while. A wait, not an assertion.
 */
export async function settled(sidecar: RunningSidecar): Promise<void> {
  let last = -1;
  let quiet = 0;
  await eventually(
    async () => {
      const rounds = await sidecar.metric('ingress2nginx_render_duration_seconds_count');
      const conf = await readFile(join(sidecar.outDir, 'nginx.conf'), 'utf8').catch(() => '');
      const written = /return 200 "([0-9a-f]{32})\\n";/.exec(conf)?.[1];
      quiet = rounds === last && written !== undefined && (await servedGeneration(`${sidecar.runDir}/control.sock`)) === written ? quiet + 1 : 0;
      last = rounds;
      if (quiet < 8) await delay(25);
      return quiet;
    },
    (n) => n >= 8,
  );
}

/** Stops every sidecar still running and removes their folders; for `afterAll`. */
export async function stopAllSidecars(): Promise<void> {
  await Promise.all([...running].map((s) => s.stop()));
  await Promise.all(folders.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
}

/** Re-checks `check` until it holds (bounded wait, not an assertion); returns its last value. */
export async function eventually<T>(check: () => Promise<T> | T, accept: (value: T) => boolean, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let value = await check();
  while (!accept(value) && Date.now() < deadline) {
    await delay(25);
    value = await check();
  }
  return value;
}

// ------------------------------------------------------------------------------------ objects

export function namespace(name: string): JsonObject {
  return { apiVersion: 'v1', kind: 'Namespace', metadata: { name } };
}

/** A Service whose ClusterIP is 127.0.0.1 on the peer's port: nginx reaches the real backend. */
export function service(ns: string, name: string, peer: Peer): JsonObject {
  return { apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: ns }, spec: { clusterIP: '127.0.0.1', ports: [{ port: peer.port }] } };
}

export function ingress(
  ns: string,
  name: string,
  host: string,
  backend: { service: string; port: number },
  extra: { tlsSecret?: string; annotations?: Record<string, string>; path?: string } = {},
): JsonObject {
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: { name, namespace: ns, ...(extra.annotations && { annotations: extra.annotations }) },
    spec: {
      ingressClassName: 'nginx',
      ...(extra.tlsSecret && { tls: [{ hosts: [host], secretName: extra.tlsSecret }] }),
      rules: [
        {
          host,
          http: { paths: [{ path: extra.path ?? '/', pathType: 'Prefix', backend: { service: { name: backend.service, port: { number: backend.port } } } }] },
        },
      ],
    },
  };
}

export function tlsSecret(ns: string, name: string, pair: { certPem: string; keyPem: string }): JsonObject {
  return { apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: ns }, type: 'kubernetes.io/tls', stringData: { 'tls.crt': pair.certPem, 'tls.key': pair.keyPem } };
}

/**
 * The real nginx with a gate: every run of it, `-t` and the master's reloads alike, also reads
 * `DIR/gate/*.conf` (an `include` added to its `-g` directives), so a test makes nginx refuse configs by
 * writing a file there, as a stock nginx refuses what no allow-list foresaw. `refuseAll()` makes every
 * config fail; `refuseKeyFiles(glob)` makes a config fail while its folder holds a key file matching
 * `glob` (relative to the config's folder: for `nginx -t` the staging folder, for the master the output).
 */
export interface GatedNginx {
  readonly binary: string;
  refuseAll(): Promise<void>;
  refuseKeyFiles(glob: string): Promise<void>;
  open(): Promise<void>;
}

export async function writeGatedNginx(dir: string, realNginx: string): Promise<GatedNginx> {
  const binary = join(dir, 'nginx');
  const gate = join(dir, 'gate');
  await mkdir(gate, { recursive: true });
  const include = `include ${gate}/*.conf;`;
  const script = `#!/bin/sh
count=$#; prev=""; seen=""
for arg in "$@"; do
  original="$arg"
  if [ "$prev" = "-g" ]; then arg="$arg ${include}"; seen=1; fi
  set -- "$@" "$arg"; prev="$original"
done
shift "$count"
if [ -z "$seen" ]; then set -- "$@" -g '${include}'; fi
exec '${realNginx}' "$@"
`;
  await writeFile(binary, script);
  await chmod(binary, 0o755);
  const rule = join(gate, 'rule.conf');
  return {
    binary,
    refuseAll: () => writeFile(rule, 'i2n_test_gate_refuses_every_config;\n'),
    refuseKeyFiles: (glob) => writeFile(rule, `include ${glob};\n`),
    open: () => rm(rule, { force: true }),
  };
}
