import { execFile } from 'node:child_process';
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import yaml from 'js-yaml';
import { writeOutput } from '../src/apply/write.js';
import { formatTextReport } from '../src/cli/reporters.js';
import type { Diagnostic } from '../src/model/diagnostics.js';
import { build, type BuildResult } from '../src/build/build.js';
import { readInputs } from '../src/sources/files.js';
import { refinePositions } from '../src/sources/positions.js';
import type { Snapshot } from '../src/sources/snapshot.js';
import { certificateCoversHost, parseKeyPair, validityAt } from '../src/translate/secrets/certificates.js';
import type { TranslateOptions } from '../src/translate/options.js';
import type { GeneratedInput } from './generate.js';
import { defaultRenderOptions } from './render-options.js';

/**
 * `npm run bench`: renders a generated cluster export of the issue's size (10,000 Ingresses, 10,000
 * Services, 2,000 TLS Secrets, ~45 MB of YAML) exactly as `ingress2nginx render` does, and compares
 * the time with a floor: reading + parsing the same YAML with js-yaml and parsing each certificate and
 * key once. Prints figures; exits 0 whatever they are.
 */

const runs = 2;
const targetRatio = 1.8;
const targetPeakBytes = 500e6;

const gc = (globalThis as { gc?: () => void }).gc ?? (() => {});

// ---------------------------------------------------------------- memory

/** Largest heap/RSS seen: sampled at stage boundaries and every few ms while the event loop is free. */
class MemorySampler {
  heapUsed = 0;
  rss = 0;
  private timer: NodeJS.Timeout | undefined;

  sample(): void {
    const usage = process.memoryUsage();
    this.heapUsed = Math.max(this.heapUsed, usage.heapUsed);
    this.rss = Math.max(this.rss, usage.rss);
  }

  start(): void {
    this.timer = setInterval(() => this.sample(), 2);
  }

  stop(): void {
    clearInterval(this.timer);
    this.sample();
  }
}

/** Peak resident set size of this process so far, in bytes (`maxRSS` is in KiB). */
const maxRss = (): number => process.resourceUsage().maxRSS * 1024;

// ---------------------------------------------------------------- the pipeline, as src/cli/main.ts runs it

interface Stages {
  readParse: number;
  build: number;
  certificates: number;
  positions: number;
  write: number;
  total: number;
}

interface PipelineRun {
  readonly stages: Stages;
  readonly heapPeak: number;
  readonly diagnostics: readonly Diagnostic[];
  readonly confBytes: number;
  readonly keyFiles: number;
  readonly virtualHosts: number;
  readonly sniRoutes: number;
  readonly certificatesChecked: number;
  /** Process maxRSS when this run's pipeline had finished, before the separate certificate timing. */
  readonly maxRssAfter: number;
}

/** The `render` command: read, build, write, report (formatted and dropped here, stderr there). */
async function runPipeline(inputDir: string, outDir: string): Promise<PipelineRun> {
  const memory = new MemorySampler();
  memory.start();
  const options = defaultRenderOptions(inputDir);
  const t0 = performance.now();
  const source = await readInputs([inputDir]);
  memory.sample();
  const t1 = performance.now();
  const result: BuildResult = build(source.snapshot, options);
  memory.sample();
  const t2 = performance.now();
  await writeOutput(outDir, result.files);
  const t3 = performance.now();
  const diagnostics = await refinePositions([...source.diagnostics, ...result.diagnostics], source.snapshot, source.readText);
  if (diagnostics.length > 0) void formatTextReport(diagnostics);
  const t4 = performance.now();
  memory.stop();
  const maxRssAfter = maxRss();
  const model = result.model;
  const summary = {
    heapPeak: memory.heapUsed,
    diagnostics,
    confBytes: Buffer.byteLength(result.files[0]?.contents ?? ''),
    keyFiles: model.files.length,
    virtualHosts: model.http.virtualHosts.length,
    sniRoutes: model.stream.frontends.reduce((n, f) => n + f.routes.length, 0),
  };

  // Outside the timed pipeline, on a fresh read of the input: the certificate share of translate.
  gc();
  const checks = certificateChecks((await readInputs([inputDir])).snapshot, options);
  gc();
  return {
    ...summary,
    stages: {
      readParse: t1 - t0,
      build: t2 - t1,
      certificates: checks.ms,
      positions: t4 - t3,
      write: t3 - t2,
      total: t4 - t0,
    },
    certificatesChecked: checks.count,
    maxRssAfter,
  };
}

/**
 * translate is pure and has no timers, so its certificate share is measured beside it: the same checks
 * SecretFiles makes (parseKeyPair once per Secret; certificateCoversHost and validityAt per host), on the
 * Secrets that the served, terminating Ingresses name, with the same functions. Base64 decoding is not
 * included (it is part of indexing resources). "translate (rest)" = translate − this.
 */
