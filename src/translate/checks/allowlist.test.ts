import { describe, expect, it } from 'vitest';
import {
  describeRejectedValue,
  integerInRange,
  isCidr,
  isCipherList,
  isDnsHostname,
  isIpAddress,
  isKubernetesName,
  isPortName,
  isSafePath,
  isWildcardHostname,
  onOrOff,
  parseSslProtocols,
  quoteKey,
  trueOrFalse,
} from './allowlist.js';

const hostileCharacters = [';', '{', '}', '"', "'", '#', '$', '\n', ' ', '\\'];

const acceptsProtocols = (value: string) => parseSslProtocols(value, ['TLSv1.2', 'TLSv1.3']).ok;

/** Each check with a value it accepts; the hostile table splices characters into that value. */
const checks: readonly { name: string; accepts: (value: string) => boolean; valid: string }[] = [
  { name: 'isDnsHostname', accepts: isDnsHostname, valid: 'a.example.com' },
  { name: 'isWildcardHostname', accepts: isWildcardHostname, valid: '*.example.com' },
  { name: 'isSafePath', accepts: isSafePath, valid: '/api/v1' },
  { name: 'isCipherList', accepts: isCipherList, valid: 'ECDHE-RSA-AES128-GCM-SHA256:!aNULL' },
  // One token, so the splice lands inside a protocol name rather than in the separator.
  { name: 'parseSslProtocols', accepts: acceptsProtocols, valid: 'TLSv1.3' },
  { name: 'isIpAddress', accepts: isIpAddress, valid: '2001:db8::1' },
  { name: 'isCidr', accepts: isCidr, valid: '10.0.0.0/8' },
  { name: 'isKubernetesName', accepts: isKubernetesName, valid: 'my-secret' },
  { name: 'isPortName', accepts: isPortName, valid: 'https' },
];

describe('hostile characters', () => {
  for (const { name, accepts, valid } of checks) {
    it(`${name} accepts its valid example`, () => {
      expect(accepts(valid)).toBe(true);
    });
    const middle = Math.floor(valid.length / 2);
    for (const character of hostileCharacters) {
      it(`${name} rejects ${JSON.stringify(character)} inside a valid value`, () => {
        expect(accepts(valid.slice(0, middle) + character + valid.slice(middle))).toBe(false);
      });
    }
  }

  // parseSslProtocols trims its input, so only the strict predicates are checked at the edges.
  for (const { name, accepts, valid } of checks.filter((check) => check.name !== 'parseSslProtocols')) {
    for (const character of hostileCharacters) {
      it(`${name} rejects ${JSON.stringify(character)} before or after a valid value`, () => {
        expect(accepts(character + valid)).toBe(false);
        expect(accepts(valid + character)).toBe(false);
      });
    }
  }
});

describe('isDnsHostname', () => {
  it.each(['localhost', 'example.com', 'a-b.c-d.example', '1.2.3.example', `${'a'.repeat(63)}.com`])(
    'accepts %s',
    (host) => expect(isDnsHostname(host)).toBe(true),
  );

  it.each([
    '',
    'Example.com',
    'example.com.',
    '.example.com',
    'a..b',
    '-a.example.com',
    'a-.example.com',
    'a_b.example.com',
    '*.example.com',
    `${'a'.repeat(64)}.com`,
    `${'abcdefghi.'.repeat(25)}abcd`,
  ])('rejects %j', (host) => expect(isDnsHostname(host)).toBe(false));

  it('allows 253 characters and no more', () => {
    const name253 = `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(61)}`;
    expect(name253).toHaveLength(253);
    expect(isDnsHostname(name253)).toBe(true);
    expect(isDnsHostname(`${name253}e`)).toBe(false);
  });
});

