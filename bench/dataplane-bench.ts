import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import https from 'node:https';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { describeNginx, nginxBuild } from '../src/sidecar/nginx.js';
import type { NginxInstallation } from '../test/support/nginx.js';
import { withFloorLog } from './request-log-floor.js';
import { ensureTool, nginxInstallations } from './tools.js';
import { createCa, issueCertificate, tlsSecretManifest, type CertificateFiles } from '../test/support/pki.js';
import { freePorts } from '../test/support/ports.js';

/**
 * `npm run bench:dataplane`: the data plane side by side. Four tests: passthrough 1 MiB keep-alive
 * throughput, passthrough new TLS connections per second, terminated keep-alive requests per second,
 * terminated new TLS connections per second (wrk, TLS 1.3, sessions resumed: wrk keeps each
 * connection's session and offers it on the next one). Contenders: wrk straight to the backend
 * (direct), HAProxy 2.6, hand-written single-hop nginx (1.22 and the newer build, each once with the
 * four usual request headers and once with the twelve ingress-nginx sends), a hand-written `pass`
 * topology (newer build), and the product: the config `ingress2nginx render --check` writes, for
 * the machine's nginx and for the newer build, each also with the request metrics on (`--request-log`:
 * a line per request to the cluster mode's reader, run beside it and priced in CPU per request), and
 * the floor of that cost: the config without metrics plus a hand-written line of the same fields and
 * no reader (request-log-floor.ts). Every proxy runs one worker (thread).
 *
 * The machine is shared, so load comes and goes. A round measures each test in short slices, the
 * contenders taking turns slice by slice, so that every contender sees the same load; a contender's
 * figure for the round is the median of its slices, and a comparison is the median over rounds of the
 * ratio of two contenders' per-round medians. The proxies' own CPU time per unit of work (which load
 * changes far less) is measured beside the rates, and so is the CPU that other processes took.
 * Prints figures; asserts nothing.
 *
 * `--per-handshake` adds the product rendered with `--certificates-per-handshake` (one SSL context,
 * the certificate read by SNI on every handshake), which is what fast reloads at thousands of hosts
 * cost on the terminated tests, and a fifth test that prices it where it costs most: full TLS
 * handshakes with SNI and no session resumed (`full-handshakes.ts`), which wrk cannot make.
 *
 *   node dist/bench/dataplane-bench.js [--rounds 6] [--slices 5] [--slice 1] [--quick] [--per-handshake]
 */

const root = fileURLToPath(new URL('../..', import.meta.url));
const cli = join(root, 'bin', 'ingress2nginx');

// ---------------------------------------------------------------- options

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

function option(name: string, fallback: number): number {
  const at = process.argv.indexOf(`--${name}`);
  const value = at === -1 ? undefined : Number(process.argv[at + 1]);
  return value !== undefined && Number.isFinite(value) && value > 0 ? value : fallback;
}
const quick = process.argv.includes('--quick');
const rounds = option('rounds', quick ? 2 : 6);
const slices = option('slices', quick ? 2 : 5);
const sliceSeconds = option('slice', 1);
const perHandshake = process.argv.includes('--per-handshake');

// ---------------------------------------------------------------- tools

// ---------------------------------------------------------------- processes and CPU time

const clockTicks = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;

/** utime + stime of a process, in seconds (0 once it is gone). */
function cpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / clockTicks;
  } catch {
    return 0;
  }
}

/** CPU time of the children this process has waited for (wrk runs), in seconds. */
function reapedChildrenSeconds(): number {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[13]) + Number(fields[14])) / clockTicks;
}

/** Busy CPU time of the whole machine (all CPUs, not idle or iowait), in seconds. */
function machineBusySeconds(): number {
  const line = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.split(/\s+/).slice(1).map(Number);
  const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = line;
  return (user + nice + system + irq + softirq + steal) / clockTicks;
}

/** A process and its descendants (nginx's master and workers, HAProxy). */
function processTree(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of spawnSync('ps', ['-e', '-o', 'pid=,ppid='], { encoding: 'utf8' }).stdout.trim().split('\n')) {
    const [child, parent] = entry.trim().split(/\s+/).map(Number) as [number, number];
    children.set(parent, [...(children.get(parent) ?? []), child]);
  }
  const tree = [pid];
  for (let i = 0; i < tree.length; i++) tree.push(...(children.get(tree[i]!) ?? []));
  return tree;
}

interface Server {
  readonly name: string;
  readonly process: ChildProcess;
  /** The server's CPU time so far, workers included. */
  cpu(): number;
  stop(): Promise<void>;
}

async function startServer(name: string, command: string, args: readonly string[], ready: () => Promise<boolean>): Promise<Server> {
  const child = spawn(command, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-4000)));
  for (let attempt = 0; ; attempt++) {
    if (child.exitCode !== null) throw new Error(`${name} exited at start:\n${stderr}`);
    if (await ready()) break;
    if (attempt > 100) throw new Error(`${name} is not ready after 10 s:\n${stderr}`);
    await delay(100);
  }
  let pids = processTree(child.pid!);
  return {
    name,
    process: child,
    cpu: () => {
      if (pids.length < 2) pids = processTree(child.pid!);
      return pids.reduce((sum, pid) => sum + cpuSeconds(pid), 0);
    },
    stop: () => stopChild(child),
  };
}

