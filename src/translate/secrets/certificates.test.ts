import { X509Certificate } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCa, issueCertificate, type CertificateAuthority, type CertificateFiles } from '../../../test/support/pki.js';
import { parseCaBundle, parseKeyPair, signatureDigest } from './certificates.js';

let dir: string;
let ca: CertificateAuthority;
let leaf: CertificateFiles;
let sha1Leaf: CertificateFiles;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'i2n-certificates-'));
  ca = await createCa(dir, 'certificates test CA');
  [leaf, sha1Leaf] = await Promise.all([
    issueCertificate(ca, { commonName: 'app.example.test', sans: ['app.example.test'] }),
    issueCertificate(ca, { commonName: 'sha1.example.test', signature: { digest: 'sha1' } }),
  ]);
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const crlf = (pem: string): string => pem.replace(/\n/g, '\r\n');

describe('PEM blocks', () => {
  it('takes the certificate blocks of tls.crt in order, with CRLF, text between blocks and other blocks skipped', () => {
    const certPem = [
      'subject=CN = app.example.test',
      crlf(leaf.certPem),
      '-----BEGIN PRIVATE KEY-----\nnot a certificate\n-----END PRIVATE KEY-----',
      'issuer of the next one:',
      ca.certPem,
    ].join('\n');
    const pair = parseKeyPair(certPem, leaf.keyPem);
    if (!pair.ok) throw new Error(pair.problem);
    expect(pair.value.chainPem).toBe(`${crlf(leaf.certPem).trimEnd()}\n${ca.certPem.trimEnd()}\n`);
    expect(pair.value.leaf.subject).toBe('CN=app.example.test');
  });

  it('takes CERTIFICATE and TRUSTED CERTIFICATE blocks of a CA bundle, and only blocks whose END label matches', () => {
    const body = (pem: string): string => pem.replace(/-----(BEGIN|END) CERTIFICATE-----/g, '').trim();
    const trusted = `-----BEGIN TRUSTED CERTIFICATE-----\n${body(ca.certPem)}\n-----END TRUSTED CERTIFICATE-----`;
    const mismatched = `-----BEGIN CERTIFICATE-----\n${body(leaf.certPem)}\n-----END TRUSTED CERTIFICATE-----`;
    expect(parseCaBundle(`${ca.certPem}${trusted}\n`)).toEqual({ ok: true, value: { pem: `${ca.certPem.trimEnd()}\n${trusted}\n` } });
    // The mismatched BEGIN is still open when the CA's END comes: one block, which is not one certificate.
    expect(parseCaBundle(`${mismatched}\n${ca.certPem}`)).toMatchObject({ ok: false, problem: expect.stringMatching(/^ca\.crt does not parse as X\.509/) });
    expect(parseCaBundle(`-----BEGIN CERTIFICATE-----${body(ca.certPem)}-----END CERTIFICATE-----`)).toEqual({
      ok: false,
      problem: 'ca.crt holds no PEM certificate',
    });
  });

  it('scans 8 MB of BEGIN lines without END in linear time', () => {
    // No assertion on time: the quadratic scan this replaces takes 10-20 s on 1 MB and four times as long
    // for each doubling, so several minutes here, and the test's default timeout (60 s, vitest.config.ts)
    // fails it when it returns; the linear scan takes milliseconds.
    const line = '-----BEGIN CERTIFICATE-----\n';
    const certPem = line.repeat(Math.ceil((8 * 1024 * 1024) / line.length));
    expect(parseKeyPair(certPem, leaf.keyPem)).toEqual({ ok: false, problem: 'tls.crt holds no PEM certificate' });
  });
});

/** DER of one element: tag, definite length (long form from 128 bytes), content. */
function der(tag: number, ...content: Uint8Array[]): Uint8Array {
  const body = Buffer.concat(content);
  const length = body.length < 0x80 ? [body.length] : [0x82, body.length >> 8, body.length & 0xff];
  return Buffer.concat([Buffer.from([tag, ...length]), body]);
}

