import { execFile } from 'node:child_process';
import { cp, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';
import { run } from '../src/cli/main.js';
import type { GeneratedInput } from './generate.js';

/**
 * `npm run bench:review`: time and peak memory of `routes`, `diff` and `review` on the bench's
 * generated cluster export (10,000 Ingresses, Services, 2,000 TLS Secrets; bench/generate.ts), each
 * command in a child process of its own; then the size of the review page at 10,000 routes and how long
 * Debian's Chromium takes to load it and to filter it. Prints figures; exits 0 whatever they are.
 */

const here = dirname(fileURLToPath(import.meta.url));
const rounds = 3;

interface ChildFigures {
  readonly exitCode: number;
  readonly ms: number;
  readonly maxRssBytes: number;
  readonly stdoutBytes: number;
}

/** In the child: run the CLI in-process, count what it prints, report time and peak RSS as JSON. */
async function child(argv: readonly string[]): Promise<void> {
  let stdoutBytes = 0;
  const start = performance.now();
  const exitCode = await run(argv, {
    stdin: Readable.from(['']),
    stdout: (text) => (stdoutBytes += Buffer.byteLength(text)),
    stderr: () => {},
    now: () => new Date('2026-12-01T00:00:00Z'),
  });
  const figures: ChildFigures = { exitCode, ms: performance.now() - start, maxRssBytes: process.resourceUsage().maxRSS * 1024, stdoutBytes };
  process.stdout.write(`${JSON.stringify(figures)}\n`);
}

function node(args: readonly string[]): Promise<string> {
  return new Promise((resolve, reject) =>
    execFile(process.execPath, [...args], { maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) =>
      error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(stdout),
    ),
  );
}

async function measure(argv: readonly string[]): Promise<ChildFigures> {
  const runs: ChildFigures[] = [];
  for (let i = 0; i < rounds; i++) runs.push(JSON.parse(await node([fileURLToPath(import.meta.url), '--child', ...argv])) as ChildFigures);
  return runs.sort((a, b) => a.ms - b.ms)[Math.floor(runs.length / 2)]!;
}

/** `count` Ingresses of one host and path each: exactly `count` routes. */
async function manyRoutes(dir: string, count: number): Promise<string> {
  const documents = ['apiVersion: v1\nkind: Service\nmetadata: {name: app, namespace: bench}\nspec: {clusterIP: 10.96.0.10, ports: [{name: http, port: 80}]}\n'];
  for (let i = 0; i < count; i++) {
    const name = `app-${String(i).padStart(5, '0')}`;
    documents.push(
      `apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: ${name}, namespace: bench}\nspec:\n  ingressClassName: nginx\n  rules:\n` +
        `    - host: ${name}.bench.example.test\n      http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: app, port: {number: 80}}}}]}\n`,
    );
  }
  const file = join(dir, 'many-routes.yaml');
  await writeFile(file, documents.join('---\n'));
  return file;
}

interface BrowserFigures {
  readonly loadMs: number;
  readonly filterMs: number;
  readonly clearMs: number;
  readonly scrollMs: number;
  readonly count: string;
}

/** Load (navigation start to the end of the load event: parsing, the JSON and the first rows) and a filter, timed inside the page. */
async function browserFigures(file: string, filter: string): Promise<BrowserFigures> {
  const browser = await chromium.launch({
    executablePath: process.env['CHROMIUM_BIN'] || '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  try {
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    await page.goto(pathToFileURL(file).href, { waitUntil: 'load' });
    const loadMs = await page.evaluate(() => {
      const [navigation] = performance.getEntriesByType('navigation') as PerformanceNavigationTiming[];
      return navigation ? navigation.loadEventEnd - navigation.startTime : Number.NaN;
    });
    const timed = (value: string) =>
      page.evaluate(async (text) => {
        const input = document.querySelector<HTMLInputElement>('#routes input[type=search]')!;
        const start = performance.now();
        input.value = text;
        input.dispatchEvent(new Event('input'));
        // Two frames: the filter ran, and the browser laid out and painted its rows.
        await new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)));
        return performance.now() - start;
      }, value);
    const filterMs = await timed(filter);
    const count = (await page.locator('#routes .count').textContent()) ?? '';
    const clearMs = await timed('');
    const scrollMs = await page.evaluate(async () => {
      const viewport = document.querySelector<HTMLElement>('#routes .viewport')!;
      const start = performance.now();
      viewport.scrollTo(0, viewport.scrollHeight);
      await new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)));
      return performance.now() - start;
    });
    return { loadMs, filterMs, clearMs, scrollMs, count };
  } finally {
    await browser.close();
  }
}