function startNginx(name: string, installation: NginxInstallation, prefix: string, conf: string, port: number): Promise<Server> {
  return startServer(name, installation.binary, ['-p', `${prefix}/`, '-c', conf, '-g', 'daemon off;'], () => answers(port));
}

/** SIGTERM, and SIGKILL when it has not exited 5 s later. */
async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await Promise.race([exited, delay(5000)]);
  if (child.exitCode === null) child.kill('SIGKILL');
}

/** bench/request-reader.ts on `log`, for the config at `conf`: the cluster mode's reader of request lines. */
async function startRequestReader(log: string, conf: string): Promise<Server> {
  const script = fileURLToPath(new URL('./request-reader.js', import.meta.url));
  const child = spawn(process.execPath, [script, log, conf], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => chunk.includes('listening') && resolve());
    child.once('exit', () => reject(new Error('the request reader exited at start')));
  });
  return {
    name: 'request reader',
    process: child,
    cpu: () => cpuSeconds(child.pid!),
    stop: () => stopChild(child),
  };
}

/** Something accepts TLS connections on 127.0.0.1:`port`. */
function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const request = https.get({ host: '127.0.0.1', port, path: '/small', servername: 'tt.bench.test', rejectUnauthorized: false, timeout: 2000 }, (response) => {
      response.resume();
      resolve(true);
    });
    request.once('error', () => resolve(false));
    request.once('timeout', () => request.destroy());
  });
}

// ---------------------------------------------------------------- the set-up

interface Ports {
  readonly backendTls: number;
  readonly backendHttp: number;
}

const mib = 1024 * 1024;
const tempPaths = (dir: string) =>
  ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((t) => `    ${t}_temp_path ${dir}/${t};`).join('\n');

/** The origin: TLS for pt.bench.test and tt.bench.test (1 MiB and a small answer), and plain HTTP. */
function backendConf(dir: string, ports: Ports, cert: CertificateFiles): string {
  return `worker_processes 1;
pid ${dir}/nginx.pid;
error_log stderr warn;
events { worker_connections 4096; }
http {
${tempPaths(dir)}
    access_log off;
    keepalive_requests 1000000;
    server {
        listen 127.0.0.1:${ports.backendTls} ssl;
        ssl_certificate ${cert.certFile};
        ssl_certificate_key ${cert.keyFile};
        ssl_protocols TLSv1.2 TLSv1.3;
        ssl_session_cache shared:origin:10m;
        root ${dir}/www;
        location = /small { default_type text/plain; return 200 "ok\\n"; }
    }
    server {
        listen 127.0.0.1:${ports.backendHttp};
        location = /small { default_type text/plain; return 200 "ok\\n"; }
    }
}
`;
}

/** What a hand-written config sends to the backend: the four usual headers, or all that ingress-nginx sends (as the product does). */
type RequestHeaders = 'usual' | 'ingress-nginx';

const requestHeaderLines: Record<RequestHeaders, string> = {
  usual: `proxy_set_header Connection "";
            proxy_set_header Host $host;
            proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
            proxy_set_header X-Forwarded-Proto $scheme;`,
  'ingress-nginx': `proxy_set_header Connection "";
            proxy_set_header Upgrade $http_upgrade;
            proxy_set_header Host $host;
            proxy_set_header X-Request-ID $request_id;
            proxy_set_header X-Real-IP $remote_addr;
            proxy_set_header X-Forwarded-For $remote_addr;
            proxy_set_header X-Forwarded-Host $host;
            proxy_set_header X-Forwarded-Port $server_port;
            proxy_set_header X-Forwarded-Proto $scheme;
            proxy_set_header X-Forwarded-Scheme $scheme;
            proxy_set_header X-Scheme $scheme;
            proxy_set_header Proxy "";`,
};

/** The terminating half of the hand-written configs: one TLS server proxying to the origin over keep-alive. */
function terminatingHttp(dir: string, ports: Ports, listen: string, cert: CertificateFiles, headers: RequestHeaders = 'usual'): string {
  return `http {
${tempPaths(dir)}
    access_log off;
    upstream origin {
        server 127.0.0.1:${ports.backendHttp};
        keepalive 320;
    }
    server {
        listen ${listen} ssl;
        server_name tt.bench.test;
        ssl_certificate ${cert.certFile};
        ssl_certificate_key ${cert.keyFile};
        ssl_protocols TLSv1.2 TLSv1.3;
        ssl_session_cache shared:tls:10m;
        location / {
            proxy_http_version 1.1;
            ${requestHeaderLines[headers]}
            proxy_pass http://origin;
        }
    }
}
`;
}

/** One hop, written by hand as one would: SNI map to the backend in stream, TLS termination in http. */
function singleHopConf(
  dir: string,
  installation: NginxInstallation,
  ports: Ports,
  listen: { passthrough: number; terminated: number },
  cert: CertificateFiles,
  headers: RequestHeaders,
): string {
  return `${installation.streamModuleFile ? `load_module ${installation.streamModuleFile};\n` : ''}worker_processes 1;
pid ${dir}/nginx.pid;
error_log stderr warn;
events { worker_connections 16384; }
stream {
    proxy_buffer_size 64k;
    map $ssl_preread_server_name $backend {
        pt.bench.test 127.0.0.1:${ports.backendTls};
    }
    server {
        listen 127.0.0.1:${listen.passthrough};
        ssl_preread on;
        proxy_pass $backend;
    }
}
${terminatingHttp(dir, ports, `127.0.0.1:${listen.terminated}`, cert, headers)}`;
}

