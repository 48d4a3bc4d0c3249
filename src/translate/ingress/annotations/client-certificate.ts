import { z } from 'zod';
import { goBool, goBoolText, integerInRange, isHttpUrl, isSafePath } from '../../checks/allowlist.js';
import { checkSafeRegex, textRegexAlphabet } from '../../checks/safe-regex.js';
import { secretReference, secretReferenceText, type SecretReference } from './references.js';
import { rule } from './rule.js';

/**
 * Client certificate authentication at termination (`auth-tls-*`). It guards access: a rejected value
 * leaves the Ingress out.
 */

const verifyClientModes = ['on', 'off', 'optional', 'optional_no_ca'] as const;
type VerifyClientMode = (typeof verifyClientModes)[number];

/**
 * `CN=` and a regex over the subject DN. This value was the injection of CVE-2025-1097; here it must
 * parse in the safe regex grammar (no quotes, `;`, braces outside repetitions or stray backslashes).
 */
const matchCn = z.string().superRefine((value, context) => {
  if (!value.startsWith('CN=')) {
    context.addIssue({ code: 'custom', message: 'does not start with CN=' });
    return;
  }
  const checked = checkSafeRegex(value, textRegexAlphabet);
  if (!checked.ok) context.addIssue({ code: 'custom', message: checked.problem });
});

export const clientCertificateAnnotations = {
  secret: rule<SecretReference | undefined>({
    name: 'auth-tls-secret',
    schema: secretReference,
    defaultValue: undefined,
    accepted: secretReferenceText,
    failsClosed: true,
  }),
  verifyClient: rule<VerifyClientMode>({
    name: 'auth-tls-verify-client',
    schema: z.string().trim().pipe(z.enum(verifyClientModes)),
    defaultValue: 'on',
    accepted: verifyClientModes.join(', '),
    failsClosed: true,
  }),
  verifyDepth: rule({
    name: 'auth-tls-verify-depth',
    schema: integerInRange(1, 100),
    defaultValue: 1,
    accepted: 'an integer from 1 to 100',
    failsClosed: true,
  }),
  errorPage: rule<string | undefined>({
    name: 'auth-tls-error-page',
    schema: z.string().trim().refine((value) => isHttpUrl(value) || isSafePath(value)),
    defaultValue: undefined,
    accepted: 'an http(s) URL or an absolute path (no variables)',
    failsClosed: true,
  }),
  passCertificate: rule({
    name: 'auth-tls-pass-certificate-to-upstream',
    schema: goBool,
    defaultValue: false,
    accepted: goBoolText,
    failsClosed: true,
  }),
  matchCn: rule<string | undefined>({
    name: 'auth-tls-match-cn',
    schema: matchCn,
    defaultValue: undefined,
    accepted:
      'CN= followed by a regular expression of literals, . ^ $ | ( ) (?: ) [ ] * + ? {n,m} and \\d \\w \\s escapes that matches in time linear in its subject',
    failsClosed: true,
  }),
};
