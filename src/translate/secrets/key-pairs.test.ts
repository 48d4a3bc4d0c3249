import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCa, issueCertificate, type CertificateFiles } from '../../../test/support/pki.js';
import { parseKeyPair } from './certificates.js';
import { KeyPairCache } from './key-pairs.js';
import type { SecretData, Typed } from '../resources.js';
import type { SourceObject } from '../../sources/snapshot.js';

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

/** The Secrets of a build's input, each `[name, certificate, key]`, as the index holds them. */
function secretsOf(...secrets: (readonly [string, CertificateFiles, CertificateFiles])[]): Map<string, Typed<SecretData>> {
  return new Map(
    secrets.map(([name, cert, key]) => [
      `default/${name}`,
      {
        object: { apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: 'default', annotations: {}, labels: {} }, raw: {} } as unknown as SourceObject,
        spec: { type: 'kubernetes.io/tls', data: new Map([['tls.crt', cert.certPem], ['tls.key', key.keyPem]]) },
      },
    ]),
  );
}

describe('the cache of parsed key pairs', () => {
  it('gives what parseKeyPair gives, a match or a mismatch', () => {
    const cache = new KeyPairCache();
    cache.retain(secretsOf(['one', first, first], ['mixed', first, second]));
    expect(cache.parsed(first.certPem, first.keyPem)).toEqual(parseKeyPair(first.certPem, first.keyPem));
    expect(cache.parsed(first.certPem, second.keyPem)).toEqual({ ok: false, problem: 'tls.key does not match the certificate in tls.crt' });
  });

  it('parses a pair once while its Secret is in the input, whichever builds read it', () => {
    const cache = new KeyPairCache();
    cache.retain(secretsOf(['one', first, first], ['two', second, second]));
    const parsed = cache.parsed(first.certPem, first.keyPem);
    expect(cache.parsed(first.certPem, first.keyPem)).toBe(parsed);
    // Builds that read only the other Secret, each from a new index.
    for (let build = 0; build < 3; build++) {
      cache.retain(secretsOf(['one', first, first], ['two', second, second]));
      cache.parsed(second.certPem, second.keyPem);
    }
    expect(cache.parsed(first.certPem, first.keyPem)).toBe(parsed);
    // Same certificate, another key: another entry.
    expect(cache.parsed(first.certPem, second.keyPem)).not.toBe(parsed);
  });

  it('lets go of the pair of a Secret that went, or whose texts changed', () => {
    const cache = new KeyPairCache();
    cache.retain(secretsOf(['one', first, first]));
    const parsed = cache.parsed(first.certPem, first.keyPem);
    cache.retain(secretsOf(['two', second, second]));
    const again = cache.parsed(first.certPem, first.keyPem);
    expect(again).not.toBe(parsed);
    expect(again).toEqual(parsed);
    // The same Secret with a new key: the pair of the old texts goes.
    cache.retain(secretsOf(['one', first, second]));
    expect(cache.parsed(first.certPem, first.keyPem)).not.toBe(again);
  });
});
