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
  type: rule<'cookie' | undefined>({ name: 'affinity', schema: affinityType, defaultValue: undefined, accepted: 'cookie' }),
  mode: rule<'balanced' | 'persistent'>({
    name: 'affinity-mode',
    schema: option(['balanced', 'persistent']),
    defaultValue: 'balanced',
    accepted: 'balanced or persistent',
  }),
  canaryBehavior: rule<'sticky' | 'legacy'>({
    name: 'affinity-canary-behavior',
    schema: option(['sticky', 'legacy']),
    defaultValue: 'sticky',
    accepted: 'sticky or legacy',
  }),
  cookieName: rule({
    name: 'session-cookie-name',
    schema: cookieName,
    defaultValue: defaultCookieName,
    accepted: 'a cookie name of letters, digits, ".", "_", "~" and "-" (at most 64)',
  }),
  cookiePath: rule<string | undefined>({
    name: 'session-cookie-path',
    schema: cookiePath,
    defaultValue: undefined,
    accepted: 'an absolute path of letters, digits and - . _ ~ % ! & ( ) * + , = : @ / (at most 256)',
  }),
  cookieDomain: rule<string | undefined>({
    name: 'session-cookie-domain',
    schema: cookieDomain,
    defaultValue: undefined,
    accepted: 'a DNS name, optionally with a leading "."',
  }),
  cookieExpires: rule<number | undefined>({
    name: 'session-cookie-expires',
    schema: seconds,
    defaultValue: undefined,
    accepted: 'a whole number of seconds',
  }),
  cookieMaxAge: rule<number | undefined>({
    name: 'session-cookie-max-age',
    schema: seconds,
    defaultValue: undefined,
    accepted: 'a whole number of seconds',
  }),
  cookieSecure: rule({ name: 'session-cookie-secure', schema: goBool, defaultValue: false, accepted: goBoolText }),
  cookieSameSite: rule<SameSite | undefined>({
    name: 'session-cookie-samesite',
    schema: sameSite,
    defaultValue: undefined,
    accepted: 'None, Lax or Strict',
  }),
  conditionalSameSiteNone: rule({ name: 'session-cookie-conditional-samesite-none', schema: goBool, defaultValue: false, accepted: goBoolText }),
  changeOnFailure: rule({ name: 'session-cookie-change-on-failure', schema: goBool, defaultValue: false, accepted: goBoolText }),
};
