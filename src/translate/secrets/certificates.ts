import { createSecureContext } from 'node:tls';
import { X509Certificate, type KeyObject } from 'node:crypto';
import type { Checked } from '../checks/allowlist.js';
import { parsePrivateKey } from './private-key.js';

/**
 * Certificate checks done before rendering, so that nginx never fails to start over a bad Secret and
 * the user learns which Secret is wrong. Pure: `now` is passed in.
 */

/**
 * What the checks and the reports read of a certificate, read once: each read of an X509Certificate
 * property asks OpenSSL again. Each field as Node's X509Certificate gives it.
 */
export interface CertificateFacts {
  readonly subject: string;
  readonly issuer: string;
  readonly validFrom: string;
  readonly validTo: string;
  /** Hexadecimal. */
  readonly serialNumber: string;
  readonly subjectAltName?: string;
}

export function certificateFacts(certificate: X509Certificate): CertificateFacts {
  const { subject, issuer, validFrom, validTo, serialNumber, subjectAltName } = certificate;
  return { subject, issuer, validFrom, validTo, serialNumber, ...(subjectAltName !== undefined && { subjectAltName }) };
}

export interface KeyPair {
  /** The leaf certificate (first PEM block). */
  readonly leaf: CertificateFacts;
  /** The leaf's validity, read once: the cluster mode checks it for every host on every build. */
  readonly validity: ValidityPeriod;
  /** The whole chain as given, normalised to end with a newline. */
  readonly chainPem: string;
  readonly keyPem: string;
  readonly dnsNames: readonly string[];
}

/**
 * The PEM blocks with one of `labels`, in order: each from `-----BEGIN L-----` and a line break to the next
 * `-----END L-----`. One forward scan from one `-----` to the next, with at most one open block per label,
 * so that no text costs more than linear time (a lazy regular expression retried from every unfinished
 * BEGIN line is quadratic).
 */
export function pemBlocks(text: string, labels: readonly string[]): string[] {
  const blocks: string[] = [];
  const openedAt = new Map<string, number>();
  for (let at = text.indexOf('-----'); at !== -1; at = text.indexOf('-----', at + 1)) {
    for (const label of labels) {
      const begin = `-----BEGIN ${label}-----`;
      const end = `-----END ${label}-----`;
      const start = openedAt.get(label);
      if (start === undefined && text.startsWith(begin, at)) {
        const lineBreak = at + begin.length + (text.charCodeAt(at + begin.length) === 0x0d ? 1 : 0);
        if (text.charCodeAt(lineBreak) !== 0x0a) continue;
        openedAt.set(label, at);
        at = lineBreak;
        break;
      }
      if (start !== undefined && text.startsWith(end, at)) {
        blocks.push(text.slice(start, at + end.length));
        openedAt.delete(label);
        at += end.length - 1;
        break;
      }
    }
  }
  return blocks;
}

/**
 * Parses `tls.crt`/`tls.key` (server or client pair): PEM parses, the key belongs to the leaf, and OpenSSL
 * at security level 2 would load the chain.
 */
export function parseKeyPair(certPem: string, keyPem: string): Checked<KeyPair> {
  const certificates = pemBlocks(certPem, ['CERTIFICATE']);
  if (certificates.length === 0) return { ok: false, problem: 'tls.crt holds no PEM certificate' };
  let chain: X509Certificate[];
  try {
    chain = certificates.map((pem) => new X509Certificate(pem));
  } catch (error) {
    return { ok: false, problem: `tls.crt does not parse as X.509 (${firstLine(error)})` };
  }
  const leaf = chain[0]!;
  let key: KeyObject;
  try {
    key = parsePrivateKey(keyPem);
  } catch (error) {
    return { ok: false, problem: `tls.key does not parse as a PEM private key (${firstLine(error)})` };
  }
  if (!leaf.checkPrivateKey(key)) {
    return { ok: false, problem: 'tls.key does not match the certificate in tls.crt' };
  }
  const tooWeak = securityLevelProblem(chain);
  if (tooWeak !== undefined) return { ok: false, problem: `tls.crt: ${tooWeak}` };
  const facts = certificateFacts(leaf);
  return {
    ok: true,
    value: {
      leaf: facts,
      validity: validityPeriod(facts),
      chainPem: certificates.join('\n') + '\n',
      keyPem: keyPem.endsWith('\n') ? keyPem : keyPem + '\n',
      dnsNames: subjectDnsNames(facts),
    },
  };
}