/** The `pass` topology reduced to what it is (nginx >= 1.25.5): one port, SNI split, no copy on the hand-off. */
function passConf(dir: string, ports: Ports, port: number, cert: CertificateFiles): string {
  return `worker_processes 1;
pid ${dir}/nginx.pid;
error_log stderr warn;
events { worker_connections 16384; }
stream {
    proxy_buffer_size 64k;
    map $ssl_preread_server_name $route {
        pt.bench.test unix:${dir}/pt.sock;
        default unix:${dir}/https.sock;
    }
    server {
        listen 127.0.0.1:${port};
        ssl_preread on;
        pass $route;
    }
    map $ssl_preread_server_name $backend {
        pt.bench.test 127.0.0.1:${ports.backendTls};
    }
    server {
        listen unix:${dir}/pt.sock;
        ssl_preread on;
        proxy_pass $backend;
    }
}
${terminatingHttp(dir, ports, `unix:${dir}/https.sock`, cert)}`;
}

/** HAProxy 2.6 one hop: SNI routing in TCP mode, TLS termination in HTTP mode, one thread. */
function haproxyConf(ports: Ports, listen: { passthrough: number; terminated: number }, pemFile: string): string {
  return `global
    nbthread 1
    maxconn 4096
    ssl-default-bind-options ssl-min-ver TLSv1.2
defaults
    timeout connect 5s
    timeout client 60s
    timeout server 60s
frontend passthrough
    mode tcp
    bind 127.0.0.1:${listen.passthrough}
    tcp-request inspect-delay 5s
    tcp-request content accept if { req.ssl_hello_type 1 }
    use_backend origin_tls if { req.ssl_sni -i pt.bench.test }
backend origin_tls
    mode tcp
    server origin 127.0.0.1:${ports.backendTls}
frontend terminated
    mode http
    bind 127.0.0.1:${listen.terminated} ssl crt ${pemFile}
    option forwardfor
    default_backend origin_http
backend origin_http
    mode http
    http-reuse always
    server origin 127.0.0.1:${ports.backendHttp}
`;
}

/** What the product is given: the two hosts as Ingresses, one worker (ConfigMap), Services at the origin. */
function productManifests(ports: Ports, terminatedCert: CertificateFiles): string {
  const service = (name: string, port: number) =>
    stringify({ apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: 'bench' }, spec: { clusterIP: '127.0.0.1', ports: [{ name: 'main', port }] } });
  const ingress = (name: string, host: string, serviceName: string, port: number, extra: Record<string, unknown>, annotations: Record<string, string>) =>
    stringify({
      apiVersion: 'networking.k8s.io/v1',
      kind: 'Ingress',
      metadata: { name, namespace: 'bench', annotations },
      spec: {
        ingressClassName: 'nginx',
        ...extra,
        rules: [{ host, http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: serviceName, port: { number: port } } } }] } }],
      },
    });
  return [
    stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'controller', namespace: 'bench' }, data: { 'worker-processes': '1' } }),
    service('origin-tls', ports.backendTls),
    service('origin-http', ports.backendHttp),
    tlsSecretManifest({ name: 'tt-tls', namespace: 'bench', certificate: terminatedCert }),
    ingress('pt', 'pt.bench.test', 'origin-tls', ports.backendTls, {}, { 'nginx.ingress.kubernetes.io/ssl-passthrough': 'true' }),
    ingress('tt', 'tt.bench.test', 'origin-http', ports.backendHttp, { tls: [{ hosts: ['tt.bench.test'], secretName: 'tt-tls' }] }, {}),
  ]
    .map((document) => `---\n${document}`)
    .join('');
}

/** `ingress2nginx render --check` for `installation`: the config the product writes for that nginx. */
async function renderProduct(
  dir: string,
  installation: NginxInstallation,
  manifests: string,
  port: number,
  httpPort: number,
  extraFlags: readonly string[],
): Promise<string> {
  await mkdir(join(dir, 'in'), { recursive: true });
  await mkdir(join(dir, 'run'), { recursive: true });
  chmodSync(dir, 0o755);
  chmodSync(join(dir, 'run'), 0o755);
  await writeFile(join(dir, 'in', 'manifests.yaml'), manifests);
  const rendered = spawnSync(
    process.execPath,
    [
      cli,
      'render',
      ...['-f', join(dir, 'in'), '-o', join(dir, 'out'), '--run-dir', join(dir, 'run')],
      ...['--https-port', String(port), '--http-port', String(httpPort), '--configmap', 'bench/controller'],
      ...['--check', '--nginx-bin', installation.binary],
      ...extraFlags,
    ],
    { encoding: 'utf8' },
  );
  if (rendered.status !== 0) throw new Error(`render for nginx ${installation.version} failed:\n${rendered.stdout}${rendered.stderr}`);
  chmodSync(join(dir, 'out'), 0o755);
  return join(dir, 'out', 'nginx.conf');
}

// ---------------------------------------------------------------- contenders and tests

interface Contender {
  readonly id: string;
  readonly label: string;
  readonly passthroughPort: number;
  readonly terminatedPort: number;
  /** The proxy, or none (direct). */
  readonly server?: Server;
  /** The cluster mode's reader of nginx's request lines (request metrics on). */
  readonly reader?: Server;
}

type TestId = 'pt-bulk' | 'pt-connect' | 'tt-requests' | 'tt-connect' | 'tt-handshake';

