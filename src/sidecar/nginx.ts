import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import http from 'node:http';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { execa, type ResultPromise } from 'execa';
import { mainConfigName } from '../model/nginx.js';
import type { Logger } from './log.js';

/** What `nginx -V` says about the nginx that is actually there. */
export interface NginxBuild {
  readonly version: string;
  /** The stream module: compiled in (`undefined`), or the file to `load_module`. */
  readonly streamModulePath?: string;
  readonly configureArguments: string;
  /**
   * The TLS library nginx runs with (`OpenSSL 3.0.19`), when `nginx -V` names one. Its release decides
   * much of what a reload costs: each TLS server block loads a certificate and key at every reload.
   */
  readonly tlsLibrary?: string;
}

/** The TLS library in `nginx -V` output: the one it runs with when that differs from the one it was built with. */
export function tlsLibraryOf(nginxV: string): string | undefined {
  const named = /(?:running|built) with ((?:OpenSSL|LibreSSL|BoringSSL)(?: [\w.-]+)?)/g;
  const found = [...nginxV.matchAll(named)].map((m) => m[1]!);
  return found.at(-1);
}

/** `nginx 1.26.3 with OpenSSL 3.5.7`: the two releases that reload figures depend on. */
export function describeNginx(build: NginxBuild): string {
  return `nginx ${build.version}${build.tlsLibrary !== undefined ? ` with ${build.tlsLibrary}` : ''}`;
}

/** Where Debian and Ubuntu's libnginx-mod-stream puts the module. */
const debianStreamModule = '/usr/lib/nginx/modules/ngx_stream_module.so';

/** Reads the version and modules of `binary` from `nginx -V` (it prints to stderr). */
export async function nginxBuild(binary: string): Promise<NginxBuild> {
  const result = await execa(binary, ['-V'], { reject: false, all: true, stdin: 'ignore' });
  if ((result as { code?: string }).code === 'ENOENT') throw new Error(`nginx binary "${binary}" not found (--nginx-bin)`);
  const text = result.all ?? '';
  const version = /nginx version: nginx\/(\d+\.\d+\.\d+)/.exec(text)?.[1];
  if (!version) throw new Error(`\`${binary} -V\` did not print an nginx version: ${text.split('\n')[0] ?? ''}`);
  const configureArguments = /configure arguments: (.*)/.exec(text)?.[1] ?? '';
  const tlsLibrary = tlsLibraryOf(text);
  const build = { version, configureArguments, ...(tlsLibrary !== undefined && { tlsLibrary }) };
  if (/--with-stream(?=\s|$)/.test(configureArguments)) return build;
  const modulesPath = /--modules-path=(\S+)/.exec(configureArguments)?.[1];
  const candidates = [modulesPath && join(modulesPath, 'ngx_stream_module.so'), debianStreamModule].filter((f): f is string => !!f);
  const streamModulePath = candidates.find((file) => existsSync(file));
  if (streamModulePath === undefined) throw new Error(`nginx ${version} (${binary}) has no stream module: neither built in nor at ${candidates.join(' or ')}`);
  return { ...build, streamModulePath };
}

/**
 * The generation the nginx workers serve, asked on the control socket, or undefined when nothing answers
 * (nginx not running yet, or an old config without the control server).
 */
export async function servedGeneration(socket: string, timeoutMs = 1000): Promise<string | undefined> {
  return (await askControlSocket(socket, '/generation', timeoutMs))?.trim();
}

/** The body of a 200 answer to `GET path` on the control socket, or undefined. */
export function askControlSocket(socket: string, path: string, timeoutMs = 1000): Promise<string | undefined> {
  return new Promise((resolve) => {
    const request = http.get({ socketPath: socket, path, timeout: timeoutMs, headers: { Connection: 'close' } }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.once('end', () => resolve(response.statusCode === 200 ? body : undefined));
      response.once('error', () => resolve(undefined));
    });
    request.once('timeout', () => request.destroy());
    request.once('error', () => resolve(undefined));
  });
}

/**
 * Waits until the workers answer with `generation`, several times in a row: old workers finish their
 * requests in the background but stop accepting, so a few consecutive answers mean the new config is
 * what every new connection gets. `signal` ends the wait early (not ok).
 */