describe('isWildcardHostname', () => {
  it('accepts one leading wildcard label', () => {
    expect(isWildcardHostname('*.example.com')).toBe(true);
    expect(isWildcardHostname('*.com')).toBe(true);
  });

  it.each(['example.com', '*', '*.', '**.example.com', '*.*.example.com', 'a.*.example.com', '*example.com', 'x*.a.b'])(
    'rejects %j',
    (host) => expect(isWildcardHostname(host)).toBe(false),
  );
});

describe('isSafePath', () => {
  it.each(['/', '/api', '/api/v1/', '/a.b_c~d', '/%20', "/a!&()*+,=:@-"])('accepts %j', (path) =>
    expect(isSafePath(path)).toBe(true),
  );

  it.each(['', 'api', '/a?b=c', '/a`b', '/a\tb', '/ü'])('rejects %j', (path) => expect(isSafePath(path)).toBe(false));

  it('allows 1024 characters and no more', () => {
    expect(isSafePath(`/${'a'.repeat(1023)}`)).toBe(true);
    expect(isSafePath(`/${'a'.repeat(1024)}`)).toBe(false);
  });
});

describe('isCipherList', () => {
  it.each(['DEFAULT', 'HIGH:!aNULL:!MD5', 'ECDHE+AESGCM:@STRENGTH', 'DEFAULT@SECLEVEL=2', 'BOGUS:HIGH', 'TLS_AES_128_GCM_SHA256:HIGH'])(
    'accepts %j',
    (ciphers) => expect(isCipherList(ciphers)).toBe(true),
  );

  it.each(['', ':', 'HIGH:', ':HIGH', 'HIGH::MEDIUM', 'HIGH,MEDIUM', 'a'.repeat(2049)])('rejects %j', (ciphers) =>
    expect(isCipherList(ciphers)).toBe(false),
  );

  // What OpenSSL's SSL_CTX_set_cipher_list refuses, so nginx refuses to load (see test/unit/openssl-agreement.test.ts).
  it.each(['BOGUS', 'NOSUCHCIPHER', '!ALL', '@STRENGTH', 'TLS_AES_128_GCM_SHA256', 'TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384'])(
    'rejects %j, which selects no TLS 1.2 cipher',
    (ciphers) => expect(isCipherList(ciphers)).toBe(false),
  );
});

describe('parseSslProtocols', () => {
  const all = ['TLSv1', 'TLSv1.1', 'TLSv1.2', 'TLSv1.3'];

  it('normalises spelling, order, duplicates and spacing', () => {
    expect(parseSslProtocols('  tlsv1.3   TLSv1.2 TLSv1.3 ', all)).toEqual({ ok: true, value: 'TLSv1.2 TLSv1.3' });
    expect(parseSslProtocols('TLSv1.3 TLSv1', all)).toEqual({ ok: true, value: 'TLSv1 TLSv1.3' });
  });

  it('rejects protocols outside the allowed set', () => {
    expect(parseSslProtocols('TLSv1.1 TLSv1.2', ['TLSv1.2', 'TLSv1.3']).ok).toBe(false);
    expect(parseSslProtocols('SSLv3', all).ok).toBe(false);
  });

  it.each(['', '   ', 'TLSv1.4', 'TLSv1.2,TLSv1.3', 'TLSv1.2\tTLSv1.3', 'TLSv1.2\nTLSv1.3'])('rejects %j', (value) =>
    expect(parseSslProtocols(value, all).ok).toBe(false),
  );

  it('names the accepted values in its error', () => {
    const parsed = parseSslProtocols('TLSv1', ['TLSv1.2', 'TLSv1.3']);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.problem).toContain('TLSv1.2, TLSv1.3');
  });
});

