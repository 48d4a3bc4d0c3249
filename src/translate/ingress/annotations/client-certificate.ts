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
    section: 'Access control',
    status: 'differs',
    schema: secretReference,
    defaultValue: undefined,
    accepted: secretReferenceText,
    failsClosed: true,
    note: '`namespace/name` (or `name`) of a Secret with `ca.crt` (and optionally `ca.crl`) to verify client certificates with; the requirement applies to this Ingress\'s paths only (ingress-nginx applies it to every path of the host). Another namespace only with `--allow-cross-namespace-secrets`. A host can have one client CA: a newer Ingress that names another one answers 503',
  }),
  verifyClient: rule<VerifyClientMode>({
    name: 'auth-tls-verify-client',
    section: 'Access control',
    status: 'supported',
    schema: z.string().trim().pipe(z.enum(verifyClientModes)),
    defaultValue: 'on',
    accepted: verifyClientModes.join(', '),
    failsClosed: true,
    note: '`on` (no or a bad certificate: 400), `optional` (a bad certificate: 400), `optional_no_ca`, `off`',
  }),
  verifyDepth: rule({
    name: 'auth-tls-verify-depth',
    section: 'Access control',
    status: 'supported',
    schema: integerInRange(1, 100),
    defaultValue: 1,
    accepted: 'an integer from 1 to 100',
    failsClosed: true,
    note: '1 to 100; one depth per host',
  }),
  errorPage: rule<string | undefined>({
    name: 'auth-tls-error-page',
    section: 'Access control',
    status: 'supported',
    schema: z.string().trim().refine((value) => isHttpUrl(value) || isSafePath(value)),
    defaultValue: undefined,
    accepted: 'an http(s) URL or an absolute path (no variables)',
    failsClosed: true,
    note: 'an `http(s)` URL or a path that clients without a valid certificate are redirected to',
  }),
  passCertificate: rule({
    name: 'auth-tls-pass-certificate-to-upstream',
    section: 'Access control',
    status: 'supported',
    schema: goBool,
    defaultValue: false,
    accepted: goBoolText,
    failsClosed: true,
    note: 'sends the URL-encoded certificate in `ssl-client-cert`; `ssl-client-verify`, `ssl-client-subject-dn`, `ssl-client-issuer-dn` are always sent',
  }),
  matchCn: rule<string | undefined>({
    name: 'auth-tls-match-cn',
    section: 'Access control',
    status: 'differs',
    schema: matchCn,
    defaultValue: undefined,
    accepted:
      'CN= followed by a regular expression of literals, . ^ $ | ( ) (?: ) [ ] * + ? {n,m} and \\d \\w \\s escapes that matches in time linear in its subject',
    failsClosed: true,
    note: '`CN=<regex>` matched against the subject DN (403 otherwise); the regex is checked against a safe grammar (the CVE-2025-1097 injection cannot pass it) and must match in linear time (see above)',
  }),
};