function certificateChecks(snapshot: Snapshot, options: TranslateOptions): { ms: number; count: number } {
  const secrets = new Map<string, { cert: string; key: string; hosts: string[] }>();
  const tlsSecrets = new Map<string, Record<string, unknown>>();
  for (const object of snapshot.objects) {
    if (object.kind === 'Secret') tlsSecrets.set(`${object.metadata.namespace}/${object.metadata.name}`, object.raw);
  }
  for (const object of snapshot.objects) {
    if (object.kind !== 'Ingress') continue;
    if (object.metadata.annotations['nginx.ingress.kubernetes.io/ssl-passthrough'] === 'true') continue;
    const spec = object.raw.spec as { ingressClassName?: string; tls?: { hosts?: string[]; secretName?: string }[] };
    if (spec.ingressClassName !== options.ingressClass) continue;
    for (const entry of spec.tls ?? []) {
      if (!entry.secretName) continue;
      const id = `${object.metadata.namespace}/${entry.secretName}`;
      let secret = secrets.get(id);
      if (!secret) {
        const data = (tlsSecrets.get(id)?.data ?? {}) as Record<string, string>;
        const decode = (name: string): string => Buffer.from(data[name] ?? '', 'base64').toString('utf8');
        secret = { cert: decode('tls.crt'), key: decode('tls.key'), hosts: [] };
        secrets.set(id, secret);
      }
      secret.hosts.push(...(entry.hosts ?? []));
    }
  }
  let failed = 0;
  const started = performance.now();
  for (const { cert, key, hosts } of secrets.values()) {
    const pair = parseKeyPair(cert, key);
    if (!pair.ok) {
      failed++;
      continue;
    }
    // Per host, as serverCertificate does: coverage, then validity.
    for (const host of hosts) {
      if (!certificateCoversHost(pair.value.dnsNames, host) || validityAt(pair.value.validity, options.now) !== 'valid') failed++;
    }
  }
  const ms = performance.now() - started;
  if (failed > 0) console.log(`  note: ${failed} certificate check(s) failed in the share measurement`);
  return { ms, count: secrets.size };
}

// ---------------------------------------------------------------- the floor

async function manifestFiles(dir: string): Promise<string[]> {
  const files: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) files.push(...(await manifestFiles(path)));
    else if (/\.ya?ml$/.test(entry.name)) files.push(path);
  }
  return files.sort();
}

interface FloorRun {
  readonly yaml: number;
  readonly certificates: number;
  readonly total: number;
  readonly documents: number;
  readonly pairs: number;
}

/**
 * The least any implementation must do: read every file, parse it with js-yaml `loadAll` (core schema,
 * its fastest), and parse each Secret's certificate and key once (`new X509Certificate`,
 * `createPrivateKey`, after base64 decoding). No validation, no output.
 */
async function runFloor(inputDir: string): Promise<FloorRun> {
  let yamlMs = 0;
  let certificateMs = 0;
  let documents = 0;
  let pairs = 0;
  const t0 = performance.now();
  for (const file of await manifestFiles(inputDir)) {
    const y0 = performance.now();
    const docs = yaml.loadAll(await readFile(file, 'utf8'), undefined, { schema: yaml.CORE_SCHEMA });
    const y1 = performance.now();
    yamlMs += y1 - y0;
    documents += docs.length;
    for (const doc of docs as { kind?: string; type?: string; data?: Record<string, string> }[]) {
      if (doc?.kind !== 'Secret' || doc.type !== 'kubernetes.io/tls' || !doc.data) continue;
      new X509Certificate(Buffer.from(doc.data['tls.crt'] ?? '', 'base64'));
      createPrivateKey(Buffer.from(doc.data['tls.key'] ?? '', 'base64'));
      pairs++;
    }
    certificateMs += performance.now() - y1;
  }
  return { yaml: yamlMs, certificates: certificateMs, total: performance.now() - t0, documents, pairs };
}

/**
 * Context for the write stage: the same files (names, sizes, modes) created with plain writeFileSync in
 * a fresh directory, no temp names, no renames. On a slow disk most of it is the cost of new inodes.
 */
async function runWriteContext(writtenDir: string, freshDir: string): Promise<{ ms: number; files: number }> {
  const files: { path: string; size: number; mode: number }[] = [];
  const walk = async (dir: string, rel: string): Promise<void> => {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      if (entry.isDirectory()) await walk(join(dir, entry.name), join(rel, entry.name));
      else {
        const info = await stat(join(dir, entry.name));
        files.push({ path: join(rel, entry.name), size: info.size, mode: info.mode & 0o777 });
      }
    }
  };
  await walk(writtenDir, '');
  const contents = files.map((f) => 'x'.repeat(f.size));
  const folders = [...new Set(files.map((f) => dirname(join(freshDir, f.path))))];
  const started = performance.now();
  for (const folder of folders) mkdirSync(folder, { recursive: true });
  files.forEach((f, i) => writeFileSync(join(freshDir, f.path), contents[i]!, { mode: f.mode }));
  return { ms: performance.now() - started, files: files.length };
}

