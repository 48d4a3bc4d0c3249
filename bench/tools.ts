import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describeNginx, nginxBuild } from '../src/sidecar/nginx.js';
import { requireNginx, type NginxInstallation } from '../test/support/nginx.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** As root with apt-get, installs Debian's package for a missing tool; otherwise says what to run. */
export function ensureTool(command: string, debianPackage: string): string {
  const find = () => spawnSync('sh', ['-c', `command -v ${command}`], { encoding: 'utf8' }).stdout.trim();
  let found = find();
  if (found) return found;
  if (process.getuid?.() !== 0) {
    console.error(`${command} is missing. As root: apt-get install -y --no-install-recommends ${debianPackage}`);
    process.exit(2);
  }
  console.error(`installing ${debianPackage} from Debian's packages`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  let install = spawnSync('apt-get', ['install', '-y', '--no-install-recommends', debianPackage], { env, encoding: 'utf8' });
  if (install.status !== 0) {
    spawnSync('apt-get', ['update'], { env, encoding: 'utf8' });
    install = spawnSync('apt-get', ['install', '-y', '--no-install-recommends', debianPackage], { env, encoding: 'utf8' });
  }
  found = find();
  if (!found) {
    console.error(`apt-get install ${debianPackage} failed:\n${install.stderr}`);
    process.exit(2);
  }
  return found;
}

/**
 * The machine's nginx, and the pinned newer nginx built (or taken from its cache) by
 * scripts/build-nginx.mjs; prints which nginx and OpenSSL releases each is, so every figure says what
 * produced it.
 */
export async function nginxInstallations(): Promise<{ distro: NginxInstallation; fresh: NginxInstallation }> {
  const distro = requireNginx('distro');
  const build = spawnSync(process.execPath, [join(root, 'scripts', 'build-nginx.mjs')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  if (build.status !== 0) {
    console.error('scripts/build-nginx.mjs failed: the newer nginx is needed for the pass contenders');
    process.exit(2);
  }
  if (!process.env.NGINX_NEW_BIN) process.env.NGINX_NEW_BIN = build.stdout.trim();
  const fresh = requireNginx('pass');
  for (const [generation, installation] of [['distro', distro], ['pass', fresh]] as const) {
    console.log(`nginx of the ${generation} generation: ${describeNginx(await nginxBuild(installation.binary))} (${installation.binary})`);
  }
  return { distro, fresh };
}