interface TestSpec {
  readonly id: TestId;
  readonly title: string;
  readonly unit: string;
  readonly host: 'pt.bench.test' | 'tt.bench.test';
  readonly path: '/1m' | '/small';
  readonly connections: number;
  readonly newConnections: boolean;
  /** The rate from a wrk summary. */
  readonly rate: (s: WrkSummary) => number;
  /** Per unit of work: GiB, or one request/connection. */
  readonly perUnit: (s: WrkSummary) => number;
  readonly cpuUnit: string;
  readonly cpuScale: number;
  /** `full-handshakes.js` instead of wrk, for handshakes without session resumption, which wrk cannot make. */
  readonly client?: 'full-handshakes';
}

const tests: readonly TestSpec[] = [
  {
    id: 'pt-bulk',
    title: 'passthrough, 1 MiB keep-alive throughput',
    unit: 'MiB/s',
    host: 'pt.bench.test',
    path: '/1m',
    connections: 16,
    newConnections: false,
    rate: (s) => s.bytes / mib / (s.durationUs / 1e6),
    perUnit: (s) => s.bytes / (1024 * mib),
    cpuUnit: 'CPU s/GiB',
    cpuScale: 1,
  },
  {
    id: 'pt-connect',
    title: 'passthrough, new TLS connections/s',
    unit: 'conn/s',
    host: 'pt.bench.test',
    path: '/small',
    connections: 32,
    newConnections: true,
    rate: (s) => s.requests / (s.durationUs / 1e6),
    perUnit: (s) => s.requests,
    cpuUnit: 'CPU µs/conn',
    cpuScale: 1e6,
  },
  {
    id: 'tt-requests',
    title: 'terminated, keep-alive requests/s',
    unit: 'req/s',
    host: 'tt.bench.test',
    path: '/small',
    connections: 32,
    newConnections: false,
    rate: (s) => s.requests / (s.durationUs / 1e6),
    perUnit: (s) => s.requests,
    cpuUnit: 'CPU µs/req',
    cpuScale: 1e6,
  },
  {
    id: 'tt-connect',
    title: 'terminated, new TLS connections/s',
    unit: 'conn/s',
    host: 'tt.bench.test',
    path: '/small',
    connections: 32,
    newConnections: true,
    rate: (s) => s.requests / (s.durationUs / 1e6),
    perUnit: (s) => s.requests,
    cpuUnit: 'CPU µs/conn',
    cpuScale: 1e6,
  },
];

/**
 * Full TLS handshakes with SNI, no session resumed (`full-handshakes.js`, handshake only): what a
 * certificate loaded on every handshake costs. Run with `--per-handshake`.
 */
const fullHandshakes: TestSpec = {
  id: 'tt-handshake',
  title: 'terminated, full TLS handshakes/s',
  unit: 'conn/s',
  host: 'tt.bench.test',
  path: '/small',
  connections: 8,
  newConnections: true,
  rate: (s) => s.requests / (s.durationUs / 1e6),
  perUnit: (s) => s.requests,
  cpuUnit: 'CPU µs/conn',
  cpuScale: 1e6,
  client: 'full-handshakes',
};

const testsRun: readonly TestSpec[] = perHandshake ? [...tests, fullHandshakes] : tests;

interface WrkSummary {
  readonly requests: number;
  readonly bytes: number;
  readonly durationUs: number;
  readonly errors: number;
  readonly non2xx: number;
}

/** wrk's script: connect to 127.0.0.1 whatever the URL's host (which is the SNI), and report as JSON. */
const wrkScript = `wrk.resolve = function(host, service)
  wrk.addrs = wrk.lookup("127.0.0.1", service)
end
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('\\n{"requests":%d,"bytes":%d,"durationUs":%d,"errors":%d,"non2xx":%d}\\n',
    summary.requests, summary.bytes, summary.duration, e.connect + e.read + e.write + e.timeout, e.status))
end
`;

/** One wrk run of one contender. */
interface Slice {
  readonly rate: number;
  /** The proxy's CPU seconds in the run; 0 for direct. */
  readonly proxySeconds: number;
  /** Units of work done (GiB or requests). */
  readonly units: number;
  /** CPU (in cores, averaged over the run) taken by processes other than wrk, the origin and the proxy. */
  readonly otherCores: number;
  readonly errors: number;
  /** The request-line reader's CPU seconds in the run (request metrics on), else 0. */
  readonly readerSeconds: number;
}

/** One contender in one round of one test. */
interface Cell {
  /** Median of the slices' rates. */
  readonly rate: number;
  /** The proxy's CPU per unit over the slices (scaled by the test's cpuScale). */
  readonly proxyCpu: number;
  /** The request-line reader's CPU seconds per unit over the slices (unscaled). */
  readonly readerCpu: number;
  readonly slices: readonly Slice[];
}

function cellOf(test: TestSpec, parts: readonly Slice[]): Cell {
  const units = parts.reduce((n, p) => n + p.units, 0);
  const seconds = parts.reduce((n, p) => n + p.proxySeconds, 0);
  const reader = parts.reduce((n, p) => n + p.readerSeconds, 0);
  return { rate: median(parts.map((p) => p.rate)), proxyCpu: (seconds / Math.max(units, 1e-9)) * test.cpuScale, readerCpu: reader / Math.max(units, 1e-9), slices: parts };
}

/** The load generators: wrk with its script. */
interface Clients {
  readonly wrk: string;
  readonly script: string;
}

