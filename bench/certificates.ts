import {
  X509Certificate,
  createPrivateKey,
  createPublicKey,
  generatePrime,
  sign,
  type KeyObject,
} from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Bench-only certificate factory: thousands of distinct RSA-2048 key pairs and CA-signed leaf
 * certificates, fast and without one `openssl` process per certificate.
 *
 * - Keys: `openssl genrsa 2048` costs ~0.4 s here (2,000 keys ≈ 7 min). Instead a pool of 1024-bit
 *   primes (~40 ms each) is combined pairwise: 90 primes give >2,000 distinct 2048-bit moduli. The keys
 *   are ordinary RSA-2048 PKCS#8 keys (n, e, d, p, q, CRT values), so parsing them costs what parsing
 *   any RSA-2048 key costs. Sharing primes makes them worthless as keys — fine for a benchmark.
 * - Certificates: X.509 v3 DER assembled here and signed with the CA key by `crypto.sign`.
 * Everything is cached; certificates are re-issued when they would expire within a week.
 */

export interface LeafMaterial {
  readonly certPem: string;
  readonly keyPem: string;
}

export interface CertificateSet {
  readonly caPem: string;
  readonly leaves: readonly LeafMaterial[];
}

const exponent = 65537n;
const primeBits = 1024;
const day = 24 * 60 * 60 * 1000;

// ---------------------------------------------------------------- RSA keys from a prime pool

function modInverse(a: bigint, mod: bigint): bigint {
  let [oldR, r] = [a % mod, mod];
  let [oldS, s] = [1n, 0n];
  while (r !== 0n) {
    const q = oldR / r;
    [oldR, r] = [r, oldR - q * r];
    [oldS, s] = [s, oldS - q * s];
  }
  if (oldR !== 1n) throw new Error('not invertible');
  return ((oldS % mod) + mod) % mod;
}

function gcd(a: bigint, b: bigint): bigint {
  while (b !== 0n) [a, b] = [b, a % b];
  return a;
}

function bitLength(n: bigint): number {
  return n.toString(2).length;
}

function base64url(n: bigint): string {
  let hex = n.toString(16);
  if (hex.length % 2) hex = `0${hex}`;
  return Buffer.from(hex, 'hex').toString('base64url');
}

/** An RSA private key (PKCS#8 PEM) from two primes, or undefined when they do not make a 2048-bit key. */
function rsaKeyFromPrimes(p: bigint, q: bigint): string | undefined {
  if (p === q) return undefined;
  if (p < q) [p, q] = [q, p];
  const n = p * q;
  if (bitLength(n) !== 2 * primeBits) return undefined;
  const lambda = ((p - 1n) * (q - 1n)) / gcd(p - 1n, q - 1n);
  const d = modInverse(exponent, lambda);
  const jwk = {
    kty: 'RSA',
    n: base64url(n),
    e: base64url(exponent),
    d: base64url(d),
    p: base64url(p),
    q: base64url(q),
    dp: base64url(d % (p - 1n)),
    dq: base64url(d % (q - 1n)),
    qi: base64url(modInverse(q, p)),
  };
  return createPrivateKey({ key: jwk, format: 'jwk' }).export({ type: 'pkcs8', format: 'pem' }).toString();
}

async function primePool(count: number): Promise<bigint[]> {
  const generate = (bits: number, options: { bigint: true }): Promise<bigint> =>
    new Promise((resolve, reject) => generatePrime(bits, options, (err, prime) => (err ? reject(err) : resolve(prime))));
  const primes: bigint[] = [];
  while (primes.length < count) {
    const batch = await Promise.all(Array.from({ length: count - primes.length }, () => generate(primeBits, { bigint: true })));
    // e must be invertible modulo p - 1.
    primes.push(...batch.filter((p) => (p - 1n) % exponent !== 0n));
  }
  return primes;
}

async function rsaKeys(count: number): Promise<string[]> {
  const keys: string[] = [];
  let poolSize = Math.ceil(Math.sqrt(count * 2 / 0.6)) + 2;
  const primes = await primePool(poolSize);
  for (;;) {
    for (let i = 0; i < primes.length && keys.length < count; i++) {
      for (let j = i + 1; j < primes.length && keys.length < count; j++) {
        const key = rsaKeyFromPrimes(primes[i]!, primes[j]!);
        if (key) keys.push(key);
      }
    }
    if (keys.length >= count) return keys;
    // Unlucky pool: add primes and start over (keys stay distinct since pairs are distinct).
    keys.length = 0;
    poolSize += 8;
    primes.push(...(await primePool(8)));
  }
}

