import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCa, issueCertificate, type CertificateAuthority, type CertificateFiles } from '../../test/support/pki.js';
import { parseCaBundle, parseKeyPair } from './certificates.js';

let dir: string;
let ca: CertificateAuthority;
let leaf: CertificateFiles;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'i2n-certificates-'));
  ca = await createCa(dir, 'certificates test CA');
  leaf = await issueCertificate(ca, { commonName: 'app.example.test', sans: ['app.example.test'] });
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