/**
 * Why OpenSSL at security level 2 would refuse the chain, if it would. That is the default of OpenSSL 3 on
 * Debian 12 and in the official nginx image, and nginx then fails to load the certificate, so `nginx -t`
 * fails the whole configuration. `ssl_certificate` and `proxy_ssl_certificate` ask 112 bits of security of
 * the key of every certificate in the file ("ee key too small", "ca key too small") and of the digest of
 * every signature but a self-signed certificate's ("ca md too weak").
 */
function securityLevelProblem(chain: readonly X509Certificate[]): string | undefined {
  for (const [index, certificate] of chain.entries()) {
    const which = index === 0 ? 'the certificate' : `chain certificate ${index + 1} (${certificate.subject.split('\n').join(', ')})`;
    const weakKey = weakKeyProblem(certificate.publicKey);
    if (weakKey !== undefined) return `${which} has ${weakKey}, so nginx would not load it: issue it again with a bigger key`;
    if (isSelfSigned(certificate)) continue;
    const digest = signatureDigest(certificate.raw);
    if (digest === 'unreadable') return `${which} has a signature algorithm that cannot be read`;
    if (digest !== undefined) {
      return `${which} is signed with ${digest}, which OpenSSL security level 2 refuses (except on self-signed certificates), so nginx would not load it: have it issued again with SHA-256`;
    }
  }
  return undefined;
}

/**
 * What 112 bits take in OpenSSL 3 (measured against nginx on Debian 12). An RSA modulus is rated with the
 * formula of NIST SP 800-56B rev. 2 (appendix D), which gives 112 bits from 1,963 bits on (the message names
 * 2048, the size anyone uses); a DSA prime by steps, 112 bits from 2048 on, and its subgroup for half its
 * bits; an EC key for half the bits of its curve's order.
 */
const minimumRsaBits = 1963;
const minimumDsaBits = 2048;
const minimumDsaSubgroupBits = 224;
const minimumCurveBits = 224;

function weakKeyProblem(key: KeyObject): string | undefined {
  const { modulusLength, divisorLength, namedCurve } = key.asymmetricKeyDetails ?? {};
  switch (key.asymmetricKeyType) {
    case 'rsa':
    case 'rsa-pss':
      if (modulusLength !== undefined && modulusLength < minimumRsaBits) {
        return `an RSA key of ${modulusLength} bits; OpenSSL security level 2 needs at least 2048`;
      }
      return undefined;
    case 'dsa':
      if ((modulusLength !== undefined && modulusLength < minimumDsaBits) || (divisorLength !== undefined && divisorLength < minimumDsaSubgroupBits)) {
        return `a DSA key of ${modulusLength} bits with a ${divisorLength}-bit subgroup; OpenSSL security level 2 needs at least 2048 and 224`;
      }
      return undefined;
    case 'ec': {
      const bits = namedCurve === undefined ? undefined : curveBits(namedCurve);
      if (bits !== undefined && bits < minimumCurveBits) {
        return `an EC key on curve ${namedCurve} (${bits} bits); OpenSSL security level 2 needs a curve of at least 224 bits, such as P-256`;
      }
      return undefined;
    }
    default:
      // Ed25519 and Ed448 give 128 and 224 bits.
      return undefined;
  }
}

/**
 * The size of a curve, from OpenSSL's name for it (prime256v1, secp384r1, sect233k1, brainpoolP256r1,
 * c2pnb163v1). The order of these curves has as many bits as the field or up to two fewer, and none is
 * near 224 bits, so the name decides like the order does. Other names are left to nginx.
 */
function curveBits(name: string): number | undefined {
  if (name === 'SM2') return 256;
  const size = /^(?:prime|secp|sect|brainpoolP|c2[pt]nb)(\d+)/.exec(name)?.[1];
  return size === undefined ? undefined : Number(size);
}

/**
 * OpenSSL 3 exempts a certificate from the signature check when it is self-issued (subject is issuer) and
 * signed with its own key.
 */
function isSelfSigned(certificate: X509Certificate): boolean {
  if (certificate.subject !== certificate.issuer) return false;
  try {
    return certificate.verify(certificate.publicKey);
  } catch {
    return false;
  }
}

/**
 * Signature algorithms whose digest gives less than 112 bits: OpenSSL counts SHA-1 as 63 bits, MD5 as 39
 * and other digests as half their size. Algorithms not listed are strong or left to nginx.
 */