export async function waitForGeneration(
  socket: string,
  generation: string,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<{ ok: boolean; served?: string }> {
  const deadline = Date.now() + timeoutMs;
  let consecutive = 0;
  let served: string | undefined;
  while (Date.now() < deadline && !signal?.aborted) {
    served = await servedGeneration(socket);
    consecutive = served === generation ? consecutive + 1 : 0;
    if (consecutive >= 3) return { ok: true, served };
    await delay(consecutive > 0 ? 5 : 10, undefined, { signal }).catch(() => undefined);
  }
  return { ok: false, ...(served !== undefined && { served }) };
}

/** The nginx whose config we keep: one we started, or one beside us that we signal. */
export interface NginxDriver {
  /**
   * Has nginx load the config in the output folder: starts it (spawn mode, first time) or sends its
   * master SIGHUP. An nginx beside us that is not running yet reads the folder when it starts.
   */
  load(): Promise<void>;
  /** Graceful stop of an nginx we started (`-s quit`); nothing for one beside us. */
  stop(): Promise<void>;
}

/**
 * Drives the nginx of another container in the Pod (`shareProcessNamespace: true`): its master's pid is
 * in the pid file the rendered config names.
 */
export class ExternalNginx implements NginxDriver {
  constructor(
    private readonly pidFile: string,
    private readonly log: Logger,
  ) {}

  async load(): Promise<void> {
    const pid = await this.masterPid();
    if (pid === undefined) {
      this.log.warn('no running nginx master in the pid file; nginx reads the config when it starts (does the Pod share its process namespace?)', {
        pidFile: this.pidFile,
      });
      return;
    }
    process.kill(pid, 'SIGHUP');
  }

  async stop(): Promise<void> {}

  private async masterPid(): Promise<number | undefined> {
    const text = await readFile(this.pidFile, 'utf8').catch(() => '');
    const pid = Number(text.trim());
    if (!Number.isInteger(pid) || pid <= 0) return undefined;
    try {
      process.kill(pid, 0);
      return pid;
    } catch {
      return undefined;
    }
  }
}

/** How long a spawned nginx may take to quit gracefully before it is stopped at once, then killed. */
export interface StopTiming {
  readonly quitMs: number;
  readonly terminateMs: number;
}

/**
 * nginx as our child (`--spawn-nginx`): `nginx -p DIR -c DIR/nginx.conf -g 'daemon off;'`, its log
 * lines forwarded to ours, restarted with backoff when it exits unasked. It runs in a process group of
 * its own, so that stopping can reach its workers even when the master is stuck loading a config.
 */
export class SpawnedNginx implements NginxDriver {
  private child: ResultPromise | undefined;
  private stopping = false;
  private restartDelayMs = 500;
  private restartTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly binary: string,
    private readonly outDir: string,
    private readonly log: Logger,
    private readonly stopTiming: StopTiming = { quitMs: 20_000, terminateMs: 5000 },
  ) {}

  async load(): Promise<void> {
    if (this.stopping) return;
    if (this.child?.pid === undefined) this.start();
    else process.kill(this.child.pid, 'SIGHUP');
  }

  /**
   * Graceful quit (SIGQUIT: requests in flight finish); a master that has not exited after `quitMs`
   * (still loading a large config, or connections that do not end) gets SIGTERM, and after
   * `terminateMs` its whole process group SIGKILL. Resolves once the master has exited.
   */
  async stop(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.restartTimer);
    const child = this.child;
    if (!child?.pid) return;
    const pid = child.pid;
    const exited = child.then(
      () => true,
      () => true,
    );
    const within = async (ms: number): Promise<boolean> => {
      // The timer is cancelled once the master exits, so that it keeps no stopped process alive.
      const timer = new AbortController();
      try {
        return await Promise.race([exited, delay(ms, false, { signal: timer.signal }).catch(() => false)]);
      } finally {
        timer.abort();
      }
    };
    signalGroup(pid, 'SIGQUIT');
    if (await within(this.stopTiming.quitMs)) return;
    this.log.warn('nginx did not quit in time; stopping it at once', { pid, waitedMs: this.stopTiming.quitMs });
    signalGroup(pid, 'SIGTERM');
    if (await within(this.stopTiming.terminateMs)) return;
    this.log.error('nginx did not stop; killing its processes', { pid });
    signalGroup(pid, 'SIGKILL');
    await exited;
  }

  private start(): void {
    const child = execa(this.binary, ['-p', `${this.outDir}/`, '-c', join(this.outDir, mainConfigName), '-g', 'daemon off;'], {
      stdin: 'ignore',
      stdout: 'pipe',
      stderr: 'pipe',
      buffer: false,
      reject: false,
      detached: true,
    });
    this.child = child;
    const forward = (stream: NodeJS.ReadableStream | null) => {
      let rest = '';
      stream?.setEncoding('utf8');
      stream?.on('data', (chunk: string) => {
        const lines = (rest + chunk).split('\n');
        rest = lines.pop() ?? '';
        for (const line of lines) if (line.trim() !== '') this.log.nginx(line);
      });
    };
    forward(child.stdout);
    forward(child.stderr);
    this.log.info('nginx started', { pid: child.pid });
    const started = Date.now();
    void child.then((result) => {
      if (this.child === child) this.child = undefined;
      if (this.stopping) return;
      // A run that lasted a while resets the backoff; one that died at once doubles it.
      this.restartDelayMs = Date.now() - started > 30_000 ? 500 : Math.min(this.restartDelayMs * 2, 30_000);
      this.log.error('nginx exited; restarting it', { exitCode: result.exitCode, signal: result.signal, restartInMs: this.restartDelayMs });
      this.restartTimer = setTimeout(() => {
        if (!this.stopping && !this.child) this.start();
      }, this.restartDelayMs);
      this.restartTimer.unref();
    });
  }
}

/** `signal` to the process group of `pid` (nginx's master leads one), or to the master alone if that fails. */
function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    try {
      process.kill(pid, signal);
    } catch {
      // Gone already.
    }
  }
}
