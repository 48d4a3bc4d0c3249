import { existsSync, readFileSync } from 'node:fs';
import { chmod, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { execa, execaSync } from 'execa';
import { checkConfig, type NginxCheck } from '../../src/apply/check.js';
import { writeOutput } from '../../src/apply/write.js';
import type { OutputFile } from '../../src/model/files.js';
import { findExecutable, isExecutableFile } from './executables.js';

/**
 * Real nginx for integration tests: found on this machine, run in the foreground as a child process
 * with a temp prefix, and always stopped again (`stopAllNginx` in an `afterAll`).
 */

/** Where Debian's `libnginx-mod-stream` puts the dynamic stream module. */
export const DEBIAN_STREAM_MODULE_FILE = '/usr/lib/nginx/modules/ngx_stream_module.so';

const INSTALL_HINT =
  'Install it as root with `apt-get install -y nginx libnginx-mod-stream` (or run `node scripts/ensure-test-tools.mjs`), ' +
  'or set NGINX_BIN to an nginx binary that has the stream module.';

const POLL_INTERVAL_MS = 25;
/** Bounds every wait on nginx (start, reload) to about ten seconds; never used as an assertion. */
const POLL_ATTEMPTS = 400;

export interface NginxInstallation {
  readonly binary: string;
  /** e.g. `1.22.1`; integration tests pick the handoff (`pass` vs PROXY protocol) by it. */
  readonly version: string;
  /** The file to `load_module`, or undefined when the stream module is compiled in. */
  readonly streamModuleFile: string | undefined;
}

export interface RunningNginx {
  readonly pid: number;
  /** Fast shutdown (SIGTERM); resolves once the master and its workers are gone. */
  stop(): Promise<void>;
  /** Everything nginx wrote to stderr so far (the config should say `error_log stderr`). */
  stderr(): string;
  /**
   * Resolves with the first stderr line matching `pattern`. nginx writes its log from the worker
   * that handled a connection, so a line can arrive after the client already saw the outcome.
   */
  waitForStderr(pattern: RegExp): Promise<string>;
  /**
   * SIGHUP to the master; resolves once only workers started with the new configuration remain,
   * so every new connection sees it. Throws with nginx's `[emerg]` line if the configuration was
   * rejected (nginx then keeps serving the old one). Close long-lived connections first: an old
   * worker lingers until they end.
   */
  reload(): Promise<void>;
}

/** `NGINX_BIN` if set (and then only it), else `nginx` on PATH, else `/usr/sbin/nginx`. */
export function nginxBinary(): string | undefined {
  return findExecutable('NGINX_BIN', 'nginx', ['/usr/sbin/nginx']);
}

/**
 * The nginx generation a test run targets (`I2N_NGINX_GENERATION`, set per vitest project):
 * `distro` is the machine's nginx (Debian 12: 1.22, the PROXY/unix hand-off); `pass` is nginx >= 1.25.5
 * as scripts/build-nginx.mjs builds it (the `pass` hand-off).
 */
export type NginxGeneration = 'distro' | 'pass';

export function nginxGeneration(): NginxGeneration {
  return process.env.I2N_NGINX_GENERATION === 'pass' ? 'pass' : 'distro';
}

/** Where scripts/build-nginx.mjs installs its build; keep in step with it. */
function builtNginxBinary(): string {
  const cacheRoot =
    process.env.I2N_CACHE_DIR || path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'), 'ingress2nginx');
  return path.join(cacheRoot, 'nginx-new', 'current', 'sbin', 'nginx');
}

/** `NGINX_NEW_BIN` if set (and then only it), else the build of scripts/build-nginx.mjs. */
export function newNginxBinary(): string | undefined {
  const binary = process.env.NGINX_NEW_BIN || builtNginxBinary();
  return isExecutableFile(binary) ? binary : undefined;
}

const installations = new Map<NginxGeneration, NginxInstallation>();

/**
 * The nginx the integration tests run, with its stream module: the one of this run's generation.
 * Throws with install instructions when there is none: a missing nginx is a test failure, never a
 * skip (design §7), for either generation.
 */
export function requireNginx(generation: NginxGeneration = nginxGeneration()): NginxInstallation {
  const known = installations.get(generation);
  if (known) return known;
  const binary = generation === 'pass' ? newNginxBinary() : nginxBinary();
  if (binary === undefined && generation === 'pass') {
    const where = process.env.NGINX_NEW_BIN ? `NGINX_NEW_BIN=${process.env.NGINX_NEW_BIN} is not executable` : `nothing at ${builtNginxBinary()}`;
    throw new Error(`nginx >= 1.25.5 is required by the tests of the pass generation (${where}). Build it with \`node scripts/build-nginx.mjs\` (as root it installs the compiler it needs), or set NGINX_NEW_BIN.`);
  }
  if (binary === undefined) {
    const where = process.env.NGINX_BIN ? `NGINX_BIN=${process.env.NGINX_BIN} is not executable` : 'no nginx on PATH or at /usr/sbin/nginx';
    throw new Error(`nginx is required by the integration tests (${where}). ${INSTALL_HINT}`);
  }
  // `nginx -V` prints its build configuration to stderr.
  const build = execaSync(binary, ['-V'], { stdin: 'ignore', all: true }).all ?? '';
  const version = /nginx version: nginx\/(\S+)/.exec(build)?.[1] ?? 'unknown';
  let streamModuleFile: string | undefined;
  if (!/--with-stream(?=\s|$)/.test(build)) {
    const modulesPath = /--modules-path=(\S+)/.exec(build)?.[1];
    streamModuleFile = [modulesPath && path.join(modulesPath, 'ngx_stream_module.so'), DEBIAN_STREAM_MODULE_FILE].find(
      (file): file is string => typeof file === 'string' && existsSync(file),
    );
    if (streamModuleFile === undefined) {
      throw new Error(`${binary} (nginx ${version}) has no stream module (neither built in nor ${DEBIAN_STREAM_MODULE_FILE}). ${INSTALL_HINT}`);
    }
  }
  const installation = { binary, version, streamModuleFile };
  if (generation === 'pass' && !/^(\d+)\.(\d+)\.(\d+)$/.test(version)) throw new Error(`${binary}: cannot read its version (${version})`);
  if (generation === 'pass' && versionBelow(version, '1.25.5')) throw new Error(`${binary} is nginx ${version}; the pass generation needs >= 1.25.5`);
  // The build of scripts/build-nginx.mjs runs only what scripts/pinned-sources.json pins.
  if (generation === 'pass' && !process.env.NGINX_NEW_BIN && !pinnedNginxVersions().includes(version)) {
    throw new Error(`${binary} is nginx ${version}, which scripts/pinned-sources.json does not pin: run \`node scripts/build-nginx.mjs\` to build the pinned release`);
  }
  installations.set(generation, installation);
  return installation;
}

/**
 * The nginx releases scripts/pinned-sources.json pins. Found by walking up from here, since this module
 * also runs compiled under dist/ (the benches).
 */
function pinnedNginxVersions(): string[] {
  for (let dir = import.meta.dirname; dir !== path.dirname(dir); dir = path.dirname(dir)) {
    const file = path.join(dir, 'scripts', 'pinned-sources.json');
    if (existsSync(file)) return (JSON.parse(readFileSync(file, 'utf8')) as { nginx: { version: string }[] }).nginx.map((pin) => pin.version);
  }
  throw new Error('scripts/pinned-sources.json not found above test/support');
}

function versionBelow(version: string, minimum: string): boolean {
  const [a, b] = [version, minimum].map((v) => v.split('.').map(Number));
  for (let i = 0; i < 3; i++) if (a![i] !== b![i]) return a![i]! < b![i]!;
  return false;
}

/**
 * A new temp directory to use as nginx's prefix. World-traversable (0755) because nginx started
 * as root runs its workers as `nobody`, and they must reach temp files and unix sockets in it.
 */
export async function createNginxPrefix(): Promise<string> {
  const prefix = await mkdtemp(path.join(os.tmpdir(), 'ingress2nginx-nginx-'));
  await chmod(prefix, 0o755);
  return prefix;
}

/**
 * The directives a test nginx.conf needs so that nothing leaves `prefix`: `main` (load the stream
 * module if it is dynamic, one worker, pid file, errors to stderr, an `events` block) goes at top
 * level, `http` inside the `http` block (no access log, every temp path under the prefix).
 */
export function prefixDirectives(prefix: string): { main: string; http: string } {
  const { streamModuleFile } = requireNginx();
  const main = [
    ...(streamModuleFile ? [`load_module ${streamModuleFile};`] : []),
    'worker_processes 1;',
    `pid ${path.join(prefix, 'nginx.pid')};`,
    'error_log stderr;',
    'events { worker_connections 512; }',
  ];
  const http = [
    'access_log off;',
    ...['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map(
      (kind) => `${kind}_temp_path ${path.join(prefix, `${kind}_temp`)};`,
    ),
  ];
  return { main: main.join('\n') + '\n', http: http.join('\n') + '\n' };
}

/** `nginx -t` on `conf` with `prefix`; `output` is what nginx printed (it reports on stderr). */
export async function nginxTest(conf: string, prefix: string): Promise<{ ok: boolean; output: string }> {
  const { binary } = requireNginx();
  const result = await execa(binary, ['-t', '-p', prefix, '-c', conf], { stdin: 'ignore', all: true, reject: false });
  return { ok: result.exitCode === 0, output: result.all ?? '' };
}

/**
 * `nginx -t` on a build's files, written into a fresh folder (removed again) with `runDir` as the run
 * directory the config names; the real nginx of this machine.
 */
export async function checkBuiltFiles(files: readonly OutputFile[], runDir: string): Promise<NginxCheck> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'i2n-check-'));
  try {
    await writeOutput(path.join(dir, 'out'), files);
    return await checkConfig(path.join(dir, 'out'), runDir, requireNginx().binary);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const runningInstances = new Set<RunningNginx>();

/** Stops every nginx started by `startNginx` that is still running; for `afterAll`. */
export async function stopAllNginx(): Promise<void> {
  await Promise.all([...runningInstances].map((instance) => instance.stop()));
}

/** Live (not zombie) processes whose parent is `parent`: the workers of an nginx master. */
async function childProcessIds(parent: number): Promise<number[]> {
  const processIds = (await readdir('/proc')).filter((entry) => /^\d+$/.test(entry));
  const children = await Promise.all(
    processIds.map(async (processId) => {
      try {
        const stat = await readFile(`/proc/${processId}/stat`, 'utf8');
        // Fields after the parenthesised command name: state, ppid, ...
        const [state, parentId] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        return Number(parentId) === parent && state !== 'Z' ? Number(processId) : undefined;
      } catch {
        return undefined; // the process ended while we looked
      }
    }),
  );
  return children.filter((child): child is number => child !== undefined);
}

function isAcceptingConnections(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

async function pidFileHolds(pidFile: string, pid: number): Promise<boolean> {
  try {
    return Number((await readFile(pidFile, 'utf8')).trim()) === pid;
  } catch {
    return false;
  }
}

const DAEMON_DIRECTIVE = /^\s*daemon\s/m;
const PID_DIRECTIVE = /^\s*pid\s+["']?([^"';\s]+)["']?\s*;/m;

/**
 * Runs `nginx -p PREFIX -c CONF -g 'daemon off;'` and resolves once it is serving: its pid file
 * holds the master's pid (nginx writes it only after binding every listener) and each of `ports`
 * accepts TCP on 127.0.0.1. Without a `pid` directive in CONF the pid file goes into the prefix.
 */
export async function startNginx(options: { prefix: string; conf: string; ports?: readonly number[] }): Promise<RunningNginx> {
  const { binary } = requireNginx();
  const { prefix, conf, ports = [] } = options;
  const configText = await readFile(path.resolve(prefix, conf), 'utf8');
  if (DAEMON_DIRECTIVE.test(configText)) {
    throw new Error(`${conf} sets "daemon"; remove it: the harness runs nginx in the foreground with -g "daemon off;"`);
  }
  const configuredPidFile = PID_DIRECTIVE.exec(configText)?.[1];
  const pidFile = path.resolve(prefix, configuredPidFile ?? 'nginx.pid');
  const globalDirectives = configuredPidFile ? 'daemon off;' : `daemon off; pid ${pidFile};`;

  const subprocess = execa(binary, ['-p', prefix, '-c', conf, '-g', globalDirectives], {
    stdin: 'ignore',
    stdout: 'ignore',
    stderr: 'pipe',
    buffer: false,
    reject: false,
  });
  let stderrText = '';
  subprocess.stderr.setEncoding('utf8');
  subprocess.stderr.on('data', (chunk: string) => {
    stderrText += chunk;
  });
  let hasExited = false;
  const exited = subprocess.then((result) => {
    hasExited = true;
    return result;
  });

  const instance: RunningNginx = {
    pid: subprocess.pid ?? -1,
    stderr: () => stderrText,
    async waitForStderr(pattern) {
      for (let attempt = 0; attempt < POLL_ATTEMPTS; attempt++) {
        const line = stderrText.split('\n').find((candidate) => pattern.test(candidate));
        if (line !== undefined) return line;
        await delay(POLL_INTERVAL_MS);
      }
      throw new Error(`nginx wrote no stderr line matching ${pattern}:\n${stderrText}`);
    },
    async stop() {
      if (!hasExited) subprocess.kill('SIGTERM');
      await exited;
      runningInstances.delete(instance);
    },
    async reload() {
      const oldWorkers = new Set(await childProcessIds(instance.pid));
      const stderrMark = stderrText.length;
      process.kill(instance.pid, 'SIGHUP');
      for (let attempt = 0; attempt < POLL_ATTEMPTS; attempt++) {
        const rejection = /^.*\[emerg\].*$/m.exec(stderrText.slice(stderrMark));
        if (rejection) throw new Error(`nginx rejected the new configuration: ${rejection[0]}`);
        if (hasExited) throw new Error(`nginx exited during reload:\n${stderrText}`);
        const workers = await childProcessIds(instance.pid);
        if (workers.length > 0 && workers.every((worker) => !oldWorkers.has(worker))) return;
        await delay(POLL_INTERVAL_MS);
      }
      throw new Error(`nginx reload did not finish: workers of the old configuration are still running\n${stderrText}`);
    },
  };
  runningInstances.add(instance);

  for (let attempt = 0; ; attempt++) {
    if (hasExited) {
      runningInstances.delete(instance);
      const { exitCode, signal, message } = await exited;
      throw new Error(`nginx exited during startup (${exitCode ?? signal ?? message}):\n${stderrText}`);
    }
    const pidFileWritten = await pidFileHolds(pidFile, instance.pid);
    const accepting = await Promise.all(ports.map(isAcceptingConnections));
    if (pidFileWritten && accepting.every(Boolean)) return instance;
    if (attempt >= POLL_ATTEMPTS) {
      await instance.stop();
      const silentPorts = ports.filter((_, index) => !accepting[index]);
      const waitedFor = pidFileWritten ? `ports ${silentPorts.join(', ')} to accept connections` : `its pid in ${pidFile}`;
      throw new Error(`nginx never became ready: waited for ${waitedFor}\n${stderrText}`);
    }
    await delay(POLL_INTERVAL_MS);
  }
}
