import { z } from 'zod';
import { goBool, goBoolText, integerInRange, isDnsHostname, isSafePath, nginxSize, sizeInBytes } from '../../checks/allowlist.js';
import { maxProxyBufferBytes } from './proxy.js';
import type { AnnotationRule, Section } from './rule.js';

/**
 * Annotation families that set one nginx directive, with a ConfigMap key of the same name for the
 * default: each is one slice, registered in `directiveSlices`, and the slice is all there is to it. The
 * annotation parser and the ConfigMap parser read its schema, the catalog (so `audit` and the annotation
 * reference) its words, the model carries its value (`ProxyDefaults.directives` from the
 * ConfigMap, `ProxyTuning.directives` from the annotation) and the templates render every one alike.
 */
export interface DirectiveSlice {
  /** Annotation (without the prefix) and ConfigMap key: ingress-nginx names both the same. */
  readonly name: `${string}-${string}`;
  /** The directive: in the http block from the ConfigMap, in the Ingress's locations from the annotation. */
  readonly directive: string;
  /** Parses the raw value into the directive's argument: the allow-list of what reaches nginx. */
  readonly schema: z.ZodType<string>;
  /** What the schema accepts, in words, for the message that rejects a value. */
  readonly accepted: string;
  /** ingress-nginx's ConfigMap default, in words; nginx's own (the same) applies while the ConfigMap does not set it. */
  readonly defaultValue: string;
  /** What it does here, for the catalog. */
  readonly note: string;
  /** The reference heading its annotation is listed under. */
  readonly section: Section;
}

export const directiveSlices: readonly DirectiveSlice[] = [
  {
    name: 'proxy-max-temp-file-size',
    directive: 'proxy_max_temp_file_size',
    // nginx wants 0, or at least one buffer: from the largest buffer an Ingress may ask for up, it loads with any.
    schema: nginxSize('kmg').refine((size) => sizeInBytes(size) === 0 || sizeInBytes(size) >= maxProxyBufferBytes),
    accepted: 'a size of 0 (no temporary files: a response larger than the buffers is passed on as it arrives) or from 1m, such as 1024m',
    defaultValue: '`1024m`',
    note: 'the most of a response buffered to a temporary file when it does not fit the buffers; sizes between 0 and 1m, which nginx refuses next to larger buffers, are refused',
    section: 'Proxy tuning',
  },
  {
    name: 'proxy-cookie-domain',
    directive: 'proxy_cookie_domain',
    schema: rewritePair((word) => isDnsHostname(word.replace(/^\./, '').toLowerCase()), (word) => word === '$host' || isDnsHostname(word.toLowerCase())),
    accepted: 'off, or "from to": the domain in the backend\'s Set-Cookie and the one to write instead (a domain, or $host)',
    defaultValue: '`off`',
    note: 'rewrites the `domain` attribute of the backend\'s `Set-Cookie` headers (`off`, or `from to`; `to` may be `$host`)',
    section: 'Proxy tuning',
  },
  {
    name: 'proxy-cookie-path',
    directive: 'proxy_cookie_path',
    schema: rewritePair(isSafePath, isSafePath),
    accepted: 'off, or "from to": the path in the backend\'s Set-Cookie and the one to write instead (paths such as /app/ and /)',
    defaultValue: '`off`',
    note: 'rewrites the `path` attribute of the backend\'s `Set-Cookie` headers (`off`, or `from to`, both paths)',
    section: 'Proxy tuning',
  },
  {
    name: 'relative-redirects',
    directive: 'absolute_redirect',
    // `true` asks for relative redirects: nginx's own redirects (a directory's trailing slash) then name no scheme and host.
    schema: goBool.transform((relative) => (relative ? 'off' : 'on')),
    accepted: goBoolText,
    defaultValue: '`false`',
    note: 'redirects issued by nginx itself (`absolute_redirect off` when `true`) leave out the scheme and host',
    section: 'Paths and redirects',
  },
];

/** `off`, or two words (`from to`) that each pass their check: `proxy_cookie_domain` and `proxy_cookie_path`. */
function rewritePair(from: (word: string) => boolean, to: (word: string) => boolean): z.ZodType<string> {
  return z.string().transform((value, context) => {
    const words = value.trim().split(/\s+/);
    if (words.length === 1 && words[0] === 'off') return 'off';
    const [source, target] = words;
    if (words.length !== 2 || source === undefined || target === undefined || !from(source) || !to(target)) {
      context.addIssue({ code: 'custom', message: 'is neither off nor two accepted words' });
      return z.NEVER;
    }
    return `${source} ${target}`;
  });
}

/**
 * ConfigMap keys that set one directive at http level (or in every upstream block): the sibling of
 * `directiveSlices` for keys that have no annotation. Absent keys keep nginx's default, which is
 * ingress-nginx's too unless `status` says otherwise.
 */
