#!/usr/bin/env node
// Builds the second nginx generation the tests and benches run: nginx >= 1.25.5 (it has the stream
// `pass` directive), from Debian's source package of the newest suite that serves one, since the
// machine's own suite (Debian 12) ships 1.22. It links statically the OpenSSL of the same suite's source
// package, so that the binary has the nginx and OpenSSL releases that suite ships, as its users do: the
// OpenSSL release decides much of what a reload costs. Both are built from their upstream tarballs,
// without Debian's patches. The build is cached: a later run prints the cached binary and touches
// neither apt nor the network.
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

/** The binary runs and was configured with every flag above (a cached build from older flags is rebuilt). */
function works(binary) {
  if (!existsSync(binary)) return false;
  const version = run(binary, ['-V']);
  return version.ok && [...CONFIGURE, '--with-openssl=', OPENSSL_OPTIONS].every((flag) => version.stderr.includes(flag));
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

/** apt on a private state folder under `work`, with a deb-src entry for SUITES of the machine's Debian archive. */
function privateApt(work) {
  const archive = debianArchive();
  if (!archive) fail('found no Debian archive in /etc/apt/sources.list.d/*.sources or sources.list to derive a deb-src entry from');
  const apt = path.join(work, 'apt');
  for (const dir of ['lists/partial', 'cache/archives/partial', 'source']) mkdirSync(path.join(apt, dir), { recursive: true });
  const sourcesFile = path.join(apt, 'deb-src.sources');
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
  return { options, sourceDir: path.join(apt, 'source') };
}

/** The versions of source package `name` the archive lists, the newest first, each with its suite. */
function sourceVersions(apt, name) {
  const listed = run('apt-cache', [...apt.options, 'madison', name]);
  if (!listed.ok) fail(`apt-cache madison ${name} failed:\n${listed.stderr}`);
  // `madison` also lists the sources of other packages that build a binary called `name`.
  const versions = [...listed.stdout.matchAll(/^\s*(\S+)\s*\|\s*(\S+)\s*\|\s*\S+\s+([^\s/]+)\/\S+\s+Sources$/gm)]
    .filter((m) => m[1] === name)
    .map((m) => ({ version: m[2], suite: m[3] }));
  return versions.sort((a, b) => (a.version === b.version ? 0 : run('dpkg', ['--compare-versions', a.version, 'gt', b.version]).ok ? -1 : 1));
}

/** Downloads the first of `candidates` whose source the archive serves; returns its orig tarball, or undefined. */
function downloadFirst(apt, name, candidates) {
  const tried = new Set();
  for (const candidate of candidates) {
    // A version both suites list is one download.
    if (tried.has(candidate.version)) continue;
    tried.add(candidate.version);
    log(`apt-get source --download-only ${name}=${candidate.version} (${candidate.suite})`);
    const download = run('apt-get', [...apt.options, 'source', '--download-only', `${name}=${candidate.version}`], { cwd: apt.sourceDir });
    const upstream = upstreamVersion(candidate.version);
    const tarball = readdirSync(apt.sourceDir).find((f) => [`${name}_${upstream}.orig.tar.gz`, `${name}_${upstream}.orig.tar.xz`].includes(f));
    if (download.ok && tarball) return { ...candidate, upstream, tarball: path.join(apt.sourceDir, tarball) };
    log(`  not reachable: ${download.stderr.split('\n').find((l) => l.startsWith('E:')) ?? 'no orig tarball'}`);
    for (const file of readdirSync(apt.sourceDir)) rmSync(path.join(apt.sourceDir, file), { force: true });
  }
  return undefined;
}

/** `1:1.26.3-3+deb13u7` → `1.26.3`. */
function upstreamVersion(debianVersion) {
  return debianVersion.replace(/^\d+:/, '').replace(/-[^-]*$/, '');
}

/** Unpacks a source tarball into `work`; returns the folder it made. */
function unpack(tarball, work, folder) {
  const unpacked = run('tar', ['-xf', tarball, '-C', work]);
  if (!unpacked.ok) fail(`tar failed:\n${unpacked.stderr}`);
  const tree = path.join(work, folder);
  if (!existsSync(tree)) fail(`${path.basename(tarball)} has no ${folder}/`);
  return tree;
}

function build() {
  if (works(currentBinary)) return currentBinary;
  ensureBuildTools();
  mkdirSync(installRoot, { recursive: true });
  const work = path.join(installRoot, `work-${process.pid}`);
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  try {
    const apt = privateApt(work);
    const nginxVersions = sourceVersions(apt, 'nginx').filter((v) => atLeast(upstreamVersion(v.version), MINIMUM));
    if (nginxVersions.length === 0) fail(`no nginx source >= ${MINIMUM} in ${SUITES.join(', ')}`);
    const nginx = downloadFirst(apt, 'nginx', nginxVersions);
    if (!nginx) fail(`none of nginx ${nginxVersions.map((v) => v.version).join(', ')} could be downloaded`);
    const nginxTree = unpack(nginx.tarball, work, `nginx-${nginx.upstream}`);
    // The OpenSSL release of nginx's own suite: it decides much of what a reload costs (3.0 decodes each
    // key and certificate several times slower than 3.5).
    const openssl = downloadFirst(apt, 'openssl', sourceVersions(apt, 'openssl').filter((v) => v.suite === nginx.suite));
    if (!openssl) fail(`no OpenSSL source of ${nginx.suite} could be downloaded`);
    const opensslTree = unpack(openssl.tarball, work, `openssl-${openssl.upstream}`);
    const prefix = path.join(installRoot, `nginx-${nginx.upstream}-openssl-${openssl.upstream}`);
    log(`configure and make nginx ${nginx.upstream} with OpenSSL ${openssl.upstream} (Debian ${nginx.suite}: ${nginx.version}, ${openssl.version}) into ${prefix}`);
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
  if (!works(currentBinary)) fail(`${currentBinary} does not run after the build`);
  return currentBinary;
}

try {
  process.stdout.write(`${build()}\n`);
} catch (error) {
  if (!(error instanceof BuildFailure)) throw error;
  log(error.message);
  process.exitCode = 1;
}
