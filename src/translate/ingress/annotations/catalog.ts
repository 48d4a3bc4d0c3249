/**
 * Every ingress-nginx annotation and controller ConfigMap key, and what ingress2nginx does with it. This
 * one table drives the parser (which names are refused, ignored or unknown), the `audit` report, and the
 * annotation reference (generated from it; a test fails when the reference drifts). An annotation we
 * implement is described by its rule (rule.ts, in its family's file); this file holds the annotations we
 * do not implement and the ConfigMap keys, and assembles the whole.
 *
 * Statuses:
 * - `supported`: rendered with ingress-nginx's behaviour and default.
 * - `differs`: rendered, with a difference on purpose that `note` states (the reference and a diagnostic
 *   at the resource say so too).
 * - `ignored`: no effect; a warning names it. Only for annotations whose absence cannot open a backend.
 * - `refused`: an error, and the Ingress is left out: ignoring it would open or change access in a way
 *   ingress-nginx would not (snippets, access control we cannot enforce).
 *
 * Names and defaults come from ingress-nginx's annotation parsers (internal/ingress/annotations) and its
 * ConfigMap defaults (internal/ingress/controller/config/config.go).
 */

import { directiveSlices, httpDirectiveSlices } from './directive-slices.js';
import { allRules } from './families.js';
import { sections, type AnnotationRule, type Section } from './rule.js';

export type CatalogStatus = 'supported' | 'differs' | 'ignored' | 'refused';

export interface AnnotationEntry {
  /** Without the `nginx.ingress.kubernetes.io/` prefix. */
  readonly name: string;
  /** The reference heading the entry is listed under. */
  readonly section: Section;
  readonly status: CatalogStatus;
  /** ingress-nginx's default (and ours), in words; empty when it has none. */
  readonly defaultValue: string;
  /** What it does here; for `differs` how it differs, for `ignored` and `refused` what to do instead. */
  readonly note: string;
}

/** An annotation without a rule: it has no effect (a warning), or is refused (an error). */
export interface NotImplementedEntry extends AnnotationEntry {
  readonly status: 'ignored' | 'refused';
}

export interface ConfigMapEntry {
  readonly key: string;
  readonly status: CatalogStatus;
  readonly defaultValue: string;
  readonly note: string;
}

const access = 'Access control';
const proxy = 'Proxy tuning';
const balancing = 'Load balancing and affinity';
const observability = 'Logging, tracing, WAF';
const snippets = 'Snippets';

const snippetNote =
  'refused: raw nginx configuration is how ingress-nginx got CVE-2021-25742 and IngressNightmare (CVE-2025-1974); use the annotation or ConfigMap key for the behaviour (`audit` names it), or ask for one';
const placedSnippetNote = (where: string) =>
  `refused unless the operator allows snippets for the namespace (see docs/features.md, "Allowing snippets"); then put ${where}, as ingress-nginx does. Raw nginx text is how ingress-nginx got CVE-2021-25742 and IngressNightmare (CVE-2025-1974): prefer the annotation that does the same (\`audit\` names it)`;