const weakSignatureAlgorithms: ReadonlyMap<string, string> = new Map([
  ['1.2.840.113549.1.1.2', 'MD2'], // md2WithRSAEncryption
  ['1.2.840.113549.1.1.3', 'MD4'], // md4WithRSAEncryption
  ['1.2.840.113549.1.1.4', 'MD5'], // md5WithRSAEncryption
  ['1.2.840.113549.1.1.5', 'SHA-1'], // sha1WithRSAEncryption
  ['1.3.14.3.2.3', 'MD5'], // md5WithRSA (OIW)
  ['1.3.14.3.2.27', 'SHA-1'], // dsaWithSHA1 (OIW)
  ['1.3.14.3.2.29', 'SHA-1'], // sha1WithRSASignature (OIW)
  ['1.2.840.10040.4.3', 'SHA-1'], // dsa-with-sha1
  ['1.2.840.10045.4.1', 'SHA-1'], // ecdsa-with-SHA1
  ['1.3.36.3.3.1.2', 'RIPEMD-160'], // rsaSignatureWithripemd160
]);

const rsassaPss = '1.2.840.113549.1.1.10';

/** Digests below 112 bits, as the hash of RSASSA-PSS parameters. */
const weakDigests: ReadonlyMap<string, string> = new Map([
  ['1.2.840.113549.2.2', 'MD2'],
  ['1.2.840.113549.2.4', 'MD4'],
  ['1.2.840.113549.2.5', 'MD5'],
  ['1.3.14.3.2.26', 'SHA-1'],
  ['1.3.36.3.2.1', 'RIPEMD-160'],
]);

/**
 * The weak digest a certificate is signed with (see `weakSignatureAlgorithms`), undefined when it is not
 * weak, or 'unreadable'. Node's X509Certificate does not tell the signature algorithm, so it is read from
 * the DER: Certificate ::= SEQUENCE { tbsCertificate, signatureAlgorithm AlgorithmIdentifier, signature },
 * AlgorithmIdentifier ::= SEQUENCE { algorithm OBJECT IDENTIFIER, parameters ANY OPTIONAL }.
 */
export function signatureDigest(der: Uint8Array): string | undefined | 'unreadable' {
  const certificate = derElement(der, 0, der.length);
  if (certificate?.tag !== derSequence) return 'unreadable';
  const tbsCertificate = derElement(der, certificate.contentStart, certificate.end);
  if (tbsCertificate?.tag !== derSequence) return 'unreadable';
  const signatureAlgorithm = algorithmIdentifier(der, derElement(der, tbsCertificate.end, certificate.end));
  if (signatureAlgorithm === undefined) return 'unreadable';
  if (signatureAlgorithm.oid !== rsassaPss) return weakSignatureAlgorithms.get(signatureAlgorithm.oid);
  // RSASSA-PSS-params ::= SEQUENCE { hashAlgorithm [0] HashAlgorithm DEFAULT sha1, ... }
  const { parameters } = signatureAlgorithm;
  if (parameters?.tag !== derSequence || parameters.contentStart === parameters.end) return 'SHA-1';
  const first = derElement(der, parameters.contentStart, parameters.end);
  if (first === undefined) return 'unreadable';
  // [1] maskGenAlgorithm, [2] saltLength, [3] trailerField: the hash is left at its default.
  if (first.tag !== 0xa0) return first.tag >= 0xa1 && first.tag <= 0xa3 ? 'SHA-1' : 'unreadable';
  const hash = algorithmIdentifier(der, derElement(der, first.contentStart, first.end));
  return hash === undefined ? 'unreadable' : weakDigests.get(hash.oid);
}

const derSequence = 0x30;
const derObjectIdentifier = 0x06;

interface DerElement {
  readonly tag: number;
  readonly contentStart: number;
  /** Offset just past the content. */
  readonly end: number;
}

/** The element at `offset`, when its header and content end by `limit`. Only what DER allows here: one-byte tags, definite lengths. */
function derElement(der: Uint8Array, offset: number, limit: number): DerElement | undefined {
  if (offset + 2 > limit) return undefined;
  const tag = der[offset]!;
  if ((tag & 0x1f) === 0x1f) return undefined;
  let length = der[offset + 1]!;
  let contentStart = offset + 2;
  if (length & 0x80) {
    const lengthBytes = length & 0x7f;
    if (lengthBytes === 0 || lengthBytes > 4 || contentStart + lengthBytes > limit) return undefined;
    length = 0;
    for (let i = 0; i < lengthBytes; i++) length = length * 256 + der[contentStart + i]!;
    contentStart += lengthBytes;
  }
  const end = contentStart + length;
  return end <= limit ? { tag, contentStart, end } : undefined;
}

