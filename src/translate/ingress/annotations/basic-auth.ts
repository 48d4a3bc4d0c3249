import { z } from 'zod';
import { secretReference, secretReferenceText, type SecretReference } from './references.js';
import { rule } from './rule.js';

/** Basic authentication (`auth-type: basic`). It guards access: a rejected value leaves the Ingress out. */
export const basicAuthAnnotations = {
  type: rule<'basic' | undefined>({
    name: 'auth-type',
    section: 'Access control',
    status: 'differs',
    // ingress-nginx also offers `digest`, which needs a module stock nginx does not have.
    schema: z.string().trim().toLowerCase().pipe(z.literal('basic')),
    defaultValue: undefined,
    accepted: 'basic (digest needs a module stock nginx does not have)',
    failsClosed: true,
    note: '`basic` with `auth-secret`; `digest` is refused (stock nginx has no digest module)',
  }),
  secret: rule<SecretReference | undefined>({
    name: 'auth-secret',
    section: 'Access control',
    status: 'differs',
    schema: secretReference,
    defaultValue: undefined,
    accepted: secretReferenceText,
    failsClosed: true,
    note: '`name` or `namespace/name` of the Secret with the users; written beside nginx.conf as a key file (mode 0600, owned by the nginx worker user when we run as root). Another namespace only with `--allow-cross-namespace-secrets`',
  }),
  secretType: rule<'auth-file' | 'auth-map'>({
    name: 'auth-secret-type',
    section: 'Access control',
    status: 'supported',
    schema: z.string().trim().pipe(z.enum(['auth-file', 'auth-map'])),
    defaultValue: 'auth-file',
    accepted: 'auth-file or auth-map',
    failsClosed: true,
    note: '`auth-file` (key `auth` holds htpasswd lines) or `auth-map` (each key a user, each value a password hash)',
  }),
  realm: rule<string | undefined>({
    name: 'auth-realm',
    section: 'Access control',
    status: 'supported',
    schema: z.string().trim().regex(/^[A-Za-z0-9._~/: -]{1,128}$/),
    defaultValue: undefined,
    accepted: 'letters, digits, spaces and - . _ ~ / : (at most 128)',
    failsClosed: true,
    note: 'letters, digits, spaces and `-._~/:`',
  }),
};
