import { z } from 'zod';
import { cipherListDescription, goBool, goBoolText, isCipherList } from '../../checks/allowlist.js';
import { rule } from './rule.js';

/**
 * `ssl-ciphers` and `ssl-prefer-server-ciphers`: TLS settings of the host's server, not of the
 * Ingress's paths (ingress-nginx puts them in the server block); the oldest Ingress on a host that sets
 * one decides it (ingress/server-tls.ts).
 */
export const serverTlsAnnotations = {
  ciphers: rule<string | undefined>({
    name: 'ssl-ciphers',
    schema: z.string().trim().refine(isCipherList),
    defaultValue: undefined,
    accepted: cipherListDescription,
  }),
  preferServerCiphers: rule<boolean | undefined>({ name: 'ssl-prefer-server-ciphers', schema: goBool, defaultValue: undefined, accepted: goBoolText }),
};
