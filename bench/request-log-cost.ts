import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { describeNginx, nginxBuild } from '../src/sidecar/nginx.js';
import type { NginxInstallation } from '../test/support/nginx.js';
import { createCa, issueCertificate, tlsSecretManifest } from '../test/support/pki.js';
import { freePorts } from '../test/support/ports.js';
import { withFloorLog } from './request-log-floor.js';
import { ensureTool, nginxInstallations } from './tools.js';

/**
 * `npm run bench:request-log-cost`: what the request metrics' line costs nginx, in instructions, so that
 * the figure does not move with the machine's load. One nginx process (no master) runs under valgrind's
 * callgrind and answers keep-alive HTTPS requests (HTTP/1.1, one TLS connection) through the config
 * `ingress2nginx render --check` writes for a terminated host, with the request metrics off and on
 * (`--request-log`), and beside them a floor: the "off" config with a line of the same fields written by
 * hand, without the per-location label (the least nginx can do to log what the metrics need). A run of
 * `few` requests is subtracted from a run of `many`, which leaves the start, the handshake and the exit
 * out. Counts are user-space instructions: the kernel's share of a request (its socket reads and writes)
 * is the same on and off, so the share of the whole that the line costs is smaller than shown here.
 * Prints figures; asserts nothing.
 *
 *   node dist/bench/request-log-cost.js [--requests 2000]
 */

const root = fileURLToPath(new URL('../..', import.meta.url));
const cli = join(root, 'bin', 'ingress2nginx');
const host = 'tt.bench.test';

const requestsAt = process.argv.indexOf('--requests');
const measured = requestsAt === -1 ? 2000 : Number(process.argv[requestsAt + 1]);
if (!Number.isInteger(measured) || measured < 100) {
  console.error('--requests takes a whole number of at least 100');
  process.exit(2);
}
const few = 100;

interface Ports {
  readonly https: number;
  readonly http: number;
  readonly origin: number;
}

function manifests(ports: Ports, certificate: Parameters<typeof tlsSecretManifest>[0]['certificate']): string {
  return [
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'controller', namespace: 'bench' }, data: { 'worker-processes': '1' } },
    { apiVersion: 'v1', kind: 'Service', metadata: { name: 'origin', namespace: 'bench' }, spec: { clusterIP: '127.0.0.1', ports: [{ port: ports.origin }] } },
    {
      apiVersion: 'networking.k8s.io/v1',
      kind: 'Ingress',
      metadata: { name: 'shop', namespace: 'bench' },
      spec: {
        ingressClassName: 'nginx',
        tls: [{ hosts: [host], secretName: 'shop-tls' }],
        rules: [{ host, http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'origin', port: { number: ports.origin } } } }] } }],
      },
    },
  ]
    .map((document) => `---\n${stringify(document)}`)
    .concat(`---\n${tlsSecretManifest({ name: 'shop-tls', namespace: 'bench', certificate })}`)
    .join('');
}

/** The product's config for `installation`, rendered into `dir` (with the request log at `requestLog`, if given). */
function render(dir: string, installation: NginxInstallation, ports: Ports, input: string, requestLog?: string): string {
  const rendered = spawnSync(
    process.execPath,
    [
      cli,
      'render',
      ...['-f', input, '-o', join(dir, 'out'), '--run-dir', join(dir, 'run'), '--configmap', 'bench/controller'],
      ...['--https-port', String(ports.https), '--http-port', String(ports.http), '--check', '--nginx-bin', installation.binary],
      ...(requestLog ? ['--request-log', requestLog] : []),
    ],
    { encoding: 'utf8' },
  );
  if (rendered.status !== 0) throw new Error(`render for nginx ${installation.version} failed:\n${rendered.stdout}${rendered.stderr}`);
  return join(dir, 'out', 'nginx.conf');
}

/** The "off" config with the floor's line (request-log-floor.ts). */
async function floorConfig(offConf: string, dir: string): Promise<string> {
  const conf = join(dir, 'out', 'nginx-floor.conf');
  await writeFile(conf, withFloorLog(readFileSync(offConf, 'utf8'), join(dir, 'floor.log')));
  return conf;
}

/** SIGTERM, and the exit (callgrind writes its counts then, which takes a while on a busy machine). */
async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

