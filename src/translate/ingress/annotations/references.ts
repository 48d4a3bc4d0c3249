import { z } from 'zod';
import { isKubernetesName } from '../../checks/allowlist.js';

export interface NamespacedName {
  readonly namespace: string;
  readonly name: string;
}

/** `namespace/name`, or `name` alone (the Ingress's namespace, filled in by the translator). */
export interface SecretReference {
  readonly namespace?: string;
  readonly name: string;
}

/** `namespace/name`, both DNS-1123 names. */
export const namespacedName = z
  .string()
  .trim()
  .transform((value, context): NamespacedName => {
    const parts = value.split('/');
    const [namespace, name] = parts;
    if (parts.length !== 2 || namespace === undefined || name === undefined) {
      context.addIssue({ code: 'custom', message: 'is not namespace/name' });
      return z.NEVER;
    }
    if (!isKubernetesName(namespace) || !isKubernetesName(name)) {
      context.addIssue({ code: 'custom', message: 'has a namespace or name that is not a DNS-1123 name' });
      return z.NEVER;
    }
    return { namespace, name };
  });

/** `name` or `namespace/name`, as ingress-nginx's `auth-secret` and `auth-tls-secret` take them. */
export const secretReference = z
  .string()
  .trim()
  .transform((value, context): SecretReference => {
    const parts = value.split('/');
    if (parts.length === 1 && isKubernetesName(value)) return { name: value };
    const [namespace, name] = parts;
    if (parts.length === 2 && namespace !== undefined && name !== undefined && isKubernetesName(namespace) && isKubernetesName(name)) {
      return { namespace, name };
    }
    context.addIssue({ code: 'custom', message: 'is neither a name nor namespace/name' });
    return z.NEVER;
  });

export const secretReferenceText = 'the name of a Secret, or namespace/name (lowercase DNS-1123 names)';