export const notImplementedAnnotations: readonly NotImplementedEntry[] = [
  // ------------------------------------------------------------------ access control
  { name: 'auth-keepalive-share-vars', section: access, status: 'ignored', defaultValue: '`false`', note: 'needs Lua; `auth-response-headers` carries what the auth service answers' },
  {
    name: 'auth-proxy-set-headers',
    section: access,
    status: 'refused',
    defaultValue: '',
    note: 'refused: headers from a ConfigMap are not rendered; the auth service receives the standard `X-Original-*` headers',
  },
  {
    name: 'global-rate-limit',
    section: access,
    status: 'ignored',
    defaultValue: '',
    note: 'removed from ingress-nginx; needs Lua and memcached. Use `limit-rps` (per nginx replica)',
  },
  { name: 'global-rate-limit-window', section: access, status: 'ignored', defaultValue: '', note: 'see `global-rate-limit`' },
  { name: 'global-rate-limit-key', section: access, status: 'ignored', defaultValue: '', note: 'see `global-rate-limit`' },
  { name: 'global-rate-limit-ignored-cidrs', section: access, status: 'ignored', defaultValue: '', note: 'see `global-rate-limit`' },
  // ------------------------------------------------------------------ proxy tuning
  { name: 'http2-push-preload', section: proxy, status: 'ignored', defaultValue: '`false`', note: 'HTTP/2 push was removed from nginx 1.25.1 (and from browsers); the `Link: rel=preload` headers the application sends still make browsers preload' },
  { name: 'mirror-uri', section: proxy, status: 'ignored', defaultValue: '', note: 'removed from ingress-nginx (0.28.1); put the path in `mirror-target`, e.g. `https://mirror.example$request_uri`' },
  // ------------------------------------------------------------------ load balancing and affinity
  {
    name: 'upstream-hash-by-subset',
    section: balancing,
    status: 'ignored',
    defaultValue: '`false`',
    note: 'spreading a key over a subset of endpoints needs Lua: each key goes to one endpoint by `upstream-hash-by`; to spread one key\'s load, hash by a finer key (e.g. `$request_uri$remote_addr`)',
  },
  { name: 'upstream-hash-by-subset-size', section: balancing, status: 'ignored', defaultValue: '`3`', note: 'see `upstream-hash-by-subset`' },
  // ------------------------------------------------------------------ logging, tracing, WAF
  { name: 'enable-opentelemetry', section: observability, status: 'ignored', defaultValue: '`false`', note: 'needs the OpenTelemetry module, which stock nginx does not have. Trace in the application: every request reaches it with `X-Request-ID` (ConfigMap `generate-request-id`) to correlate with the access log' },
  { name: 'opentelemetry-trust-incoming-span', section: observability, status: 'ignored', defaultValue: '', note: 'see `enable-opentelemetry`' },
  { name: 'opentelemetry-operation-name', section: observability, status: 'ignored', defaultValue: '', note: 'see `enable-opentelemetry`' },
  { name: 'enable-opentracing', section: observability, status: 'ignored', defaultValue: '', note: 'removed from ingress-nginx; see `enable-opentelemetry`' },
  { name: 'opentracing-trust-incoming-span', section: observability, status: 'ignored', defaultValue: '', note: 'see `enable-opentracing`' },
  {
    name: 'enable-modsecurity',
    section: observability,
    status: 'refused',
    defaultValue: '`false`',
    note: 'refused: stock nginx has no ModSecurity module, and serving without the WAF the Ingress asks for would expose the backend. Put a WAF in front, or remove the annotation knowingly',
  },
  { name: 'enable-owasp-core-rules', section: observability, status: 'refused', defaultValue: '`false`', note: 'refused, as `enable-modsecurity`' },
  { name: 'modsecurity-transaction-id', section: observability, status: 'ignored', defaultValue: '', note: 'see `enable-modsecurity`' },
  { name: 'influxdb-measurement', section: observability, status: 'ignored', defaultValue: '', note: 'removed from ingress-nginx (needed Lua); the sidecar\'s `/metrics` has the request series under ingress-nginx\'s Prometheus names' },
  { name: 'influxdb-port', section: observability, status: 'ignored', defaultValue: '', note: 'see `influxdb-measurement`' },
  { name: 'influxdb-host', section: observability, status: 'ignored', defaultValue: '', note: 'see `influxdb-measurement`' },
  { name: 'influxdb-server-name', section: observability, status: 'ignored', defaultValue: '', note: 'see `influxdb-measurement`' },
  { name: 'enable-influxdb', section: observability, status: 'ignored', defaultValue: '', note: 'see `influxdb-measurement`' },
  // ------------------------------------------------------------------ snippets
  { name: 'modsecurity-snippet', section: snippets, status: 'refused', defaultValue: '', note: snippetNote },
  { name: 'configuration-snippet', section: snippets, status: 'refused', defaultValue: '', note: placedSnippetNote("in each location of the Ingress") },
  { name: 'server-snippet', section: snippets, status: 'refused', defaultValue: '', note: placedSnippetNote("in the host's server (the oldest Ingress's, one per host)") },
  { name: 'stream-snippet', section: snippets, status: 'refused', defaultValue: '', note: placedSnippetNote('in the `stream` block') },
  { name: 'auth-snippet', section: snippets, status: 'refused', defaultValue: '', note: placedSnippetNote("in the location of the Ingress's `auth-url` subrequest") },
];

