import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa, execaSync, type ResultPromise } from 'execa';
import { findExecutable } from './executables.js';

/**
 * A real kubectl for tests against the fake API server, so the fake is held to what a real client
 * sends and expects. Keep the detection in step with scripts/ensure-test-tools.mjs.
 */

const INSTALL_HINT =
  'Install it as root with `apt-get install -y kubernetes-client` (or run `node scripts/ensure-test-tools.mjs`), or set KUBECTL_BIN to a kubectl binary.';

/** `KUBECTL_BIN` if set (and then only it), else `kubectl` on PATH. */
export function kubectlBinary(): string | undefined {
  return findExecutable('KUBECTL_BIN', 'kubectl');
}

export interface KubectlInstallation {
  readonly binary: string;
  /** e.g. 20 for v1.20.2. */
  readonly minorVersion: number;
  /** `kubectl patch --subresource` exists (kubectl 1.24 and later). */
  readonly patchesSubresources: boolean;
}

let installation: KubectlInstallation | undefined;

/** The kubectl the tests run. Throws with install instructions when there is none: missing is a failure, never a skip. */
export function requireKubectl(): KubectlInstallation {
  if (installation) return installation;
  const binary = kubectlBinary();
  if (binary === undefined) throw new Error(`kubectl not found. ${INSTALL_HINT}`);
  const version = execaSync(binary, ['version', '--client', '-o', 'json'], { reject: false });
  const minor = /"minor":\s*"(\d+)/.exec(version.stdout)?.[1];
  if (version.exitCode !== 0 || minor === undefined) throw new Error(`\`${binary} version --client\` failed: ${version.stderr || version.stdout}`);
  const patchHelp = execaSync(binary, ['patch', '--help'], { reject: false }).stdout;
  installation = { binary, minorVersion: Number(minor), patchesSubresources: patchHelp.includes('--subresource') };
  return installation;
}

/**
 * Runs kubectl against `kubeconfig` with a HOME of its own, so no discovery cache survives from
 * another fake server (kubectl caches discovery per host:port under ~/.kube/cache).
 */
export class KubectlRunner {
  private constructor(
    private readonly kubeconfig: string,
    private readonly home: string,
  ) {}

  static async create(kubeconfig: string): Promise<KubectlRunner> {
    return new KubectlRunner(kubeconfig, await mkdtemp(path.join(os.tmpdir(), 'kubectl-home-')));
  }

  #environment(): Record<string, string> {
    return { KUBECONFIG: this.kubeconfig, HOME: this.home, PATH: process.env.PATH ?? '' };
  }

  /** Resolves with stdout; rejects with kubectl's stderr when it exits non-zero. */
  async run(...args: string[]): Promise<string> {
    const result = await execa(requireKubectl().binary, args, { env: this.#environment(), extendEnv: false, timeout: 60_000, reject: false });
    if (result.exitCode !== 0) throw new Error(`kubectl ${args.join(' ')} exited ${result.exitCode}: ${result.stderr}`);
    return result.stdout;
  }

  /** kubectl's whole outcome, failure included: its exit code, stdout and stderr (where it prints warnings); `input` is its stdin (`-f -`). */
  async outcome(args: readonly string[], input?: string): Promise<{ exitCode: number; stdout: string; stderr: string }> {
    const result = await execa(requireKubectl().binary, args, { env: this.#environment(), extendEnv: false, timeout: 60_000, reject: false, ...(input !== undefined && { input }) });
    return { exitCode: result.exitCode ?? -1, stdout: result.stdout, stderr: result.stderr };
  }

  /** A long-running kubectl (e.g. `get --watch`); the caller kills it. */
  spawn(...args: string[]): ResultPromise {
    return execa(requireKubectl().binary, args, { env: this.#environment(), extendEnv: false, reject: false, buffer: false });
  }

  /** Drops kubectl's discovery cache, as if the fake were a cluster kubectl never saw (it keeps it for hours). */
  async forgetDiscovery(): Promise<void> {
    await rm(path.join(this.home, '.kube', 'cache'), { recursive: true, force: true });
  }

  async dispose(): Promise<void> {
    await rm(this.home, { recursive: true, force: true });
  }
}
