import { createPrivateKey, type JsonWebKey, type KeyObject } from 'node:crypto';

/**
 * `createPrivateKey(pem)`, fast for the keys nearly every Secret holds. OpenSSL 3 builds a decoder context
 * for every PEM key it reads, trying every key type it knows: about 0.3 ms a key here, two thirds of
 * checking 2,000 Secrets. A key in one of the usual encodings is read here instead, strictly, and handed
 * to OpenSSL as a JWK, which it imports in microseconds: an unencrypted RSA key (PKCS #8 or PKCS #1) of
 * two primes, or an EC key on P-256, P-384 or P-521 (PKCS #8 or SEC 1) that carries its public point.
 * Anything else, or anything not encoded exactly as DER and PEM require, goes to OpenSSL's own reader,
 * which then decides: so this says "it parses" only of keys OpenSSL reads too, and yields the same key.
 */
export function parsePrivateKey(pem: string): KeyObject {
  return fastPrivateKey(pem) ?? createPrivateKey(pem);
}

/** The key, when `pem` is one of the encodings above; undefined for OpenSSL to read. Exported for tests. */
export function fastPrivateKey(pem: string): KeyObject | undefined {
  const block = pemBlock.exec(pem);
  if (!block) return undefined;
  const der = Buffer.from(block[2]!.replace(/\r?\n/g, ''), 'base64');
  let jwk: JsonWebKey | undefined;
  try {
    const reader = new DerReader(der);
    const top = reader.sequence();
    if (!reader.atEnd()) return undefined;
    if (block[1] === 'RSA PRIVATE KEY') jwk = rsaJwk(top);
    else if (block[1] === 'EC PRIVATE KEY') jwk = ecJwk(top, undefined);
    else jwk = pkcs8Jwk(top);
  } catch (error) {
    if (error instanceof NotPlain) return undefined;
    throw error;
  }
  if (!jwk) return undefined;
  try {
    return createPrivateKey({ key: jwk, format: 'jwk' });
  } catch {
    return undefined;
  }
}

/**
 * One PEM block and nothing else: whole base64 quanta on every line, padding only at the end, no blank
 * line (OpenSSL's PEM reader takes a blank line for the end of RFC 1421 headers and refuses the key).
 */
