/**
 * Allow-lists for every user-supplied value that can reach nginx syntax (design §6). Each check says
 * what a value may be made of, never what it may not: nginx's own metacharacters (`;`, `{`, `}`, quotes,
 * `#`, `$`, whitespace, backslash) fall outside every character class below, so a value that passes can
 * be placed into a directive unquoted. The checks/ folder holds these checks on tenant values (addresses,
 * the safe regex grammar and its cost, snippet text, map keys); it imports nothing else of translate/.
 */
import { isIP } from 'node:net';
import { createSecureContext } from 'node:tls';
import { z } from 'zod';

const dnsLabel = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;
const maxDnsNameLength = 253;

/** RFC 1123 host name in lowercase, without a trailing dot: what Ingress `host` and SNI carry. */
export function isDnsHostname(value: string): boolean {
  return value.length <= maxDnsNameLength && value.split('.').every((label) => dnsLabel.test(label));
}

/** `*.` followed by an RFC 1123 host name: a wildcard for exactly the leftmost label. */
export function isWildcardHostname(value: string): boolean {
  return value.length <= maxDnsNameLength && value.startsWith('*.') && isDnsHostname(value.slice(2));
}

const safePath = /^\/[A-Za-z0-9._~%!&()*+,=:@/-]*$/;
const maxPathLength = 1024;

/**
 * An Ingress path as it may appear after `location`. No `?` (a query is never part of the matched
 * URI) and none of nginx's metacharacters.
 */
export function isSafePath(value: string): boolean {
  return value.length <= maxPathLength && safePath.test(value);
}

const cipherList = /^[A-Za-z0-9_+!@=.-]+(:[A-Za-z0-9_+!@=.-]+)*$/;
const maxCipherListLength = 2048;

/** What `isCipherList` accepts, in words, for messages. */
export const cipherListDescription =
  'an OpenSSL cipher list that selects at least one TLS 1.2 cipher (names made of letters, digits, "-", "_", "+", "!", "@", "=", "." separated by ":"; TLS 1.3 suites are not set by it)';

/**
 * OpenSSL cipher string: `:`-separated tokens such as `ECDHE-RSA-AES128-GCM-SHA256`, `!aNULL`,
 * `@STRENGTH`, that OpenSSL's `SSL_CTX_set_cipher_list` accepts: nginx calls it for `ssl_ciphers` and
 * `proxy_ssl_ciphers` when it loads the config, and a list that selects no cipher (`BOGUS`, `!ALL`, only
 * TLS 1.3 suite names) fails the whole load.
 */
export function isCipherList(value: string): boolean {
  return value.length <= maxCipherListLength && cipherList.test(value) && selectsCiphers(value);
}

const cipherListVerdicts = new Map<string, boolean>();

/**
 * Asks this process's OpenSSL (Node links OpenSSL 3, as Debian 12's and the official image's nginx
 * do). Node hands `TLS_*` names to the TLS 1.3 suite list instead; nginx's call never matches them, so
 * they are left out here, and a list of nothing else selects nothing, as in nginx.
 */
function selectsCiphers(value: string): boolean {
  let verdict = cipherListVerdicts.get(value);
  if (verdict === undefined) {
    const classic = value
      .split(':')
      .filter((token) => !token.startsWith('TLS_'))
      .join(':');
    try {
      verdict = classic !== '' && createSecureContext({ ciphers: classic }) !== undefined;
    } catch {
      verdict = false;
    }
    cipherListVerdicts.set(value, verdict);
  }
  return verdict;
}

/** Every protocol name nginx's `ssl_protocols` knows, in the order we render them. */
export const sslProtocolNames = ['SSLv2', 'SSLv3', 'TLSv1', 'TLSv1.1', 'TLSv1.2', 'TLSv1.3'] as const;

/** The result of a check that can fail with a reason to show the user. */
export type Checked<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly problem: string };

/**
 * Parses a space-separated protocol list (names case-insensitive, duplicates dropped) and rebuilds it
 * from our own spelling of each name, in canonical order, so nothing of the input text survives.
 */
