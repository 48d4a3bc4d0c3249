import { z } from 'zod';
import { integerInRange, isHttpUrl, isPathWithQuery, nginxSize, onOrOff } from '../../checks/allowlist.js';
import { rule } from './rule.js';

/**
 * Proxy tuning. Absent means "the ConfigMap's value", which is rendered once for the whole http block;
 * a value here is rendered in the locations of this Ingress only. None of these guards access, so a
 * rejected value falls back to the ConfigMap's, as ingress-nginx does.
 */

/** One day: any timeout longer than that is a typo, and nginx's own limit is far above it. */
export const maxTimeoutSeconds = 86_400;

const seconds = integerInRange(0, maxTimeoutSeconds);
const secondsText = `a number of seconds from 0 to ${maxTimeoutSeconds}`;

/** The `proxy_next_upstream` conditions ingress-nginx accepts. */
const nextUpstreamConditions = [
  'error',
  'timeout',
  'invalid_header',
  'http_500',
  'http_502',
  'http_503',
  'http_504',
  'http_403',
  'http_404',
  'http_429',
  'non_idempotent',
  'off',
] as const;

/** Space-separated conditions, rebuilt from our own spelling; `off` stands alone. */
export const nextUpstream = z.string().transform((value, context) => {
  const tokens = value.trim().split(/\s+/).filter((token) => token !== '');
  const known = new Set<string>(nextUpstreamConditions);
  if (tokens.length === 0 || !tokens.every((token) => known.has(token)) || (tokens.includes('off') && tokens.length > 1)) {
    context.addIssue({ code: 'custom', message: 'has a condition that is not known, or off with others' });
    return z.NEVER;
  }
  // nginx takes them in any order; keep the first occurrence of each, in the user's order.
  return [...new Set(tokens)].join(' ');
});

export const nextUpstreamText = `space-separated conditions from ${nextUpstreamConditions.join(', ')} (off alone)`;

/**
 * `proxy_redirect` replaces a prefix of the backend's `Location`: an `http(s)` URL or an absolute path,
 * or the words `off` and `default`.
 */
const redirectFrom = z
  .string()
  .trim()
  .refine((value) => value === 'off' || value === 'default' || isHttpUrl(value) || isPathWithQuery(value));
const redirectTo = z
  .string()
  .trim()
  .refine((value) => value === 'off' || isHttpUrl(value) || isPathWithQuery(value));

/**
 * Buffers are allocated per request: one tenant's huge buffers would take memory every tenant needs.
 * ingress-nginx sets no limit; these are far above what any backend needs.
 */
export const maxProxyBufferBytes = 1024 ** 2;
/** A buffer nginx can read a response header into: `0` passes `nginx -t` and breaks every response. */
export const minProxyBufferBytes = 1024;
/** All the buffers of one request together (`proxy-buffer-size` × `proxy-buffers-number`). */
export const maxProxyBuffersTotalBytes = 8 * 1024 ** 2;
export const maxBodyBufferBytes = 16 * 1024 ** 2;
/**
 * nginx requires its busy buffers (at least one buffer) to be smaller than all buffers but one, so
 * fewer than three buffers fail the config load.
 */
export const minProxyBuffers = 3;

