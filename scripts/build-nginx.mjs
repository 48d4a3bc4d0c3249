#!/usr/bin/env node
// Builds the second nginx generation the tests and benches run: nginx >= 1.25.5 (it has the stream
// `pass` directive), from Debian's source package of the newest suite that serves one, since the
// machine's own suite (Debian 12) ships 1.22. The build is cached: a later run prints the cached binary
// and touches neither apt nor the network.
//
//   node scripts/build-nginx.mjs        prints the binary's path on stdout (progress on stderr)
//
// The deb-src entry is derived at run time from the machine's apt sources (their archive URI and key),
// and apt runs on a private state folder under the cache, so the machine's apt setup is not changed.
// Installing the compiler and libraries the build needs takes root; the rest does not.
// Keep the cache path in step with newNginxBinary() in test/support/nginx.ts.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { cpus, homedir } from 'node:os';
import path from 'node:path';

const MINIMUM = '1.25.5';
/** Suites to look in, the newest first; the first one whose source downloads wins. */
const SUITES = ['testing', 'stable'];
const BUILD_PACKAGES = ['gcc', 'make', 'libc6-dev', 'libssl-dev', 'libpcre2-dev', 'zlib1g-dev'];
const BUILD_HEADERS = ['/usr/include/openssl/ssl.h', '/usr/include/pcre2.h', '/usr/include/zlib.h'];
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
  const result = spawnSync(command, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], ...options });
  return { ok: result.status === 0, stdout: result.stdout ?? '', stderr: result.stderr ?? result.error?.message ?? '' };
}

function fail(message) {
  log(message);
  process.exit(1);
}

/** The binary runs and was configured with every flag above (a cached build from older flags is rebuilt). */
function works(binary) {
  if (!existsSync(binary)) return false;
  const version = run(binary, ['-V']);
  return version.ok && CONFIGURE.every((flag) => version.stderr.includes(flag));
}

/** `a >= b` for dotted nginx versions. */
function atLeast(a, b) {
  const [x, y] = [a, b].map((v) => v.split('.').map(Number));
  for (let i = 0; i < 3; i++) if ((x[i] ?? 0) !== (y[i] ?? 0)) return (x[i] ?? 0) > (y[i] ?? 0);
  return true;
}

/**
 * The main Debian archive of the machine's apt sources: URI and signing key of a `deb` entry for a suite
 * without a `-updates`/`-security` part. deb822 `.sources` files first, then one-line `.list` files.
 */
function debianArchive() {
  const dir = '/etc/apt/sources.list.d';
  const files = existsSync(dir) ? readdirSync(dir).sort().map((f) => path.join(dir, f)) : [];
  for (const file of files.filter((f) => f.endsWith('.sources'))) {
    for (const stanza of readFileSync(file, 'utf8').split(/\n\s*\n/)) {
      const field = (name) => new RegExp(`^${name}:[ \\t]*(.+)$`, 'mi').exec(stanza)?.[1]?.trim();
      const types = field('Types')?.split(/\s+/) ?? [];
      const uri = field('URIs')?.split(/\s+/)[0];
      const suites = field('Suites')?.split(/\s+/) ?? [];
      if (!types.includes('deb') || !uri || /^enabled:\s*no/im.test(stanza)) continue;
      if (suites.some((s) => !s.includes('-')) && /\/debian\/?$/.test(uri)) return { uri, signedBy: field('Signed-By') };
    }
  }
  for (const file of ['/etc/apt/sources.list', ...files.filter((f) => f.endsWith('.list'))].filter(existsSync)) {
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      const match = /^deb\s+(?:\[([^\]]*)\]\s+)?(\S+)\s+([^\s-]+)\s/.exec(line.trim());
      if (match && /\/debian\/?$/.test(match[2])) {
        const signedBy = /signed-by=(\S+)/.exec(match[1] ?? '')?.[1];
        return { uri: match[2], signedBy };
      }
    }
  }
  return undefined;
}