const pemBlock =
  /^-----BEGIN (PRIVATE KEY|RSA PRIVATE KEY|EC PRIVATE KEY)-----\r?\n((?:(?:[A-Za-z0-9+/]{4})+\r?\n)*(?:(?:[A-Za-z0-9+/]{4})+(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?|[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=))\r?\n-----END \1-----\r?\n?$/;

/** Anything this reader does not take: OpenSSL reads the key instead. */
class NotPlain extends Error {}

const rsaEncryption = '1.2.840.113549.1.1.1';
const ecPublicKey = '1.2.840.10045.2.1';
/** Named curves: JWK name and the byte length of a field element. */
const curves: ReadonlyMap<string, { readonly crv: string; readonly bytes: number }> = new Map([
  ['1.2.840.10045.3.1.7', { crv: 'P-256', bytes: 32 }],
  ['1.3.132.0.34', { crv: 'P-384', bytes: 48 }],
  ['1.3.132.0.35', { crv: 'P-521', bytes: 66 }],
]);

/** PrivateKeyInfo (RFC 5208), version 0, no attributes. */
function pkcs8Jwk(info: DerReader): JsonWebKey | undefined {
  if (!info.integerIs(0)) return undefined;
  const algorithm = info.sequence();
  const oid = algorithm.oid();
  const privateKey = info.octetString();
  if (!info.atEnd()) return undefined;
  if (oid === rsaEncryption) {
    algorithm.null();
    if (!algorithm.atEnd()) return undefined;
    const inner = new DerReader(privateKey);
    const key = inner.sequence();
    return inner.atEnd() ? rsaJwk(key) : undefined;
  }
  if (oid === ecPublicKey) {
    const curve = curves.get(algorithm.oid());
    if (!curve || !algorithm.atEnd()) return undefined;
    const inner = new DerReader(privateKey);
    const key = inner.sequence();
    return inner.atEnd() ? ecJwk(key, curve) : undefined;
  }
  return undefined;
}

/** RSAPrivateKey (RFC 8017), two primes. */
function rsaJwk(key: DerReader): JsonWebKey | undefined {
  if (!key.integerIs(0)) return undefined;
  const [n, e, d, p, q, dp, dq, qi] = Array.from({ length: 8 }, () => key.unsignedInteger());
  if (!key.atEnd()) return undefined;
  return { kty: 'RSA', n: b64url(n!), e: b64url(e!), d: b64url(d!), p: b64url(p!), q: b64url(q!), dp: b64url(dp!), dq: b64url(dq!), qi: b64url(qi!) };
}

/** ECPrivateKey (RFC 5915), with its public point, uncompressed; the curve from PKCS #8 or from [0]. */
function ecJwk(key: DerReader, fromInfo: { readonly crv: string; readonly bytes: number } | undefined): JsonWebKey | undefined {
  if (!key.integerIs(1)) return undefined;
  const d = key.octetString();
  let curve = fromInfo;
  if (key.nextTagIs(0xa0)) {
    const named = curves.get(key.explicit(0xa0).oid());
    if (!named || (fromInfo && named !== fromInfo)) return undefined;
    curve = named;
  }
  if (!curve || !key.nextTagIs(0xa1)) return undefined;
  const point = key.explicit(0xa1).bitString();
  if (!key.atEnd() || d.length !== curve.bytes || point.length !== 1 + 2 * curve.bytes || point[0] !== 0x04) return undefined;
  return {
    kty: 'EC',
    crv: curve.crv,
    d: b64url(d),
    x: b64url(point.subarray(1, 1 + curve.bytes)),
    y: b64url(point.subarray(1 + curve.bytes)),
  };
}

function b64url(bytes: Buffer): string {
  return bytes.toString('base64url');
}

/** A strict DER reader (definite, minimal lengths); anything else throws NotPlain. */
class DerReader {
  private at = 0;

  constructor(private readonly bytes: Buffer) {}

  atEnd(): boolean {
    return this.at === this.bytes.length;
  }

  nextTagIs(tag: number): boolean {
    return this.bytes[this.at] === tag;
  }

  sequence(): DerReader {
    return new DerReader(this.read(0x30));
  }

  explicit(tag: number): DerReader {
    return new DerReader(this.read(tag));
  }

  octetString(): Buffer {
    return this.read(0x04);
  }

  null(): void {
    if (this.read(0x05).length !== 0) throw new NotPlain();
  }

  bitString(): Buffer {
    const value = this.read(0x03);
    if (value[0] !== 0) throw new NotPlain();
    return value.subarray(1);
  }

  oid(): string {
    const value = this.read(0x06);
    if (value.length === 0 || (value[value.length - 1]! & 0x80) !== 0) throw new NotPlain();
    const parts: number[] = [];
    let current = 0;
    for (const byte of value) {
      if (current === 0 && byte === 0x80) throw new NotPlain();
      current = current * 128 + (byte & 0x7f);
      if (current > Number.MAX_SAFE_INTEGER / 128) throw new NotPlain();
      if ((byte & 0x80) === 0) {
        // The first subidentifier holds the first two arcs.
        if (parts.length === 0) parts.push(current < 40 ? 0 : current < 80 ? 1 : 2, current < 80 ? current % 40 : current - 80);
        else parts.push(current);
        current = 0;
      }
    }
    return parts.join('.');
  }

  integerIs(expected: number): boolean {
    const value = this.read(0x02);
    return value.length === 1 && value[0] === expected;
  }

  /** A positive INTEGER in minimal encoding, without its sign byte. */
  unsignedInteger(): Buffer {
    const value = this.read(0x02);
    if (value.length === 0 || (value[0]! & 0x80) !== 0) throw new NotPlain();
    if (value[0] === 0) {
      if (value.length === 1 || (value[1]! & 0x80) === 0) throw new NotPlain();
      return value.subarray(1);
    }
    return value;
  }

  private read(tag: number): Buffer {
    const bytes = this.bytes;
    if (bytes[this.at] !== tag) throw new NotPlain();
    let at = this.at + 1;
    const first = bytes[at++];
    if (first === undefined) throw new NotPlain();
    let length = first;
    if (first & 0x80) {
      const count = first & 0x7f;
      if (count === 0 || count > 3) throw new NotPlain();
      length = 0;
      for (let i = 0; i < count; i++) {
        const byte = bytes[at++];
        if (byte === undefined || (i === 0 && byte === 0)) throw new NotPlain();
        length = length * 256 + byte;
      }
      if (length < 0x80) throw new NotPlain();
    }
    if (at + length > bytes.length) throw new NotPlain();
    this.at = at + length;
    return bytes.subarray(at, at + length);
  }
}