// ---------------------------------------------------------------- report

const ms = (value: number): string => `${Math.round(value).toLocaleString('en-US')} ms`;
const mb = (bytes: number): string => `${(bytes / 1e6).toFixed(1)} MB`;
const pad = (text: string, width: number): string => text.padStart(width);
const verdict = (ok: boolean): string => (ok ? 'PASS' : 'MISS');

interface CliRun {
  readonly ms: number;
  readonly maxRss: number;
}

/**
 * `ingress2nginx render -f DIR -o OUT` in a process of its own, as a user or a CI job runs it: start-up and
 * module loading included, one render per process. Its peak RSS comes from a preloaded module.
 */
async function runCli(inputDir: string, outDir: string, rssFile: string): Promise<CliRun> {
  const binary = fileURLToPath(new URL('../../bin/ingress2nginx', import.meta.url));
  const preload = fileURLToPath(new URL('./max-rss-at-exit.js', import.meta.url));
  const start = performance.now();
  await new Promise<void>((resolve, reject) => {
    execFile(
      process.execPath,
      ['--import', preload, binary, 'render', '-f', inputDir, '-o', outDir],
      { env: { ...process.env, I2N_MAX_RSS_FILE: rssFile }, maxBuffer: 64 << 20 },
      (error) => (error ? reject(error) : resolve()),
    );
  });
  const ms = performance.now() - start;
  return { ms, maxRss: Number(await readFile(rssFile, 'utf8')) };
}

function countBySeverity(diagnostics: readonly Diagnostic[]): string {
  const count = (severity: Diagnostic['severity']): number => diagnostics.filter((d) => d.severity === severity).length;
  const codes = [...new Set(diagnostics.map((d) => d.code))].sort().slice(0, 5);
  return `${count('error')} error(s), ${count('warning')} warning(s), ${count('info')} info${codes.length ? ` (${codes.join(', ')})` : ''}`;
}

async function generate(inputDir: string): Promise<GeneratedInput> {
  const script = fileURLToPath(new URL('./generate.js', import.meta.url));
  return new Promise((resolve, reject) => {
    const child = execFile(process.execPath, [script, inputDir], { maxBuffer: 1 << 20 }, (error, stdout) => {
      if (error) reject(error);
      else resolve(JSON.parse(stdout) as GeneratedInput);
    });
    child.stderr?.pipe(process.stderr);
  });
}