/** ConfigMap keys that ingress2nginx reads; every other ingress-nginx key has no effect (an info diagnostic). */
export const configMapCatalog: readonly ConfigMapEntry[] = [
  { key: 'ssl-protocols', status: 'supported', defaultValue: '`TLSv1.2 TLSv1.3`', note: 'SSLv2/SSLv3 are refused' },
  { key: 'ssl-ciphers', status: 'supported', defaultValue: 'ingress-nginx\'s ECDHE/DHE AEAD list', note: 'checked by OpenSSL' },
  { key: 'ssl-redirect', status: 'supported', defaultValue: '`true`', note: '' },
  { key: 'http-redirect-code', status: 'supported', defaultValue: '`308`', note: '301, 302, 307 or 308' },
  { key: 'hsts', status: 'supported', defaultValue: '`true`', note: '' },
  { key: 'hsts-max-age', status: 'supported', defaultValue: '`31536000`', note: '' },
  { key: 'hsts-include-subdomains', status: 'supported', defaultValue: '`true`', note: '' },
  { key: 'hsts-preload', status: 'supported', defaultValue: '`false`', note: '' },
  {
    key: 'use-forwarded-headers',
    status: 'differs',
    defaultValue: '`false`',
    note: 'X-Forwarded-For/-Proto/-Port/-Host are trusted only from `proxy-real-ip-cidr`, and only over plain HTTP',
  },
  {
    key: 'compute-full-forwarded-for',
    status: 'differs',
    defaultValue: '`false`',
    note: 'with `use-forwarded-headers`, X-Forwarded-For to the backend is the received chain plus the peer, when the peer is trusted',
  },
  { key: 'proxy-real-ip-cidr', status: 'supported', defaultValue: '`0.0.0.0/0`', note: '' },
  {
    key: 'use-proxy-protocol',
    status: 'differs',
    defaultValue: '`false`',
    note: 'PROXY header from an outer load balancer on both ports; with `use-forwarded-headers` too, plain HTTP takes the client from X-Forwarded-For when the PROXY source is in `proxy-real-ip-cidr`, else the PROXY source',
  },
  { key: 'ssl-reject-handshake', status: 'supported', defaultValue: '`false`', note: '' },
  {
    key: 'upstream-keepalive-connections',
    status: 'differs',
    defaultValue: '`320`',
    note: 'per upstream block, `0` = off; past 100 blocks shared out among them, never below 16 each (nginx allocates every block\'s cache when it loads)',
  },
  { key: 'worker-processes', status: 'supported', defaultValue: '`auto`', note: '' },
  { key: 'max-worker-connections', status: 'differs', defaultValue: '`16384`', note: '`0` is refused' },
  { key: 'generate-request-id', status: 'supported', defaultValue: '`true`', note: 'X-Request-ID to the backend: the client\'s, else a random one' },
  { key: 'log-format-escape-json', status: 'supported', defaultValue: '`false`', note: 'the access log (`--access-log`, ingress-nginx\'s default `log-format-upstream`) escapes its fields for JSON' },
  { key: 'proxy-body-size', status: 'supported', defaultValue: '`1m`', note: '' },
  { key: 'client-body-buffer-size', status: 'supported', defaultValue: '`8k`', note: '' },
  { key: 'proxy-connect-timeout', status: 'supported', defaultValue: '`5`', note: 'seconds' },
  { key: 'proxy-read-timeout', status: 'supported', defaultValue: '`60`', note: 'seconds' },
  { key: 'proxy-send-timeout', status: 'supported', defaultValue: '`60`', note: 'seconds' },
  { key: 'proxy-buffering', status: 'supported', defaultValue: '`off`', note: '' },
  { key: 'proxy-buffer-size', status: 'supported', defaultValue: '`4k`', note: '' },
  { key: 'proxy-buffers-number', status: 'supported', defaultValue: '`4`', note: '' },
  {
    key: 'proxy-busy-buffers-size',
    status: 'supported',
    defaultValue: 'nginx\'s (two buffers)',
    note: 'from one buffer to all buffers but one, else an error and nginx\'s default; an Ingress whose own buffers it does not fit gets one buffer',
  },
  { key: 'proxy-request-buffering', status: 'supported', defaultValue: '`on`', note: '' },
  { key: 'proxy-http-version', status: 'supported', defaultValue: '`1.1`', note: '' },
  { key: 'proxy-next-upstream', status: 'supported', defaultValue: '`error timeout`', note: '' },
  { key: 'proxy-next-upstream-tries', status: 'supported', defaultValue: '`3`', note: '' },
  { key: 'proxy-next-upstream-timeout', status: 'supported', defaultValue: '`0`', note: '' },
  { key: 'whitelist-source-range', status: 'supported', defaultValue: '', note: 'CIDRs allowed on every path without its own allow-list' },
  { key: 'denylist-source-range', status: 'supported', defaultValue: '', note: 'CIDRs refused on every path without its own deny-list' },
  {
    key: 'global-auth-url',
    status: 'differs',
    defaultValue: '',
    note: 'external auth for every Ingress without its own `auth-url` (and without `enable-global-auth: "false"`), as `auth-url` but for the operator: another namespace\'s Service needs no ReferenceGrant. A value that is rejected, or a target nginx cannot reach, is one error at the key, and the Ingresses it guards answer 503 (never unguarded); the cluster mode keeps the last good settings instead (docs/cluster.md)',
  },
  { key: 'global-auth-method', status: 'supported', defaultValue: '', note: 'as `auth-method`' },
  { key: 'global-auth-signin', status: 'differs', defaultValue: '', note: 'as `auth-signin` (the original URL\'s `&` written `%26`; stock nginx has no URL-encoding)' },
  { key: 'global-auth-signin-redirect-param', status: 'supported', defaultValue: '`rd`', note: 'as `auth-signin-redirect-param`' },
  { key: 'global-auth-response-headers', status: 'supported', defaultValue: '', note: 'as `auth-response-headers`' },
  { key: 'global-auth-request-redirect', status: 'supported', defaultValue: '', note: 'as `auth-request-redirect`' },
  { key: 'global-auth-cache-key', status: 'differs', defaultValue: '', note: 'as `auth-cache-key`: answers are kept per Ingress' },
  { key: 'global-auth-cache-duration', status: 'supported', defaultValue: '`200 202 401 5m`', note: 'as `auth-cache-duration`' },
  { key: 'global-auth-always-set-cookie', status: 'supported', defaultValue: '`false`', note: 'as `auth-always-set-cookie`' },
  {
    key: 'custom-http-errors',
    status: 'differs',
    defaultValue: '',
    note: 'answered by `--default-backend-service` with ingress-nginx\'s `X-Code`, `X-Format`, `X-Original-URI`, `X-Namespace`, `X-Ingress-Name`, `X-Service-Name`, `X-Service-Port`, `X-Request-ID`; without that flag it has no effect (a warning). An Ingress\'s own `custom-http-errors` replaces it on its paths',
  },
  { key: 'limit-req-status-code', status: 'supported', defaultValue: '`503`', note: '400 to 599' },
  { key: 'limit-conn-status-code', status: 'supported', defaultValue: '`503`', note: '400 to 599' },
  {
    key: 'first-namespace-owns-host',
    status: 'differs',
    defaultValue: '`false`',
    note: 'ours: a host belongs to the namespace that claimed it first; other namespaces cannot add to it',
  },
  {
    key: 'allow-snippet-annotations',
    status: 'differs',
    defaultValue: '`false`',
    note: 'allows the snippet annotations (and this ConfigMap\'s `main-snippet`, `http-snippet`, `stream-snippet`, `server-snippet`, `location-snippet`); ours: `--snippet-namespace` and `--snippet-namespace-selector` limit the annotations to chosen namespaces (see docs/features.md, "Allowing snippets")',
  },
  {
    key: 'annotations-risk-level',
    status: 'differs',
    defaultValue: '`High`, as in ingress-nginx 1.12+ (`Critical` where `--allow-snippet-annotations` allows snippets)',
    note: 'read for snippets only: below `Critical` the snippet annotations stay refused, so `allow-snippet-annotations: "true"` alone allows only this ConfigMap\'s own snippets, as in ingress-nginx 1.12+; a level set here applies with `--allow-snippet-annotations` too (see docs/features.md, "Allowing snippets")',
  },
  ...directiveSlices.map(({ name, defaultValue, note }): ConfigMapEntry => ({ key: name, status: 'supported', defaultValue, note })),
  ...httpDirectiveSlices.map(({ name, defaultValue, note, status }): ConfigMapEntry => ({ key: name, status: status ?? 'supported', defaultValue, note })),
  {
    key: 'log-format-upstream',
    status: 'differs',
    defaultValue: 'ingress-nginx\'s `upstreaminfo` format',
    note: 'the access log\'s format (`--access-log`): text without quotes or backslashes, and nginx\'s request and upstream variables, `$http_<name>`, `$proxy_upstream_name`, `$proxy_alternative_upstream_name`, `$req_id`, `$the_real_ip`; ingress-nginx\'s `$namespace`, `$ingress_name`, `$service_name`, `$service_port` and `$location_path` are refused (the default format is used then, with an error)',
  },
  {
    key: 'add-headers',
    status: 'differs',
    defaultValue: '',
    note: '`namespace/name` of a ConfigMap of response headers for every response; values may use nginx variables (`$host`, `$request_id`, `$http_<name>`, …, a fixed list). Stock nginx has no `more_set_headers`: each is `proxy_hide_header` plus `add_header … always`, which replaces the backend\'s header on every status; names nginx writes itself (`Server`, `Date`, `Content-Length`, `Connection`, …) are refused',
  },
  {
    key: 'proxy-set-headers',
    status: 'differs',
    defaultValue: '',
    note: '`namespace/name` of a ConfigMap of request headers for every backend (`proxy_set_header`, after ours); values may use the same nginx variables as `add-headers`. Headers we already send (`Host`, `X-Forwarded-*`, `X-Real-IP`, `X-Request-ID`, …) are refused: set them with their own keys',
  },
  { key: 'hide-headers', status: 'supported', defaultValue: '', note: 'comma-separated backend response headers never passed to clients (`proxy_hide_header`)' },
  {
    key: 'global-allowed-response-headers',
    status: 'supported',
    defaultValue: '',
    note: 'comma-separated names (exact case) that a `custom-headers` ConfigMap may set',
  },
  { key: 'keep-alive', status: 'supported', defaultValue: '`75`', note: 'seconds a client connection is kept idle (`keepalive_timeout`), `0` = off' },
  { key: 'use-gzip', status: 'supported', defaultValue: '`false`', note: 'gzip responses of `gzip-types` (and `text/html`) at least `gzip-min-length` long, also to proxied requests, with `Vary: Accept-Encoding`' },
  { key: 'gzip-level', status: 'supported', defaultValue: '`1`', note: '1 to 9' },
  { key: 'gzip-min-length', status: 'supported', defaultValue: '`256`', note: 'bytes' },
  { key: 'gzip-types', status: 'supported', defaultValue: 'ingress-nginx\'s list (`application/atom+xml application/javascript … text/x-component`)', note: 'space-separated MIME types, or `*`' },
  { key: 'gzip-disable', status: 'supported', defaultValue: '', note: '`msie6` or a regex over the User-Agent (safe grammar)' },
];

