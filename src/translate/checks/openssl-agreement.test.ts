import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { isCipherList } from './allowlist.js';
import { nginxTest, prefixDirectives } from '../../../test/support/nginx.js';

/**
 * Our cipher-list check must agree with the nginx it renders for: whatever it lets through, nginx loads,
 * and what nginx refuses (the whole config, for everyone) it catches first.
 */

let prefix: string;
beforeAll(async () => {
  prefix = await mkdtemp(join(tmpdir(), 'i2n-ciphers-'));
});

const lists = [
  'DEFAULT',
  'HIGH:!aNULL:!MD5',
  'ECDHE+AESGCM:@STRENGTH',
  'DEFAULT@SECLEVEL=2',
  'BOGUS:HIGH',
  'TLS_AES_128_GCM_SHA256:HIGH',
  'eNULL',
  'BOGUS',
  'NOSUCHCIPHER',
  '!ALL',
  '@STRENGTH',
  'TLS_AES_128_GCM_SHA256',
  'ECDHE-RSA-AES128-GCM-SHA256',
  'kRSA:!aRSA',
];

describe('isCipherList agrees with nginx -t', () => {
  it.each(lists)('%s', async (ciphers) => {
    const { main, http } = prefixDirectives(prefix);
    const conf = join(prefix, `ciphers-${lists.indexOf(ciphers)}.conf`);
    await writeFile(
      conf,
      `${main}http {\n${http}ssl_ciphers ${ciphers};\nserver { listen 127.0.0.1:1; location / { proxy_pass https://127.0.0.1:1; proxy_ssl_ciphers ${ciphers}; } }\n}\n`,
    );
    const nginx = await nginxTest(conf, prefix);
    expect(isCipherList(ciphers), nginx.output).toBe(nginx.ok);
  });
});
