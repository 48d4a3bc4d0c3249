import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { execa } from 'execa';
import { mainConfigName } from '../model/nginx.js';
import { environment, EnvironmentError, makeFolder, reason } from './environment.js';

export interface NginxCheck {
  readonly ok: boolean;
  /** nginx's own words (stderr of `nginx -t`). */
  readonly output: string;
}

/** `NGINX_BIN`, else `nginx` on PATH. */
export function nginxBinary(explicit?: string): string {
  return explicit ?? process.env['NGINX_BIN'] ?? 'nginx';
}

/**
 * `nginx -t` on a rendered directory, with a throw-away prefix so nothing under /etc/nginx or the
 * distro's log paths is touched. The run dir is created first: nginx creates its temp folders in it.
 * An nginx that cannot be started at all is an EnvironmentError, not a rejected config.
 */
export async function checkConfig(outDir: string, runDir: string, nginxBin: string): Promise<NginxCheck> {
  const prefix = await environment(`cannot make a temporary folder for nginx -t in ${tmpdir()}`, () =>
    mkdtemp(join(tmpdir(), 'ingress2nginx-check-')),
  );
  try {
    await environment(`cannot create the run dir ${runDir}`, () => makeFolder(runDir));
    const result = await execa(nginxBin, ['-t', '-q', '-p', `${prefix}/`, '-c', resolve(outDir, mainConfigName)], {
      reject: false,
      stdin: 'ignore',
    });
    const spawnError = (result as { code?: string }).code;
    if (result.exitCode === undefined && result.signal === undefined && spawnError !== undefined) {
      throw new EnvironmentError(
        spawnError === 'ENOENT'
          ? `nginx binary "${nginxBin}" not found; install nginx or set --nginx-bin / NGINX_BIN`
          : `cannot run the nginx binary "${nginxBin}": ${reason({ code: spawnError, message: spawnError })}`,
      );
    }
    const output = result.stderr.trim();
    if (result.exitCode === 0) return { ok: true, output };
    const how = result.signal !== undefined ? `was killed by ${result.signal}` : `exited with ${result.exitCode}`;
    return { ok: false, output: output || `nginx -t ${how} and printed nothing` };
  } finally {
    await rm(prefix, { recursive: true, force: true });
  }
}