// ---------------------------------------------------------------- DER / X.509

function derLength(length: number): Buffer {
  if (length < 0x80) return Buffer.from([length]);
  const bytes: number[] = [];
  for (let l = length; l > 0; l >>= 8) bytes.unshift(l & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

function der(tag: number, ...content: Buffer[]): Buffer {
  const body = Buffer.concat(content);
  return Buffer.concat([Buffer.from([tag]), derLength(body.length), body]);
}

const sequence = (...content: Buffer[]): Buffer => der(0x30, ...content);
const set = (...content: Buffer[]): Buffer => der(0x31, ...content);
const octetString = (content: Buffer): Buffer => der(0x04, content);
const bitString = (content: Buffer): Buffer => der(0x03, Buffer.from([0]), content);
const utf8 = (text: string): Buffer => der(0x0c, Buffer.from(text, 'utf8'));
const boolean = (value: boolean): Buffer => der(0x01, Buffer.from([value ? 0xff : 0]));
const derNull = Buffer.from([0x05, 0x00]);

function integer(value: bigint): Buffer {
  let hex = value.toString(16);
  if (hex.length % 2) hex = `0${hex}`;
  let bytes = Buffer.from(hex, 'hex');
  if (bytes[0]! & 0x80) bytes = Buffer.concat([Buffer.from([0]), bytes]);
  return der(0x02, bytes);
}

function oid(dotted: string): Buffer {
  const [first = 0, second = 0, ...rest] = dotted.split('.').map(Number);
  const bytes = [first * 40 + second];
  for (const arc of rest) {
    const chunk: number[] = [];
    let v = arc;
    do {
      chunk.unshift(v & 0x7f);
      v = Math.floor(v / 128);
    } while (v > 0);
    for (let i = 0; i < chunk.length - 1; i++) chunk[i]! |= 0x80;
    bytes.push(...chunk);
  }
  return der(0x06, Buffer.from(bytes));
}

function utcTime(date: Date): Buffer {
  const iso = date.toISOString(); // 2026-01-31T12:34:56.789Z
  const text = `${iso.slice(2, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}${iso.slice(11, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}Z`;
  return der(0x17, Buffer.from(text, 'ascii'));
}

function name(commonName: string, organization: string): Buffer {
  return sequence(
    set(sequence(oid('2.5.4.10'), utf8(organization))),
    set(sequence(oid('2.5.4.3'), utf8(commonName))),
  );
}

function extension(id: string, critical: boolean, value: Buffer): Buffer {
  return sequence(oid(id), ...(critical ? [boolean(true)] : []), octetString(value));
}

const sha256WithRsa = sequence(oid('1.2.840.113549.1.1.11'), derNull);

interface CertificateSpec {
  readonly serial: bigint;
  readonly subject: Buffer;
  readonly issuer: Buffer;
  readonly notBefore: Date;
  readonly notAfter: Date;
  readonly publicKey: KeyObject;
  readonly extensions: readonly Buffer[];
}

function issue(spec: CertificateSpec, signingKey: KeyObject): string {
  const tbs = sequence(
    der(0xa0, integer(2n)),
    integer(spec.serial),
    sha256WithRsa,
    spec.issuer,
    sequence(utcTime(spec.notBefore), utcTime(spec.notAfter)),
    spec.subject,
    spec.publicKey.export({ type: 'spki', format: 'der' }),
    der(0xa3, sequence(...spec.extensions)),
  );
  const certificate = sequence(tbs, sha256WithRsa, bitString(sign('sha256', tbs, signingKey)));
  const lines = certificate.toString('base64').match(/.{1,64}/g) ?? [];
  return `-----BEGIN CERTIFICATE-----\n${lines.join('\n')}\n-----END CERTIFICATE-----\n`;
}

function subjectAltNames(hosts: readonly string[]): Buffer {
  return extension('2.5.29.17', false, sequence(...hosts.map((h) => der(0x82, Buffer.from(h, 'ascii')))));
}

// ---------------------------------------------------------------- cached set

interface CachedKeys {
  readonly keys: string[];
}

interface CachedCertificates {
  readonly scheme: string;
  readonly notAfter: string;
  readonly caPem: string;
  readonly certs: string[];
}

async function readJson<T>(path: string): Promise<T | undefined> {
  try {
    return JSON.parse(await readFile(path, 'utf8')) as T;
  } catch {
    return undefined;
  }
}

async function writeJson(path: string, value: unknown): Promise<void> {
  const temp = `${path}.${process.pid}.tmp`;
  await writeFile(temp, JSON.stringify(value));
  await rename(temp, path);
}

/**
 * `hostGroups[i]` are the SAN host names of leaf i. `scheme` names the host layout, so that a cache made
 * for other host names is not reused. Returns the CA certificate and one key pair per group.
 */
export async function certificateSet(
  cacheDir: string,
  scheme: string,
  hostGroups: readonly (readonly string[])[],
  log: (line: string) => void,
): Promise<CertificateSet> {
  await mkdir(cacheDir, { recursive: true });
  const keysPath = join(cacheDir, 'keys.json');
  const certsPath = join(cacheDir, 'certs.json');
  const wanted = hostGroups.length + 1; // + the CA

  let keys = (await readJson<CachedKeys>(keysPath))?.keys;
  if (!keys || keys.length < wanted) {
    const started = performance.now();
    keys = await rsaKeys(wanted);
    await writeJson(keysPath, { keys } satisfies CachedKeys);
    log(`generated ${keys.length} RSA-2048 keys in ${((performance.now() - started) / 1000).toFixed(1)} s (cached in ${cacheDir})`);
  }

  const now = Date.now();
  const cached = await readJson<CachedCertificates>(certsPath);
  if (
    cached &&
    cached.scheme === scheme &&
    cached.certs.length === hostGroups.length &&
    Date.parse(cached.notAfter) > now + 7 * day
  ) {
    return { caPem: cached.caPem, leaves: cached.certs.map((certPem, i) => ({ certPem, keyPem: keys[i + 1]! })) };
  }

  const started = performance.now();
  const notBefore = new Date(now - day);
  const notAfter = new Date(now + 397 * day);
  const caKey = createPrivateKey(keys[0]!);
  const caName = name('ingress2nginx bench CA', 'ingress2nginx bench');
  const caPem = issue(
    {
      serial: 1n,
      subject: caName,
      issuer: caName,
      notBefore,
      notAfter: new Date(now + 3650 * day),
      publicKey: createPublicKey(caKey),
      extensions: [
        extension('2.5.29.19', true, sequence(boolean(true))),
        extension('2.5.29.15', true, der(0x03, Buffer.from([0x01, 0x06]))), // keyCertSign, cRLSign
      ],
    },
    caKey,
  );
  const certs = hostGroups.map((hosts, i) =>
    issue(
      {
        serial: BigInt(now) * 10_000n + BigInt(i + 2),
        subject: name(hosts[0]!, 'ingress2nginx bench'),
        issuer: caName,
        notBefore,
        notAfter,
        publicKey: createPublicKey(keys[i + 1]!),
        extensions: [
          extension('2.5.29.19', true, sequence()),
          extension('2.5.29.15', true, der(0x03, Buffer.from([0x05, 0xa0]))), // digitalSignature, keyEncipherment
          extension('2.5.29.37', false, sequence(oid('1.3.6.1.5.5.7.3.1'))), // serverAuth
          subjectAltNames(hosts),
        ],
      },
      caKey,
    ),
  );
  // One round trip through Node's parser, so a mistake here fails loudly rather than as 2,000 diagnostics.
  const first = new X509Certificate(certs[0]!);
  if (!first.checkPrivateKey(createPrivateKey(keys[1]!)) || !first.verify(createPublicKey(caKey))) {
    throw new Error('bench: generated certificate does not check out');
  }
  await writeJson(certsPath, { scheme, notAfter: notAfter.toISOString(), caPem, certs } satisfies CachedCertificates);
  log(`issued ${certs.length} certificates in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  return { caPem, leaves: certs.map((certPem, i) => ({ certPem, keyPem: keys[i + 1]! })) };
}