const oid = (...bytes: number[]): Uint8Array => der(0x06, Buffer.from(bytes));
const sequence = (...content: Uint8Array[]): Uint8Array => der(0x30, ...content);
/** Certificate ::= SEQUENCE { tbsCertificate, signatureAlgorithm, signature }, with a dummy TBS and signature. */
const certificateSignedWith = (algorithm: Uint8Array, tbsSize = 4): Uint8Array =>
  sequence(sequence(Buffer.alloc(tbsSize)), algorithm, der(0x03, Buffer.from([0, 1, 2])));

const sha1WithRsa = oid(0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x05); // 1.2.840.113549.1.1.5
const sha256WithRsa = oid(0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x0b); // 1.2.840.113549.1.1.11
const rsassaPss = oid(0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x0a); // 1.2.840.113549.1.1.10
const sha256 = oid(0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x01); // 2.16.840.1.101.3.4.2.1
const md5 = oid(0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x02, 0x05); // 1.2.840.113549.2.5
const ed25519 = oid(0x2b, 0x65, 0x70); // 1.3.101.112
const nullParameters = der(0x05);

describe('signatureDigest', () => {
  it('reads the signature algorithm of real certificates', () => {
    expect(signatureDigest(new X509Certificate(leaf.certPem).raw)).toBeUndefined();
    expect(signatureDigest(new X509Certificate(sha1Leaf.certPem).raw)).toBe('SHA-1');
  });

  it('names weak digests, with or without parameters, and passes strong and unknown algorithms', () => {
    expect(signatureDigest(certificateSignedWith(sequence(sha1WithRsa, nullParameters)))).toBe('SHA-1');
    expect(signatureDigest(certificateSignedWith(sequence(sha1WithRsa)))).toBe('SHA-1');
    expect(signatureDigest(certificateSignedWith(sequence(sha256WithRsa, nullParameters)))).toBeUndefined();
    expect(signatureDigest(certificateSignedWith(sequence(ed25519)))).toBeUndefined();
    expect(signatureDigest(certificateSignedWith(sequence(oid(0x2a, 0x03, 0x04))))).toBeUndefined();
    // A TBS of 300 bytes takes a long-form length.
    expect(signatureDigest(certificateSignedWith(sequence(sha1WithRsa), 300))).toBe('SHA-1');
  });

  it('takes the hash of RSASSA-PSS from its parameters, SHA-1 when they leave it out', () => {
    const pss = (...parameters: Uint8Array[]) => certificateSignedWith(sequence(rsassaPss, ...parameters));
    expect(signatureDigest(pss(sequence(der(0xa0, sequence(sha256)))))).toBeUndefined();
    expect(signatureDigest(pss(sequence(der(0xa0, sequence(md5)))))).toBe('MD5');
    expect(signatureDigest(pss(sequence()))).toBe('SHA-1');
    expect(signatureDigest(pss(sequence(der(0xa2, der(0x02, Buffer.from([32]))))))).toBe('SHA-1');
    expect(signatureDigest(pss())).toBe('SHA-1');
    expect(signatureDigest(pss(sequence(der(0xa0, der(0x05)))))).toBe('unreadable');
  });

  it('calls what it cannot read unreadable and never reads past the end', () => {
    const raw = new Uint8Array(new X509Certificate(leaf.certPem).raw);
    for (let length = 0; length < raw.length; length++) {
      expect(signatureDigest(raw.subarray(0, length))).toBe('unreadable');
    }
    for (let at = 0; at < raw.length; at++) {
      const corrupted = raw.slice();
      corrupted[at] = corrupted[at]! ^ 0xff;
      expect(() => signatureDigest(corrupted)).not.toThrow();
    }
    expect(signatureDigest(certificateSignedWith(sequence(der(0x06, Buffer.from([0x2a, 0x86]))))), 'an OID ending inside an arc').toBe('unreadable');
    expect(signatureDigest(certificateSignedWith(sequence(oid(0x2a, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f)))), 'an arc past 2^40').toBe('unreadable');
    expect(signatureDigest(Buffer.from([0x30, 0x84, 0xff, 0xff, 0xff, 0xff])), 'a length past the end').toBe('unreadable');
    expect(signatureDigest(Buffer.from([0x30, 0x80, 0x00, 0x00])), 'an indefinite length').toBe('unreadable');
  });
});