async function runClient(clients: Clients, test: TestSpec, port: number, seconds: number): Promise<WrkSummary> {
  return test.client === 'full-handshakes' ? runFullHandshakes(test, port, seconds) : runWrk(clients.wrk, clients.script, test, port, seconds);
}

/** `full-handshakes.js` for `seconds`: handshakes completed, over the time it ran them. */
async function runFullHandshakes(test: TestSpec, port: number, seconds: number): Promise<WrkSummary> {
  const script = fileURLToPath(new URL('./full-handshakes.js', import.meta.url));
  const args = [script, String(port), test.host, String(seconds), String(test.connections)];
  const summary = await lastJsonLine(process.execPath, args, `full-handshakes, ${test.id} on port ${port}`);
  const { handshakes, errors, durationUs } = summary as { handshakes: number; errors: number; durationUs: number };
  return { requests: handshakes, bytes: 0, durationUs, errors, non2xx: 0 };
}

async function runWrk(wrk: string, script: string, test: TestSpec, port: number, seconds: number): Promise<WrkSummary> {
  const args = ['-t1', `-c${test.connections}`, `-d${seconds}s`, '--timeout', '10s', '-s', script];
  if (test.newConnections) args.push('-H', 'Connection: close');
  args.push(`https://${test.host}:${port}${test.path}`);
  return (await lastJsonLine(wrk, args, `wrk, ${test.id} on port ${port}`)) as WrkSummary;
}

/** Runs a load generator to its end; the last line of its output that is a JSON object is its summary. */
async function lastJsonLine(command: string, args: readonly string[], what: string): Promise<unknown> {
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => (output += chunk));
  child.stderr.on('data', () => undefined);
  await new Promise((resolve) => child.once('exit', resolve));
  const json = output.split('\n').reverse().find((line) => line.startsWith('{'));
  if (!json) throw new Error(`${what}: no summary printed:\n${output}`);
  return JSON.parse(json);
}

async function measure(clients: Clients, test: TestSpec, contender: Contender, origin: Server): Promise<Slice> {
  const port = test.host === 'pt.bench.test' ? contender.passthroughPort : contender.terminatedPort;
  const before = { proxy: contender.server?.cpu() ?? 0, reader: contender.reader?.cpu() ?? 0, origin: origin.cpu(), wrk: reapedChildrenSeconds(), busy: machineBusySeconds(), at: performance.now() };
  const summary = await runClient(clients, test, port, sliceSeconds);
  const proxy = (contender.server?.cpu() ?? 0) - before.proxy;
  const reader = (contender.reader?.cpu() ?? 0) - before.reader;
  const ours = proxy + reader + (origin.cpu() - before.origin) + (reapedChildrenSeconds() - before.wrk);
  const wall = (performance.now() - before.at) / 1000;
  const others = Math.max(0, machineBusySeconds() - before.busy - ours - /* this script */ 0.01 * wall);
  return { rate: test.rate(summary), proxySeconds: proxy, units: test.perUnit(summary), otherCores: others / wall, errors: summary.errors + summary.non2xx, readerSeconds: reader };
}

// ---------------------------------------------------------------- report

const format = (value: number): string => (value >= 100 ? Math.round(value).toLocaleString('en-US') : value.toFixed(value >= 10 ? 1 : 2));

/** The TLS material of the run: the origin's and the terminated host's certificates, and HAProxy's PEM. */
interface BenchCertificates {
  readonly origin: CertificateFiles;
  readonly terminated: CertificateFiles;
  readonly haproxyPem: string;
}

async function createCertificates(work: string): Promise<BenchCertificates> {
  const ca = await createCa(work, 'dataplane bench CA', { keyType: 'rsa-2048' });
  const origin = await issueCertificate(ca, { commonName: 'pt.bench.test', sans: ['pt.bench.test', 'tt.bench.test'], keyType: 'rsa-2048' });
  const terminated = await issueCertificate(ca, { commonName: 'tt.bench.test', sans: ['tt.bench.test'], keyType: 'rsa-2048' });
  const haproxyPem = join(work, 'haproxy-tt.pem');
  await writeFile(haproxyPem, terminated.certPem + terminated.keyPem, { mode: 0o600 });
  return { origin, terminated, haproxyPem };
}

/** The origin nginx: TLS and plain HTTP backends serving `/1m` and `/small`. */
async function startOrigin(work: string, distro: NginxInstallation, ports: Ports, cert: CertificateFiles): Promise<Server> {
  const originDir = join(work, 'origin');
  await mkdir(join(originDir, 'www'), { recursive: true });
  await writeFile(join(originDir, 'www', '1m'), Buffer.alloc(mib, 'x'));
  chmodSync(originDir, 0o755);
  chmodSync(join(originDir, 'www'), 0o755);
  await writeFile(join(originDir, 'nginx.conf'), backendConf(originDir, ports, cert));
  return startNginx('origin', distro, originDir, join(originDir, 'nginx.conf'), ports.backendTls);
}

/** What the contenders are started from. */
interface ContenderSetup {
  readonly work: string;
  readonly ports: Ports;
  readonly certificates: BenchCertificates;
  readonly haproxy: { readonly binary: string; readonly version: string };
  readonly distro: NginxInstallation;
  readonly fresh: NginxInstallation;
  /** A free port, each call another. */
  readonly next: () => number;
  /** Every server started, to stop at the end, also when a later one fails to start. */
  readonly servers: Server[];
}

