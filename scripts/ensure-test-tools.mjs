#!/usr/bin/env node
// Runs before `npm test`: integration tests need a real nginx with the stream module (design §7),
// and a missing one must fail the run, never skip tests. Quiet when nginx is already there; as
// root with apt-get it installs Debian's packages; otherwise it says exactly what to do and fails.
// Keep the detection in step with requireNginx() in test/support/nginx.ts.
import { spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const DEBIAN_STREAM_MODULE_FILE = '/usr/lib/nginx/modules/ngx_stream_module.so';
const PACKAGES = ['nginx', 'libnginx-mod-stream'];
const INSTALL_COMMAND = `apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends ${PACKAGES.join(' ')}`;
// Debian's maintainer scripts ask policy-rc.d whether they may start services; 101 means "no".
const POLICY_RC_D = '/usr/sbin/policy-rc.d';

function isExecutableFile(file) {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function findOnPath(name) {
  return (process.env.PATH ?? '')
    .split(path.delimiter)
    .filter((dir) => dir !== '')
    .map((dir) => path.join(dir, name))
    .find(isExecutableFile);
}

/** NGINX_BIN if set (and then only it), else nginx on PATH, else /usr/sbin/nginx. */
function findNginx() {
  const fromEnvironment = process.env.NGINX_BIN;
  if (fromEnvironment) return isExecutableFile(fromEnvironment) ? fromEnvironment : undefined;
  return findOnPath('nginx') ?? (isExecutableFile('/usr/sbin/nginx') ? '/usr/sbin/nginx' : undefined);
}

/** What is missing for the tests, or undefined when nginx with the stream module is present. */
function missingPiece() {
  const binary = findNginx();
  if (binary === undefined) {
    return process.env.NGINX_BIN
      ? `NGINX_BIN=${process.env.NGINX_BIN} is not an executable file`
      : 'no nginx binary (looked at NGINX_BIN, PATH and /usr/sbin/nginx)';
  }
  // nginx -V prints its version and configure arguments to stderr.
  const build = spawnSync(binary, ['-V'], { encoding: 'utf8' });
  const buildText = `${build.stdout ?? ''}${build.stderr ?? ''}`;
  if (build.status !== 0) return `\`${binary} -V\` failed: ${buildText.trim() || build.error?.message}`;
  if (/--with-stream(?=\s|$)/.test(buildText)) return undefined;
  const modulesPath = /--modules-path=(\S+)/.exec(buildText)?.[1];
  const moduleFiles = [...new Set([modulesPath && path.join(modulesPath, 'ngx_stream_module.so'), DEBIAN_STREAM_MODULE_FILE])].filter(Boolean);
  if (moduleFiles.some((file) => existsSync(file))) return undefined;
  return `${binary} has no stream module (not built in, and no ${moduleFiles.join(' or ')})`;
}

function run(command, args, extraEnvironment = {}) {
  console.error(`ensure-nginx: ${command} ${args.join(' ')}`);
  const result = spawnSync(command, args, { stdio: 'inherit', env: { ...process.env, ...extraEnvironment } });
  return result.status === 0;
}

function installWithApt() {
  const blockServiceStart = !existsSync(POLICY_RC_D);
  if (blockServiceStart) {
    writeFileSync(POLICY_RC_D, '#!/bin/sh\n# Temporary, from scripts/ensure-nginx.mjs: do not start a system nginx.\nexit 101\n', { mode: 0o755 });
  }
  try {
    return (
      run('apt-get', ['update']) &&
      run('apt-get', ['install', '-y', '--no-install-recommends', ...PACKAGES], { DEBIAN_FRONTEND: 'noninteractive' })
    );
  } finally {
    if (blockServiceStart) unlinkSync(POLICY_RC_D);
  }
}

function fail(missing) {
  console.error(
    [
      `ensure-nginx: the integration tests need nginx with the stream module: ${missing}.`,
      `Install it as root:  ${INSTALL_COMMAND}`,
      'or point NGINX_BIN at an nginx binary that has the stream module (built in, or at ' + DEBIAN_STREAM_MODULE_FILE + ').',
    ].join('\n'),
  );
  process.exit(1);
}

const missing = missingPiece();
if (missing !== undefined) {
  const canInstall = process.getuid?.() === 0 && !process.env.NGINX_BIN && findOnPath('apt-get') !== undefined;
  if (!canInstall) fail(missing);
  console.error(`ensure-nginx: ${missing}; installing ${PACKAGES.join(' ')}`);
  if (!installWithApt()) fail(`${missing}, and the install failed`);
  const stillMissing = missingPiece();
  if (stillMissing !== undefined) fail(`${stillMissing} (even after installing ${PACKAGES.join(' ')})`);
}
