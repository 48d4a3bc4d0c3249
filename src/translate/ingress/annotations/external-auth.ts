import { z } from 'zod';
import { goBool, goBoolText, integerInRange, isHeaderName, isHostWithPort, isHttpUrl, isPathWithQuery } from '../../checks/allowlist.js';
import { isReservedHeader, reservedHeaderText } from '../../checks/header-names.js';
import { rule } from './rule.js';

/**
 * External authentication (`auth-url`): nginx asks another service about every request first. It
 * guards access: a rejected value leaves the Ingress out.
 */

/**
 * The variables an auth URL may use, as in oauth2-proxy's documented annotations. Stock nginx cannot
 * URL-encode, so `$escaped_request_uri` (set by a Lua module in ingress-nginx) stands for the request
 * URI as it was sent.
 */
const authUrlVariables: Readonly<Record<string, string>> = {
  $host: '$host',
  $http_host: '$http_host',
  $scheme: '$scheme',
  $request_uri: '$request_uri',
  $escaped_request_uri: '$request_uri',
};

export interface AuthUrl {
  /** The URL as nginx gets it, variables spelled as nginx knows them. */
  readonly url: string;
  readonly scheme: 'http' | 'https';
  /**
   * `host[:port]` when literal; undefined when it is `$host`, which nginx must check against the names
   * the server serves before it lets it choose the auth target (auth-endpoint.ts).
   */
  readonly authority?: string;
  /** With `$host`, the port written after it, if any. */
  readonly port?: number;
  /** Path and query after the authority, `/` when there is none. */
  readonly path: string;
}

const variablePattern = /\$[a-z_]+/g;

/**
 * Parses `http(s)://authority/path?query` with `variables` (by the name written, to the name nginx
 * knows) in the path and query, and one of `hostVariables` as the whole authority. Used by every
 * annotation that names a URL nginx sends requests to (`auth-url`, `auth-signin`, `mirror-target`).
 */
