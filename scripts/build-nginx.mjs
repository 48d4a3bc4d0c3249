#!/usr/bin/env node
// Builds the second nginx generation the tests and benches run: the nginx and OpenSSL releases pinned,
// with their SHA-256, in pinned-sources.json (the 1.28 line deploy/ ships, with OpenSSL 3.5; the
// machine's own suite, Debian 12, ships 1.22 with OpenSSL 3.0). The upstream tarballs are fetched by file
// name from the pool of the Debian archive the machine's apt sources name, checked against their pins,
// and built without Debian's patches; OpenSSL is linked statically, since its release decides much of
// what a reload costs. The build is cached: a later run prints the cached binary and touches neither apt
// nor the network. Nothing floats: which nginx and OpenSSL the suite runs changes only with a commit.
//
//   node scripts/build-nginx.mjs                   prints the binary's path on stdout (progress on stderr)
//   node scripts/build-nginx.mjs --verify-sources  checks that every pinned tarball, fallbacks included,
//                                                  is still served and matches its pin (no build)
//
// Installing the compiler and libraries the build needs takes root; the rest does not.
// Keep the cache path in step with newNginxBinary() in test/support/nginx.ts.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, symlinkSync } from 'node:fs';
import { cpus, homedir } from 'node:os';
import path from 'node:path';
import { ChecksumMismatch, debianArchive, fetchPinned, NoneReachable, readPins, verifyPinned } from './pinned-sources.mjs';

const BUILD_PACKAGES = ['gcc', 'make', 'perl', 'libc6-dev', 'libpcre2-dev', 'zlib1g-dev'];
const BUILD_HEADERS = ['/usr/include/pcre2.h', '/usr/include/zlib.h'];
/** Perl modules OpenSSL's Configure loads that Debian's perl-base lacks. */
const BUILD_PERL_MODULES = ['IPC::Cmd', 'File::Compare'];
/**
 * OpenSSL's libraries only (nginx links them statically; the tests, docs and CLI are not needed), with
 * threads as in Debian's libssl: nginx's configure asks for `no-threads`, and a later option wins.
 */
const OPENSSL_OPTIONS = 'enable-threads no-tests no-docs no-apps';
const CONFIGURE = [
  // As Debian's: the log nginx opens before it reads any config must not be a file under the prefix.
  '--error-log-path=stderr',
  '--with-cc-opt=-O2',
  '--with-threads',
  '--with-pcre-jit',
  '--with-http_ssl_module',
  '--with-http_v2_module',
  '--with-http_realip_module',
  '--with-http_auth_request_module',
  '--with-stream',
  '--with-stream_ssl_module',
  '--with-stream_ssl_preread_module',
  '--with-stream_realip_module',
];

const cacheRoot = process.env.I2N_CACHE_DIR || path.join(process.env.XDG_CACHE_HOME || path.join(homedir(), '.cache'), 'ingress2nginx');
/** `current` points at the installed build: `<cacheRoot>/nginx-new/current/sbin/nginx`. */
const installRoot = path.join(cacheRoot, 'nginx-new');
const currentBinary = path.join(installRoot, 'current', 'sbin', 'nginx');

function log(message) {
  process.stderr.write(`build-nginx: ${message}\n`);
}

function run(command, args, options = {}) {
  // OpenSSL's build prints megabytes: past spawnSync's 1 MiB default the child would be killed.
  const result = spawnSync(command, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 256 * 1024 * 1024, ...options });
  return { ok: result.status === 0, stdout: result.stdout ?? '', stderr: result.stderr ?? result.error?.message ?? '' };
}

/** Thrown by `fail`, so the `finally` that removes the work folder runs before the script exits. */
class BuildFailure extends Error {}

function fail(message) {
  throw new BuildFailure(message);
}

/**
 * The binary runs, was configured with every flag above, and has a pinned nginx and OpenSSL release (a
 * cached build from older flags or releases is rebuilt).
 */
function works(binary, pins) {
  if (!existsSync(binary)) return false;
  const version = run(binary, ['-V']);
  const nginx = /nginx version: nginx\/(\S+)/.exec(version.stderr)?.[1];
  const openssl = /built with OpenSSL (\S+)/.exec(version.stderr)?.[1];
  return (
    version.ok &&
    pins.nginx.some((pin) => pin.version === nginx) &&
    pins.openssl.some((pin) => pin.version === openssl) &&
    [...CONFIGURE, '--with-openssl=', OPENSSL_OPTIONS].every((flag) => version.stderr.includes(flag))
  );
}