async function startHaproxy(setup: ContenderSetup): Promise<Contender> {
  const dir = join(setup.work, 'haproxy');
  await mkdir(dir);
  const listen = { passthrough: setup.next(), terminated: setup.next() };
  await writeFile(join(dir, 'haproxy.cfg'), haproxyConf(setup.ports, listen, setup.certificates.haproxyPem));
  const server = await startServer('haproxy', setup.haproxy.binary, ['-db', '-f', join(dir, 'haproxy.cfg')], () => answers(listen.terminated));
  setup.servers.push(server);
  return { id: 'haproxy', label: `HAProxy ${setup.haproxy.version}`, passthroughPort: listen.passthrough, terminatedPort: listen.terminated, server };
}

/**
 * Single-hop twice per nginx: as one would write it, and sending ingress-nginx's request headers as the
 * product must, which prices the topology apart from the headers.
 */
async function startSingleHops(setup: ContenderSetup): Promise<Contender[]> {
  const singleHops = [
    ['1.22', setup.distro, 'usual'],
    ['new', setup.fresh, 'usual'],
    ['1.22', setup.distro, 'ingress-nginx'],
    ['new', setup.fresh, 'ingress-nginx'],
  ] as const;
  const contenders: Contender[] = [];
  for (const [key, installation, headers] of singleHops) {
    const id = headers === 'usual' ? `single-${key}` : `single-headers-${key}`;
    const label = `single-hop nginx ${installation.version}${headers === 'usual' ? '' : ", ingress-nginx's headers"}`;
    const dir = join(setup.work, id);
    await mkdir(dir);
    chmodSync(dir, 0o755);
    const listen = { passthrough: setup.next(), terminated: setup.next() };
    await writeFile(join(dir, 'nginx.conf'), singleHopConf(dir, installation, setup.ports, listen, setup.certificates.terminated, headers));
    const server = await startNginx(label, installation, dir, join(dir, 'nginx.conf'), listen.terminated);
    setup.servers.push(server);
    contenders.push({ id, label, passthroughPort: listen.passthrough, terminatedPort: listen.terminated, server });
  }
  return contenders;
}

async function startHandWrittenPass(setup: ContenderSetup): Promise<Contender> {
  const dir = join(setup.work, 'pass');
  await mkdir(dir);
  chmodSync(dir, 0o755);
  const port = setup.next();
  await writeFile(join(dir, 'nginx.conf'), passConf(dir, setup.ports, port, setup.certificates.terminated));
  const server = await startNginx(`pass ${setup.fresh.version}`, setup.fresh, dir, join(dir, 'nginx.conf'), port);
  setup.servers.push(server);
  return { id: 'pass-new', label: `hand-written pass, nginx ${setup.fresh.version}`, passthroughPort: port, terminatedPort: port, server };
}

const variantLabels = {
  '': '',
  '-metrics': ', request metrics on',
  '-floor': ', log line by hand (floor)',
  '-ph': ', certificates per handshake',
} as const;

/** The product's "off" config with the floor's hand-written log line and no reader (request-log-floor.ts). */
async function floorConfig(offConf: string, logFile: string): Promise<string> {
  const conf = join(offConf, '..', 'nginx-floor.conf');
  await writeFile(conf, withFloorLog(readFileSync(offConf, 'utf8'), logFile));
  return conf;
}

/**
 * The product on both nginx generations: as rendered, with request metrics on, the floor of their cost,
 * and (asked) certificates per handshake.
 */
async function startProducts(setup: ContenderSetup): Promise<Contender[]> {
  const manifests = productManifests(setup.ports, setup.certificates.terminated);
  const products = [
    ['1.22', setup.distro, ''],
    ['new', setup.fresh, ''],
    ['1.22', setup.distro, '-metrics'],
    ['new', setup.fresh, '-metrics'],
    ['1.22', setup.distro, '-floor'],
    ['new', setup.fresh, '-floor'],
    ...(perHandshake ? ([['1.22', setup.distro, '-ph'], ['new', setup.fresh, '-ph']] as const) : []),
  ] as const;
  const contenders: Contender[] = [];
  for (const [key, installation, variant] of products) {
    const id = `product${variant}-${key}`;
    const label = `product, nginx ${installation.version}${variantLabels[variant]}`;
    const dir = join(setup.work, id);
    await mkdir(dir);
    const port = setup.next();
    const requestLog = variant === '-metrics' ? join(dir, 'run', 'requests.log') : undefined;
    const flags = variant === '-ph' ? ['--certificates-per-handshake'] : requestLog !== undefined ? ['--request-log', requestLog] : [];
    const rendered = await renderProduct(dir, installation, manifests, port, setup.next(), flags);
    const conf = variant === '-floor' ? await floorConfig(rendered, join(dir, 'run', 'floor.log')) : rendered;
    const reader = requestLog === undefined ? undefined : await startRequestReader(requestLog, conf);
    if (reader) setup.servers.push(reader);
    const server = await startNginx(label, installation, join(dir, 'out'), conf, port);
    setup.servers.push(server);
    contenders.push({ id, label, passthroughPort: port, terminatedPort: port, server, ...(reader && { reader }) });
  }
  return contenders;
}

