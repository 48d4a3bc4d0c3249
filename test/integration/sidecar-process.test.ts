import { once } from 'node:events';
import { readdirSync, readFileSync } from 'node:fs';
import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import net from 'node:net';
import { join } from 'node:path';
import { execa, type ResultPromise } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeApiServer } from '../support/fake-apiserver.js';
import { requireNginx } from '../support/nginx.js';
import { createCa, issueCertificate } from '../support/pki.js';
import { freePorts } from '../support/ports.js';
import { eventually, ingress, namespace, tlsSecret } from '../support/sidecar.js';

/**
 * `ingress2nginx run --spawn-nginx` as a process. SIGTERM at any moment stops it cleanly: whatever it
 * started is gone (nginx's master and every worker, in their own process group) and it exits 0. The
 * moments: while it starts, and while nginx is loading a new config (300 TLS hosts, so that the reload
 * takes a while). A relative output folder is resolved once, at start.
 */

const binary = join(import.meta.dirname, '..', '..', 'bin', 'ingress2nginx');
const hosts = 300;
let scratch: string;
let api: FakeApiServer;
let kubeconfig: string;

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'i2n-shutdown-'));
  await chmod(scratch, 0o755);
  api = await FakeApiServer.start({ tls: true, token: 'shutdown', bookmarkIntervalMs: 500 });
  kubeconfig = await api.writeKubeconfig();
  const ca = await createCa(scratch, 'Shutdown CA');
  api.create(namespace('slow'));
  api.create(tlsSecret('slow', 'wildcard', await issueCertificate(ca, { commonName: '*.slow.example.test', sans: ['*.slow.example.test'] })));
  for (let i = 0; i < hosts; i++) {
    api.create(ingress('slow', `site-${i}`, `site-${i}.slow.example.test`, { service: 'missing', port: 80 }, { tlsSecret: 'wildcard' }));
  }
});

afterAll(async () => {
  await api.close();
  await rm(scratch, { recursive: true, force: true });
});

interface Run {
  readonly child: ResultPromise;
  readonly runDir: string;
  /** JSON log lines so far. */
  readonly lines: { msg: string; pid?: number }[];
  stderr(): string;
}

async function start(options: { readonly out?: string; readonly runDir?: string; readonly metricsPort?: number; readonly cwd?: string } = {}): Promise<Run> {
  const [httpPort, httpsPort, freeMetricsPort] = (await freePorts(3)) as [number, number, number];
  const metricsPort = options.metricsPort ?? freeMetricsPort;
  const runDir = options.runDir ?? (await mkdtemp('/tmp/i2n-stop-'));
  const child = execa(
    binary,
    [
      'run',
      ...['-o', options.out ?? join(scratch, `out-${httpPort}`), '--run-dir', runDir, '--kubeconfig', kubeconfig, '--spawn-nginx', '--nginx-bin', requireNginx().binary],
      ...['--http-port', String(httpPort), '--https-port', String(httpsPort), '--metrics-address', `127.0.0.1:${metricsPort}`],
      ...['--log-format', 'json', '--log-level', 'debug'],
    ],
    { reject: false, buffer: false, stdout: 'pipe', stderr: 'pipe', forceKillAfterDelay: false, ...(options.cwd !== undefined && { cwd: options.cwd }) },
  );
  const lines: Run['lines'] = [];
  let rest = '';
  child.stdout?.setEncoding('utf8');
  child.stdout?.on('data', (chunk: string) => {
    const parts = (rest + chunk).split('\n');
    rest = parts.pop() ?? '';
    for (const part of parts) lines.push(JSON.parse(part) as Run['lines'][number]);
  });
  let stderr = '';
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (chunk: string) => (stderr += chunk));
  return { child, runDir, lines, stderr: () => stderr };
}

/** Process ids in the process group `group` (nginx's master leads its own). */
function processGroup(group: number): number[] {
  const members: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue;
    }
    // Fields after the command (which may hold spaces): state, ppid, pgrp, ...
    if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]) === group) members.push(Number(entry));
  }
  return members;
}

