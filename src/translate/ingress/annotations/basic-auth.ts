import { z } from 'zod';
import { secretReference, secretReferenceText, type SecretReference } from './references.js';
import { rule } from './rule.js';

/** Basic authentication (`auth-type: basic`). It guards access: a rejected value leaves the Ingress out. */
export const basicAuthAnnotations = {
  type: rule<'basic' | undefined>({
    name: 'auth-type',
    // ingress-nginx also offers `digest`, which needs a module stock nginx does not have.
    schema: z.string().trim().toLowerCase().pipe(z.literal('basic')),
    defaultValue: undefined,
    accepted: 'basic (digest needs a module stock nginx does not have)',
    failsClosed: true,
  }),
  secret: rule<SecretReference | undefined>({
    name: 'auth-secret',
    schema: secretReference,
    defaultValue: undefined,
    accepted: secretReferenceText,
    failsClosed: true,
  }),
  secretType: rule<'auth-file' | 'auth-map'>({
    name: 'auth-secret-type',
    schema: z.string().trim().pipe(z.enum(['auth-file', 'auth-map'])),
    defaultValue: 'auth-file',
    accepted: 'auth-file or auth-map',
    failsClosed: true,
  }),
  realm: rule<string | undefined>({
    name: 'auth-realm',
    schema: z.string().trim().regex(/^[A-Za-z0-9._~/: -]{1,128}$/),
    defaultValue: undefined,
    accepted: 'letters, digits, spaces and - . _ ~ / : (at most 128)',
    failsClosed: true,
  }),
};
