import { createPrivateKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { fastPrivateKey, parsePrivateKey } from './private-key.js';

/**
 * The fast reader must never say "it parses" of a key OpenSSL's PEM reader refuses, and must yield the
 * same key when it does: checked on every usual encoding, on encodings it leaves to OpenSSL, and on
 * thousands of corrupted keys.
 */

function openssl(pem: string): KeyObject | undefined {
  try {
    return createPrivateKey(pem);
  } catch {
    return undefined;
  }
}

function pemOf(label: string, der: Buffer, eol = '\n'): string {
  const lines = der.toString('base64').match(/.{1,64}/g) ?? [];
  return `-----BEGIN ${label}-----${eol}${lines.join(eol)}${eol}-----END ${label}-----${eol}`;
}

const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
const rsa3072 = generateKeyPairSync('rsa', { modulusLength: 3072 }).privateKey;
const p256 = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
const p384 = generateKeyPairSync('ec', { namedCurve: 'P-384' }).privateKey;
const p521 = generateKeyPairSync('ec', { namedCurve: 'P-521' }).privateKey;
const ed25519 = generateKeyPairSync('ed25519').privateKey;

const usual: Record<string, string> = {
  'RSA 2048, PKCS #8': rsa.export({ format: 'pem', type: 'pkcs8' }) as string,
  'RSA 2048, PKCS #1': rsa.export({ format: 'pem', type: 'pkcs1' }) as string,
  'RSA 3072, PKCS #8, CRLF': (rsa3072.export({ format: 'pem', type: 'pkcs8' }) as string).replace(/\n/g, '\r\n'),
  'P-256, PKCS #8': p256.export({ format: 'pem', type: 'pkcs8' }) as string,
  'P-256, SEC 1': p256.export({ format: 'pem', type: 'sec1' }) as string,
  'P-384, PKCS #8': p384.export({ format: 'pem', type: 'pkcs8' }) as string,
  'P-521, SEC 1': p521.export({ format: 'pem', type: 'sec1' }) as string,
};

const leftToOpenssl: Record<string, string> = {
  'Ed25519, PKCS #8': ed25519.export({ format: 'pem', type: 'pkcs8' }) as string,
  'encrypted PKCS #8': rsa.export({ format: 'pem', type: 'pkcs8', cipher: 'aes-256-cbc', passphrase: 'x' }) as string,
  'with text around it': `# my key\n${usual['RSA 2048, PKCS #8']}`,
  'EC parameters first': `-----BEGIN EC PARAMETERS-----\nBggqhkjOPQMBBw==\n-----END EC PARAMETERS-----\n${usual['P-256, SEC 1']}`,
  'lines of 76': pemOf('PRIVATE KEY', rsa.export({ format: 'der', type: 'pkcs8' }) as Buffer).replace(/\n/g, '').replace(/(-----BEGIN PRIVATE KEY-----)/, '$1\n').replace(/(-----END)/, '\n$1').replace(/(.{76})/g, '$1\n'),
  'empty': '',
};

describe('private keys', () => {
  it.each(Object.entries(usual))('reads %s itself, the same key OpenSSL reads', (_, pem) => {
    const fast = fastPrivateKey(pem);
    expect(fast).toBeDefined();
    expect(fast!.equals(openssl(pem)!)).toBe(true);
    expect(parsePrivateKey(pem).equals(openssl(pem)!)).toBe(true);
  });

  it.each(Object.entries(leftToOpenssl))('leaves %s to OpenSSL', (_, pem) => {
    const fast = fastPrivateKey(pem);
    if (fast) expect(fast.equals(openssl(pem)!)).toBe(true);
    const slow = openssl(pem);
    if (slow) expect(parsePrivateKey(pem).equals(slow)).toBe(true);
    else expect(() => parsePrivateKey(pem)).toThrow();
  });

  it('agrees with OpenSSL on the PEM framing: blank lines, stray spaces, no final line break', () => {
    const framings: Record<string, (pem: string) => string> = {
      'a blank line in the body': (pem) => pem.replace(/(\n[^\r\n]{64}\r?\n)/, '$1\n'),
      'two blank lines in the body': (pem) => pem.replace(/(\n[^\r\n]{64}\r?\n)/, '$1\n\n'),
      'a blank line after BEGIN': (pem) => pem.replace(/(-----\r?\n)/, '$1\n'),
      'a blank line before END': (pem) => pem.replace(/(\r?\n-----END)/, '\n$1'),
      'a space at the end of a line': (pem) => pem.replace(/(\n[^\r\n]{64})(\r?\n)/, '$1 $2'),
      'a line of 63': (pem) => pem.replace(/(\n[^\r\n]{63})([^\r\n])(\r?\n)/, '$1$3$2'),
      'no final line break': (pem) => pem.replace(/\r?\n$/, ''),
    };
    for (const [keyName, pem] of Object.entries(usual)) {
      for (const [framing, frame] of Object.entries(framings)) {
        const framed = frame(pem);
        expect(framed, `${framing} changes ${keyName}`).not.toBe(pem);
        const slow = openssl(framed);
        const fast = fastPrivateKey(framed);
        if (!slow) expect(fast, `${keyName}, ${framing}: OpenSSL refuses it, the fast reader took it`).toBeUndefined();
        else if (fast) expect(fast.equals(slow), `${keyName}, ${framing}`).toBe(true);
      }
    }
  });

  it('never takes a corrupted key that OpenSSL refuses, nor reads it differently', () => {
    let taken = 0;
    let seed = 7;
    const random = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) % n);
    for (const pem of Object.values(usual)) {
      const label = /-----BEGIN ([A-Z ]+)-----/.exec(pem)![1]!;
      const der = Buffer.from(pem.replace(/-----[^-]+-----/g, '').replace(/\s+/g, ''), 'base64');
      for (let round = 0; round < 400; round++) {
        const bytes = Buffer.from(der);
        const mutations = 1 + random(3);
        for (let m = 0; m < mutations; m++) {
          const at = random(Math.min(bytes.length, round % 2 ? 64 : bytes.length));
          bytes[at] = random(256);
        }
        const corrupted = pemOf(label, round % 5 === 0 ? bytes.subarray(0, bytes.length - 1 - random(8)) : bytes);
        const fast = fastPrivateKey(corrupted);
        if (!fast) continue;
        taken++;
        const slow = openssl(corrupted);
        expect(slow, `OpenSSL refuses a key the fast reader took:\n${corrupted}`).toBeDefined();
        expect(fast.equals(slow!)).toBe(true);
      }
    }
    // Corrupting a private value (d, a prime) leaves a key both read the same; the check above is not vacuous.
    expect(taken).toBeGreaterThan(50);
  });
});