export function parseTargetUrl(value: string, hostVariables: readonly string[], variables: Readonly<Record<string, string>> = authUrlVariables): AuthUrl | undefined {
  const match = /^(https?):\/\/(\$[a-z_]+(?::\d+)?|[^/?#$]+)(.*)$/.exec(value);
  if (!match || value.length > 2048) return undefined;
  const [, scheme = 'http', authority = '', rest = ''] = match;
  // The path may start with the request URI itself (`https://mirror.example$request_uri`), which
  // always starts with `/`; no other variable may follow the authority, or it would extend the host.
  const leading = /^\$[a-z_]+/.exec(rest)?.[0];
  if (leading !== undefined && (!Object.hasOwn(variables, leading) || variables[leading] !== '$request_uri')) return undefined;
  let unknown = false;
  const spell = (text: string) =>
    text.replace(variablePattern, (name) => {
      const known = Object.hasOwn(variables, name) ? variables[name] : undefined;
      if (known === undefined) unknown = true;
      return known ?? name;
    });
  // A placeholder of path characters stands for each variable while the rest is checked.
  const literal = (text: string) => text.replace(variablePattern, 'x');
  const path = rest === '' ? '/' : rest.startsWith('?') ? `/${rest}` : rest;
  if (!isPathWithQuery(literal(leading === undefined ? path : `/${path}`))) return undefined;
  let literalAuthority: string | undefined;
  // A host variable, alone or with a literal port: `$host:8443`.
  const [hostPart = '', port] = authority.split(/:(?=\d+$)/);
  if (hostVariables.includes(hostPart) && (port === undefined || isPort(port))) literalAuthority = undefined;
  else if (isHostWithPort(authority.toLowerCase())) literalAuthority = authority.toLowerCase();
  else return undefined;
  const url = `${scheme}://${literalAuthority ?? spell(authority)}${spell(path)}`;
  if (unknown) return undefined;
  const variablePort = literalAuthority === undefined && port !== undefined ? { port: Number(port) } : {};
  return { url, scheme: scheme as 'http' | 'https', ...(literalAuthority !== undefined && { authority: literalAuthority }), ...variablePort, path: spell(path) };
}

const urlSchema = (hostVariables: readonly string[]) =>
  z.string().trim().transform((value, context) => {
    const parsed = parseTargetUrl(value, hostVariables);
    if (!parsed) {
      context.addIssue({ code: 'custom', message: 'is not an accepted URL' });
      return z.NEVER;
    }
    return parsed;
  });

/** Where nginx sends the subrequest: `$host` only, which it checks; never `$http_host`, the Host header as sent, port and all. */
const authUrl = urlSchema(['$host']);
/** Where the client is sent to sign in: its own Host is no one else's concern. */
const signinUrl = urlSchema(['$host', '$http_host']);

const urlText = (hosts: string) =>
  `an http:// or https:// URL (a host with an optional port, or ${hosts}; path and query may use ${Object.keys(authUrlVariables).join(', ')})`;

const authMethods = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;

const headerList = z.string().transform((value, context) => {
  const headers = value.split(',').map((header) => header.trim()).filter((header) => header !== '');
  if (headers.length === 0 || headers.length > 32 || !headers.every(isHeaderName)) {
    context.addIssue({ code: 'custom', message: 'is not a list of header names' });
    return z.NEVER;
  }
  const reserved = headers.find((header) => isReservedHeader(header, 'request'));
  if (reserved !== undefined) {
    context.addIssue({ code: 'custom', message: `names ${reserved}, which ${reservedHeaderText}` });
    return z.NEVER;
  }
  return [...new Set(headers)];
});

/**
 * `auth-cache-key`: literals and the variables a request brings (headers, cookies, query arguments, the
 * basic-auth user, the host and URI, the client address). nginx hashes the key, so its length is no
 * concern of the cache; it is bounded here all the same.
 */
const cacheKeyVariable = /^(?:(?:http|cookie|arg)_[a-z0-9_]{1,64}|remote_user|remote_addr|host|uri|request_uri|scheme)$/;
const cacheKey = z.string().trim().superRefine((value, context) => {
  const variables = [...value.matchAll(/\$\{?([A-Za-z0-9_]*)\}?/g)].map((match) => match[1] ?? '');
  if (!/^[A-Za-z0-9_${}-]{1,256}$/.test(value) || !/^(?:[A-Za-z0-9_-]|\$[a-z0-9_]+|\$\{[a-z0-9_]+\})+$/.test(value)) {
    context.addIssue({ code: 'custom', message: 'has characters other than letters, digits, - _ and $variables' });
  } else if (!variables.every((name) => cacheKeyVariable.test(name))) {
    context.addIssue({ code: 'custom', message: 'uses a variable other than $http_*, $cookie_*, $arg_*, $remote_user, $remote_addr, $host, $uri, $request_uri, $scheme' });
  }
});

/** `auth-cache-duration`: comma-separated `[code ...] time` entries, each a `proxy_cache_valid`. */
export const defaultAuthCacheDuration = '200 202 401 5m';
const cacheDuration = z.string().transform((value, context) => {
  const entries = value.split(',').map((entry) => entry.trim().replace(/\s+/g, ' ')).filter((entry) => entry !== '');
  const valid = (entry: string) => /^(?:(?:[1-5][0-9]{2}|any) ){0,16}[0-9]{1,6}(?:ms|s|m|h|d|w|M|y)$/.test(entry);
  if (entries.length > 16 || !entries.every(valid)) {
    context.addIssue({ code: 'custom', message: 'is not a list of status codes followed by a time' });
    return z.NEVER;
  }
  return entries.length > 0 ? entries : [defaultAuthCacheDuration];
});

export const externalAuthAnnotations = {
  url: rule<AuthUrl | undefined>({
    name: 'auth-url',
    section: 'Access control',
    status: 'differs',
    schema: authUrl,
    defaultValue: undefined,
    accepted: urlText('$host, checked against the names the Ingress serves'),
    failsClosed: true,
    note: 'nginx `auth_request` to this `http(s)` URL; a 2xx lets the request through, 401/403 are returned. A Service DNS name of a Service in the input is reached at its address (another namespace\'s only with a ReferenceGrant there, or when the operator passes `--allow-cross-namespace-auth-url`); other names need `--resolver` (so DNS can never stop the config from loading). The host is a literal or `$host` (checked against the names the Ingress serves; never `$http_host`); the path and query may use `$host`, `$http_host`, `$scheme`, `$request_uri`, `$escaped_request_uri` (the last one is not escaped in stock nginx). An `https` URL\'s certificate is verified against `--system-ca-bundle` (ingress-nginx verifies none)',
  }),
  method: rule<(typeof authMethods)[number] | undefined>({
    name: 'auth-method',
    section: 'Access control',
    status: 'supported',
    schema: z.string().trim().toUpperCase().pipe(z.enum(authMethods)),
    defaultValue: undefined,
    defaultWords: 'the request method',
    accepted: authMethods.join(', '),
    failsClosed: true,
    note: 'method of the auth subrequest (`GET`, `HEAD`, `POST`, `PUT`, `PATCH`, `DELETE`, `OPTIONS`)',
  }),
  signin: rule<AuthUrl | undefined>({
    name: 'auth-signin',
    section: 'Access control',
    status: 'differs',
    schema: signinUrl,
    defaultValue: undefined,
    accepted: urlText('$host or $http_host'),
    failsClosed: true,
    note: 'a 401 from the auth service becomes a 302 to this URL, with `rd=` the original URL unless the URL already has it: the host nginx matched, a numeric port, and the URI as one value (`&` written `%26`; stock nginx has no URL-encoding)',
  }),
  responseHeaders: rule<readonly string[]>({
    name: 'auth-response-headers',
    section: 'Access control',
    status: 'supported',
    schema: headerList,
    defaultValue: [],
    accepted: 'comma-separated header names (letters, digits and "-"; at most 32)',
    failsClosed: true,
    note: 'comma-separated headers copied from the auth response to the backend request',
  }),
  signinRedirectParam: rule({
    name: 'auth-signin-redirect-param',
    section: 'Access control',
    status: 'supported',
    schema: z.string().trim().regex(/^[A-Za-z0-9_-]{1,64}$/),
    defaultValue: 'rd',
    accepted: 'a query parameter name (letters, digits, - and _)',
    note: 'the query parameter of `auth-signin` that carries the original URL',
  }),
  requestRedirect: rule<string | undefined>({
    name: 'auth-request-redirect',
    section: 'Access control',
    status: 'supported',
    schema: z.string().trim().refine((value) => isHttpUrl(value) || isPathWithQuery(value)),
    defaultValue: undefined,
    defaultWords: 'the request URI',
    accepted: 'an http(s) URL or an absolute path, without variables',
    note: '`X-Auth-Request-Redirect` sent to the auth service: an `http(s)` URL or a path, without variables',
  }),
  alwaysSetCookie: rule({
    name: 'auth-always-set-cookie',
    section: 'Access control',
    status: 'supported',
    schema: goBool,
    defaultValue: false,
    accepted: goBoolText,
    note: '`true` passes a `Set-Cookie` of the auth service on with every response, errors included (`add_header … always`); otherwise with successful responses only',
  }),
  cacheKey: rule<string | undefined>({
    name: 'auth-cache-key',
    section: 'Access control',
    status: 'differs',
    schema: cacheKey,
    defaultValue: undefined,
    accepted: 'letters, digits, - _ and the variables $http_*, $cookie_*, $arg_*, $remote_user, $remote_addr, $host, $uri, $request_uri, $scheme (at most 256 characters)',
    note: 'answers of the auth service are cached (`proxy_cache` in one 10m zone under `--run-dir`, as ingress-nginx sizes it) under the Ingress, the request host and this key; ingress-nginx keys them by location path instead, so here the paths of one Ingress share answers (put `$uri` in the key to keep them apart). The key is letters, digits, `-`, `_` and `$http_*`, `$cookie_*`, `$arg_*`, `$remote_user`, `$remote_addr`, `$host`, `$uri`, `$request_uri`, `$scheme`. As in ingress-nginx, an answer with `Set-Cookie` or `Cache-Control: no-cache` is not cached',
  }),
  cacheDuration: rule<readonly string[]>({
    name: 'auth-cache-duration',
    section: 'Access control',
    status: 'supported',
    schema: cacheDuration,
    defaultValue: [defaultAuthCacheDuration],
    accepted: 'comma-separated entries of status codes (or any) followed by one time, such as 200 202 401 5m',
    note: 'comma-separated `proxy_cache_valid` entries: status codes (or `any`) then one time',
  }),
  enableGlobalAuth: rule({
    name: 'enable-global-auth',
    section: 'Access control',
    status: 'supported',
    schema: goBool,
    defaultValue: true,
    accepted: goBoolText,
    note: '`false` keeps ConfigMap `global-auth-url` off this Ingress\'s paths (an Ingress with its own `auth-url` uses that one)',
  }),
};

export function isPort(text: string): boolean {
  const port = Number(text);
  return /^[1-9][0-9]{0,4}$/.test(text) && port <= 65535;
}

/**
 * `auth-keepalive*`: an upstream block of its own for the auth service, with these keepalive settings,
 * as ingress-nginx builds one. Not part of `global-auth-*` (ingress-nginx has no such keys). A count of
 * requests or a timeout of 0 turns keepalive off, as there.
 */
export const authKeepaliveAnnotations = {
  connections: rule({
    name: 'auth-keepalive',
    section: 'Access control',
    status: 'differs',
    schema: integerInRange(0, 10_000),
    defaultValue: 0,
    accepted: 'an integer from 0 (off) to 10000',
    note: 'above 0, an auth service that is a Service of the input gets an upstream block of its own keeping this many idle connections (with `auth-keepalive-requests` and `auth-keepalive-timeout`), as ingress-nginx builds it. nginx allocates every block\'s connections when it loads the config, so the auth blocks of one namespace (the auth Service\'s) keep 10,000 connections at most together, and all namespaces\' 32,000: past that each block\'s count is scaled down alike (never below 1); another target (an address, a name looked up per request) gets a connection per subrequest, with a warning. With `0`, a Service target is still reached through its Service\'s block, kept alive as ConfigMap `upstream-keepalive-connections` says (ingress-nginx opens a connection per subrequest). Connections are reused when the auth service answers without a body, as auth services do',
  }),
  requests: rule({
    name: 'auth-keepalive-requests',
    section: 'Access control',
    status: 'supported',
    schema: integerInRange(0, 10_000_000),
    defaultValue: 1000,
    accepted: 'an integer from 0 to 10000000',
    note: 'requests over one kept-alive connection to the auth service (`keepalive_requests`); `0` turns `auth-keepalive` off',
  }),
  timeout: rule({
    name: 'auth-keepalive-timeout',
    section: 'Access control',
    status: 'supported',
    schema: integerInRange(0, 3600),
    defaultValue: 60,
    accepted: 'a number of seconds from 0 to 3600',
    note: 'seconds an idle connection to the auth service is kept (`keepalive_timeout`); `0` turns `auth-keepalive` off',
  }),
};
