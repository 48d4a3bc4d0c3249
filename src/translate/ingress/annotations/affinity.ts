import { z } from 'zod';
import { goBool, goBoolText, isDnsHostname } from '../../checks/allowlist.js';
import { rule } from './rule.js';

/**
 * Cookie affinity (`affinity: cookie` and `session-cookie-*`), with ingress-nginx's names and defaults.
 * Every value lands in a quoted `map` value that becomes the Set-Cookie header, so each alphabet leaves
 * out quotes, backslashes, `$`, `;`, `{`, `}` and whitespace.
 */

export const defaultCookieName = 'INGRESSCOOKIE';

/** `cookie`, trimmed and case-sensitive as ingress-nginx checks it. */
const affinityType = z.string().trim().pipe(z.literal('cookie'));

/** An RFC 6265 cookie name from ingress-nginx's basic alphabet (no `/` or `:`, which a token cannot hold). */
const cookieName = z.string().trim().regex(/^[A-Za-z0-9._~-]{1,64}$/);

/** A cookie `Path`: an absolute path without the characters a cookie attribute or nginx treats specially. */
const cookiePath = z.string().trim().regex(/^\/[A-Za-z0-9._~%!&()*+,=:@/-]{0,255}$/);

/** A cookie `Domain`: a DNS name, with the leading dot older browsers wanted, stored in lowercase. */
const cookieDomain = z
  .string()
  .trim()
  .transform((value) => value.toLowerCase())
  .refine((value) => isDnsHostname(value.startsWith('.') ? value.slice(1) : value), { message: 'is not a DNS name' });

/** Seconds, as ingress-nginx takes them: an integer, negative allowed (the cookie is dropped at once). */
const seconds = z
  .string()
  .trim()
  .regex(/^(0|-?[1-9][0-9]{0,9})$/)
  .transform(Number);

export type SameSite = 'None' | 'Lax' | 'Strict';

/** Case-insensitive as ingress-nginx reads it; written as browsers document it. */
const sameSite = z
  .string()
  .trim()
  .transform((value) => value.toLowerCase())
  .pipe(z.enum(['none', 'lax', 'strict']))
  .transform((value): SameSite => (value === 'none' ? 'None' : value === 'lax' ? 'Lax' : 'Strict'));

const option = <T extends string>(values: readonly [T, ...T[]]) =>
  z
    .string()
    .trim()
    .transform((value) => value.toLowerCase())
    .pipe(z.enum(values));

export const affinityAnnotations = {
  type: rule<'cookie' | undefined>({
    name: 'affinity',
    section: 'Load balancing and affinity',
    status: 'differs',
    schema: affinityType,
    defaultValue: undefined,
    accepted: 'cookie',
    note: '`cookie`: the upstream hashes consistently (`hash … consistent`) over the Service\'s endpoints by the cookie, and a client without it gets one, whose value is a fresh request id (ingress-nginx\'s value has another shape; a cookie it set still pins the client, to some endpoint). Needs `--upstreams endpoints` (a warning says so otherwise). Takes precedence over `upstream-hash-by` and `load-balance`',
  }),
  mode: rule<'balanced' | 'persistent'>({
    name: 'affinity-mode',
    section: 'Load balancing and affinity',
    status: 'differs',
    schema: option(['balanced', 'persistent']),
    defaultValue: 'balanced',
    accepted: 'balanced or persistent',
    note: '`balanced` as ingress-nginx: when endpoints are added, about a share of new/total of the clients move to them. `persistent` behaves as `balanced` (keeping every session on its endpoint through a scale-out needs Lua)',
  }),
  canaryBehavior: rule<'sticky' | 'legacy'>({
    name: 'affinity-canary-behavior',
    section: 'Load balancing and affinity',
    status: 'differs',
    schema: option(['sticky', 'legacy']),
    defaultValue: 'sticky',
    accepted: 'sticky or legacy',
    note: 'on the canary Ingress: `sticky` splits the weight by the affinity cookie, so a client stays with the side it got and the canary is balanced like the main; `legacy` splits each request anew. `canary-by-header`/`-cookie` still decide before the weight (ingress-nginx lets the cookie win)',
  }),
  cookieName: rule({
    name: 'session-cookie-name',
    section: 'Load balancing and affinity',
    status: 'supported',
    schema: cookieName,
    defaultValue: defaultCookieName,
    accepted: 'a cookie name of letters, digits, ".", "_", "~" and "-" (at most 64)',
    note: 'letters, digits, `.`, `_`, `~`, `-`',
  }),
  cookiePath: rule<string | undefined>({
    name: 'session-cookie-path',
    section: 'Load balancing and affinity',
    status: 'supported',
    schema: cookiePath,
    defaultValue: undefined,
    defaultWords: 'the Ingress path',
    accepted: 'an absolute path of letters, digits and - . _ ~ % ! & ( ) * + , = : @ / (at most 256)',
    note: 'with `use-regex` paths and no value, `Path=/` and a warning (ingress-nginx writes the regex)',
  }),
  cookieDomain: rule<string | undefined>({
    name: 'session-cookie-domain',
    section: 'Load balancing and affinity',
    status: 'supported',
    schema: cookieDomain,
    defaultValue: undefined,
    accepted: 'a DNS name, optionally with a leading "."',
    note: 'a DNS name, optionally with a leading `.`',
  }),
  cookieExpires: rule<number | undefined>({
    name: 'session-cookie-expires',
    section: 'Load balancing and affinity',
    status: 'differs',
    schema: seconds,
    defaultValue: undefined,
    accepted: 'a whole number of seconds',
    note: 'seconds, written as `Max-Age` when `session-cookie-max-age` is not set (stock nginx cannot compute the `Expires` date; browsers read both alike)',
  }),
  cookieMaxAge: rule<number | undefined>({
    name: 'session-cookie-max-age',
    section: 'Load balancing and affinity',
    status: 'supported',
    schema: seconds,
    defaultValue: undefined,
    accepted: 'a whole number of seconds',
    note: 'seconds',
  }),
  cookieSecure: rule({
    name: 'session-cookie-secure',
    section: 'Load balancing and affinity',
    status: 'supported',
    schema: goBool,
    defaultValue: false,
    defaultWords: '`false` (`Secure` over HTTPS)',
    accepted: goBoolText,
    note: '`true`: `Secure` over plain HTTP too',
  }),
  cookieSameSite: rule<SameSite | undefined>({
    name: 'session-cookie-samesite',
    section: 'Load balancing and affinity',
    status: 'supported',
    schema: sameSite,
    defaultValue: undefined,
    accepted: 'None, Lax or Strict',
    note: '`None`, `Lax` or `Strict`',
  }),
  conditionalSameSiteNone: rule({
    name: 'session-cookie-conditional-samesite-none',
    section: 'Load balancing and affinity',
    status: 'supported',
    schema: goBool,
    defaultValue: false,
    accepted: goBoolText,
    note: 'no `SameSite=None` for the browsers ingress-nginx lists as rejecting it',
  }),
  changeOnFailure: rule({
    name: 'session-cookie-change-on-failure',
    section: 'Load balancing and affinity',
    status: 'differs',
    schema: goBool,
    defaultValue: false,
    accepted: goBoolText,
    note: 'either way a failed attempt is retried on another endpoint (`proxy-next-upstream`) and the cookie is kept: the client returns to its endpoint once nginx stops counting it as failed (ingress-nginx retries the same endpoint with `false`, and sets a new cookie with `true`)',
  }),
};