function algorithmIdentifier(der: Uint8Array, element: DerElement | undefined): { oid: string; parameters?: DerElement } | undefined {
  if (element?.tag !== derSequence) return undefined;
  const algorithm = derElement(der, element.contentStart, element.end);
  if (algorithm?.tag !== derObjectIdentifier) return undefined;
  const oid = objectIdentifier(der.subarray(algorithm.contentStart, algorithm.end));
  if (oid === undefined) return undefined;
  if (algorithm.end === element.end) return { oid };
  const parameters = derElement(der, algorithm.end, element.end);
  return parameters === undefined ? undefined : { oid, parameters };
}

/** Dotted form of an OBJECT IDENTIFIER's content: base-128 arcs, the first two packed as 40·x + y. */
function objectIdentifier(content: Uint8Array): string | undefined {
  const arcs: number[] = [];
  let arc = 0;
  let inArc = false;
  for (const byte of content) {
    // Far beyond any arc in the tables above; keeps the arithmetic exact.
    if (arc > 2 ** 40) return undefined;
    arc = arc * 128 + (byte & 0x7f);
    inArc = (byte & 0x80) !== 0;
    if (!inArc) {
      arcs.push(arc);
      arc = 0;
    }
  }
  const [packed, ...rest] = arcs;
  if (packed === undefined || inArc) return undefined;
  const first = Math.min(2, Math.floor(packed / 40));
  return [first, packed - 40 * first, ...rest].join('.');
}

/** Parses a CA bundle: at least one certificate, all of them valid X.509. */
export function parseCaBundle(pem: string): Checked<{ readonly pem: string }> {
  const certificates = pemBlocks(pem, ['CERTIFICATE', 'TRUSTED CERTIFICATE']);
  if (certificates.length === 0) return { ok: false, problem: 'ca.crt holds no PEM certificate' };
  try {
    for (const certificate of certificates) new X509Certificate(certificate);
  } catch (error) {
    return { ok: false, problem: `ca.crt does not parse as X.509 (${firstLine(error)})` };
  }
  return { ok: true, value: { pem: certificates.join('\n') + '\n' } };
}

/** DNS names a certificate is valid for: SAN DNS entries, else (legacy) the subject CN. */
function subjectDnsNames(certificate: CertificateFacts): string[] {
  const san = certificate.subjectAltName;
  if (san) {
    return san
      .split(/,\s*/)
      .filter((entry) => entry.startsWith('DNS:'))
      .map((entry) => entry.slice(4).toLowerCase());
  }
  const cn = /(?:^|\n)CN=([^\n]+)/.exec(certificate.subject)?.[1];
  return cn ? [cn.toLowerCase()] : [];
}

/**
 * True when one of the certificate's names covers `host`: exact, or a `*.` wildcard standing for exactly
 * one label (RFC 6125). A wildcard host is covered only by the same wildcard.
 */
export function certificateCoversHost(dnsNames: readonly string[], host: string): boolean {
  const wanted = host.toLowerCase();
  return dnsNames.some((name) => {
    if (name === wanted) return true;
    if (!name.startsWith('*.') || wanted.startsWith('*.')) return false;
    const dot = wanted.indexOf('.');
    return dot > 0 && wanted.slice(dot + 1) === name.slice(2);
  });
}

export type Validity = 'valid' | 'expired' | 'not-yet-valid';

/**
 * When a certificate is valid, in milliseconds since the epoch. Read once: each read of `validTo` asks
 * OpenSSL and formats a date, and with 10,000 hosts checked on every build that was 15 ms of each.
 */
export interface ValidityPeriod {
  readonly notBefore: number;
  readonly notAfter: number;
}

function validityPeriod(certificate: CertificateFacts): ValidityPeriod {
  return { notBefore: Date.parse(certificate.validFrom), notAfter: Date.parse(certificate.validTo) };
}

export function validityAt(period: ValidityPeriod, now: Date): Validity {
  if (now.getTime() > period.notAfter) return 'expired';
  if (now.getTime() < period.notBefore) return 'not-yet-valid';
  return 'valid';
}

function firstLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n')[0] ?? '';
}

/**
 * `ca.crl` for client certificate verification, checked by this process's OpenSSL the way nginx loads
 * it (`ssl_crl`), so that a broken list is reported here instead of failing the whole config load.
 */
export function parseCrl(pem: string, caPem: string): Checked<{ readonly pem: string }> {
  const lists = pemBlocks(pem, ['X509 CRL']);
  if (lists.length === 0) return { ok: false, problem: 'ca.crl holds no PEM certificate revocation list' };
  try {
    createSecureContext({ ca: caPem, crl: lists });
  } catch (error) {
    return { ok: false, problem: `ca.crl does not load (${firstLine(error)})` };
  }
  return { ok: true, value: { pem: lists.join('\n') + '\n' } };
}
