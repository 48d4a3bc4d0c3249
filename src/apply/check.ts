import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { execa } from 'execa';
import { mainConfigName } from '../model/nginx.js';

export interface NginxCheck {
  readonly ok: boolean;
  /** nginx's own words (stderr of `nginx -t`). */
  readonly output: string;
}

export class NginxMissingError extends Error {}

/** `NGINX_BIN`, else `nginx` on PATH. */
export function nginxBinary(explicit?: string): string {
  return explicit ?? process.env['NGINX_BIN'] ?? 'nginx';
}

/**
 * `nginx -t` on a rendered directory, with a throw-away prefix so nothing under /etc/nginx or the
 * distro's log paths is touched. The run dir is created first: nginx creates its temp folders in it.
 */
export async function checkConfig(outDir: string, runDir: string, nginxBin: string): Promise<NginxCheck> {
  const prefix = await mkdtemp(join(tmpdir(), 'ingress2nginx-check-'));
  try {
    await mkdir(runDir, { recursive: true });
    const result = await execa(nginxBin, ['-t', '-q', '-p', `${prefix}/`, '-c', resolve(outDir, mainConfigName)], {
      reject: false,
      stdin: 'ignore',
    });
    if (result.failed && (result as { code?: string }).code === 'ENOENT') {
      throw new NginxMissingError(`nginx binary "${nginxBin}" not found; install nginx or set --nginx-bin / NGINX_BIN`);
    }
    return { ok: result.exitCode === 0, output: result.stderr.trim() };
  } finally {
    await rm(prefix, { recursive: true, force: true });
  }
}