/** `count` keep-alive requests on one TLS connection (curl reuses it across a URL range). */
function requests(port: number, count: number): void {
  const sent = spawnSync(
    'curl',
    ['--http1.1', '-sfk', '--resolve', `${host}:${port}:127.0.0.1`, `https://${host}:${port}/small/[1-${count}]`],
    { stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' },
  );
  if (sent.status !== 0) throw new Error(`curl failed (${sent.status}): ${sent.stderr}`);
}

/** Instructions one nginx process runs to start, answer `count` requests and exit, under callgrind. */
async function instructions(installation: NginxInstallation, conf: string, ports: Ports, count: number, work: string): Promise<number> {
  const out = join(work, `callgrind-${process.hrtime.bigint()}.out`);
  const child = spawn(
    'valgrind',
    ['--tool=callgrind', `--callgrind-out-file=${out}`, installation.binary, '-p', `${join(conf, '..')}/`, '-c', conf, '-g', 'daemon off; master_process off;'],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  for (let tries = 0; ; tries++) {
    const probe = spawnSync('curl', ['-sk', '-o', '/dev/null', '--resolve', `${host}:${ports.https}:127.0.0.1`, `https://${host}:${ports.https}/ready`]);
    if (probe.status === 0) break;
    if (tries > 300 || child.exitCode !== null) throw new Error(`nginx under valgrind did not start:\n${stderr}`);
    await delay(200);
  }
  requests(ports.https, count);
  await stop(child);
  const totals = /^(?:summary|totals): (\d+)/m.exec(readFileSync(out, 'utf8'));
  if (!totals) throw new Error(`no totals in ${out}`);
  await rm(out);
  return Number(totals[1]);
}

async function perRequest(installation: NginxInstallation, conf: string, ports: Ports, work: string): Promise<number> {
  const base = await instructions(installation, conf, ports, few, work);
  const more = await instructions(installation, conf, ports, few + measured, work);
  return (more - base) / measured;
}

async function origin(dir: string, installation: NginxInstallation, port: number): Promise<ChildProcess> {
  const conf = join(dir, 'origin.conf');
  const text = [
    'worker_processes 1;',
    `pid ${join(dir, 'origin.pid')};`,
    'error_log stderr error;',
    'events {}',
    'http {',
    '    access_log off;',
    `    server { listen 127.0.0.1:${port}; keepalive_requests 1000000; location / { return 200 "small\\n"; } }`,
    '}',
  ].join('\n');
  await writeFile(conf, text);
  return spawn(installation.binary, ['-p', `${dir}/`, '-c', conf, '-g', 'daemon off;'], { stdio: 'ignore' });
}

const thousands = (n: number) => Math.round(n).toLocaleString('en-US');
const percent = (part: number, whole: number) => `${part >= 0 ? '+' : ''}${((part / whole) * 100).toFixed(1)}%`;

async function main(): Promise<void> {
  ensureTool('valgrind', 'valgrind');
  ensureTool('curl', 'curl');
  const { distro, fresh } = await nginxInstallations();
  const work = await mkdtemp(join(tmpdir(), 'i2n-log-cost-'));
  chmodSync(work, 0o755);
  const [https = 0, http = 0, originPort = 0] = await freePorts(3);
  const ports: Ports = { https, http, origin: originPort };
  const ca = await createCa(work, 'Bench CA');
  const certificate = await issueCertificate(ca, { commonName: host, sans: [host] });
  const input = join(work, 'in');
  await mkdir(input);
  await writeFile(join(input, 'manifests.yaml'), manifests(ports, certificate));
  const originProcess = await origin(work, distro, originPort);
  try {
    console.log(`request log cost: user-space instructions per request (callgrind), ${measured} keep-alive HTTPS requests (HTTP/1.1, one connection), one nginx process`);
    for (const installation of [distro, fresh]) {
      const dir = (name: string) => join(work, `${installation.version}-${name}`);
      const offConf = render(dir('off'), installation, ports, input);
      const onConf = render(dir('on'), installation, ports, input, join(dir('on'), 'requests.log'));
      const floorConf = await floorConfig(offConf, dir('off'));
      const off = await perRequest(installation, offConf, ports, work);
      const on = await perRequest(installation, onConf, ports, work);
      const floor = await perRequest(installation, floorConf, ports, work);
      console.log(`\n${describeNginx(await nginxBuild(installation.binary))}`);
      console.log(`  metrics off        ${thousands(off)}`);
      console.log(`  metrics on         ${thousands(on)}  (${percent(on - off, off)})`);
      console.log(`  floor, by hand     ${thousands(floor)}  (${percent(floor - off, off)}: the same fields, no label per location)`);
      console.log(`  ours over floor    ${((on - off) / (floor - off)).toFixed(2)}× the floor's cost per line`);
    }
  } finally {
    await stop(originProcess);
    await rm(work, { recursive: true, force: true });
  }
}

await main();