describe('isIpAddress and isCidr', () => {
  it.each(['192.0.2.1', '::1', '2001:db8::1', '::ffff:192.0.2.1'])('isIpAddress accepts %s', (address) =>
    expect(isIpAddress(address)).toBe(true),
  );

  it.each(['', '256.0.0.1', '192.0.2', 'fe80::1%eth0', 'example.com', '192.0.2.1/32'])(
    'isIpAddress rejects %j',
    (address) => expect(isIpAddress(address)).toBe(false),
  );

  it.each(['0.0.0.0/0', '10.0.0.0/8', '192.0.2.1', '192.0.2.1/32', '::/0', '2001:db8::/32', '::1/128'])(
    'isCidr accepts %s',
    (cidr) => expect(isCidr(cidr)).toBe(true),
  );

  it.each(['10.0.0.0/33', '::/129', '10.0.0.0/', '10.0.0.0/08', '10.0.0.0/-1', '10.0.0.0/8/8', '/8', 'unix:'])(
    'isCidr rejects %j',
    (cidr) => expect(isCidr(cidr)).toBe(false),
  );
});

describe('isKubernetesName', () => {
  it.each(['default', 'my-secret', 'tls.example.com', '0abc'])('accepts %s', (name) =>
    expect(isKubernetesName(name)).toBe(true),
  );

  it.each(['', 'My-Secret', '-a', 'a-', 'a_b', 'a/b', 'a..b', 'a'.repeat(254)])('rejects %j', (name) =>
    expect(isKubernetesName(name)).toBe(false),
  );
});

describe('isPortName', () => {
  it.each(['http', 'https', 'grpc-web', 'h2c', 'a1-b2', 'abcdefghijklmno'])('accepts %s', (name) =>
    expect(isPortName(name)).toBe(true),
  );

  it.each(['', '443', 'HTTP', '-http', 'http-', 'http--alt', 'web_ui', 'abcdefghijklmnop'])('rejects %j', (name) =>
    expect(isPortName(name)).toBe(false),
  );
});

describe('zod value schemas', () => {
  it('trueOrFalse takes true/false only, trimmed and case-insensitive', () => {
    expect(trueOrFalse.parse(' TRUE ')).toBe(true);
    expect(trueOrFalse.parse('false')).toBe(false);
    expect(trueOrFalse.parse('False')).toBe(false);
    for (const other of ['', 'yes', '1', 'on', 'no', '0', 'off']) {
      expect(trueOrFalse.safeParse(other).success).toBe(false);
    }
  });

  it('onOrOff takes on/off only', () => {
    expect(onOrOff.parse('ON')).toBe(true);
    expect(onOrOff.parse(' off')).toBe(false);
    for (const other of ['', 'true', 'false', '1']) expect(onOrOff.safeParse(other).success).toBe(false);
  });

  it('integerInRange takes plain decimals within bounds', () => {
    const schema = integerInRange(1, 100);
    expect(schema.parse(' 7 ')).toBe(7);
    expect(schema.parse('100')).toBe(100);
    for (const other of ['', '0', '101', '-1', '+5', '05', '1.5', '1e2', '0x10', '9'.repeat(30)]) {
      expect(schema.safeParse(other).success).toBe(false);
    }
  });
});

describe('messages', () => {
  it('quotes unremarkable rejected values and only describes the rest', () => {
    expect(describeRejectedValue('  ')).toBe('is empty');
    expect(describeRejectedValue(' FCGI ')).toBe('is "FCGI"');
    for (const hostile of ['a;b', 'x"y', "x'y", '${host}', 'a\nb', 'a b', 'a\\b', 'a\u202eb', '\u001b[31m']) {
      const description = describeRejectedValue(hostile);
      expect(description).toContain('never accepted');
      expect(description).not.toContain(hostile.trim());
    }
    expect(describeRejectedValue('a'.repeat(65))).toBe('is not in the accepted form (65 characters)');
  });

  it('quoteKey escapes control and non-ASCII characters', () => {
    expect(quoteKey('nginx.ingress.kubernetes.io/x')).toBe('"nginx.ingress.kubernetes.io/x"');
    expect(quoteKey('a\u001b[31m\u202e"')).toBe('"a\\u001b[31m\\u202e\\""');
  });
});
