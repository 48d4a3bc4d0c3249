import { z } from 'zod';
import {
  cipherListDescription,
  integerInRange,
  isCipherList,
  isDnsHostname,
  isKubernetesName,
  onOrOff,
  parseSslProtocols,
} from '../../allowlist.js';
import type { AnnotationRule } from './rule.js';

export interface NamespacedName {
  readonly namespace: string;
  readonly name: string;
}

/** Protocols we let an Ingress ask for towards its backend; older ones are broken or deprecated. */
export const proxySslProtocolsAllowed = ['TLSv1.2', 'TLSv1.3'] as const;

/**
 * nginx's own default depth is 1; OpenSSL's default limit is 100. Real chains are a handful of
 * certificates deep, so anything beyond 100 is a typo, not a chain.
 */
export const maxProxySslVerifyDepth = 100;

const namespacedName = z
  .string()
  .trim()
  .transform((value, context): NamespacedName => {
    const parts = value.split('/');
    const [namespace, name] = parts;
    if (parts.length !== 2 || namespace === undefined || name === undefined) {
      context.addIssue({ code: 'custom', message: 'expected namespace/name' });
      return z.NEVER;
    }
    if (!isKubernetesName(namespace) || !isKubernetesName(name)) {
      context.addIssue({ code: 'custom', message: 'namespace and name must be DNS-1123 names' });
      return z.NEVER;
    }
    return { namespace, name };
  });

const proxySslProtocols = z.string().transform((value, context) => {
  const parsed = parseSslProtocols(value, proxySslProtocolsAllowed);
  if (!parsed.ok) {
    context.addIssue({ code: 'custom', message: parsed.problem });
    return z.NEVER;
  }
  return parsed.value;
});

export const proxySslAnnotations: {
  readonly proxySslSecret: AnnotationRule<NamespacedName | undefined>;
  readonly proxySslVerify: AnnotationRule<boolean>;
  readonly proxySslVerifyDepth: AnnotationRule<number>;
  readonly proxySslName: AnnotationRule<string | undefined>;
  readonly proxySslServerName: AnnotationRule<boolean>;
  readonly proxySslProtocols: AnnotationRule<string>;
  readonly proxySslCiphers: AnnotationRule<string>;
} = {
  proxySslSecret: {
    name: 'proxy-ssl-secret',
    schema: namespacedName,
    defaultValue: undefined,
    accepted: 'namespace/name of a Secret, both parts lowercase DNS-1123 names',
  },
  proxySslVerify: {
    name: 'proxy-ssl-verify',
    schema: onOrOff,
    defaultValue: false,
    accepted: 'on or off',
  },
  proxySslVerifyDepth: {
    name: 'proxy-ssl-verify-depth',
    schema: integerInRange(1, maxProxySslVerifyDepth),
    defaultValue: 1,
    accepted: `an integer from 1 to ${maxProxySslVerifyDepth}`,
  },
  proxySslName: {
    name: 'proxy-ssl-name',
    // nginx allows variables in proxy_ssl_name; we take only a literal host name.
    schema: z.string().trim().toLowerCase().refine(isDnsHostname),
    defaultValue: undefined,
    accepted: 'a DNS host name (letters, digits, "-" and ".", no variables)',
  },
  proxySslServerName: {
    name: 'proxy-ssl-server-name',
    schema: onOrOff,
    defaultValue: false,
    accepted: 'on or off',
  },
  proxySslProtocols: {
    name: 'proxy-ssl-protocols',
    schema: proxySslProtocols,
    // ingress-nginx defaults to "TLSv1 TLSv1.1 TLSv1.2"; we do not offer the first two at all.
    defaultValue: 'TLSv1.2',
    accepted: `a space-separated list of ${proxySslProtocolsAllowed.join(', ')}`,
  },
  proxySslCiphers: {
    name: 'proxy-ssl-ciphers',
    schema: z.string().trim().refine(isCipherList),
    defaultValue: 'DEFAULT',
    accepted: cipherListDescription,
  },
};
