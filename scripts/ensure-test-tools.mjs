#!/usr/bin/env node
// Runs before `npm test`: the tests need external tools, and a missing one must fail the run, never
// skip tests. Integration tests need a real nginx with the stream module (design §7); the fake
// Kubernetes API server is held to the protocol by tests that drive a real kubectl; the review page is
// tested in Debian's Chromium (playwright-core drives it and never downloads a browser). Quiet when
// everything is there; as root with apt-get it installs Debian's packages for what is missing;
// otherwise it says exactly what to do and fails.
// Keep the detection in step with requireNginx() in test/support/nginx.ts, requireKubectl() in
// test/support/kubectl.ts and chromiumBinary() in test/support/browser.ts.
import { spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const DEBIAN_STREAM_MODULE_FILE = '/usr/lib/nginx/modules/ngx_stream_module.so';
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

/** What is missing of nginx, or undefined when nginx with the stream module is present. */
function missingNginx() {
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

/** KUBECTL_BIN if set (and then only it), else kubectl on PATH. */
function findKubectl() {
  const fromEnvironment = process.env.KUBECTL_BIN;
  if (fromEnvironment) return isExecutableFile(fromEnvironment) ? fromEnvironment : undefined;
  return findOnPath('kubectl');
}

/** What is missing of kubectl, or undefined when a working kubectl is present. */
function missingKubectl() {
  const binary = findKubectl();
  if (binary === undefined) {
    return process.env.KUBECTL_BIN ? `KUBECTL_BIN=${process.env.KUBECTL_BIN} is not an executable file` : 'no kubectl binary (looked at KUBECTL_BIN and PATH)';
  }
  const version = spawnSync(binary, ['version', '--client'], { encoding: 'utf8' });
  if (version.status !== 0) return `\`${binary} version --client\` failed: ${`${version.stdout ?? ''}${version.stderr ?? ''}`.trim() || version.error?.message}`;
  return undefined;
}

/** CHROMIUM_BIN if set (and then only it), else Debian's /usr/bin/chromium. */
function missingChromium() {
  const binary = process.env.CHROMIUM_BIN || '/usr/bin/chromium';
  if (!isExecutableFile(binary)) return `no Chromium at ${binary}`;
  const version = spawnSync(binary, ['--version'], { encoding: 'utf8' });
  if (version.status !== 0) return `\`${binary} --version\` failed: ${`${version.stdout ?? ''}${version.stderr ?? ''}`.trim() || version.error?.message}`;
  return undefined;
}

const TOOLS = [
  {
    id: 'nginx',
    name: 'nginx with the stream module',
    packages: ['nginx', 'libnginx-mod-stream'],
    missing: missingNginx,
    // Pointed at a binary of one's own: installing Debian's would not change what the tests run.
    installable: () => !process.env.NGINX_BIN,
    alternative: `or point NGINX_BIN at an nginx binary that has the stream module (built in, or at ${DEBIAN_STREAM_MODULE_FILE})`,
  },
  {
    id: 'kubectl',
    name: 'kubectl',
    packages: ['kubernetes-client'],
    missing: missingKubectl,
    installable: () => !process.env.KUBECTL_BIN,
    alternative: 'or point KUBECTL_BIN at a kubectl binary',
  },
  {
    id: 'chromium',
    name: 'Chromium (the review page tests)',
    packages: ['chromium'],
    missing: missingChromium,
    installable: () => !process.env.CHROMIUM_BIN,
    alternative: 'or point CHROMIUM_BIN at a Chromium binary',
  },
];

function run(command, args, extraEnvironment = {}) {
  console.error(`ensure-test-tools: ${command} ${args.join(' ')}`);
  const result = spawnSync(command, args, { stdio: 'inherit', env: { ...process.env, ...extraEnvironment } });
  return result.status === 0;
}

function installWithApt(packages) {
  const blockServiceStart = !existsSync(POLICY_RC_D);
  if (blockServiceStart) {
    writeFileSync(POLICY_RC_D, '#!/bin/sh\n# Temporary, from scripts/ensure-test-tools.mjs: do not start a system nginx.\nexit 101\n', { mode: 0o755 });
  }
  try {
    return (
      run('apt-get', ['update']) &&
      run('apt-get', ['install', '-y', '--no-install-recommends', ...packages], { DEBIAN_FRONTEND: 'noninteractive' })
    );
  } finally {
    if (blockServiceStart) unlinkSync(POLICY_RC_D);
  }
}

function fail(problems) {
  console.error(
    problems
      .map(({ tool, missing }) =>
        [
          `ensure-test-tools: the tests need ${tool.name}: ${missing}.`,
          `Install it as root:  apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends ${tool.packages.join(' ')}`,
          tool.alternative + '.',
        ].join('\n'),
      )
      .join('\n'),
  );
  process.exit(1);
}

// Arguments name the tools to ensure (`nginx`, `nginx-pass`, `kubectl`); none = all of them.
const wanted = process.argv.slice(2);
const unknown = wanted.filter((id) => id !== 'nginx-pass' && !TOOLS.some((tool) => tool.id === id));
if (unknown.length > 0) {
  console.error(`ensure-test-tools: unknown tool ${unknown.join(', ')}; known: ${[...TOOLS.map((tool) => tool.id), 'nginx-pass'].join(', ')}`);
  process.exit(2);
}
// The second nginx generation (>= 1.25.5, the `pass` topology) is built from Debian's source package;
// its own script caches the build and fails with what to do when it cannot.
if ((wanted.length === 0 || wanted.includes('nginx-pass')) && !process.env.NGINX_NEW_BIN) {
  const built = spawnSync(process.execPath, [path.join(import.meta.dirname, 'build-nginx.mjs')], { stdio: ['ignore', 'ignore', 'inherit'] });
  if (built.status !== 0) {
    console.error('ensure-test-tools: the tests of the pass generation need nginx >= 1.25.5 (scripts/build-nginx.mjs failed above), or NGINX_NEW_BIN');
    process.exit(1);
  }
}
const problems = TOOLS.filter((tool) => wanted.length === 0 || wanted.includes(tool.id))
  .map((tool) => ({ tool, missing: tool.missing() })).filter(({ missing }) => missing !== undefined);
if (problems.length > 0) {
  const canInstall = process.getuid?.() === 0 && findOnPath('apt-get') !== undefined && problems.every(({ tool }) => tool.installable());
  if (!canInstall) fail(problems);
  const packages = problems.flatMap(({ tool }) => tool.packages);
  console.error(`ensure-test-tools: ${problems.map(({ missing }) => missing).join('; ')}; installing ${packages.join(' ')}`);
  if (!installWithApt(packages)) fail(problems.map(({ tool, missing }) => ({ tool, missing: `${missing}, and the install failed` })));
  const stillMissing = problems
    .map(({ tool }) => ({ tool, missing: tool.missing() }))
    .filter(({ missing }) => missing !== undefined)
    .map(({ tool, missing }) => ({ tool, missing: `${missing} (even after installing ${tool.packages.join(' ')})` }));
  if (stillMissing.length > 0) fail(stillMissing);
}
