import { z } from 'zod';
import { goBool, goBoolText, isDnsHostname, isHostWithPort, isHttpUrl, isSafePath, isWildcardHostname } from '../../checks/allowlist.js';
import { rule } from './rule.js';

/**
 * How an Ingress's paths match and what the backend sees of the URI: regex paths, rewrites, redirects,
 * the `Host` and prefix sent along, and extra host names. None of them guards access; a rejected value
 * falls back to "not set", as in ingress-nginx.
 */

/**
 * A rewrite target: an optional leading `/`, the Ingress path characters and `$1`…`$9` for the path's
 * groups. `$` followed by anything else would name an nginx variable, which is refused.
 */
function isRewriteTarget(value: string): boolean {
  return value.length <= 1024 && /^\/?([A-Za-z0-9._~%!&()*+,=:@/-]|\$[1-9])*$/.test(value) && value !== '';
}

/** The highest `$n` a rewrite target uses. */
export function highestGroupReference(target: string): number {
  return Math.max(0, ...[...target.matchAll(/\$([1-9])/g)].map((match) => Number(match[1])));
}

/** The header value of `x-forwarded-prefix`: a path. */
const prefix = z.string().trim().refine(isSafePath);

const redirectUrl = z.string().trim().refine(isHttpUrl);
const redirectUrlText = 'an http:// or https:// URL (host, optional port, path and query; no variables)';

/** ingress-nginx's ranges; a code outside them falls back to the default code, not to "no redirect". */
const redirectCode = z.string().trim().regex(/^[0-9]{1,3}$/).transform(Number);

/** Host names, comma-separated: DNS names or `*.` wildcards, lowercased. */
/**
 * Every alias serves every path of the Ingress again: 3,000 aliases of an Ingress with 100 paths are
 * 300,000 locations, minutes of work at every sync. ingress-nginx sets no limit; this is far above use.
 */
export const maxServerAliases = 100;

const hostList = z.string().transform((value, context) => {
  const hosts = value.split(',').map((host) => host.trim().toLowerCase()).filter((host) => host !== '');
  if (hosts.length === 0 || !hosts.every((host) => isDnsHostname(host) || isWildcardHostname(host))) {
    context.addIssue({ code: 'custom', message: 'has an item that is not a host name' });
    return z.NEVER;
  }
  const unique = [...new Set(hosts)].sort();
  if (unique.length > maxServerAliases) {
    context.addIssue({ code: 'custom', message: `has more than ${maxServerAliases} names` });
    return z.NEVER;
  }
  return unique;
});

export const pathAnnotations = {
  useRegex: rule({
    name: 'use-regex',
    section: 'Paths and redirects',
    status: 'differs',
    schema: goBool,
    defaultValue: false,
    accepted: goBoolText,
    note: 'this Ingress\'s paths become case-insensitive regexes anchored at the start (`~* "^path"`), checked against a safe grammar; ingress-nginx turns every path of the host into a regex, we only this Ingress\'s, and another Ingress\'s Exact and Prefix paths (other than `/`) keep their requests. Between Ingresses the older one\'s regexes are tried first, within one the longer',
  }),
  rewriteTarget: rule<string | undefined>({
    name: 'rewrite-target',
    section: 'Paths and redirects',
    status: 'differs',
    schema: z.string().trim().refine(isRewriteTarget),
    defaultValue: undefined,
    accepted: 'a path of letters, digits, - . _ ~ % ! & ( ) * + , = : @ / and $1 to $9 for the groups of the path',
    note: 'implies `use-regex`; the URI sent to the backend, with `$1`…`$9` from the path\'s groups (`rewrite "(?i)^path" target break`)',
  }),
  appRoot: rule<string | undefined>({
    name: 'app-root',
    section: 'Paths and redirects',
    status: 'differs',
    schema: z.string().trim().refine((value) => isSafePath(value) && value !== '/'),
    defaultValue: undefined,
    accepted: 'an absolute path other than / (letters, digits, - . _ ~ % ! & ( ) * + , = : @ /)',
    note: 'a request for `/` is redirected (302) to this path, in this Ingress\'s locations only (ingress-nginx does it for the whole host)',
  }),
  xForwardedPrefix: rule<string | undefined>({
    name: 'x-forwarded-prefix',
    section: 'Paths and redirects',
    status: 'supported',
    schema: prefix,
    defaultValue: undefined,
    accepted: 'an absolute path (letters, digits, - . _ ~ % ! & ( ) * + , = : @ /)',
    note: 'value of an `X-Forwarded-Prefix` header to the backend (a path)',
  }),
  upstreamVhost: rule<string | undefined>({
    name: 'upstream-vhost',
    section: 'Paths and redirects',
    status: 'supported',
    schema: z.string().trim().toLowerCase().refine(isHostWithPort),
    defaultValue: undefined,
    accepted: 'a host name or IP address with an optional :port (no variables)',
    note: '`Host` header sent to the backend (a host name with an optional port; no variables)',
  }),
  permanentRedirect: rule<string | undefined>({
    name: 'permanent-redirect',
    section: 'Paths and redirects',
    status: 'supported',
    schema: redirectUrl,
    defaultValue: undefined,
    accepted: redirectUrlText,
    note: 'an `http(s)` URL answered instead of proxying; no variables',
  }),
  permanentRedirectCode: rule({
    name: 'permanent-redirect-code',
    section: 'Paths and redirects',
    status: 'supported',
    schema: redirectCode,
    defaultValue: 301,
    accepted: 'an HTTP status code',
    note: '300 to 308; others count as 301',
  }),
  temporalRedirect: rule<string | undefined>({
    name: 'temporal-redirect',
    section: 'Paths and redirects',
    status: 'supported',
    schema: redirectUrl,
    defaultValue: undefined,
    accepted: redirectUrlText,
    note: 'as `permanent-redirect`, and wins over it',
  }),
  temporalRedirectCode: rule({
    name: 'temporal-redirect-code',
    section: 'Paths and redirects',
    status: 'supported',
    schema: redirectCode,
    defaultValue: 302,
    accepted: 'an HTTP status code',
    note: '300 to 307; others count as 302',
  }),
  fromToWwwRedirect: rule({
    name: 'from-to-www-redirect',
    section: 'Paths and redirects',
    status: 'differs',
    schema: goBool,
    defaultValue: false,
    accepted: goBoolText,
    note: 'the `www.` twin of each host redirects to it (ConfigMap `http-redirect-code`), unless any other resource claims that name; its TLS uses this Ingress\'s certificate when it covers the name, else the default certificate',
  }),
  serverAlias: rule<readonly string[]>({
    name: 'server-alias',
    section: 'Paths and redirects',
    status: 'differs',
    schema: hostList,
    defaultValue: [],
    accepted: `comma-separated host names (DNS names or *. wildcards; regular expressions are not accepted), at most ${maxServerAliases}`,
    note: 'comma-separated extra host names (DNS names or `*.` wildcards; no regexes) served like the Ingress\'s hosts, unless any other resource claims them',
  }),
};

/** ingress-nginx: a permanent code outside 300–308 is 301, a temporal one outside 300–307 is 302. */
export function permanentCode(code: number): number {
  return code >= 300 && code <= 308 ? code : 301;
}

export function temporalCode(code: number): number {
  return code >= 300 && code <= 307 ? code : 302;
}