export function parseSslProtocols(value: string, allowed: readonly string[]): Checked<string> {
  const acceptedText = `a space-separated list of ${allowed.join(', ')}`;
  const tokens = value.trim().split(/ +/);
  if (tokens.length === 1 && tokens[0] === '') return { ok: false, problem: `is empty; expected ${acceptedText}` };
  const chosen = new Set<string>();
  for (const token of tokens) {
    const name = sslProtocolNames.find((known) => known.toLowerCase() === token.toLowerCase());
    if (name === undefined || !allowed.includes(name)) {
      return { ok: false, problem: `contains something other than a protocol name; expected ${acceptedText}` };
    }
    chosen.add(name);
  }
  return { ok: true, value: sslProtocolNames.filter((name) => chosen.has(name)).join(' ') };
}

// `isIP` also accepts IPv6 zone ids (`fe80::1%eth0`), which mean nothing in nginx config; this keeps
// an address to hex digits, dots and colons.
const addressCharacters = /^[0-9A-Fa-f.:]+$/;

/** A literal IPv4 or IPv6 address. */
export function isIpAddress(value: string): boolean {
  return addressCharacters.test(value) && isIP(value) !== 0;
}

/** An IP address with an optional prefix length (`10.0.0.0/8`, `2001:db8::/32`, `192.0.2.1`). */
export function isCidr(value: string): boolean {
  const slash = value.indexOf('/');
  if (slash === -1) return isIpAddress(value);
  const address = value.slice(0, slash);
  const prefix = value.slice(slash + 1);
  if (!isIpAddress(address) || !/^(0|[1-9][0-9]{0,2})$/.test(prefix)) return false;
  return Number(prefix) <= (isIP(address) === 4 ? 32 : 128);
}

const dns1123Subdomain = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/;

/** DNS-1123 subdomain, as Kubernetes requires of namespace, Secret and Service names. */
export function isKubernetesName(value: string): boolean {
  return value.length <= maxDnsNameLength && dns1123Subdomain.test(value);
}

/** DNS-1123 label, as Kubernetes requires of namespace names. */
export function isNamespaceName(value: string): boolean {
  return value.length <= 63 && /^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/.test(value);
}

/** IANA_SVC_NAME (RFC 6335), as Kubernetes requires of named ports. */
export function isPortName(value: string): boolean {
  return value.length <= 15 && /^[a-z0-9]+(-[a-z0-9]+)*$/.test(value) && /[a-z]/.test(value);
}

/** `true` or `false`, case-insensitive, trimmed. Anything else (`yes`, `1`, `on`) is rejected, never guessed. */
export const trueOrFalse = z
  .string()
  .trim()
  .pipe(z.stringbool({ truthy: ['true'], falsy: ['false'], case: 'insensitive' }));

/** `on` or `off`, case-insensitive, trimmed: the spelling of nginx's own flags. */
export const onOrOff = z
  .string()
  .trim()
  .pipe(z.stringbool({ truthy: ['on'], falsy: ['off'], case: 'insensitive' }));

/** A decimal integer without sign or leading zeros, trimmed, within [min, max]. */
export function integerInRange(min: number, max: number) {
  return z
    .string()
    .trim()
    .regex(/^(0|[1-9][0-9]{0,15})$/)
    .transform(Number)
    .pipe(z.number().int().min(min).max(max));
}

// Printable ASCII other than space and the characters nginx, shells and YAML treat specially.
const unremarkableText = /^[A-Za-z0-9._~%!&()*+,=:@/\-[\]<>?^|]*$/;
const maxQuotedLength = 64;

/**
 * Says what was wrong with a rejected value without echoing anything hostile: an unremarkable value is
 * shown JSON-quoted, anything else only described.
 */
