import { z } from 'zod';
import { goBool, goBoolText, integerInRange, isHeaderName } from '../../checks/allowlist.js';
import { checkSafeRegex, textRegexAlphabet } from '../../checks/safe-regex.js';
import { rule } from './rule.js';

/**
 * `canary: "true"` marks an Ingress that only diverts part of another Ingress's traffic; it never
 * claims a host or path of its own. A `canary` value that is not a boolean leaves the Ingress out:
 * falling back to "not a canary", as ingress-nginx does, would render it as a main Ingress that
 * competes for the real main Ingress's host and path.
 */

/** A header value as ingress-nginx's canary parser accepts it (BasicChars, spaces removed). */
const headerValue = z
  .string()
  .transform((value) => value.replaceAll(' ', ''))
  .pipe(z.string().regex(/^[A-Za-z0-9._~/:-]{1,256}$/));

const headerPattern = z.string().superRefine((value, context) => {
  const checked = checkSafeRegex(value, textRegexAlphabet);
  if (!checked.ok) context.addIssue({ code: 'custom', message: checked.problem });
});

/** Cookie names in the characters every cookie library agrees on. */
const cookieName = z.string().trim().regex(/^[A-Za-z0-9._-]{1,128}$/);

const maxCanaryWeight = 1_000_000;

export const canaryAnnotations = {
  enabled: rule({ name: 'canary', schema: goBool, defaultValue: false, accepted: goBoolText, failsClosed: true }),
  weight: rule({
    name: 'canary-weight',
    schema: integerInRange(0, maxCanaryWeight),
    defaultValue: 0,
    accepted: `an integer from 0 to ${maxCanaryWeight}`,
  }),
  weightTotal: rule({
    name: 'canary-weight-total',
    schema: integerInRange(1, maxCanaryWeight),
    defaultValue: 100,
    accepted: `an integer from 1 to ${maxCanaryWeight}`,
  }),
  header: rule<string | undefined>({
    name: 'canary-by-header',
    schema: z.string().trim().refine(isHeaderName),
    defaultValue: undefined,
    accepted: 'a header name (letters, digits and "-")',
  }),
  headerValue: rule<string | undefined>({
    name: 'canary-by-header-value',
    schema: headerValue,
    defaultValue: undefined,
    accepted: 'letters, digits and - . _ ~ / : (at most 256)',
  }),
  headerPattern: rule<string | undefined>({
    name: 'canary-by-header-pattern',
    schema: headerPattern,
    defaultValue: undefined,
    accepted:
      'a regular expression of literals, . ^ $ | ( ) (?: ) [ ] * + ? {n,m} and \\d \\w \\s escapes that matches in time linear in its subject',
  }),
  cookie: rule<string | undefined>({
    name: 'canary-by-cookie',
    schema: cookieName,
    defaultValue: undefined,
    accepted: 'a cookie name (letters, digits and - . _)',
  }),
};
