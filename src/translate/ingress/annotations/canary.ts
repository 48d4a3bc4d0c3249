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
  enabled: rule({
    name: 'canary',
    section: 'Canaries',
    status: 'differs',
    schema: goBool,
    defaultValue: false,
    accepted: goBoolText,
    failsClosed: true,
    note: 'the Ingress only diverts traffic of paths (same host, path and path type) of a main Ingress in its own namespace; it claims no host or path, and its `spec.tls` and other annotations have no effect (warning). Another namespace\'s Ingress is never split (ingress-nginx merges across namespaces). An invalid value leaves the Ingress out rather than making it a main Ingress',
  }),
  weight: rule({
    name: 'canary-weight',
    section: 'Canaries',
    status: 'differs',
    schema: integerInRange(0, maxCanaryWeight),
    defaultValue: 0,
    accepted: `an integer from 0 to ${maxCanaryWeight}`,
    note: 'share of the remaining requests, chosen at random per request (`split_clients` over `$request_id`, to 0.01%)',
  }),
  weightTotal: rule({
    name: 'canary-weight-total',
    section: 'Canaries',
    status: 'supported',
    schema: integerInRange(1, maxCanaryWeight),
    defaultValue: 100,
    accepted: `an integer from 1 to ${maxCanaryWeight}`,
    note: 'what `canary-weight` is a share of; values up to 100 count as 100, as in ingress-nginx',
  }),
  header: rule<string | undefined>({
    name: 'canary-by-header',
    section: 'Canaries',
    status: 'supported',
    schema: z.string().trim().refine(isHeaderName),
    defaultValue: undefined,
    accepted: 'a header name (letters, digits and "-")',
    note: 'header name (letters, digits, `-`); `always` sends to the canary, `never` to the main backend, anything else falls through to the cookie and the weight',
  }),
  headerValue: rule<string | undefined>({
    name: 'canary-by-header-value',
    section: 'Canaries',
    status: 'supported',
    schema: headerValue,
    defaultValue: undefined,
    accepted: 'letters, digits and - . _ ~ / : (at most 256)',
    note: 'the header value (exact, case-sensitive) that sends to the canary; others fall through',
  }),
  headerPattern: rule<string | undefined>({
    name: 'canary-by-header-pattern',
    section: 'Canaries',
    status: 'differs',
    schema: headerPattern,
    defaultValue: undefined,
    accepted:
      'a regular expression of literals, . ^ $ | ( ) (?: ) [ ] * + ? {n,m} and \\d \\w \\s escapes that matches in time linear in its subject',
    note: 'a regex (safe grammar, linear time, see above) for the header value; ignored when `canary-by-header-value` is set',
  }),
  cookie: rule<string | undefined>({
    name: 'canary-by-cookie',
    section: 'Canaries',
    status: 'supported',
    schema: cookieName,
    defaultValue: undefined,
    accepted: 'a cookie name (letters, digits and - . _)',
    note: 'cookie name; `always` / `never` as for the header, checked after it',
  }),
};
