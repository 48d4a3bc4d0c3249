/**
 * The validating admission webhook's I/O (`run --validating-webhook`): HTTPS with a certificate
 * reloaded when its files change, reviews read with a size limit and answered one at a time, each
 * candidate built on a memo of its own (the reconciler's stays untouched), optionally checked with
 * `nginx -t` in a scratch folder. The decision itself is admission.ts.
 */
import { watchFile, unwatchFile } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import https from 'node:https';
import type http from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { checkConfig } from '../apply/check.js';
import { build, buildDiagnostics, newBuildMemo, type BuildResult } from '../build/build.js';
import type { Snapshot } from '../sources/snapshot.js';
import type { TranslateOptions } from '../translate/options.js';
import {
  answerWithoutBuild,
  candidateObject,
  denied,
  isReviewPath,
  MalformedReview,
  readReview,
  reviewedKinds,
  reviewResponse,
  verdictOf,
  withCandidate,
  type ReviewPath,
  type ReviewRequest,
  type Verdict,
} from './admission.js';
import type { Logger } from './log.js';
import type { AdmissionResult, Metrics } from './metrics.js';

export interface AdmissionOptions {
  /** The cluster state the sidecar holds; undefined until the watches have synced. */
  readonly snapshot: () => Snapshot | undefined;
  /** The options every build of the sidecar uses (`now` is set per review). */
  readonly translate: Omit<TranslateOptions, 'now' | 'quarantine'>;
  /** `--validating-webhook-nginx-check`: also `nginx -t` the candidate's config with this binary. */
  readonly nginxCheck?: string;
  readonly metrics: Metrics;
  readonly log: Logger;
  /** A review that waited this long for earlier ones is denied rather than built (the API server gives up after its timeout). */
  readonly budgetMs: number;
  /** Reviews waiting beyond this many are denied at once. */
  readonly maxWaiting: number;
}

export const defaultAdmissionLimits = {
  /** An AdmissionReview holds the object and its old version, each at most the API server's 3 MiB request limit. */
  maxBodyBytes: 8 * 1024 * 1024,
  budgetMs: 8000,
  maxWaiting: 32,
  certificatePollMs: 10_000,
};

/** An HTTP answer: status and body (JSON, or text for a refusal). */
export interface AdmissionAnswer {
  readonly status: number;
  readonly body: string;
  readonly kind: string;
  readonly result: AdmissionResult;
}

/**
 * Answers reviews one at a time, in arrival order: each candidate build runs alone and lets the event
 * loop (watches, the reconcile round, probes) take a turn before it, so reviews only ever delay a round
 * by one build, and never wait for one.
 */
export class AdmissionReviewer {
  private readonly memo = newBuildMemo();
  private tail: Promise<unknown> = Promise.resolve();
  private waiting = 0;

  constructor(private readonly options: AdmissionOptions) {}

  /** The answer to a POST of `text` to `path`. */
  async answer(path: string, text: string): Promise<AdmissionAnswer> {
    if (!isReviewPath(path)) return { status: 404, body: `no webhook at ${path}; reviewed: ${Object.keys(reviewedKinds).join(', ')}\n`, kind: 'unknown', result: 'malformed' };
    const kind = reviewedKinds[path].kind;
    let request: ReviewRequest;
    try {
      request = readReview(JSON.parse(text));
    } catch (error) {
      const reason = error instanceof MalformedReview ? error.message : `the body is not JSON: ${(error as Error).message}`;
      return { status: 400, body: `${reason}\n`, kind, result: 'malformed' };
    }
    const verdict = await this.verdict(path, request).catch((error: Error) => {
      this.options.log.error('admission review failed', { kind, namespace: request.namespace, name: request.name, error: error.stack ?? String(error) });
      return denied('failed', 500, `ingress2nginx could not review this object: ${error.message}`);
    });
    if (!verdict.allowed) this.options.log.info('admission review denied', { kind, namespace: request.namespace, name: request.name, dryRun: request.dryRun, reason: verdict.why, message: verdict.message });
    return { status: 200, body: JSON.stringify(reviewResponse(request.uid, verdict)), kind, result: verdict.allowed ? 'allowed' : 'denied' };
  }

