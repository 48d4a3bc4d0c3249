import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChecksumMismatch, fetchPinned, NoneReachable, PINS_FILE, readPins, verifyPinned, type Pins } from '../../scripts/pinned-sources.mjs';

// The pinned-source checks against a pool of our own on loopback: the real downloads and hashes, with
// tarballs whose bytes the test decides.

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

let root: string;
let server: Server;
let archive: string;
const requested: string[] = [];

beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'i2n-pool-'));
  await mkdir(path.join(root, 'pool/main/n/nginx'), { recursive: true });
  await mkdir(path.join(root, 'pool/main/o/openssl'), { recursive: true });
  await writeFile(path.join(root, 'pool/main/n/nginx/nginx_1.28.1.orig.tar.xz'), 'nginx 1.28.1');
  await writeFile(path.join(root, 'pool/main/n/nginx/nginx_1.28.0.orig.tar.xz'), 'nginx 1.28.0');
  await writeFile(path.join(root, 'pool/main/o/openssl/openssl_3.5.6.orig.tar.gz'), 'openssl 3.5.6');
  server = createServer((request, response) => {
    requested.push(request.url ?? '');
    readFile(path.join(root, path.normalize(request.url ?? '/')))
      .then((bytes) => response.end(bytes))
      .catch(() => {
        response.statusCode = 404;
        response.end();
      });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  archive = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await rm(root, { recursive: true, force: true });
});

function pinsOf(nginx: Array<[string, string]>, openssl: Array<[string, string]>, file = 'pins.json'): Pins {
  const pin = ([name, content]: [string, string]) => ({ version: /_(\d[\d.]*\d)\.orig/.exec(name)?.[1] ?? '', file: name, sha256: sha256(content) });
  return { file, nginx: nginx.map(pin), openssl: openssl.map(pin) };
}

describe('pinned sources', () => {
  it('the repository pins nginx 1.28 with OpenSSL 3.5, each with a checksum', () => {
    const pins = readPins(PINS_FILE);
    expect(pins.nginx[0]?.version).toMatch(/^1\.28\./);
    expect(pins.openssl[0]?.version).toMatch(/^3\.5\./);
  });

  it('takes the first pin the pool serves, in the listed order, and checks its bytes', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'i2n-fetch-'));
    requested.length = 0;
    const pins = pinsOf(
      [
        ['nginx_1.28.2.orig.tar.xz', 'nginx 1.28.2'],
        ['nginx_1.28.1.orig.tar.xz', 'nginx 1.28.1'],
        ['nginx_1.28.0.orig.tar.xz', 'nginx 1.28.0'],
      ],
      [['openssl_3.5.6.orig.tar.gz', 'openssl 3.5.6']],
    );
    const fetched = await fetchPinned({ pins, kind: 'nginx', archive, dir });
    expect(fetched.pin.version).toBe('1.28.1');
    expect(await readFile(fetched.file, 'utf8')).toBe('nginx 1.28.1');
    expect(requested).toEqual(['/pool/main/n/nginx/nginx_1.28.2.orig.tar.xz', '/pool/main/n/nginx/nginx_1.28.1.orig.tar.xz']);
    await rm(dir, { recursive: true, force: true });
  });

  it('a mismatch stops at once, naming the file and both hashes, and never falls back', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'i2n-fetch-'));
    const pins = pinsOf([['nginx_1.28.1.orig.tar.xz', 'other bytes'], ['nginx_1.28.0.orig.tar.xz', 'nginx 1.28.0']], [['openssl_3.5.6.orig.tar.gz', 'openssl 3.5.6']]);
    const failure = fetchPinned({ pins, kind: 'nginx', archive, dir });
    await expect(failure).rejects.toBeInstanceOf(ChecksumMismatch);
    await expect(failure).rejects.toThrow(`nginx_1.28.1.orig.tar.xz: SHA-256 ${sha256('nginx 1.28.1')} does not match the pinned ${sha256('other bytes')}`);
    await rm(dir, { recursive: true, force: true });
  });

  it('none served: says what was tried and what to change', async () => {
    const pins = pinsOf([['nginx_1.27.0.orig.tar.xz', 'x']], [['openssl_3.5.6.orig.tar.gz', 'openssl 3.5.6']]);
    const failure = fetchPinned({ pins, kind: 'nginx', archive, dir: root });
    await expect(failure).rejects.toBeInstanceOf(NoneReachable);
    await expect(failure).rejects.toThrow(/nginx_1\.27\.0\.orig\.tar\.xz \(HTTP 404\).*Pin a release the pool serves in pins\.json/);
  });

  it('verifying reports every pin that left the pool or changed, fallbacks included', async () => {
    const pins = pinsOf(
      [['nginx_1.28.1.orig.tar.xz', 'nginx 1.28.1'], ['nginx_1.27.0.orig.tar.xz', 'x']],
      [['openssl_3.5.6.orig.tar.gz', 'openssl 3.5.7']],
    );
    const problems = await verifyPinned({ pins, archive });
    expect(problems).toHaveLength(2);
    expect(problems[0]).toMatch(/^nginx_1\.27\.0\.orig\.tar\.xz is no longer served at .* \(HTTP 404\): remove it from "nginx" in pins\.json/);
    expect(problems[1]).toMatch(/^openssl_3\.5\.6\.orig\.tar\.gz: SHA-256 \S+ does not match the pinned/);
    expect(await verifyPinned({ pins: pinsOf([['nginx_1.28.1.orig.tar.xz', 'nginx 1.28.1']], [['openssl_3.5.6.orig.tar.gz', 'openssl 3.5.6']]), archive })).toEqual([]);
  });

  it('the build script fails with exit 1 and the message when one byte of a pin changes', async () => {
    const pins = pinsOf([['nginx_1.28.1.orig.tar.xz', 'nginx 1.28.1']], [['openssl_3.5.6.orig.tar.gz', 'openssl 3.5.6']]);
    const good = pins.nginx[0]!.sha256;
    const changed = `${good.slice(0, -1)}${good.endsWith('0') ? '1' : '0'}`;
    const pinsFile = path.join(root, 'pins.json');
    await writeFile(pinsFile, JSON.stringify({ nginx: [{ ...pins.nginx[0], sha256: changed }], openssl: pins.openssl }));
    const script = path.join(import.meta.dirname, '..', '..', 'scripts', 'build-nginx.mjs');
    const result = await execa(process.execPath, [script, '--verify-sources'], {
      reject: false,
      env: { I2N_PINNED_SOURCES: pinsFile, I2N_DEBIAN_ARCHIVE: archive },
    });
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain(`nginx_1.28.1.orig.tar.xz: SHA-256 ${good} does not match the pinned ${changed}`);
  });
});