export interface HttpDirectiveSlice {
  readonly name: `${string}-${string}`;
  readonly directive: string;
  /** `upstream`: in every upstream block that keeps connections alive (`upstream-keepalive-connections` above 0). */
  readonly context: 'http' | 'upstream';
  readonly schema: z.ZodType<string>;
  readonly accepted: string;
  readonly defaultValue: string;
  readonly note: string;
  readonly status?: 'differs';
}

const onOff = goBool.transform((value) => (value ? 'on' : 'off'));
const seconds = (max: number) => integerInRange(0, max).transform((value) => `${value}s`);

/** `number size`, as `large_client_header_buffers` takes it: at most 8m in all, each buffer from 1k to 1m. */
const headerBuffers = z.string().transform((value, context) => {
  const match = /^\s*([0-9]{1,2})\s+([0-9]{1,7}[kKmM]?)\s*$/.exec(value);
  const number = Number(match?.[1]);
  const size = match?.[2]?.toLowerCase() ?? '';
  const bytes = sizeInBytes(size);
  if (!match || number < 1 || bytes < 1024 || bytes > 1024 ** 2 || number * bytes > 8 * 1024 ** 2) {
    context.addIssue({ code: 'custom', message: 'is not a number of buffers and a size within 8m in all' });
    return z.NEVER;
  }
  return `${number} ${size}`;
});

export const httpDirectiveSlices: readonly HttpDirectiveSlice[] = [
  {
    name: 'large-client-header-buffers',
    directive: 'large_client_header_buffers',
    context: 'http',
    schema: headerBuffers,
    accepted: 'a number of buffers and their size, such as 4 16k (each from 1k to 1m, at most 8m in all)',
    defaultValue: '`4 8k`',
    note: 'buffers for long request lines and header fields: a header line (a large cookie) longer than one buffer is refused with 400',
  },
  {
    name: 'client-header-buffer-size',
    directive: 'client_header_buffer_size',
    context: 'http',
    schema: nginxSize('km', 1024 ** 2, 1024),
    accepted: 'a size from 1k to 1m',
    defaultValue: '`1k`',
    note: 'the first buffer for a request\'s header; longer ones use `large-client-header-buffers`',
  },
  {
    name: 'client-header-timeout',
    directive: 'client_header_timeout',
    context: 'http',
    schema: seconds(3600),
    accepted: 'a number of seconds from 0 to 3600',
    defaultValue: '`60`',
    note: 'seconds',
  },
  {
    name: 'client-body-timeout',
    directive: 'client_body_timeout',
    context: 'http',
    schema: seconds(3600),
    accepted: 'a number of seconds from 0 to 3600',
    defaultValue: '`60`',
    note: 'seconds',
  },
  {
    name: 'keep-alive-requests',
    directive: 'keepalive_requests',
    context: 'http',
    schema: integerInRange(0, 10_000_000).transform(String),
    accepted: 'an integer from 0 to 10000000',
    defaultValue: '`1000`',
    note: 'requests a client may send over one keep-alive connection',
  },
  {
    name: 'enable-underscores-in-headers',
    directive: 'underscores_in_headers',
    context: 'http',
    schema: onOff,
    accepted: goBoolText,
    defaultValue: '`false`',
    note: 'request headers with `_` in their names are passed on (otherwise nginx drops them)',
  },
  {
    name: 'ignore-invalid-headers',
    directive: 'ignore_invalid_headers',
    context: 'http',
    schema: onOff,
    accepted: goBoolText,
    defaultValue: '`true`',
    note: 'request headers with invalid names are dropped',
  },
  {
    name: 'upstream-keepalive-requests',
    directive: 'keepalive_requests',
    context: 'upstream',
    schema: integerInRange(1, 10_000_000).transform(String),
    accepted: 'an integer from 1 to 10000000',
    defaultValue: '`10000`',
    note: 'requests over one kept-alive backend connection; while unset, nginx\'s default of 1000 applies (ingress-nginx renders 10000)',
    status: 'differs',
  },
  {
    name: 'upstream-keepalive-timeout',
    directive: 'keepalive_timeout',
    context: 'upstream',
    schema: seconds(3600),
    accepted: 'a number of seconds from 0 to 3600',
    defaultValue: '`60`',
    note: 'seconds an idle backend connection is kept',
  },
  {
    name: 'upstream-keepalive-time',
    directive: 'keepalive_time',
    context: 'upstream',
    schema: z.string().trim().regex(/^[0-9]{1,7}(ms|s|m|h|d)?$/),
    accepted: 'an nginx time such as 1h, 30m or 600s',
    defaultValue: '`1h`',
    note: 'the longest a backend connection is used for requests',
  },
];

/** The annotations of the slices, by name: absent means the ConfigMap's value (or nginx's default). */
export const directiveAnnotations: { readonly [name: string]: AnnotationRule<string | undefined> } = Object.fromEntries(
  directiveSlices.map(({ name, schema, accepted, section, note }): [string, AnnotationRule<string | undefined>] => [
    name,
    { name, section, status: 'supported', schema, defaultValue: undefined, configMapKey: name, accepted, note },
  ]),
);
