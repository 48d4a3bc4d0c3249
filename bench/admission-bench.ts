import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { nginxBinary } from '../src/apply/check.js';
import { build, newBuildMemo } from '../src/build/build.js';
import type { RawObject } from '../src/sources/cluster/reflector.js';
import { SnapshotAssembler } from '../src/sources/cluster/snapshot.js';
import { readInputs } from '../src/sources/files.js';
import type { Snapshot, SourceObject } from '../src/sources/snapshot.js';
import { AdmissionReviewer, defaultAdmissionLimits, serveAdmission, snapshotWhileUnchanged } from '../src/sidecar/admission-server.js';
import { Logger } from '../src/sidecar/log.js';
import { Metrics } from '../src/sidecar/metrics.js';
import { KeyPairCache } from '../src/translate/secrets/key-pairs.js';
import { generateInput } from './generate.js';
import { defaultRenderOptions } from './render-options.js';

/**
 * `npm run bench:admission [-- --sizes 1000,10000] [--rounds N] [--nginx-check-rounds N (0: none)]`: the latency of
 * admission reviews, as the API server sees it (HTTPS, one kept-alive connection), against the sidecar's
 * reviewer over the bench's generated cluster (bench/generate.ts; the first N Ingresses with what they
 * reference), with and without `--validating-webhook-nginx-check`. Each review is a CREATE of a new
 * Ingress: valid ones and ones with a refused snippet in turn (only valid ones with the nginx check). The first review (an empty memo, a full
 * build) is printed apart; p50 and p99 of the rest. The snapshot is assembled from a store of raw objects
 * for each review, as the sidecar's watches hand it over. Prints figures; exits 0 whatever they are.
 */

const run = promisify(execFile);

function argument(name: string, fallback: string): string {
  const index = process.argv.indexOf(name);
  return index >= 0 ? (process.argv[index + 1] ?? fallback) : fallback;
}

/** The first `count` Ingresses and the Services and Secrets they name. */
function subset(snapshot: Snapshot, count: number): Snapshot {
  const ingresses = snapshot.objects.filter((o) => o.kind === 'Ingress').slice(0, count);
  const named = new Set<string>();
  for (const ingress of ingresses) {
    const spec = ingress.raw['spec'] as { tls?: { secretName?: string }[]; rules?: { http?: { paths?: { backend?: { service?: { name?: string } } }[] } }[] };
    for (const tls of spec.tls ?? []) named.add(`Secret/${ingress.metadata.namespace}/${tls.secretName}`);
    for (const rule of spec.rules ?? []) for (const path of rule.http?.paths ?? []) named.add(`Service/${ingress.metadata.namespace}/${path.backend?.service?.name}`);
  }
  const others = snapshot.objects.filter((o) => o.kind !== 'Ingress' && (named.has(`${o.kind}/${o.metadata.namespace}/${o.metadata.name}`) || (o.kind !== 'Secret' && o.kind !== 'Service')));
  return { objects: [...ingresses, ...others] };
}

function review(round: number, namespace: string, service: string, refused: boolean): string {
  const annotations = refused ? { 'nginx.ingress.kubernetes.io/configuration-snippet': "more_set_headers 'X: y';" } : {};
  const object = {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: { name: `admission-bench-${round}`, namespace, annotations },
    spec: { ingressClassName: 'nginx', rules: [{ host: `admission-${round}.bench.example.com`, http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: service, port: { number: 80 } } } }] } }] },
  };
  return JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: { uid: `bench-${round}`, kind: { group: 'networking.k8s.io', version: 'v1', kind: 'Ingress' }, name: object.metadata.name, namespace, operation: 'CREATE', object, dryRun: false },
  });
}

function post(port: number, agent: https.Agent, body: string): Promise<number> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const request = https.request({ host: '127.0.0.1', port, path: '/networking/v1/ingresses', method: 'POST', agent, rejectUnauthorized: false, headers: { 'Content-Type': 'application/json' } }, (response) => {
      response.resume();
      response.on('end', () => (response.statusCode === 200 ? resolve(performance.now() - started) : reject(new Error(`HTTP ${response.statusCode}`))));
    });
    request.on('error', reject);
    request.end(body);
  });
}

/** What stays alive while the webhook is measured. */
const heldMeanwhile: unknown[] = [];

/** Heap in use after a full collection (`--expose-gc`, as `npm run bench:admission` runs it). */
function heapAfterGc(): number {
  (globalThis as { gc?: () => void }).gc?.();
  return process.memoryUsage().heapUsed;
}

