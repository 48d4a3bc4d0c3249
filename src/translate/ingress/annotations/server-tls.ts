import { z } from 'zod';
import { cipherListDescription, goBool, goBoolText, isCipherList } from '../../checks/allowlist.js';
import { rule } from './rule.js';

/**
 * `ssl-ciphers` and `ssl-prefer-server-ciphers`: TLS settings of the host's server, not of the
 * Ingress's paths (ingress-nginx puts them in the server block); the oldest Ingress on a host that sets
 * one decides it (settle/server-tls.ts).
 */
export const serverTlsAnnotations = {
  ciphers: rule<string | undefined>({
    name: 'ssl-ciphers',
    section: 'TLS and backends',
    status: 'supported',
    schema: z.string().trim().refine(isCipherList),
    defaultValue: undefined,
    defaultWords: 'ConfigMap `ssl-ciphers`',
    accepted: cipherListDescription,
    note: '`ssl_ciphers` of the host\'s server (TLS 1.2 and older), checked by OpenSSL; the oldest Ingress on the host that sets it decides (a newer one that asks otherwise gets a warning). The host gets an SSL context of its own, also with `--certificates-per-handshake`',
  }),
  preferServerCiphers: rule<boolean | undefined>({
    name: 'ssl-prefer-server-ciphers',
    section: 'TLS and backends',
    status: 'supported',
    schema: goBool,
    defaultValue: undefined,
    defaultWords: '`on` (with ConfigMap `ssl-ciphers`)',
    accepted: goBoolText,
    note: '`ssl_prefer_server_ciphers` of the host\'s server, decided as `ssl-ciphers`',
  }),
};
