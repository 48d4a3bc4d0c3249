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
    schema: nginxSize('kmg'),
    defaultValue: undefined,
    accepted: 'a size such as 0 (unlimited), 512k, 8m or 1g',
  }),
  clientBodyBufferSize: rule<string | undefined>({
    name: 'client-body-buffer-size',
    schema: nginxSize('km', maxBodyBufferBytes),
    defaultValue: undefined,
    accepted: 'a size such as 16k or 1m, at most 16m',
  }),
  connectTimeout: rule<number | undefined>({ name: 'proxy-connect-timeout', schema: seconds, defaultValue: undefined, accepted: secondsText }),
  readTimeout: rule<number | undefined>({ name: 'proxy-read-timeout', schema: seconds, defaultValue: undefined, accepted: secondsText }),
  sendTimeout: rule<number | undefined>({ name: 'proxy-send-timeout', schema: seconds, defaultValue: undefined, accepted: secondsText }),
  buffering: rule<boolean | undefined>({ name: 'proxy-buffering', schema: onOrOff, defaultValue: undefined, accepted: 'on or off' }),
  bufferSize: rule<string | undefined>({
    name: 'proxy-buffer-size',
    schema: nginxSize('km', maxProxyBufferBytes, minProxyBufferBytes),
    defaultValue: undefined,
    accepted: 'a size such as 8k or 16k, from 1k to 1m; with proxy-buffers-number, at most 8m in all',
  }),
  buffersNumber: rule<number | undefined>({
    name: 'proxy-buffers-number',
    schema: integerInRange(minProxyBuffers, 1024),
    defaultValue: undefined,
    accepted: `an integer from ${minProxyBuffers} to 1024; with proxy-buffer-size, at most 8m in all`,
  }),
  busyBuffersSize: rule<string | undefined>({
    name: 'proxy-busy-buffers-size',
    schema: nginxSize('km', maxProxyBuffersTotalBytes, minProxyBufferBytes),
    defaultValue: undefined,
    accepted: 'a size such as 16k: at least one buffer and less than all of them (proxy-buffer-size and proxy-buffers-number)',
  }),
  requestBuffering: rule<boolean | undefined>({
    name: 'proxy-request-buffering',
    schema: onOrOff,
    defaultValue: undefined,
    accepted: 'on or off',
  }),
  httpVersion: rule<'1.0' | '1.1' | undefined>({
    name: 'proxy-http-version',
    schema: z.string().trim().pipe(z.enum(['1.0', '1.1'])),
    defaultValue: undefined,
    accepted: '1.0 or 1.1',
  }),
  nextUpstream: rule<string | undefined>({ name: 'proxy-next-upstream', schema: nextUpstream, defaultValue: undefined, accepted: nextUpstreamText }),
  nextUpstreamTries: rule<number | undefined>({
    name: 'proxy-next-upstream-tries',
    schema: integerInRange(0, 100),
    defaultValue: undefined,
    accepted: 'an integer from 0 (unlimited) to 100',
  }),
  nextUpstreamTimeout: rule<number | undefined>({
    name: 'proxy-next-upstream-timeout',
    schema: seconds,
    defaultValue: undefined,
    accepted: secondsText,
  }),
  redirectFrom: rule<string | undefined>({
    name: 'proxy-redirect-from',
    schema: redirectFrom,
    defaultValue: undefined,
    accepted: 'off, default, an http(s) URL or an absolute path (no variables)',
  }),
  connectionHeader: rule<'close' | 'keep-alive' | undefined>({
    name: 'connection-proxy-header',
    // ingress-nginx accepts these two only.
    schema: z.string().trim().pipe(z.enum(['close', 'keep-alive'])),
    defaultValue: undefined,
    accepted: 'close or keep-alive',
  }),
  redirectTo: rule<string | undefined>({
    name: 'proxy-redirect-to',
    schema: redirectTo,
    defaultValue: undefined,
    accepted: 'off, an http(s) URL or an absolute path (no variables)',
  }),
};
