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
    schema: namespacedName,
    defaultValue: undefined,
    accepted: 'namespace/name of a Secret, both parts lowercase DNS-1123 names',
    failsClosed: true,
  }),
  verify: rule({ name: 'proxy-ssl-verify', schema: onOrOff, defaultValue: false, accepted: 'on or off', failsClosed: true }),
  verifyDepth: rule({
    name: 'proxy-ssl-verify-depth',
    schema: integerInRange(1, maxProxySslVerifyDepth),
    defaultValue: 1,
    accepted: `an integer from 1 to ${maxProxySslVerifyDepth}`,
    failsClosed: true,
  }),
  name: rule<string | undefined>({
    name: 'proxy-ssl-name',
    // nginx allows any variables in proxy_ssl_name; we take a literal host name, or `$host`.
    schema: z
      .string()
      .trim()
      .toLowerCase()
      .refine((value) => value === requestHostVariable || isDnsHostname(value)),
    defaultValue: undefined,
    accepted: 'a DNS host name (letters, digits, "-" and "."), or $host',
    failsClosed: true,
  }),
  serverName: rule({ name: 'proxy-ssl-server-name', schema: onOrOff, defaultValue: false, accepted: 'on or off', failsClosed: true }),
  protocols: rule({
    name: 'proxy-ssl-protocols',
    schema: proxySslProtocols,
    // ingress-nginx defaults to "TLSv1 TLSv1.1 TLSv1.2"; we offer neither of the first two, and a
    // backend that speaks only TLS 1.3 must be reachable.
    defaultValue: 'TLSv1.2 TLSv1.3',
    accepted: `a space-separated list of ${proxySslProtocolsAllowed.join(', ')}`,
    failsClosed: true,
  }),
  ciphers: rule({
    name: 'proxy-ssl-ciphers',
    schema: z.string().trim().refine(isCipherList),
    defaultValue: 'DEFAULT',
    accepted: cipherListDescription,
    failsClosed: true,
  }),
};