/** The catalog's words for a rule's default: its own, else its ConfigMap key's default, else its value. */
function defaultWords(rule: AnnotationRule<unknown>): string {
  if (rule.defaultWords !== undefined) return rule.defaultWords;
  if (rule.configMapKey !== undefined) {
    const key = configMapCatalog.find((entry) => entry.key === rule.configMapKey);
    if (!key) throw new Error(`annotation ${rule.name}: ConfigMap key ${rule.configMapKey} is not in the catalog`);
    return key.defaultValue === '' ? `ConfigMap \`${key.key}\`` : `ConfigMap \`${key.key}\` (${key.defaultValue})`;
  }
  const value = rule.defaultValue;
  if (value === undefined) return '';
  if (Array.isArray(value)) return value.length === 0 ? '' : `\`${value.join(', ')}\``;
  // A structured default has no one spelling: its rule says it in words.
  if (typeof value === 'object') throw new Error(`annotation ${rule.name}: a structured default needs defaultWords`);
  return `\`${String(value)}\``;
}

/** A rule's entry, and one per alias (with the rule's section, status and default). */
function ruleEntries(rule: AnnotationRule<unknown>): AnnotationEntry[] {
  const shared = { section: rule.section, status: rule.status, defaultValue: defaultWords(rule) };
  return [{ name: rule.name, ...shared, note: rule.note }, ...(rule.aliases ?? []).map((name) => ({ name, ...shared, note: rule.aliasNote ?? '' }))];
}

/** Every annotation: the rules' and the rest, in the reference's order of sections. */
export const annotationCatalog: readonly AnnotationEntry[] = [...allRules.flatMap(ruleEntries), ...notImplementedAnnotations].sort(
  (a, b) => sections.indexOf(a.section) - sections.indexOf(b.section),
);

const byName = new Map(annotationCatalog.map((entry) => [entry.name, entry]));

/** The catalog entry for an annotation name (without the prefix). */
export function catalogEntry(name: string): AnnotationEntry | undefined {
  return byName.get(name);
}