const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;
const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

async function main(): Promise<void> {
  const work = await mkdtemp(join(tmpdir(), 'ingress2nginx-review-bench-'));
  try {
    const next = join(work, 'new');
    const input = JSON.parse(await node([join(here, 'generate.js'), next])) as GeneratedInput;
    // The base: the same export a change earlier, without team-00's Ingresses and with team-01's Services elsewhere.
    const base = join(work, 'base');
    await cp(next, base, { recursive: true });
    await rm(join(base, 'team-00', 'ingresses.yaml'));
    const services = join(base, 'team-01', 'services.yaml');
    await writeFile(services, (await readFile(services, 'utf8')).replace(/clusterIP: 10\.96\./g, 'clusterIP: 10.97.'));

    console.log(`input: ${input.ingresses} Ingresses, ${input.services} Services, ${input.secrets} Secrets, ${mb(input.bytes)} of YAML in ${input.files} files`);
    console.log(`machine: ${cpus().length} cores, node ${process.version}; each figure is the median of ${rounds} runs, each in its own process`);
    const commands: [string, string[]][] = [
      ['routes --format text', ['routes', '-f', next]],
      ['routes --format json', ['routes', '-f', next, '--format', 'json']],
      ['diff --base-manifests (text)', ['diff', '-f', next, '--base-manifests', base]],
      ['diff --base-manifests --format markdown', ['diff', '-f', next, '--base-manifests', base, '--format', 'markdown']],
      ['review (no base)', ['review', '-f', next, '-o', join(work, 'review.html')]],
      ['review --base-manifests', ['review', '-f', next, '--base-manifests', base, '-o', join(work, 'review-diff.html')]],
    ];
    for (const [label, argv] of commands) {
      const figures = await measure(argv);
      console.log(
        `${label.padEnd(42)} ${seconds(figures.ms).padStart(8)}  peak RSS ${mb(figures.maxRssBytes).padStart(9)}  stdout ${mb(figures.stdoutBytes).padStart(8)}  exit ${figures.exitCode}`,
      );
    }
    for (const [label, file] of [['review page, bench export', join(work, 'review-diff.html')]] as const) {
      console.log(`${label}: ${mb((await stat(file)).size)}`);
    }

    const exactly = await manyRoutes(work, 10_000);
    const page = join(work, 'review-10000.html');
    const built = await measure(['review', '-f', exactly, '-o', page]);
    console.log(`review page at exactly 10,000 routes: ${mb((await stat(page)).size)} (written in ${seconds(built.ms)}, peak RSS ${mb(built.maxRssBytes)})`);
    for (const [label, file, filter] of [
      ['10,000 routes', page, 'app-077'],
      ['bench export', join(work, 'review-diff.html'), 'team-07'],
    ] as const) {
      const runs: BrowserFigures[] = [];
      for (let i = 0; i < rounds; i++) runs.push(await browserFigures(file, filter));
      const median = (pick: (f: BrowserFigures) => number) => runs.map(pick).sort((a, b) => a - b)[Math.floor(runs.length / 2)]!;
      console.log(
        `chromium, ${label}: load ${median((f) => f.loadMs).toFixed(0)} ms, filter "${filter}" ${median((f) => f.filterMs).toFixed(0)} ms (${runs[0]!.count}), ` +
          `clear ${median((f) => f.clearMs).toFixed(0)} ms, scroll to the end ${median((f) => f.scrollMs).toFixed(0)} ms`,
      );
    }
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

if (process.argv[2] === '--child') await child(process.argv.slice(3));
else await main();