function ensureBuildTools() {
  const missing = [
    ...BUILD_HEADERS.filter((f) => !existsSync(f)),
    ...['gcc', 'make'].filter((t) => !run('sh', ['-c', `command -v ${t}`]).ok),
    ...BUILD_PERL_MODULES.filter((m) => !run('perl', [`-M${m}`, '-e', '1']).ok).map((m) => `perl's ${m}`),
  ];
  if (missing.length === 0) return;
  if (process.getuid?.() !== 0) {
    fail(`missing ${missing.join(', ')}. As root: apt-get install -y --no-install-recommends ${BUILD_PACKAGES.join(' ')}`);
  }
  log(`installing ${BUILD_PACKAGES.join(' ')}`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  let install = run('apt-get', ['install', '-y', '--no-install-recommends', ...BUILD_PACKAGES], { env });
  if (!install.ok) {
    run('apt-get', ['update'], { env });
    install = run('apt-get', ['install', '-y', '--no-install-recommends', ...BUILD_PACKAGES], { env });
  }
  if (!install.ok) fail(`apt-get install ${BUILD_PACKAGES.join(' ')} failed:\n${install.stderr}`);
}

/** Unpacks a source tarball into `work`; returns the folder it made. */
function unpack(tarball, work, folder) {
  const unpacked = run('tar', ['-xf', tarball, '-C', work]);
  if (!unpacked.ok) fail(`tar failed:\n${unpacked.stderr}`);
  const tree = path.join(work, folder);
  if (!existsSync(tree)) fail(`${path.basename(tarball)} has no ${folder}/`);
  return tree;
}

async function build() {
  const pins = readPins();
  if (works(currentBinary, pins)) return currentBinary;
  ensureBuildTools();
  const archive = debianArchive();
  if (!archive) fail('found no Debian archive in /etc/apt/sources.list.d/*.sources or sources.list to fetch the pinned sources from (or set I2N_DEBIAN_ARCHIVE)');
  mkdirSync(installRoot, { recursive: true });
  const work = path.join(installRoot, `work-${process.pid}`);
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  try {
    const nginx = await fetchPinned({ pins, kind: 'nginx', archive, dir: work, log });
    const openssl = await fetchPinned({ pins, kind: 'openssl', archive, dir: work, log });
    const nginxTree = unpack(nginx.file, work, `nginx-${nginx.pin.version}`);
    const opensslTree = unpack(openssl.file, work, `openssl-${openssl.pin.version}`);
    const prefix = path.join(installRoot, `nginx-${nginx.pin.version}-openssl-${openssl.pin.version}`);
    log(`configure and make nginx ${nginx.pin.version} with OpenSSL ${openssl.pin.version} into ${prefix}`);
    const configure = run('./configure', [`--prefix=${prefix}`, ...CONFIGURE, `--with-openssl=${opensslTree}`, `--with-openssl-opt=${OPENSSL_OPTIONS}`], {
      cwd: nginxTree,
    });
    if (!configure.ok) fail(`configure failed:\n${configure.stdout.slice(-2000)}${configure.stderr}`);
    const make = run('make', [`-j${Math.max(2, cpus().length)}`], { cwd: nginxTree });
    if (!make.ok) fail(`make failed:\n${make.stderr.slice(-4000)}`);
    rmSync(prefix, { recursive: true, force: true });
    const install = run('make', ['install'], { cwd: nginxTree });
    if (!install.ok) fail(`make install failed:\n${install.stderr.slice(-4000)}`);
    // Switched by a rename, so a reader never sees a half-made link.
    const link = path.join(installRoot, `current.${process.pid}`);
    rmSync(link, { force: true });
    symlinkSync(prefix, link);
    renameSync(link, path.join(installRoot, 'current'));
    // Builds from older sources or options: `current` no longer points at them.
    for (const entry of readdirSync(installRoot)) {
      if (entry.startsWith('nginx-') && path.join(installRoot, entry) !== prefix) rmSync(path.join(installRoot, entry), { recursive: true, force: true });
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  if (!works(currentBinary, pins)) fail(`${currentBinary} does not run after the build`);
  return currentBinary;
}

/** `--verify-sources`: every pinned tarball is served and matches; exit 1 with what to change otherwise. */
async function verifySources() {
  const archive = debianArchive();
  if (!archive) fail('found no Debian archive in the apt sources to check the pinned sources against (or set I2N_DEBIAN_ARCHIVE)');
  const problems = await verifyPinned({ pins: readPins(), archive, log });
  if (problems.length > 0) fail(problems.join('\n'));
}

try {
  if (process.argv.includes('--verify-sources')) await verifySources();
  else process.stdout.write(`${await build()}\n`);
} catch (error) {
  if (!(error instanceof BuildFailure || error instanceof ChecksumMismatch || error instanceof NoneReachable)) throw error;
  log(error.message);
  process.exitCode = 1;
}
