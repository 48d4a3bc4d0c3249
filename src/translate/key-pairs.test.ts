import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCa, issueCertificate, type CertificateFiles } from '../../test/support/pki.js';
import { parseKeyPair } from './certificates.js';
import { KeyPairCache } from './key-pairs.js';

let dir: string;
let first: CertificateFiles;
let second: CertificateFiles;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'i2n-key-pairs-'));
  const ca = await createCa(dir, 'key pair cache test CA');
  [first, second] = await Promise.all([
    issueCertificate(ca, { commonName: 'one.example.test', sans: ['one.example.test'] }),
    issueCertificate(ca, { commonName: 'two.example.test', sans: ['two.example.test'] }),
  ]);
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('the cache of parsed key pairs', () => {
  it('gives what parseKeyPair gives, a match or a mismatch', () => {
    const cache = new KeyPairCache();
    cache.beginBuild();
    expect(cache.parsed(first.certPem, first.keyPem)).toEqual(parseKeyPair(first.certPem, first.keyPem));
    expect(cache.parsed(first.certPem, second.keyPem)).toEqual({ ok: false, problem: 'tls.key does not match the certificate in tls.crt' });
  });

  it('parses a pair once for the builds that read it, and again for other texts', () => {
    const cache = new KeyPairCache();
    cache.beginBuild();
    const parsed = cache.parsed(first.certPem, first.keyPem);
    expect(cache.parsed(first.certPem, first.keyPem)).toBe(parsed);
    for (let build = 0; build < 3; build++) {
      cache.beginBuild();
      expect(cache.parsed(first.certPem, first.keyPem)).toBe(parsed);
    }
    // Same certificate, another key: another entry.
    expect(cache.parsed(first.certPem, second.keyPem)).not.toBe(parsed);
    expect(cache.parsed(second.certPem, second.keyPem)).not.toBe(parsed);
  });

  it('lets go of a pair a whole build did not read', () => {
    const cache = new KeyPairCache();
    cache.beginBuild();
    const parsed = cache.parsed(first.certPem, first.keyPem);
    cache.beginBuild();
    cache.parsed(second.certPem, second.keyPem);
    // That build read only the other pair: the next one parses this one again.
    cache.beginBuild();
    expect(cache.parsed(second.certPem, second.keyPem)).toBeDefined();
    const again = cache.parsed(first.certPem, first.keyPem);
    expect(again).not.toBe(parsed);
    expect(again).toEqual(parsed);
  });
});