function ensureBuildTools() {
  const missing = [...BUILD_HEADERS.filter((f) => !existsSync(f)), ...['gcc', 'make'].filter((t) => !run('sh', ['-c', `command -v ${t}`]).ok)];
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

/** Downloads the newest nginx source package >= MINIMUM that the archive serves; returns its folder and version. */
function downloadSource(work) {
  const archive = debianArchive();
  if (!archive) fail('found no Debian archive in /etc/apt/sources.list.d/*.sources or sources.list to derive a deb-src entry from');
  const apt = path.join(work, 'apt');
  for (const dir of ['lists/partial', 'cache/archives/partial', 'source']) mkdirSync(path.join(apt, dir), { recursive: true });
  const sourcesFile = path.join(apt, 'nginx-src.sources');
  writeFileSync(
    sourcesFile,
    ['Types: deb-src', `URIs: ${archive.uri}`, `Suites: ${SUITES.join(' ')}`, 'Components: main', ...(archive.signedBy ? [`Signed-By: ${archive.signedBy}`] : []), ''].join('\n'),
  );
  const options = [
    ['Dir::Etc::SourceList', sourcesFile],
    ['Dir::Etc::SourceParts', path.join(apt, 'no-parts')],
    ['Dir::State::Lists', path.join(apt, 'lists')],
    ['Dir::Cache', path.join(apt, 'cache')],
    ['Debug::NoLocking', '1'],
    ['APT::Sandbox::User', 'root'],
  ].flatMap(([key, value]) => ['-o', `${key}=${value}`]);
  log(`apt-get update for deb-src ${archive.uri} ${SUITES.join(' ')}`);
  const update = run('apt-get', [...options, 'update']);
  if (!update.ok) fail(`apt-get update failed:\n${update.stderr}`);
  const shown = run('apt-cache', [...options, 'showsrc', 'nginx']);
  const versions = [...new Set([...shown.stdout.matchAll(/^Version:\s*(\S+)$/gm)].map((m) => m[1]))]
    .filter((v) => atLeast(v.replace(/^\d+:/, '').split('-')[0], MINIMUM))
    .sort((a, b) => (run('dpkg', ['--compare-versions', a, 'gt', b]).ok ? -1 : 1));
  if (versions.length === 0) fail(`no nginx source >= ${MINIMUM} in ${SUITES.join(', ')}`);
  const sourceDir = path.join(apt, 'source');
  for (const version of versions) {
    log(`apt-get source --download-only nginx=${version}`);
    const download = run('apt-get', [...options, 'source', '--download-only', `nginx=${version}`], { cwd: sourceDir });
    const upstream = version.replace(/^\d+:/, '').split('-')[0];
    const tarball = readdirSync(sourceDir).find((f) => f === `nginx_${upstream}.orig.tar.gz`);
    if (download.ok && tarball) return { tarball: path.join(sourceDir, tarball), version: upstream, debianVersion: version };
    log(`  not reachable: ${download.stderr.split('\n').find((l) => l.startsWith('E:')) ?? 'no orig tarball'}`);
    for (const file of readdirSync(sourceDir)) rmSync(path.join(sourceDir, file), { force: true });
  }
  fail(`none of nginx ${versions.join(', ')} could be downloaded`);
}

function build() {
  if (works(currentBinary)) return currentBinary;
  ensureBuildTools();
  mkdirSync(installRoot, { recursive: true });
  const work = path.join(installRoot, `work-${process.pid}`);
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  try {
    const { tarball, version, debianVersion } = downloadSource(work);
    const unpacked = run('tar', ['-xzf', tarball, '-C', work]);
    if (!unpacked.ok) fail(`tar failed:\n${unpacked.stderr}`);
    const sourceTree = path.join(work, `nginx-${version}`);
    const prefix = path.join(installRoot, `nginx-${version}`);
    log(`configure and make nginx ${version} (Debian ${debianVersion}) into ${prefix}`);
    const configure = run('./configure', [`--prefix=${prefix}`, ...CONFIGURE], { cwd: sourceTree });
    if (!configure.ok) fail(`configure failed:\n${configure.stdout.slice(-2000)}${configure.stderr}`);
    const make = run('make', [`-j${Math.max(2, cpus().length)}`], { cwd: sourceTree });
    if (!make.ok) fail(`make failed:\n${make.stderr.slice(-4000)}`);
    rmSync(prefix, { recursive: true, force: true });
    const install = run('make', ['install'], { cwd: sourceTree });
    if (!install.ok) fail(`make install failed:\n${install.stderr.slice(-4000)}`);
    // Switched by a rename, so a reader never sees a half-made link.
    const link = path.join(installRoot, `current.${process.pid}`);
    rmSync(link, { force: true });
    symlinkSync(prefix, link);
    renameSync(link, path.join(installRoot, 'current'));
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  if (!works(currentBinary)) fail(`${currentBinary} does not run after the build`);
  return currentBinary;
}

process.stdout.write(`${build()}\n`);