/** Every contender serves both hosts before anything is measured. */
async function checkContenders(clients: Clients, contenders: readonly Contender[]): Promise<void> {
  for (const contender of contenders) {
    for (const test of testsRun) {
      const summary = await runClient(clients, test, test.host === 'pt.bench.test' ? contender.passthroughPort : contender.terminatedPort, 1);
      if (summary.requests === 0 || summary.errors + summary.non2xx > 0) {
        throw new Error(`${contender.label} fails ${test.id}: ${JSON.stringify(summary)}`);
      }
    }
  }
}

const load = () => loadavg().map((l) => l.toFixed(2)).join(' ');
const cellKey = (test: TestId, contender: string) => `${test}/${contender}`;

/** The rounds: per test, the contenders take turns slice by slice; one cell per round, test and contender. */
async function measureRounds(clients: Clients, contenders: readonly Contender[], origin: Server): Promise<Map<string, Cell[]>> {
  const cells = new Map<string, Cell[]>();
  for (let round = 0; round < rounds; round++) {
    for (const test of testsRun) {
      const taken = new Map<string, Slice[]>(contenders.map((c) => [c.id, []]));
      for (let slice = 0; slice < slices; slice++) {
        const turn = round * slices + slice;
        for (const contender of contenders.map((_, i) => contenders[(i + turn) % contenders.length]!)) {
          taken.get(contender.id)!.push(await measure(clients, test, contender, origin));
        }
      }
      for (const contender of contenders) {
        const key = cellKey(test.id, contender.id);
        cells.set(key, [...(cells.get(key) ?? []), cellOf(test, taken.get(contender.id)!)]);
      }
    }
    console.error(`round ${round + 1}/${rounds} done, load average ${load()}`);
  }
  return cells;
}

/** Two contenders compared, with the goal the first must reach over the second. */
interface Comparison {
  readonly label: string;
  readonly a: string;
  readonly b: string;
  readonly goal?: number;
}

function comparisons(distro: NginxInstallation, fresh: NginxInstallation): Comparison[] {
  return [
    { label: `product ${distro.version} ÷ HAProxy`, a: 'product-1.22', b: 'haproxy', goal: 1.0 },
    { label: `product ${distro.version} ÷ single-hop ${distro.version}`, a: 'product-1.22', b: 'single-1.22', goal: 0.97 },
    { label: `product ${fresh.version} ÷ HAProxy`, a: 'product-new', b: 'haproxy', goal: 1.0 },
    { label: `product ${fresh.version} ÷ single-hop ${fresh.version}`, a: 'product-new', b: 'single-new', goal: 0.97 },
    { label: `product ${distro.version} ÷ single-hop ${distro.version} with the same request headers`, a: 'product-1.22', b: 'single-headers-1.22', goal: 0.97 },
    { label: `product ${fresh.version} ÷ single-hop ${fresh.version} with the same request headers`, a: 'product-new', b: 'single-headers-new', goal: 0.97 },
    { label: `product ${distro.version}, request metrics on ÷ off`, a: 'product-metrics-1.22', b: 'product-1.22', goal: 0.95 },
    { label: `product ${fresh.version}, request metrics on ÷ off`, a: 'product-metrics-new', b: 'product-new', goal: 0.95 },
    { label: `product ${distro.version}, floor (log line by hand, no reader) ÷ off`, a: 'product-floor-1.22', b: 'product-1.22' },
    { label: `product ${fresh.version}, floor (log line by hand, no reader) ÷ off`, a: 'product-floor-new', b: 'product-new' },
    { label: `product ${distro.version}, request metrics on ÷ floor`, a: 'product-metrics-1.22', b: 'product-floor-1.22' },
    { label: `product ${fresh.version}, request metrics on ÷ floor`, a: 'product-metrics-new', b: 'product-floor-new' },
    { label: `hand-written pass ${fresh.version} ÷ single-hop ${fresh.version}`, a: 'pass-new', b: 'single-new' },
    { label: `single-hop ${distro.version} ÷ HAProxy`, a: 'single-1.22', b: 'haproxy' },
    ...(perHandshake
      ? [
          { label: `product ${distro.version}, certificates per handshake ÷ product`, a: 'product-ph-1.22', b: 'product-1.22' },
          { label: `product ${fresh.version}, certificates per handshake ÷ product`, a: 'product-ph-new', b: 'product-new' },
          { label: `product ${fresh.version}, certificates per handshake ÷ HAProxy`, a: 'product-ph-new', b: 'haproxy', goal: 1.0 },
        ]
      : []),
  ];
}