/** Stops the run with SIGTERM and checks it exits 0 leaving no nginx process behind. */
async function stopAndCheck(run: Run, keepRunDir = false): Promise<void> {
  run.child.kill('SIGTERM');
  const result = await run.child;
  expect(result.exitCode).toBe(0);
  expect(run.lines.map((l) => l.msg)).toContain('stopped');
  for (const started of run.lines.filter((l) => l.msg === 'nginx started')) expect(processGroup(started.pid!)).toEqual([]);
  if (!keepRunDir) await rm(run.runDir, { recursive: true, force: true });
}

describe('SIGTERM', () => {
  it('while it starts: exits 0, and an nginx it started is gone', async () => {
    for (const moment of ['starting', 'nginx started']) {
      const run = await start();
      await eventually(() => run.lines.some((l) => l.msg === moment), (seen) => seen, 30_000);
      await stopAndCheck(run);
    }
  });

  it('while nginx loads a new config: exits 0, and nginx with all its workers is gone', async () => {
    const run = await start();
    const reloads = () => run.lines.filter((l) => l.msg === 'nginx asked to load the config').length;
    await eventually(() => run.lines.some((l) => l.msg === 'nginx serves the new config'), (seen) => seen, 60_000);
    const master = Number((await readFile(join(run.runDir, 'nginx.pid'), 'utf8')).trim());
    expect(processGroup(master).length).toBeGreaterThan(1);
    const before = reloads();
    api.create(ingress('slow', 'one-more', 'one-more.slow.example.test', { service: 'missing', port: 80 }, { tlsSecret: 'wildcard' }));
    await eventually(reloads, (n) => n > before, 30_000);
    await stopAndCheck(run);
    expect(processGroup(master)).toEqual([]);
  });

  it('is not needed when start-up fails after nginx was started: nothing is left running', async () => {
    // A config from before in the output folder is served at once (nginx is started on it); then the
    // metrics port turns out to be taken, and the run ends with exit 2.
    const out = join(scratch, 'out-kept');
    const first = await start({ out });
    await eventually(() => first.lines.some((l) => l.msg === 'nginx serves the new config'), (seen) => seen, 60_000);
    await stopAndCheck(first, true);
    const taken = net.createServer().listen(0, '127.0.0.1');
    await once(taken, 'listening');
    try {
      const second = await start({ out, runDir: first.runDir, metricsPort: (taken.address() as net.AddressInfo).port });
      const result = await second.child;
      expect(result.exitCode).toBe(2);
      expect(second.stderr()).toMatch(/^ingress2nginx: cannot listen on 127\.0\.0\.1:\d+ for metrics and probes: the address is already in use\n$/);
      const started = second.lines.filter((l) => l.msg === 'nginx started');
      expect(started).toHaveLength(1);
      expect(processGroup(started[0]!.pid!)).toEqual([]);
      await rm(second.runDir, { recursive: true, force: true });
    } finally {
      taken.close();
    }
  });
});

describe('a relative output folder', () => {
  it('is resolved once, at start: nginx runs on it, with no restart', async () => {
    const cwd = await mkdtemp(join(scratch, 'cwd-'));
    const run = await start({ out: 'conf', cwd });
    await eventually(() => run.lines.some((l) => l.msg === 'nginx serves the new config'), (seen) => seen, 60_000);
    expect(run.lines.find((l) => l.msg === 'starting')).toMatchObject({ output: join(cwd, 'conf') });
    expect(readFileSync(join(cwd, 'conf', 'nginx.conf'), 'utf8')).toContain('site-0.slow.example.test');
    expect(run.lines.filter((l) => l.msg === 'nginx started')).toHaveLength(1);
    expect(run.lines.map((l) => l.msg)).not.toContain('nginx exited; restarting it');
    await stopAndCheck(run);
  });
});