export function describeRejectedValue(value: string): string {
  const trimmed = value.trim();
  if (trimmed === '') return 'is empty';
  if (!unremarkableText.test(trimmed)) {
    return (
      'contains characters that are never accepted here ' +
      '(whitespace, quotes, `;`, braces, `#`, `$`, backslash or non-ASCII)'
    );
  }
  if (trimmed.length > maxQuotedLength) return `is not in the accepted form (${trimmed.length} characters)`;
  return `is ${JSON.stringify(trimmed)}`;
}

/**
 * A key (annotation or ConfigMap key) for a message. Keys from files are not validated by an API
 * server, so they get the same treatment as values: JSON-quoted, with anything outside printable ASCII
 * escaped so that no control or bidirectional character reaches a terminal.
 */
export function quoteKey(key: string): string {
  return JSON.stringify(key).replace(
    /[^\x20-\x7e]/g,
    (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/**
 * What Go's `strconv.ParseBool` accepts, as ingress-nginx reads boolean annotations: `true`/`false`,
 * `t`/`f`, `1`/`0`, in any case (Go takes three spellings of each; a fourth changes nothing), trimmed.
 */
export const goBool = z
  .string()
  .trim()
  .pipe(z.stringbool({ truthy: ['true', 't', '1'], falsy: ['false', 'f', '0'], case: 'insensitive' }));

/** What `goBool` accepts, in words. */
export const goBoolText = 'true or false (also t, f, 1, 0, as ingress-nginx accepts)';

/**
 * An nginx size (`ngx_parse_size`: buffers) or offset (`ngx_parse_offset`: body size) as ingress-nginx
 * accepts it: digits with an optional unit, which we spell in lowercase. At most 10 digits, so the
 * value cannot overflow what nginx parses it into; between `minBytes` and `maxBytes`.
 */
export function nginxSize(units: 'k' | 'km' | 'kmg', maxBytes = Number.MAX_SAFE_INTEGER, minBytes = 0) {
  const pattern = new RegExp(`^([0-9]{1,10})([${units}${units.toUpperCase()}]?)$`);
  return z
    .string()
    .trim()
    .regex(pattern)
    .transform((value) => value.toLowerCase())
    .refine((value) => sizeInBytes(value) <= maxBytes && sizeInBytes(value) >= minBytes);
}

/** The bytes of a size `nginxSize` accepted (`8k`, `1m`). */
export function sizeInBytes(size: string): number {
  const factor: Readonly<Record<string, number>> = { '': 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 };
  return Number.parseInt(size, 10) * (factor[size.replace(/[0-9]/g, '')] ?? 1);
}

/**
 * An IPv4 CIDR written with host bits (`10.0.0.1/8`) makes nginx print a warning on every load; the
 * network address means the same to `allow`, `deny` and `geo`. IPv6 prefixes are masked likewise.
 */
export function networkOf(cidr: string): string {
  const slash = cidr.indexOf('/');
  if (slash === -1) return cidr;
  const address = cidr.slice(0, slash);
  const prefix = Number(cidr.slice(slash + 1));
  if (isIP(address) === 4) {
    const octets = address.split('.').map(Number);
    const value = octets.reduce((total, octet) => total * 256 + octet, 0);
    const size = 2 ** (32 - prefix);
    const network = Math.floor(value / size) * size;
    return `${[24, 16, 8, 0].map((shift) => Math.floor(network / 2 ** shift) % 256).join('.')}/${prefix}`;
  }
  const groups = expandIpv6(address);
  const masked = groups.map((group, index) => {
    const bits = Math.max(0, Math.min(16, prefix - index * 16));
    return bits === 16 ? group : group & (0xffff << (16 - bits)) & 0xffff;
  });
  return `${compressIpv6(masked)}/${prefix}`;
}

function expandIpv6(address: string): number[] {
  const [head = '', tail] = address.split('::');
  const parse = (part: string) => (part === '' ? [] : part.split(':')).flatMap((group) => {
    if (group.includes('.')) {
      const [a = 0, b = 0, c = 0, d = 0] = group.split('.').map(Number);
      return [a * 256 + b, c * 256 + d];
    }
    return [Number.parseInt(group, 16)];
  });
  const front = parse(head);
  const back = tail === undefined ? [] : parse(tail);
  return [...front, ...Array<number>(8 - front.length - back.length).fill(0), ...back];
}

function compressIpv6(groups: readonly number[]): string {
  let bestStart = -1;
  let bestLength = 0;
  for (let start = 0; start < 8; start++) {
    let length = 0;
    while (start + length < 8 && groups[start + length] === 0) length++;
    if (length > bestLength && length > 1) {
      bestStart = start;
      bestLength = length;
    }
  }
  const hex = groups.map((group) => group.toString(16));
  if (bestStart === -1) return hex.join(':');
  return `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLength).join(':')}`;
}

/** Comma-separated addresses or CIDRs as networks; empty items (a trailing comma) are skipped, duplicates dropped. */
export const cidrList = z.string().transform((value, context) => {
  const items = value.split(',').map((item) => item.trim()).filter((item) => item !== '');
  if (items.length === 0 || !items.every(isCidr)) {
    context.addIssue({ code: 'custom', message: 'has an item that is not an IP address or CIDR' });
    return z.NEVER;
  }
  return [...new Set(items.map(networkOf))];
});

/** What `cidrList` accepts, in words. */
export const cidrListText = 'a comma-separated list of IP addresses or CIDRs';

/**
 * An HTTP header name nginx can pass and read: letters, digits and `-` (nginx ignores header names with
 * `_` unless told otherwise, so one could never match).
 */
export function isHeaderName(value: string): boolean {
  return /^[A-Za-z0-9]([A-Za-z0-9-]{0,62}[A-Za-z0-9])?$/.test(value);
}

const urlPathCharacters = /^\/[A-Za-z0-9._~%!&()*+,=:@/-]*(\?[A-Za-z0-9._~%!&()*+,=:@/?-]*)?$/;

/** An absolute path with an optional query, in the Ingress path characters: no nginx metacharacters. */
export function isPathWithQuery(value: string): boolean {
  return value.length <= maxPathLength && urlPathCharacters.test(value);
}

/** `host` or `host:port`, the host a DNS name or an IPv4 address, or `[IPv6]`. */
export function isHostWithPort(value: string): boolean {
  const match = /^(\[[0-9A-Fa-f:.]+\]|[^:[\]]+)(?::([0-9]{1,5}))?$/.exec(value);
  if (!match) return false;
  const [, host = '', port] = match;
  if (port !== undefined && (Number(port) < 1 || Number(port) > 65535)) return false;
  if (host.startsWith('[')) return isIP(host.slice(1, -1)) === 6 && isIpAddress(host.slice(1, -1));
  return isDnsHostname(host) || (isIP(host) === 4 && isIpAddress(host));
}

/**
 * An absolute `http` or `https` URL without user info or fragment: scheme, `host[:port]`, then
 * optionally a path (and query) in the Ingress path characters. No `$`, so no variable is expanded.
 */
export function isHttpUrl(value: string): boolean {
  const match = /^https?:\/\/([^/?#]+)(.*)$/.exec(value);
  if (!match || value.length > maxPathLength) return false;
  const [, authority = '', rest = ''] = match;
  return isHostWithPort(authority.toLowerCase()) && (rest === '' || isPathWithQuery(rest) || /^\?/.test(rest) && isPathWithQuery(`/${rest}`));
}

/**
 * A header name for headers of our own choosing (`add-headers`, `proxy-set-headers`, `custom-headers`,
 * `hide-headers`): an RFC 9110 token that starts with a letter or digit, so that it stays one word of
 * nginx syntax (no quotes, `;`, braces, `#` or spaces can appear in it).
 */
export function isHeaderToken(value: string): boolean {
  return /^[A-Za-z0-9][A-Za-z0-9!#$%&'*+.^_`|~-]{0,255}$/.test(value);
}

/**
 * Variables an operator's header value may name (`add-headers`, `proxy-set-headers`, as ingress-nginx
 * expands them): nginx's own that exist in every http context, so a value can never make `nginx -t`
 * fail on an unknown variable.
 */
const headerVariable =
  /^((http|sent_http|upstream_http|cookie|arg)_[a-z0-9_]{1,64}|args|binary_remote_addr|connection|connection_requests|content_length|content_type|host|hostname|msec|nginx_version|pid|proxy_add_x_forwarded_for|query_string|realip_remote_addr|remote_addr|remote_port|remote_user|request_id|request_length|request_method|request_time|request_uri|scheme|server_addr|server_name|server_port|server_protocol|ssl_cipher|ssl_client_escaped_cert|ssl_client_fingerprint|ssl_client_i_dn|ssl_client_s_dn|ssl_client_serial|ssl_client_verify|ssl_protocol|ssl_server_name|status|time_iso8601|time_local|uri)$/;

export const maxHeaderValueLength = 1024;

/**
 * A header value as one double-quoted nginx string: printable ASCII (never CR, LF or another control
 * character), `"` and `\` escaped. `variables: 'expand'` (the operator's ConfigMaps) keeps `$name` and
 * `${name}` for the variables above and refuses any other `$`; `'literal'` (a tenant's ConfigMap, as
 * ingress-nginx escapes it) turns every `$` into `${literalDollar}`, a variable that holds `$`.
 */
export function quotedHeaderValue(value: string, variables: 'expand' | 'literal', literalDollar: string): Checked<string> {
  if (value.length > maxHeaderValueLength) return { ok: false, problem: `is longer than ${maxHeaderValueLength} characters` };
  if (!/^[\x20-\x7e]*$/.test(value)) return { ok: false, problem: 'has a character that is not printable ASCII (a line break, a tab, or beyond ASCII)' };
  const escaped = (character: string) => (character === '"' || character === '\\' ? `\\${character}` : character);
  const quoted =
    variables === 'literal'
      ? [...value].map((character) => (character === '$' ? `\${${literalDollar}}` : escaped(character))).join('')
      : withBracedVariables(value, (name) => (headerVariable.test(name) ? name : undefined), escaped);
  if (quoted === undefined) {
    return { ok: false, problem: 'has a "$" that is not one of the nginx variables allowed in headers ($host, $request_id, $remote_addr, $scheme, $http_<name>, …)' };
  }
  return { ok: true, value: `"${quoted}"` };
}

/**
 * Text with nginx variables (`$name`, `${name}`), each written braced under the name `rename` gives it,
 * and the characters between them as `escape` writes them; undefined when a `$` starts no variable
 * `rename` accepts. Braced, a variable cannot run into the text after it.
 */
export function withBracedVariables(value: string, rename: (name: string) => string | undefined, escape: (character: string) => string = (character) => character): string | undefined {
  let out = '';
  for (let index = 0; index < value.length; index++) {
    const character = value[index]!;
    if (character !== '$') {
      out += escape(character);
      continue;
    }
    const match = /^\$(?:\{([a-z0-9_]+)\}|([a-z0-9_]+))/.exec(value.slice(index));
    const name = match?.[1] ?? match?.[2];
    const renamed = name === undefined ? undefined : rename(name);
    if (match === null || renamed === undefined) return undefined;
    out += `\${${renamed}}`;
    index += match[0].length - 1;
  }
  return out;
}

/** Comma-separated header names (`hide-headers`, `global-allowed-response-headers`); empty items skipped, duplicates dropped. */
export const headerNameList = z.string().transform((value, context) => {
  const items = value.split(',').map((item) => item.trim()).filter((item) => item !== '');
  if (items.length > 256 || !items.every(isHeaderToken)) {
    context.addIssue({ code: 'custom', message: 'has an item that is not a header name' });
    return z.NEVER;
  }
  return [...new Set(items)];
});

export const headerNameListText = 'comma-separated header names (letters, digits and -_.!#$%&\'*+^`|~, starting with a letter or digit)';