const percentile = (sorted: readonly number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;

async function measure(snapshot: Snapshot, inputDir: string, certificate: { cert: string; key: string }, nginxCheck: boolean, changing: boolean, rounds: number): Promise<string> {
  const heapBefore = heapAfterGc();
  const metrics = new Metrics({ ingressClass: 'nginx', watchedKinds: [] });
  const log = new Logger('json', () => undefined, 'error');
  const translate = { ...defaultRenderOptions(inputDir), expectClusterProvided: false, keyPairs: new KeyPairCache() };
  // As the sidecar does: the snapshot assembled from the watches' stores, again after a change (with
  // `changing`, an edit of an Ingress before every review, and one more while it waits: a busy cluster).
  const store = new Map(snapshot.objects.map((o) => [`${o.kind}/${o.metadata.namespace}/${o.metadata.name}`, o.raw as RawObject]));
  const ingresses = [...store.keys()].filter((key) => key.startsWith('Ingress/'));
  let changes = 0;
  const assembler = new SnapshotAssembler();
  const assembled = snapshotWhileUnchanged(() => assembler.assemble([store]), () => changes);
  const reviewer = new AdmissionReviewer({
    snapshot: () => {
      if (changing) {
        // An edit: the object of one Ingress anew in its place, as a watch event hands it over.
        const key = ingresses[changes++ % ingresses.length]!;
        store.set(key, { ...store.get(key)! });
      }
      return assembled();
    },
    translate,
    ...(nginxCheck && { nginxCheck: nginxBinary() }),
    metrics,
    log,
    budgetMs: 600_000,
    maxWaiting: defaultAdmissionLimits.maxWaiting,
  });
  const server = await serveAdmission(reviewer, { host: '127.0.0.1', port: 0, certificateFile: certificate.cert, keyFile: certificate.key, maxBodyBytes: defaultAdmissionLimits.maxBodyBytes, certificatePollMs: 60_000 }, metrics, log);
  const agent = new https.Agent({ keepAlive: true, maxSockets: 1 });
  const service = snapshot.objects.find((o: SourceObject) => o.kind === 'Service')!;
  try {
    // With the nginx check every candidate is valid: a denied one never reaches nginx.
    const body = (round: number) => review(round, service.metadata.namespace, service.metadata.name, !nginxCheck && round % 2 === 1);
    const first = await post(server.port, agent, body(0));
    const times: number[] = [];
    for (let round = 1; round <= rounds; round++) times.push(await post(server.port, agent, body(round)));
    times.sort((a, b) => a - b);
    const ms = (value: number) => `${Math.round(value)} ms`;
    const held = Math.round((heapAfterGc() - heapBefore) / 2 ** 20);
    return `first ${ms(first)}, then ${rounds} reviews: p50 ${ms(percentile(times, 50))}, p99 ${ms(percentile(times, 99))}, max ${ms(times.at(-1)!)}; the webhook holds ${held} MiB more heap`;
  } finally {
    agent.destroy();
    await server.close();
  }
}

async function main(): Promise<void> {
  const sizes = argument('--sizes', '1000,10000').split(',').map(Number);
  const rounds = Number(argument('--rounds', '40'));
  const checkRounds = Number(argument('--nginx-check-rounds', '6'));
  const dir = await mkdtemp(join(tmpdir(), 'i2n-admission-bench-'));
  try {
    const inputDir = join(dir, 'input');
    await generateInput(inputDir, (line) => process.stderr.write(`${line}\n`));
    const { snapshot } = await readInputs([inputDir]);
    const cert = join(dir, 'tls.crt');
    const key = join(dir, 'tls.key');
    await run('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=127.0.0.1']);
    const nginx = (await run(nginxBinary(), ['-V'])).stderr.split('\n').filter((line) => /nginx version|built with OpenSSL/.test(line));
    console.log(`admission review latency (HTTPS, one connection), ${nginx.join('; ')}, node ${process.version}`);
    for (const size of sizes) {
      const part = subset(snapshot, size);
      // The sync loop's build and memo, held meanwhile as in the sidecar: the heap figure is the webhook's on top.
      const syncLoop = newBuildMemo();
      build(part, { ...defaultRenderOptions(inputDir), expectClusterProvided: false }, syncLoop);
      heldMeanwhile.push(syncLoop);
      console.log(`${size} Ingresses (${part.objects.length} objects), a quiet cluster: ${await measure(part, inputDir, { cert, key }, false, false, rounds)}`);
      console.log(`${size} Ingresses, a change before every review: ${await measure(part, inputDir, { cert, key }, false, true, rounds)}`);
      if (checkRounds > 0) console.log(`${size} Ingresses with the nginx check: ${await measure(part, inputDir, { cert, key }, true, false, checkRounds)}`);
      heldMeanwhile.length = 0;
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