/** The tables: rates and proxy CPU per contender, ratios against the goals, the reader's CPU, contention. */
function report(out: (line?: string) => void, cells: ReadonlyMap<string, Cell[]>, contenders: readonly Contender[], compared: readonly Comparison[]): void {
  const header = ['test', ...contenders.map((c) => c.label)];
  out(`| ${header.join(' | ')} |`);
  out(`|${header.map(() => '---').join('|')}|`);
  for (const test of testsRun) {
    const row = contenders.map((c) => format(median(cells.get(cellKey(test.id, c.id))!.map((x) => x.rate))));
    out(`| ${test.title} (${test.unit}, median) | ${row.join(' | ')} |`);
  }
  for (const test of testsRun) {
    const row = contenders.map((c) => (c.server ? format(median(cells.get(cellKey(test.id, c.id))!.map((x) => x.proxyCpu))) : '–'));
    out(`| proxy ${test.cpuUnit}, ${test.id} (median) | ${row.join(' | ')} |`);
  }
  out();

  // The median over rounds of the same-round ratio.
  const ratio = (test: TestId, a: string, b: string, pick: (c: Cell) => number): number[] => {
    const as = cells.get(cellKey(test, a))!;
    const bs = cells.get(cellKey(test, b))!;
    return as.map((cell, i) => pick(cell) / pick(bs[i]!));
  };
  out('Ratios of rates (median over rounds of the ratio of per-round medians; min–max over rounds), goal in brackets:');
  out(`| comparison | ${testsRun.map((t) => t.title).join(' | ')} |`);
  out(`|---|${testsRun.map(() => '---').join('|')}|`);
  for (const { label, a, b, goal } of compared) {
    const row = testsRun.map((test) => {
      const values = ratio(test.id, a, b, (c) => c.rate);
      const m = median(values);
      const verdict = goal === undefined ? '' : m >= goal ? ' ✓' : ' ✗';
      return `${m.toFixed(2)}${verdict} (${Math.min(...values).toFixed(2)}–${Math.max(...values).toFixed(2)})`;
    });
    out(`| ${label}${goal === undefined ? '' : ` [≥ ${goal.toFixed(2)}]`} | ${row.join(' | ')} |`);
  }
  out();
  out('Proxy CPU per unit of work, ratio (median of per-round ratios; above 1 = the first costs more):');
  out(`| comparison | ${testsRun.map((t) => t.id).join(' | ')} |`);
  out(`|---|${testsRun.map(() => '---').join('|')}|`);
  for (const { label, a, b } of compared) {
    out(`| ${label} | ${testsRun.map((test) => median(ratio(test.id, a, b, (c) => c.proxyCpu)).toFixed(2)).join(' | ')} |`);
  }
  out();
  out("The sidecar's request-line reader (request metrics on): CPU per request, and the cores it takes at 10,000 requests/s:");
  for (const contender of contenders.filter((c) => c.reader)) {
    // Keep-alive requests only: the other tests make too few requests in a slice for the clock's ticks.
    for (const test of testsRun.filter((t) => t.id === 'tt-requests')) {
      const perRequest = median(cells.get(cellKey(test.id, contender.id))!.map((c) => c.readerCpu));
      out(`| ${contender.label}, ${test.id} | ${(perRequest * 1e6).toFixed(1)} µs CPU per request | ${(perRequest * 10_000).toFixed(3)} cores at 10,000 requests/s |`);
    }
  }
  out();
  const allCells = [...cells.values()].flat().flatMap((c) => c.slices);
  const contention = allCells.map((c) => c.otherCores);
  out(
    `CPU contention: processes other than wrk, the origin and the proxy took ${median(contention).toFixed(2)} cores in the median slice ` +
      `(max ${Math.max(...contention).toFixed(2)}) of ${cpus().length}; load average at the end ${load()}. ` +
      `Errors (socket errors and non-2xx) over all cells: ${allCells.reduce((n, c) => n + c.errors, 0)}.`,
  );
}

async function main(): Promise<void> {
  const wrk = ensureTool('wrk', 'wrk');
  const haproxyBinary = ensureTool('haproxy', 'haproxy');
  const { distro, fresh } = await nginxInstallations();
  const haproxy = { binary: haproxyBinary, version: /version (\S+)/.exec(spawnSync(haproxyBinary, ['-v'], { encoding: 'utf8' }).stdout)?.[1] ?? '?' };
  const work = await mkdtemp('/tmp/i2n-dp-');
  chmodSync(work, 0o755);
  const servers: Server[] = [];
  try {
    const certificates = await createCertificates(work);
    const script = join(work, 'wrk.lua');
    await writeFile(script, wrkScript);
    const clients: Clients = { wrk, script };

    const [backendTls, backendHttp, ...free] = await freePorts(perHandshake ? 29 : 25);
    const ports: Ports = { backendTls: backendTls!, backendHttp: backendHttp! };
    const origin = await startOrigin(work, distro, ports, certificates.origin);
    servers.push(origin);

    const setup: ContenderSetup = { work, ports, certificates, haproxy, distro, fresh, next: () => free.shift()!, servers };
    const contenders: Contender[] = [
      { id: 'direct', label: 'direct (no proxy)', passthroughPort: ports.backendTls, terminatedPort: ports.backendTls },
      await startHaproxy(setup),
      ...(await startSingleHops(setup)),
      await startHandWrittenPass(setup),
      ...(await startProducts(setup)),
    ];
    await checkContenders(clients, contenders);

    const out = (line = ''): void => console.log(line);
    out(`ingress2nginx data-plane bench — ${cpus().length} CPU(s) ${cpus()[0]?.model ?? ''}, node ${process.version}, load average at start ${load()}`);
    const nginxBuilds = await Promise.all([distro, fresh].map((installation) => nginxBuild(installation.binary)));
    out(`${nginxBuilds.map(describeNginx).join('; ')}; HAProxy ${haproxy.version}`);
    out(
      `wrk, TLS 1.3 with session resumption; ${rounds} rounds of ${slices} slices of ${sliceSeconds} s per contender and test, ` +
        'the contenders taking turns slice by slice; one worker or thread per proxy',
    );
    out();
    const cells = await measureRounds(clients, contenders, origin);
    report(out, cells, contenders, comparisons(distro, fresh));
  } finally {
    for (const server of servers.reverse()) await server.stop();
    if (!process.env.I2N_KEEP_BENCH) await rm(work, { recursive: true, force: true });
  }
}

await main();