async function main(): Promise<void> {
  if (!(globalThis as { gc?: unknown }).gc) console.log('note: run with node --expose-gc (npm run bench does) to collect garbage between runs');
  const root = await mkdtemp(join(tmpdir(), 'ingress2nginx-bench-'));
  try {
    const inputDir = join(root, 'input');
    const generationStart = performance.now();
    // In a child process, so that generation does not count towards this process's peak memory.
    const input = await generate(inputDir);
    const generationMs = performance.now() - generationStart;

    gc();
    const baselineRss = process.memoryUsage().rss;
    const pipelineRuns: PipelineRun[] = [];
    for (let i = 0; i < runs; i++) {
      const outDir = join(root, `output-${i + 1}`);
      pipelineRuns.push(await runPipeline(inputDir, outDir));
      gc();
    }
    const peakRss = Math.max(...pipelineRuns.map((r) => r.maxRssAfter));
    const firstRunRss = pipelineRuns[0]!.maxRssAfter;

    const floorRuns: FloorRun[] = [];
    for (let i = 0; i < runs; i++) {
      floorRuns.push(await runFloor(inputDir));
      gc();
    }

    const writeContext = await runWriteContext(join(root, 'output-1'), join(root, 'write-context'));

    const cliRuns: CliRun[] = [];
    for (let i = 0; i < runs; i++) cliRuns.push(await runCli(inputDir, join(root, `cli-output-${i + 1}`), join(root, `cli-${i + 1}.rss`)));
    const bestCli = Math.min(...cliRuns.map((r) => r.ms));
    const cliPeakRss = Math.max(...cliRuns.map((r) => r.maxRss));

    const best = pipelineRuns.reduce((a, b) => (b.stages.total < a.stages.total ? b : a));
    const floor = floorRuns.reduce((a, b) => (b.total < a.total ? b : a));
    const ratio = best.stages.total / floor.total;
    const heapPeak = Math.max(...pipelineRuns.map((r) => r.heapPeak));

    const rows: [string, (s: Stages) => number][] = [
      ['read + parse (readInputs)', (s) => s.readParse],
      ['certificate checks *', (s) => s.certificates],
      ['build (rest) *', (s) => s.build - s.certificates],
      ['write (writeOutput)', (s) => s.write],
      ['refinePositions + report', (s) => s.positions],
      ['total', (s) => s.total],
    ];
    const lines: string[] = [];
    const out = (line = ''): void => void lines.push(line);
    const load = loadavg().map((l) => l.toFixed(1)).join(' ');
    out(`ingress2nginx render bench — node ${process.version}, ${cpus().length} CPU(s) ${cpus()[0]?.model ?? ''}, load average ${load}`);
    out();
    out(
      `input   ${mb(input.bytes)} of YAML in ${input.files} files (20 namespaces), ${floor.documents.toLocaleString('en-US')} documents: ` +
        `${input.ingresses} Ingresses (${input.passthroughHosts} passthrough, ${input.terminatedHosts} terminated), ` +
        `${input.services} Services, ${input.secrets} TLS Secrets (RSA-2048, 5 SANs each)`,
    );
    out(`        generated in ${(generationMs / 1000).toFixed(1)} s (not measured; certificates cached in the OS temp dir)`);
    out(
      `output  nginx.conf ${mb(best.confBytes)}, ${best.keyFiles} key file(s), ${best.virtualHosts} server names, ${best.sniRoutes} SNI routes; ` +
        `${best.certificatesChecked} Secrets checked`,
    );
    out(`        diagnostics: ${countBySeverity(best.diagnostics)}`);
    out();
    out(`pipeline, as \`ingress2nginx render\` runs it (${runs} runs, gc() between):`);
    out(`  ${''.padEnd(28)}${pipelineRuns.map((_, i) => pad(`run ${i + 1}`, 11)).join('')}${pad('best run', 11)}`);
    for (const [label, pick] of rows) {
      out(`  ${label.padEnd(28)}${pipelineRuns.map((r) => pad(ms(pick(r.stages)), 11)).join('')}${pad(ms(pick(best.stages)), 11)}`);
    }
    out('  * derived: the build step (translate + render) is pure and has no timers. The checks SecretFiles makes');
    out('    (parseKeyPair once per Secret; certificateCoversHost and validityAt per host) were timed separately after');
    out('    each run, with the same functions, on the Secrets the served Ingresses name; "build (rest)" = build − that.');
    out(
      `    write context: the same ${writeContext.files} files created with plain writeFileSync on this disk: ${ms(writeContext.ms)}`,
    );
    out();
    out(`floor: read + js-yaml loadAll (core schema) + parse each certificate and key once (${runs} runs):`);
    out('  (new X509Certificate + createPrivateKey on the PEM text, as in the issue, and as translate does)');
    out(`  ${'read + YAML'.padEnd(28)}${floorRuns.map((r) => pad(ms(r.yaml), 11)).join('')}${pad(ms(floor.yaml), 11)}`);
    out(`  ${`${floor.pairs} X509Certificate + key`.padEnd(28)}${floorRuns.map((r) => pad(ms(r.certificates), 11)).join('')}${pad(ms(floor.certificates), 11)}`);
    out(`  ${'total'.padEnd(28)}${floorRuns.map((r) => pad(ms(r.total), 11)).join('')}${pad(ms(floor.total), 11)}`);
    out();
    out(`the CLI, one process per run (\`ingress2nginx render -f DIR -o OUT\`, start-up included; ${runs} runs):`);
    out(`  ${'wall time'.padEnd(28)}${cliRuns.map((r) => pad(ms(r.ms), 11)).join('')}${pad(ms(bestCli), 11)}`);
    out(`  ${'peak RSS'.padEnd(28)}${cliRuns.map((r) => pad(mb(r.maxRss), 11)).join('')}${pad(mb(cliPeakRss), 11)} (most)`);
    out();
    out(`time    pipeline/floor = ${ms(best.stages.total)} / ${ms(floor.total)} = ${ratio.toFixed(2)}×   target ≤ ${targetRatio}×   ${verdict(ratio <= targetRatio)}`);
    out(`        the CLI/floor = ${ms(bestCli)} / ${ms(floor.total)} = ${(bestCli / floor.total).toFixed(2)}×`);
    out(`memory  the CLI's peak RSS ${mb(cliPeakRss)} (the most of its runs)   target < ${mb(targetPeakBytes)}   ${verdict(cliPeakRss < targetPeakBytes)}`);
    out(
      `        in this process: peak RSS ${mb(peakRss)} (maxRSS over both runs; ${mb(firstRunRss)} after the first, ${mb(baselineRss)} before); ` +
        `peak heap used ${mb(heapPeak)} (sampled at stage ends and every 2 ms)`,
    );
    console.log(lines.join('\n'));
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

await main();
