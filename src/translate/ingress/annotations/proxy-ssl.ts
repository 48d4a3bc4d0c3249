import { z } from 'zod';
import {
  cipherListDescription,
  integerInRange,
  isCipherList,
  isDnsHostname,
  onOrOff,
  parseSslProtocols,
} from '../../checks/allowlist.js';
import { namespacedName, type NamespacedName } from './references.js';
import { rule } from './rule.js';

export type { NamespacedName } from './references.js';

/** Protocols we let an Ingress ask for towards its backend; older ones are broken or deprecated. */
export const proxySslProtocolsAllowed = ['TLSv1.2', 'TLSv1.3'] as const;

/**
 * nginx's own default depth is 1; OpenSSL's default limit is 100. Real chains are a handful of
 * certificates deep, so anything beyond 100 is a typo, not a chain.
 */
export const maxProxySslVerifyDepth = 100;

const proxySslProtocols = z.string().transform((value, context) => {
  const parsed = parseSslProtocols(value, proxySslProtocolsAllowed);
  if (!parsed.ok) {
    context.addIssue({ code: 'custom', message: parsed.problem });
    return z.NEVER;
  }
  return parsed.value;
});

/** The one variable `proxy-ssl-name` may hold: the request's host, a common multi-tenant pattern. */
const requestHostVariable = '$host';

export const proxySslAnnotations = {
  secret: rule<NamespacedName | undefined>({
    name: 'proxy-ssl-secret',
    section: 'TLS and backends',
    status: 'supported',
    schema: namespacedName,
    defaultValue: undefined,
    accepted: 'namespace/name of a Secret, both parts lowercase DNS-1123 names',
    failsClosed: true,
    note: '`namespace/name` of a Secret with `ca.crt` (and optionally `tls.crt`/`tls.key` to present); another namespace only with `--allow-cross-namespace-secrets`',
  }),
  verify: rule({
    name: 'proxy-ssl-verify',
    section: 'TLS and backends',
    status: 'differs',
    schema: onOrOff,
    defaultValue: false,
    defaultWords: '`off`',
    // `true` stays refused: ingress-nginx reads it as `off`, which would leave the backend unverified.
    accepted: 'on or off ("false" is read as off, as ingress-nginx reads it)',
    failsClosed: true,
    // ingress-nginx's parser falls back to `off` for any value but on/off: `false` means what it says there.
    spellings: { false: 'off' },
    note: '`on` without a CA is an error and the path answers 503 (never reached unverified); with `on`, `proxy_ssl_name` and SNI are always set (to the Service DNS name unless `proxy-ssl-name`)',
  }),
  verifyDepth: rule({
    name: 'proxy-ssl-verify-depth',
    section: 'TLS and backends',
    status: 'supported',
    schema: integerInRange(1, maxProxySslVerifyDepth),
    defaultValue: 1,
    accepted: `an integer from 1 to ${maxProxySslVerifyDepth}`,
    failsClosed: true,
    note: '1 to 100',
  }),
  name: rule<string | undefined>({
    name: 'proxy-ssl-name',
    section: 'TLS and backends',
    status: 'differs',
    // nginx allows any variables in proxy_ssl_name; we take a literal host name, or `$host`.
    schema: z
      .string()
      .trim()
      .toLowerCase()
      .refine((value) => value === requestHostVariable || isDnsHostname(value)),
    defaultValue: undefined,
    defaultWords: 'the Service DNS name when verifying',
    accepted: 'a DNS host name (letters, digits, "-" and "."), or $host',
    failsClosed: true,
    note: 'a DNS name, or `$host` (the request host); no other variables',
  }),
  serverName: rule({
    name: 'proxy-ssl-server-name',
    section: 'TLS and backends',
    status: 'supported',
    schema: onOrOff,
    defaultValue: false,
    defaultWords: '`off` (`on` when verifying)',
    accepted: 'on or off',
    failsClosed: true,
    spellings: { false: 'off' },
    note: 'send SNI to the backend; `false` is read as `off`, as in ingress-nginx',
  }),
  protocols: rule({
    name: 'proxy-ssl-protocols',
    section: 'TLS and backends',
    status: 'differs',
    schema: proxySslProtocols,
    // ingress-nginx defaults to "TLSv1 TLSv1.1 TLSv1.2"; we offer neither of the first two, and a
    // backend that speaks only TLS 1.3 must be reachable.
    defaultValue: 'TLSv1.2 TLSv1.3',
    accepted: `a space-separated list of ${proxySslProtocolsAllowed.join(', ')}`,
    failsClosed: true,
    note: 'only TLSv1.2 and TLSv1.3 (ingress-nginx defaults to `TLSv1 TLSv1.1 TLSv1.2`, which cannot reach a TLS 1.3-only backend)',
  }),
  ciphers: rule({
    name: 'proxy-ssl-ciphers',
    section: 'TLS and backends',
    status: 'supported',
    schema: z.string().trim().refine(isCipherList),
    defaultValue: 'DEFAULT',
    accepted: cipherListDescription,
    failsClosed: true,
    note: 'checked by OpenSSL before it reaches nginx',
  }),
};