  private async verdict(path: ReviewPath, request: ReviewRequest): Promise<Verdict> {
    const snapshot = this.options.snapshot();
    if (!snapshot) return denied('not-synced', 503, 'ingress2nginx has not read the cluster yet; try again in a moment');
    const quick = answerWithoutBuild(path, request, snapshot, this.options.translate);
    if (quick) return quick;
    if (this.waiting >= this.options.maxWaiting) return denied('busy', 429, `ingress2nginx is busy: ${this.waiting} reviews are waiting; try again in a moment`);
    const queued = performance.now();
    this.waiting++;
    const turn = this.tail.then(async () => {
      // Let what waits on the event loop (watch events, the reconcile round) go first.
      await new Promise((resolveTurn) => setImmediate(resolveTurn));
      const waited = performance.now() - queued;
      if (waited > this.options.budgetMs) return denied('busy', 429, `ingress2nginx is busy: this review waited ${Math.round(waited)} ms for others; try again in a moment`);
      return this.built(request);
    });
    this.tail = turn.catch(() => undefined);
    try {
      return await turn;
    } finally {
      this.waiting--;
    }
  }

  /** The snapshot with the candidate in place, built; its diagnostics and, with the nginx check, nginx's say. */
  private async built(request: ReviewRequest): Promise<Verdict> {
    const now = new Date();
    const candidate = candidateObject(request, now);
    const held = this.options.snapshot();
    if (!held) return denied('not-synced', 503, 'ingress2nginx is reading the cluster again; try again in a moment');
    const snapshot = withCandidate(held, candidate);
    const options = { ...this.options.translate, now };
    if (this.options.nginxCheck === undefined) return verdictOf(candidate, buildDiagnostics(snapshot, options, this.memo).diagnostics);
    const result = build(snapshot, options, this.memo);
    const verdict = verdictOf(candidate, result.diagnostics);
    if (!verdict.allowed) return verdict;
    const check = await nginxCheck(result, this.options.nginxCheck);
    if (check.ok) return verdict;
    return { allowed: false, code: 400, message: `nginx -t refuses the config with this object: ${check.output}`, warnings: verdict.warnings, why: 'denied' };
  }
}

