import { z } from 'zod';
import { goBool, goBoolText, integerInRange } from '../../checks/allowlist.js';
import { rule } from './rule.js';

/**
 * Cross-origin resource sharing, with ingress-nginx's defaults. A rejected value of the origin list or
 * of `cors-allow-credentials` falls back to the strictest value (no origin, no credentials): their
 * ingress-nginx defaults (`*`, `true`) would allow more than the user wrote.
 */

const defaultCorsMethods = 'GET, PUT, POST, DELETE, PATCH, OPTIONS';
const defaultCorsHeaders =
  'DNT,Keep-Alive,User-Agent,X-Requested-With,If-Modified-Since,Cache-Control,Content-Type,Range,Authorization';
const defaultCorsMaxAge = 1_728_000;

/** `*`, or origins: `scheme://host[:port]` with an optional `*.` first label, or `null`. */
export type CorsOrigins = { readonly any: true } | { readonly any: false; readonly origins: readonly string[] };

const origin = /^([a-z][a-z0-9+.-]*:\/\/(\*\.)?[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*(:[0-9]{1,5})?|null)$/;

/** Each origin is a map entry of its own (never one long regex: nginx reads at most 4 KB per parameter). */
export const maxCorsOrigins = 256;

const origins = z.string().transform((value, context): CorsOrigins => {
  const items = value.split(',').map((item) => item.trim()).filter((item) => item !== '');
  if (items.includes('*')) return { any: true };
  if (items.length === 0 || !items.every((item) => origin.test(item) && item.length <= 300)) {
    context.addIssue({ code: 'custom', message: 'has an item that is not an origin' });
    return z.NEVER;
  }
  const unique = [...new Set(items.map((item) => item.toLowerCase()))];
  if (unique.length > maxCorsOrigins) {
    context.addIssue({ code: 'custom', message: `has more than ${maxCorsOrigins} origins` });
    return z.NEVER;
  }
  return { any: false, origins: unique };
});

/**
 * The list becomes one quoted parameter of `add_header`, and nginx refuses a parameter longer than its
 * 4 KB read buffer: far below that.
 */
export const maxTokenListLength = 1024;

/** A list of tokens (method or header names) as ingress-nginx accepts it, rebuilt as `a, b, c`. */
function tokenList(token: RegExp, separator: string) {
  return z.string().transform((value, context) => {
    const items = value.split(',').map((item) => item.trim()).filter((item) => item !== '');
    const joined = items.join(separator);
    if (items.length === 0 || items.length > 64 || !items.every((item) => token.test(item)) || joined.length > maxTokenListLength) {
      context.addIssue({ code: 'custom', message: 'has an item that is not accepted, or is too long' });
      return z.NEVER;
    }
    return joined;
  });
}

export const corsAnnotations = {
  enabled: rule({
    name: 'enable-cors',
    section: 'CORS',
    status: 'differs',
    schema: goBool,
    defaultValue: false,
    accepted: goBoolText,
    note: 'CORS headers on responses to allowed origins, and a 204 for their preflight `OPTIONS`; headers are set with `add_header … always` (stock nginx), so they are added, not replaced, if the backend sends its own',
  }),
  allowOrigin: rule<CorsOrigins>({
    name: 'cors-allow-origin',
    section: 'CORS',
    status: 'differs',
    schema: origins,
    defaultValue: { any: true },
    fallbackValue: { any: false, origins: [] },
    defaultWords: '`*`',
    accepted: `comma-separated origins such as https://app.example.com, https://*.example.com:8443 or null (at most ${maxCorsOrigins}), or *`,
    note: 'comma-separated origins (`https://a.example`, `https://*.example`, ports, `null`) or `*`; a list with an invalid origin allows none (an error), where ingress-nginx would fall back to `*`',
  }),
  allowMethods: rule({
    name: 'cors-allow-methods',
    section: 'CORS',
    status: 'supported',
    schema: tokenList(/^[A-Za-z]{1,32}$/, ', '),
    defaultValue: defaultCorsMethods,
    accepted: `comma-separated method names (at most 64, ${maxTokenListLength} characters)`,
    note: 'method names',
  }),
  allowHeaders: rule({
    name: 'cors-allow-headers',
    section: 'CORS',
    status: 'supported',
    schema: tokenList(/^[A-Za-z0-9_-]{1,64}$/, ','),
    defaultValue: defaultCorsHeaders,
    defaultWords: 'ingress-nginx\'s list (`DNT,Keep-Alive,User-Agent,…,Authorization`)',
    accepted: `comma-separated header names (letters, digits, "-", "_"; at most 64, ${maxTokenListLength} characters)`,
    note: 'header names',
  }),
  allowCredentials: rule({
    name: 'cors-allow-credentials',
    section: 'CORS',
    status: 'supported',
    schema: goBool,
    defaultValue: true,
    fallbackValue: false,
    accepted: goBoolText,
    note: '',
  }),
  exposeHeaders: rule<string | undefined>({
    name: 'cors-expose-headers',
    section: 'CORS',
    status: 'supported',
    schema: tokenList(/^([A-Za-z0-9_-]{1,64}|\*)$/, ','),
    defaultValue: undefined,
    accepted: `comma-separated header names or * (at most 64, ${maxTokenListLength} characters)`,
    note: 'header names or `*`',
  }),
  maxAge: rule({
    name: 'cors-max-age',
    section: 'CORS',
    status: 'supported',
    schema: integerInRange(0, 2_147_483_647),
    defaultValue: defaultCorsMaxAge,
    accepted: 'a number of seconds',
    note: 'seconds',
  }),
};
