// The pinned upstream sources of the newer nginx generation (pinned-sources.json): where they are
// fetched from, and the checksum check every download passes. Used by build-nginx.mjs (the build, and
// `--verify-sources` in .ci/run) and by its test, which serves a pool of its own on loopback.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export const PINS_FILE = path.join(import.meta.dirname, 'pinned-sources.json');

/** Source packages by the key they have in pinned-sources.json: their folder in a Debian pool. */
const POOL_FOLDERS = { nginx: 'pool/main/n/nginx', openssl: 'pool/main/o/openssl' };

/** A download that did not match its pin: never retried with a fallback, since the pin or the pool is wrong. */
export class ChecksumMismatch extends Error {}

/** No tarball of a list could be had: every file is gone from the pool (or the pool is unreachable). */
export class NoneReachable extends Error {}

/** `{ nginx: Pin[], openssl: Pin[] }` from `file` (I2N_PINNED_SOURCES, else the repository's). */
export function readPins(file = process.env.I2N_PINNED_SOURCES || PINS_FILE) {
  const pins = JSON.parse(readFileSync(file, 'utf8'));
  for (const kind of Object.keys(POOL_FOLDERS)) {
    const list = pins[kind];
    if (!Array.isArray(list) || list.length === 0) throw new Error(`${file}: "${kind}" must list at least one tarball`);
    for (const pin of list) {
      if (typeof pin.version !== 'string' || typeof pin.file !== 'string' || !/^[0-9a-f]{64}$/.test(pin.sha256 ?? '')) {
        throw new Error(`${file}: every "${kind}" entry needs version, file and a sha256 of 64 hex digits (${JSON.stringify(pin)})`);
      }
    }
  }
  return { file, nginx: pins.nginx, openssl: pins.openssl };
}

/**
 * The main Debian archive of the machine's apt sources (I2N_DEBIAN_ARCHIVE overrides it): the URI of a
 * `deb` entry for a suite without a `-updates`/`-security` part. deb822 `.sources` files first, then
 * one-line `.list` files.
 */
export function debianArchive(aptDir = '/etc/apt') {
  if (process.env.I2N_DEBIAN_ARCHIVE) return process.env.I2N_DEBIAN_ARCHIVE;
  const dir = path.join(aptDir, 'sources.list.d');
  const files = existsSync(dir) ? readdirSync(dir).sort().map((f) => path.join(dir, f)) : [];
  for (const file of files.filter((f) => f.endsWith('.sources'))) {
    for (const stanza of readFileSync(file, 'utf8').split(/\n\s*\n/)) {
      const field = (name) => new RegExp(`^${name}:[ \\t]*(.+)$`, 'mi').exec(stanza)?.[1]?.trim();
      const types = field('Types')?.split(/\s+/) ?? [];
      const uri = field('URIs')?.split(/\s+/)[0];
      const suites = field('Suites')?.split(/\s+/) ?? [];
      if (!types.includes('deb') || !uri || /^enabled:\s*no/im.test(stanza)) continue;
      if (suites.some((s) => !s.includes('-')) && /\/debian\/?$/.test(uri)) return uri;
    }
  }
  for (const file of [path.join(aptDir, 'sources.list'), ...files.filter((f) => f.endsWith('.list'))].filter(existsSync)) {
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      const match = /^deb\s+(?:\[[^\]]*\]\s+)?(\S+)\s+[^\s-]+\s/.exec(line.trim());
      if (match && /\/debian\/?$/.test(match[1])) return match[1];
    }
  }
  return undefined;
}

export function poolUrl(archive, kind, file) {
  return `${archive.replace(/\/+$/, '')}/${POOL_FOLDERS[kind]}/${file}`;
}

function sha256(bytes) {
  return createHash('sha256').update(bytes).digest('hex');
}

/** The tarball's bytes, or the reason it could not be had (HTTP status or network error). */
async function download(url) {
  try {
    const response = await fetch(url);
    if (!response.ok) return { missing: `HTTP ${response.status}` };
    return { bytes: Buffer.from(await response.arrayBuffer()) };
  } catch (error) {
    return { missing: error.cause?.code ?? error.message };
  }
}

function mismatch(pins, kind, pin, actual) {
  return new ChecksumMismatch(
    `${pin.file}: SHA-256 ${actual} does not match the pinned ${pin.sha256} (${kind} in ${pins.file}). ` +
      'Either the pool serves other bytes under this name (do not build from them) or the pin is wrong: ' +
      'check the tarball against its upstream release signature before changing the pin.',
  );
}

/**
 * Downloads the first tarball of `pins[kind]` the pool serves into `dir` and checks its checksum; a
 * missing file moves on to the next pin, a mismatch throws ChecksumMismatch. Returns the pin and the file.
 */
export async function fetchPinned({ pins, kind, archive, dir, log = () => {} }) {
  const tried = [];
  for (const pin of pins[kind]) {
    const url = poolUrl(archive, kind, pin.file);
    log(`fetching ${url}`);
    const result = await download(url);
    if (result.missing) {
      log(`  ${pin.file}: not served (${result.missing}); trying the next pin`);
      tried.push(`${pin.file} (${result.missing})`);
      continue;
    }
    const actual = sha256(result.bytes);
    if (actual !== pin.sha256) throw mismatch(pins, kind, pin, actual);
    const file = path.join(dir, pin.file);
    writeFileSync(file, result.bytes);
    return { pin, file };
  }
  throw new NoneReachable(`no pinned ${kind} tarball could be downloaded from ${archive}: ${tried.join(', ')}. Pin a release the pool serves in ${pins.file} (file name and its sha256sum).`);
}

/**
 * Checks that every pinned tarball, fallbacks included, is still served and matches its pin; returns
 * one problem per tarball that is not, each saying what to change. Nothing is kept.
 */
export async function verifyPinned({ pins, archive, log = () => {} }) {
  const problems = [];
  for (const kind of Object.keys(POOL_FOLDERS)) {
    for (const pin of pins[kind]) {
      const url = poolUrl(archive, kind, pin.file);
      const result = await download(url);
      if (result.missing) {
        problems.push(
          `${pin.file} is no longer served at ${url} (${result.missing}): remove it from "${kind}" in ${pins.file}, ` +
            'or replace it with a release the pool serves (its file name and sha256sum)',
        );
        continue;
      }
      const actual = sha256(result.bytes);
      if (actual !== pin.sha256) problems.push(mismatch(pins, kind, pin, actual).message);
      else log(`${pin.file}: served, SHA-256 matches`);
    }
  }
  return problems;
}