/** `nginx -t` of the build's files in a scratch folder, removed after; nginx's words name no scratch path. */
async function nginxCheck(result: BuildResult, nginxBin: string): Promise<{ ok: boolean; output: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'ingress2nginx-admission-'));
  try {
    for (const file of result.files) {
      const target = join(dir, file.path);
      await mkdir(dirname(target), { recursive: true, mode: 0o700 });
      await writeFile(target, file.contents, { mode: file.mode });
    }
    const check = await checkConfig(dir, result.model.runDir, nginxBin);
    return { ok: check.ok, output: check.output.split(resolve(dir)).join('<candidate>') };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export interface AdmissionServerOptions {
  readonly host: string;
  readonly port: number;
  readonly certificateFile: string;
  readonly keyFile: string;
  readonly maxBodyBytes: number;
  /** How often the certificate files are looked at for a change (stat). */
  readonly certificatePollMs: number;
}

/** Reads a body up to `limit` bytes; undefined when it is longer (the rest is not read). */
function readLimited(request: http.IncomingMessage, limit: number): Promise<string | undefined> {
  return new Promise((resolveBody, reject) => {
    const declared = Number(request.headers['content-length'] ?? 0);
    if (declared > limit) return resolveBody(undefined);
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        request.removeAllListeners('data');
        request.pause();
        resolveBody(undefined);
      } else chunks.push(chunk);
    });
    request.on('end', () => resolveBody(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

/**
 * Serves `reviewer` over HTTPS (TLS 1.2 at least) on `host:port`. The certificate and key are read
 * again whenever either file changes (a Secret volume swaps them, cert-manager renews them): new
 * connections get the new pair, and a pair that does not load keeps the old one, with a log line.
 */
export async function serveAdmission(reviewer: AdmissionReviewer, options: AdmissionServerOptions, metrics: Metrics, log: Logger): Promise<{ port: number; close: () => Promise<void> }> {
  const pair = async () => ({ cert: await readFile(options.certificateFile), key: await readFile(options.keyFile) });
  const server = https.createServer({ ...(await pair()), minVersion: 'TLSv1.2' }, (request, response) => {
    const started = performance.now();
    const send = (answer: Omit<AdmissionAnswer, 'kind'> & { kind?: string }) => {
      const json = answer.status === 200;
      response.writeHead(answer.status, { 'Content-Type': json ? 'application/json' : 'text/plain; charset=utf-8', ...(answer.status === 413 && { Connection: 'close' }) });
      response.end(answer.body);
      const labels = { kind: answer.kind ?? 'unknown', result: answer.result };
      metrics.admissionReviews.inc(labels);
      metrics.admissionReviewDuration.observe(labels, (performance.now() - started) / 1000);
    };
    const path = (request.url ?? '/').split('?')[0] ?? '/';
    const kind = isReviewPath(path) ? reviewedKinds[path].kind : 'unknown';
    if (request.method !== 'POST') return send({ status: 405, body: 'POST an AdmissionReview\n', kind, result: 'malformed' });
    readLimited(request, options.maxBodyBytes)
      .then((text) =>
        text === undefined ? { status: 413, body: `the review is larger than ${options.maxBodyBytes} bytes\n`, kind, result: 'malformed' as const } : reviewer.answer(path, text),
      )
      .then(send, (error: Error) => send({ status: 400, body: `${error.message}\n`, kind, result: 'malformed' }));
  });
  server.requestTimeout = 30_000;
  const reload = () =>
    pair().then(
      (next) => {
        server.setSecureContext({ ...next, minVersion: 'TLSv1.2' });
        log.info('admission webhook certificate loaded again', { certificate: options.certificateFile });
      },
      (error: Error) => log.warn('could not load the admission webhook certificate again; keeping the one loaded', { error: error.message }),
    );
  for (const file of [options.certificateFile, options.keyFile]) watchFile(file, { interval: options.certificatePollMs }, (now, before) => {
    if (now.mtimeMs !== before.mtimeMs || now.ino !== before.ino || now.size !== before.size) void reload();
  });
  await new Promise<void>((resolveListen, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolveListen());
  });
  const address = server.address();
  return {
    port: typeof address === 'object' && address ? address.port : options.port,
    close: () =>
      new Promise((resolveClose) => {
        for (const file of [options.certificateFile, options.keyFile]) unwatchFile(file);
        server.close(() => resolveClose());
        server.closeAllConnections();
      }),
  };
}

/**
 * `read`, assembled again only when `changes` has moved since: at 10,000 Ingresses even assembling
 * the snapshot for an edit walks the watches' 22,000 objects.
 */
export function snapshotWhileUnchanged(read: () => Snapshot | undefined, changes: () => number): () => Snapshot | undefined {
  let held: { readonly at: number; readonly snapshot: Snapshot } | undefined;
  return () => {
    const at = changes();
    if (held?.at === at) return held.snapshot;
    const snapshot = read();
    held = snapshot && { at, snapshot };
    return snapshot;
  };
}

/** `run --validating-webhook HOST:PORT --validating-webhook-certificate FILE --validating-webhook-key FILE`. */
export interface AdmissionFlags {
  readonly host: string;
  readonly port: number;
  readonly certificateFile: string;
  readonly keyFile: string;
  /** `--validating-webhook-nginx-check`. */
  readonly nginxCheck: boolean;
  /** `--validating-webhook-ca-secret` and its companions: the sidecar makes the certificate files itself. */
  readonly selfSigned?: { readonly caSecret: { readonly namespace: string; readonly name: string }; readonly configuration: string; readonly service: string };
}

/** Starts the webhook of `flags` on every replica; resolves with its port and how to stop it. */
export async function startAdmission(
  flags: AdmissionFlags,
  parts: Omit<AdmissionOptions, 'nginxCheck' | 'budgetMs' | 'maxWaiting'> & { readonly nginxBin: string },
): Promise<{ port: number; close: () => Promise<void> }> {
  const { nginxBin, ...options } = parts;
  const reviewer = new AdmissionReviewer({
    ...options,
    ...(flags.nginxCheck && { nginxCheck: nginxBin }),
    budgetMs: defaultAdmissionLimits.budgetMs,
    maxWaiting: defaultAdmissionLimits.maxWaiting,
  });
  const served = await serveAdmission(
    reviewer,
    { ...flags, maxBodyBytes: defaultAdmissionLimits.maxBodyBytes, certificatePollMs: defaultAdmissionLimits.certificatePollMs },
    options.metrics,
    options.log,
  );
  options.log.info('admission webhook listening', { address: `${flags.host}:${served.port}`, paths: Object.keys(reviewedKinds), nginxCheck: flags.nginxCheck });
  return served;
}