export const proxyAnnotations = {
  bodySize: rule<string | undefined>({
    name: 'proxy-body-size',
    section: 'Proxy tuning',
    status: 'supported',
    schema: nginxSize('kmg'),
    defaultValue: undefined,
    configMapKey: 'proxy-body-size',
    accepted: 'a size such as 0 (unlimited), 512k, 8m or 1g',
    note: '`client_max_body_size` (`0` = unlimited)',
  }),
  clientBodyBufferSize: rule<string | undefined>({
    name: 'client-body-buffer-size',
    section: 'Proxy tuning',
    status: 'supported',
    schema: nginxSize('km', maxBodyBufferBytes),
    defaultValue: undefined,
    configMapKey: 'client-body-buffer-size',
    accepted: 'a size such as 16k or 1m, at most 16m',
    note: '`client_body_buffer_size`',
  }),
  connectTimeout: rule<number | undefined>({
    name: 'proxy-connect-timeout',
    section: 'Proxy tuning',
    status: 'supported',
    schema: seconds,
    defaultValue: undefined,
    configMapKey: 'proxy-connect-timeout',
    accepted: secondsText,
    note: 'seconds',
  }),
  readTimeout: rule<number | undefined>({
    name: 'proxy-read-timeout',
    section: 'Proxy tuning',
    status: 'supported',
    schema: seconds,
    defaultValue: undefined,
    configMapKey: 'proxy-read-timeout',
    accepted: secondsText,
    note: 'seconds',
  }),
  sendTimeout: rule<number | undefined>({
    name: 'proxy-send-timeout',
    section: 'Proxy tuning',
    status: 'supported',
    schema: seconds,
    defaultValue: undefined,
    configMapKey: 'proxy-send-timeout',
    accepted: secondsText,
    note: 'seconds',
  }),
  buffering: rule<boolean | undefined>({
    name: 'proxy-buffering',
    section: 'Proxy tuning',
    status: 'supported',
    schema: onOrOff,
    defaultValue: undefined,
    configMapKey: 'proxy-buffering',
    accepted: 'on or off',
    note: '`on` or `off`',
  }),
  bufferSize: rule<string | undefined>({
    name: 'proxy-buffer-size',
    section: 'Proxy tuning',
    status: 'supported',
    schema: nginxSize('km', maxProxyBufferBytes, minProxyBufferBytes),
    defaultValue: undefined,
    configMapKey: 'proxy-buffer-size',
    accepted: 'a size such as 8k or 16k, from 1k to 1m; with proxy-buffers-number, at most 8m in all',
    note: 'also the size of each of the `proxy-buffers-number` buffers',
  }),
  buffersNumber: rule<number | undefined>({
    name: 'proxy-buffers-number',
    section: 'Proxy tuning',
    status: 'supported',
    schema: integerInRange(minProxyBuffers, 1024),
    defaultValue: undefined,
    configMapKey: 'proxy-buffers-number',
    accepted: `an integer from ${minProxyBuffers} to 1024; with proxy-buffer-size, at most 8m in all`,
    note: '1 to 1024',
  }),
  busyBuffersSize: rule<string | undefined>({
    name: 'proxy-busy-buffers-size',
    section: 'Proxy tuning',
    status: 'supported',
    schema: nginxSize('km', maxProxyBuffersTotalBytes, minProxyBufferBytes),
    defaultValue: undefined,
    defaultWords: 'ConfigMap `proxy-busy-buffers-size` (nginx\'s: two buffers)',
    accepted: 'a size such as 16k: at least one buffer and less than all of them (proxy-buffer-size and proxy-buffers-number)',
    note: 'from one buffer to all buffers but one (`proxy-buffer-size`, `proxy-buffers-number`, here or from the ConfigMap), which nginx requires: a size outside that is an error and the ConfigMap\'s (or nginx\'s) applies',
  }),
  requestBuffering: rule<boolean | undefined>({
    name: 'proxy-request-buffering',
    section: 'Proxy tuning',
    status: 'supported',
    schema: onOrOff,
    defaultValue: undefined,
    configMapKey: 'proxy-request-buffering',
    accepted: 'on or off',
    note: '`on` or `off`',
  }),
  httpVersion: rule<'1.0' | '1.1' | undefined>({
    name: 'proxy-http-version',
    section: 'Proxy tuning',
    status: 'supported',
    schema: z.string().trim().pipe(z.enum(['1.0', '1.1'])),
    defaultValue: undefined,
    configMapKey: 'proxy-http-version',
    accepted: '1.0 or 1.1',
    note: '`1.0` or `1.1`',
  }),
  nextUpstream: rule<string | undefined>({
    name: 'proxy-next-upstream',
    section: 'Proxy tuning',
    status: 'supported',
    schema: nextUpstream,
    defaultValue: undefined,
    configMapKey: 'proxy-next-upstream',
    accepted: nextUpstreamText,
    note: 'space-separated: `error`, `timeout`, `invalid_header`, `http_500`, `http_502`, `http_503`, `http_504`, `http_403`, `http_404`, `http_429`, `non_idempotent`, or `off`',
  }),
  nextUpstreamTries: rule<number | undefined>({
    name: 'proxy-next-upstream-tries',
    section: 'Proxy tuning',
    status: 'supported',
    schema: integerInRange(0, 100),
    defaultValue: undefined,
    configMapKey: 'proxy-next-upstream-tries',
    accepted: 'an integer from 0 (unlimited) to 100',
    note: '`0` = unlimited',
  }),
  nextUpstreamTimeout: rule<number | undefined>({
    name: 'proxy-next-upstream-timeout',
    section: 'Proxy tuning',
    status: 'supported',
    schema: seconds,
    defaultValue: undefined,
    configMapKey: 'proxy-next-upstream-timeout',
    accepted: secondsText,
    note: 'seconds, `0` = unlimited',
  }),
  redirectFrom: rule<string | undefined>({
    name: 'proxy-redirect-from',
    section: 'Proxy tuning',
    status: 'supported',
    schema: redirectFrom,
    defaultValue: undefined,
    defaultWords: '`off`',
    accepted: 'off, default, an http(s) URL or an absolute path (no variables)',
    note: '`off`, `default`, or a URL prefix rewritten in `Location`/`Refresh` to `proxy-redirect-to`',
  }),
  connectionHeader: rule<'close' | 'keep-alive' | undefined>({
    name: 'connection-proxy-header',
    section: 'Proxy tuning',
    status: 'supported',
    // ingress-nginx accepts these two only.
    schema: z.string().trim().pipe(z.enum(['close', 'keep-alive'])),
    defaultValue: undefined,
    defaultWords: '`upgrade` for WebSocket requests, else empty (keepalive)',
    accepted: 'close or keep-alive',
    note: '`close` or `keep-alive`: the `Connection` header to the backend, for every request of the Ingress\'s paths (WebSocket upgrades then fail, as in ingress-nginx)',
  }),
  redirectTo: rule<string | undefined>({
    name: 'proxy-redirect-to',
    section: 'Proxy tuning',
    status: 'supported',
    schema: redirectTo,
    defaultValue: undefined,
    defaultWords: '`off`',
    accepted: 'off, an http(s) URL or an absolute path (no variables)',
    note: 'replacement for `proxy-redirect-from`',
  }),
};
