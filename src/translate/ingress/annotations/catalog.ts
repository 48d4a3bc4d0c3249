/**
 * Every ingress-nginx annotation and controller ConfigMap key, and what ingress2nginx does with it. This
 * one table drives the parser (which names are refused, ignored or unknown), the `audit` report, and the
 * README's annotation reference (generated from it; a test fails when the README drifts).
 *
 * Statuses:
 * - `supported`: rendered with ingress-nginx's behaviour and default.
 * - `differs`: rendered, with a difference on purpose that `note` states (the README and a diagnostic
 *   at the resource say so too).
 * - `ignored`: no effect; a warning names it. Only for annotations whose absence cannot open a backend.
 * - `refused`: an error, and the Ingress is left out: ignoring it would open or change access in a way
 *   ingress-nginx would not (snippets, access control we cannot enforce).
 *
 * Names and defaults come from ingress-nginx's annotation parsers (internal/ingress/annotations) and its
 * ConfigMap defaults (internal/ingress/controller/config/config.go).
 */

import { directiveSlices, httpDirectiveSlices } from './directive-slices.js';

export type CatalogStatus = 'supported' | 'differs' | 'ignored' | 'refused';

export interface AnnotationEntry {
  /** Without the `nginx.ingress.kubernetes.io/` prefix. */
  readonly name: string;
  /** Heading of the README section the entry is listed under. */
  readonly family: string;
  readonly status: CatalogStatus;
  /** ingress-nginx's default (and ours), in words; empty when it has none. */
  readonly defaultValue: string;
  /** What it does here; for `differs` how it differs, for `ignored` and `refused` what to do instead. */
  readonly note: string;
}

export interface ConfigMapEntry {
  readonly key: string;
  readonly status: CatalogStatus;
  readonly defaultValue: string;
  readonly note: string;
}

const paths = 'Paths and redirects';
const proxy = 'Proxy tuning';
const tls = 'TLS and backends';
const access = 'Access control';
const canary = 'Canaries';
const cors = 'CORS';
const errors = 'Error pages';
const balancing = 'Load balancing and affinity';
const observability = 'Logging, tracing, WAF';
const snippets = 'Snippets';

const snippetNote =
  'refused: raw nginx configuration is how ingress-nginx got CVE-2021-25742 and IngressNightmare (CVE-2025-1974); use the annotation or ConfigMap key for the behaviour (`audit` names it), or ask for one';
const placedSnippetNote = (where: string) =>
  `refused unless the operator allows snippets for the namespace (see "Allowing snippets"); then put ${where}, as ingress-nginx does. Raw nginx text is how ingress-nginx got CVE-2021-25742 and IngressNightmare (CVE-2025-1974): prefer the annotation that does the same (\`audit\` names it)`;

export const annotationCatalog: readonly AnnotationEntry[] = [
  // ------------------------------------------------------------------ TLS and backends
  {
    name: 'ssl-passthrough',
    family: tls,
    status: 'differs',
    defaultValue: 'false',
    note: 'nginx routes the TLS connection by SNI to the backend of path `/` (no Go proxy in the data path, client addresses kept, wildcard hosts work); other paths, `spec.tls` and HTTP-level annotations do not apply to it (warning). Plain HTTP to the host is redirected to HTTPS with `force-ssl-redirect`, or with `ssl-redirect` (default on) when `spec.tls` lists the host, as in ingress-nginx; otherwise it answers 404 (the backend is never spoken to in plain HTTP)',
  },
  {
    name: 'ssl-redirect',
    family: tls,
    status: 'differs',
    defaultValue: 'ConfigMap `ssl-redirect` (`true`)',
    note: 'redirect from HTTP for hosts with TLS, with ConfigMap `http-redirect-code` (308), to `https://` + host + the request URI, whose one trailing `/` is dropped unless `preserve-trailing-slash`, as in ingress-nginx. The HTTPS port is named when it is not 443 (ingress-nginx names it only with `use-port-in-redirects`). An invalid value uses the ConfigMap default, with an error',
  },
  {
    name: 'force-ssl-redirect',
    family: tls,
    status: 'supported',
    defaultValue: 'false',
    note: 'redirect from HTTP even without TLS; an invalid value counts as `false`, with an error',
  },
  {
    name: 'preserve-trailing-slash',
    family: tls,
    status: 'supported',
    defaultValue: '`false`',
    note: 'the redirect to HTTPS (`ssl-redirect`, `force-ssl-redirect`) keeps the request URI as sent; otherwise one trailing `/` is dropped (`/docs/` → `https://host/docs`, `/` → `https://host`)',
  },
  {
    name: 'use-port-in-redirects',
    family: tls,
    status: 'differs',
    defaultValue: '`false`',
    note: '`true`: the redirect to HTTPS names the HTTPS port (`--https-port`) even when it is 443, and nginx\'s own redirects (a path ending in `/` asked without it) name the port they came in on (`port_in_redirect on`; elsewhere off, as in ingress-nginx). With `false` the redirect to HTTPS still names a port that is not 443, where ingress-nginx sends clients to 443',
  },
  {
    name: 'backend-protocol',
    family: tls,
    status: 'supported',
    defaultValue: '`HTTP`',
    note: '`HTTP`, `HTTPS`, `GRPC`, `GRPCS`, `AUTO_HTTP`, `FCGI` (`fastcgi_pass`, see `fastcgi-index`); an invalid value leaves the Ingress out rather than proxying in plain HTTP what the backend expects encrypted',
  },
  {
    name: 'proxy-ssl-secret',
    family: tls,
    status: 'supported',
    defaultValue: '',
    note: '`namespace/name` of a Secret with `ca.crt` (and optionally `tls.crt`/`tls.key` to present); another namespace only with `--allow-cross-namespace-secrets`',
  },
  {
    name: 'proxy-ssl-verify',
    family: tls,
    status: 'differs',
    defaultValue: '`off`',
    note: '`on` without a CA is an error and the path answers 503 (never reached unverified); with `on`, `proxy_ssl_name` and SNI are always set (to the Service DNS name unless `proxy-ssl-name`)',
  },
  { name: 'proxy-ssl-verify-depth', family: tls, status: 'supported', defaultValue: '`1`', note: '1 to 100' },
  {
    name: 'proxy-ssl-name',
    family: tls,
    status: 'differs',
    defaultValue: 'the Service DNS name when verifying',
    note: 'a DNS name, or `$host` (the request host); no other variables',
  },
  { name: 'proxy-ssl-server-name', family: tls, status: 'supported', defaultValue: '`off` (`on` when verifying)', note: 'send SNI to the backend' },
  {
    name: 'proxy-ssl-protocols',
    family: tls,
    status: 'differs',
    defaultValue: '`TLSv1.2 TLSv1.3`',
    note: 'only TLSv1.2 and TLSv1.3 (ingress-nginx defaults to `TLSv1 TLSv1.1 TLSv1.2`, which cannot reach a TLS 1.3-only backend)',
  },
  { name: 'proxy-ssl-ciphers', family: tls, status: 'supported', defaultValue: '`DEFAULT`', note: 'checked by OpenSSL before it reaches nginx' },
  {
    name: 'ssl-ciphers',
    family: tls,
    status: 'supported',
    defaultValue: 'ConfigMap `ssl-ciphers`',
    note: '`ssl_ciphers` of the host\'s server (TLS 1.2 and older), checked by OpenSSL; the oldest Ingress on the host that sets it decides (a newer one that asks otherwise gets a warning). The host gets an SSL context of its own, also with `--certificates-per-handshake`',
  },
  {
    name: 'ssl-prefer-server-ciphers',
    family: tls,
    status: 'supported',
    defaultValue: '`on` (with ConfigMap `ssl-ciphers`)',
    note: '`ssl_prefer_server_ciphers` of the host\'s server, decided as `ssl-ciphers`',
  },
  {
    name: 'auth-tls-secret',
    family: access,
    status: 'differs',
    defaultValue: '',
    note: '`namespace/name` (or `name`) of a Secret with `ca.crt` (and optionally `ca.crl`) to verify client certificates with; the requirement applies to this Ingress\'s paths only (ingress-nginx applies it to every path of the host). Another namespace only with `--allow-cross-namespace-secrets`. A host can have one client CA: a newer Ingress that names another one answers 503',
  },
  {
    name: 'auth-tls-verify-client',
    family: access,
    status: 'supported',
    defaultValue: '`on`',
    note: '`on` (no or a bad certificate: 400), `optional` (a bad certificate: 400), `optional_no_ca`, `off`',
  },
  { name: 'auth-tls-verify-depth', family: access, status: 'supported', defaultValue: '`1`', note: '1 to 100; one depth per host' },
  {
    name: 'auth-tls-error-page',
    family: access,
    status: 'supported',
    defaultValue: '',
    note: 'an `http(s)` URL or a path that clients without a valid certificate are redirected to',
  },
  {
    name: 'auth-tls-pass-certificate-to-upstream',
    family: access,
    status: 'supported',
    defaultValue: '`false`',
    note: 'sends the URL-encoded certificate in `ssl-client-cert`; `ssl-client-verify`, `ssl-client-subject-dn`, `ssl-client-issuer-dn` are always sent',
  },
  {
    name: 'auth-tls-match-cn',
    family: access,
    status: 'differs',
    defaultValue: '',
    note: '`CN=<regex>` matched against the subject DN (403 otherwise); the regex is checked against a safe grammar (the CVE-2025-1097 injection cannot pass it) and must match in linear time (see above)',
  },
  // ------------------------------------------------------------------ access control
  {
    name: 'whitelist-source-range',
    family: access,
    status: 'supported',
    defaultValue: 'ConfigMap `whitelist-source-range`',
    note: 'comma-separated CIDRs allowed to reach the paths (403 for others), on the real client address; alias of `allowlist-source-range`',
  },
  {
    name: 'allowlist-source-range',
    family: access,
    status: 'supported',
    defaultValue: 'ConfigMap `whitelist-source-range`',
    note: 'as `whitelist-source-range` (which it wins over)',
  },
  {
    name: 'denylist-source-range',
    family: access,
    status: 'supported',
    defaultValue: 'ConfigMap `denylist-source-range`',
    note: 'comma-separated CIDRs refused with 403, checked before the allow-list',
  },
  {
    name: 'satisfy',
    family: access,
    status: 'differs',
    defaultValue: '`all`',
    note: '`all` only (every check must pass); `any` is refused, because it would let one passing check open the path',
  },
  {
    name: 'auth-type',
    family: access,
    status: 'differs',
    defaultValue: '',
    note: '`basic` with `auth-secret`; `digest` is refused (stock nginx has no digest module)',
  },
  {
    name: 'auth-secret',
    family: access,
    status: 'differs',
    defaultValue: '',
    note: '`name` or `namespace/name` of the Secret with the users; written beside nginx.conf as a key file (mode 0600, owned by the nginx worker user when we run as root). Another namespace only with `--allow-cross-namespace-secrets`',
  },
  {
    name: 'auth-secret-type',
    family: access,
    status: 'supported',
    defaultValue: '`auth-file`',
    note: '`auth-file` (key `auth` holds htpasswd lines) or `auth-map` (each key a user, each value a password hash)',
  },
  { name: 'auth-realm', family: access, status: 'supported', defaultValue: '', note: 'letters, digits, spaces and `-._~/:`' },
  {
    name: 'auth-url',
    family: access,
    status: 'differs',
    defaultValue: '',
    note: 'nginx `auth_request` to this `http(s)` URL; a 2xx lets the request through, 401/403 are returned. A Service DNS name of a Service in the input is reached at its address (another namespace\'s only with a ReferenceGrant there, or when the operator passes `--allow-cross-namespace-auth-url`); other names need `--resolver` (so DNS can never stop the config from loading). The host is a literal or `$host` (checked against the names the Ingress serves; never `$http_host`); the path and query may use `$host`, `$http_host`, `$scheme`, `$request_uri`, `$escaped_request_uri` (the last one is not escaped in stock nginx)',
  },
  {
    name: 'auth-method',
    family: access,
    status: 'supported',
    defaultValue: 'the request method',
    note: 'method of the auth subrequest (`GET`, `HEAD`, `POST`, `PUT`, `PATCH`, `DELETE`, `OPTIONS`)',
  },
  {
    name: 'auth-signin',
    family: access,
    status: 'differs',
    defaultValue: '',
    note: 'a 401 from the auth service becomes a 302 to this URL, with `rd=` the original URL unless the URL already has it (not URL-encoded in stock nginx)',
  },
  {
    name: 'auth-response-headers',
    family: access,
    status: 'supported',
    defaultValue: '',
    note: 'comma-separated headers copied from the auth response to the backend request',
  },
  {
    name: 'auth-request-redirect',
    family: access,
    status: 'supported',
    defaultValue: 'the request URI',
    note: '`X-Auth-Request-Redirect` sent to the auth service: an `http(s)` URL or a path, without variables',
  },
  { name: 'auth-signin-redirect-param', family: access, status: 'supported', defaultValue: '`rd`', note: 'the query parameter of `auth-signin` that carries the original URL' },
  {
    name: 'auth-always-set-cookie',
    family: access,
    status: 'supported',
    defaultValue: '`false`',
    note: '`true` passes a `Set-Cookie` of the auth service on with every response, errors included (`add_header … always`); otherwise with successful responses only',
  },
  {
    name: 'auth-cache-key',
    family: access,
    status: 'differs',
    defaultValue: '',
    note: 'answers of the auth service are cached (`proxy_cache` in one 10m zone under `--run-dir`, as ingress-nginx sizes it) under the Ingress, the request host and this key; ingress-nginx keys them by location path instead, so here the paths of one Ingress share answers (put `$uri` in the key to keep them apart). The key is letters, digits, `-`, `_` and `$http_*`, `$cookie_*`, `$arg_*`, `$remote_user`, `$remote_addr`, `$host`, `$uri`, `$request_uri`, `$scheme`. As in ingress-nginx, an answer with `Set-Cookie` or `Cache-Control: no-cache` is not cached',
  },
  {
    name: 'auth-cache-duration',
    family: access,
    status: 'supported',
    defaultValue: '`200 202 401 5m`',
    note: 'comma-separated `proxy_cache_valid` entries: status codes (or `any`) then one time',
  },
  {
    name: 'auth-keepalive',
    family: access,
    status: 'differs',
    defaultValue: '`0`',
    note: 'above 0, an auth service that is a Service of the input gets an upstream block of its own keeping this many idle connections (with `auth-keepalive-requests` and `auth-keepalive-timeout`), as ingress-nginx builds it; another target (an address, a name looked up per request) gets a connection per subrequest, with a warning. With `0`, a Service target is still reached through its Service\'s block, kept alive as ConfigMap `upstream-keepalive-connections` says (ingress-nginx opens a connection per subrequest). Connections are reused when the auth service answers without a body, as auth services do',
  },
  { name: 'auth-keepalive-share-vars', family: access, status: 'ignored', defaultValue: '`false`', note: 'needs Lua; `auth-response-headers` carries what the auth service answers' },
  { name: 'auth-keepalive-requests', family: access, status: 'supported', defaultValue: '`1000`', note: 'requests over one kept-alive connection to the auth service (`keepalive_requests`); `0` turns `auth-keepalive` off' },
  { name: 'auth-keepalive-timeout', family: access, status: 'supported', defaultValue: '`60`', note: 'seconds an idle connection to the auth service is kept (`keepalive_timeout`); `0` turns `auth-keepalive` off' },
  {
    name: 'auth-proxy-set-headers',
    family: access,
    status: 'refused',
    defaultValue: '',
    note: 'refused: headers from a ConfigMap are not rendered; the auth service receives the standard `X-Original-*` headers',
  },
  {
    name: 'enable-global-auth',
    family: access,
    status: 'supported',
    defaultValue: '`true`',
    note: '`false` keeps ConfigMap `global-auth-url` off this Ingress\'s paths (an Ingress with its own `auth-url` uses that one)',
  },
  {
    name: 'limit-rps',
    family: access,
    status: 'supported',
    defaultValue: '',
    note: 'requests per second per client address, burst `limit-rps × limit-burst-multiplier`, excess answered with ConfigMap `limit-req-status-code` (503)',
  },
  { name: 'limit-rpm', family: access, status: 'supported', defaultValue: '', note: 'requests per minute per client address, as `limit-rps`' },
  {
    name: 'limit-connections',
    family: access,
    status: 'supported',
    defaultValue: '',
    note: 'concurrent connections per client address, excess answered with ConfigMap `limit-conn-status-code` (503)',
  },
  { name: 'limit-burst-multiplier', family: access, status: 'supported', defaultValue: '`5`', note: 'burst size as a multiple of the rate' },
  {
    name: 'limit-whitelist',
    family: access,
    status: 'supported',
    defaultValue: '',
    note: 'comma-separated CIDRs the rate limits do not apply to; alias of `limit-allowlist`',
  },
  { name: 'limit-allowlist', family: access, status: 'supported', defaultValue: '', note: 'as `limit-whitelist` (which it wins over)' },
  { name: 'limit-rate', family: access, status: 'supported', defaultValue: '`0` (off)', note: 'response rate per connection, KB/s' },
  { name: 'limit-rate-after', family: access, status: 'supported', defaultValue: '`0`', note: 'KB sent before `limit-rate` applies' },
  {
    name: 'global-rate-limit',
    family: access,
    status: 'ignored',
    defaultValue: '',
    note: 'removed from ingress-nginx; needs Lua and memcached. Use `limit-rps` (per nginx replica)',
  },
  { name: 'global-rate-limit-window', family: access, status: 'ignored', defaultValue: '', note: 'see `global-rate-limit`' },
  { name: 'global-rate-limit-key', family: access, status: 'ignored', defaultValue: '', note: 'see `global-rate-limit`' },
  { name: 'global-rate-limit-ignored-cidrs', family: access, status: 'ignored', defaultValue: '', note: 'see `global-rate-limit`' },
  // ------------------------------------------------------------------ canaries
  {
    name: 'canary',
    family: canary,
    status: 'differs',
    defaultValue: '`false`',
    note: 'the Ingress only diverts traffic of paths (same host, path and path type) of a main Ingress in its own namespace; it claims no host or path, and its `spec.tls` and other annotations have no effect (warning). Another namespace\'s Ingress is never split (ingress-nginx merges across namespaces). An invalid value leaves the Ingress out rather than making it a main Ingress',
  },
  {
    name: 'canary-by-header',
    family: canary,
    status: 'supported',
    defaultValue: '',
    note: 'header name (letters, digits, `-`); `always` sends to the canary, `never` to the main backend, anything else falls through to the cookie and the weight',
  },
  {
    name: 'canary-by-header-value',
    family: canary,
    status: 'supported',
    defaultValue: '',
    note: 'the header value (exact, case-sensitive) that sends to the canary; others fall through',
  },
  {
    name: 'canary-by-header-pattern',
    family: canary,
    status: 'differs',
    defaultValue: '',
    note: 'a regex (safe grammar, linear time, see above) for the header value; ignored when `canary-by-header-value` is set',
  },
  {
    name: 'canary-by-cookie',
    family: canary,
    status: 'supported',
    defaultValue: '',
    note: 'cookie name; `always` / `never` as for the header, checked after it',
  },
  {
    name: 'canary-weight',
    family: canary,
    status: 'differs',
    defaultValue: '`0`',
    note: 'share of the remaining requests, chosen at random per request (`split_clients` over `$request_id`, to 0.01%)',
  },
  {
    name: 'canary-weight-total',
    family: canary,
    status: 'supported',
    defaultValue: '`100`',
    note: 'what `canary-weight` is a share of; values up to 100 count as 100, as in ingress-nginx',
  },
  // ------------------------------------------------------------------ paths and redirects
  {
    name: 'use-regex',
    family: paths,
    status: 'differs',
    defaultValue: '`false`',
    note: 'this Ingress\'s paths become case-insensitive regexes anchored at the start (`~* "^path"`), checked against a safe grammar; ingress-nginx turns every path of the host into a regex, we only this Ingress\'s, and another Ingress\'s Exact and Prefix paths (other than `/`) keep their requests. Between Ingresses the older one\'s regexes are tried first, within one the longer',
  },
  {
    name: 'rewrite-target',
    family: paths,
    status: 'differs',
    defaultValue: '',
    note: 'implies `use-regex`; the URI sent to the backend, with `$1`…`$9` from the path\'s groups (`rewrite "(?i)^path" target break`)',
  },
  {
    name: 'app-root',
    family: paths,
    status: 'differs',
    defaultValue: '',
    note: 'a request for `/` is redirected (302) to this path, in this Ingress\'s locations only (ingress-nginx does it for the whole host)',
  },
  {
    name: 'permanent-redirect',
    family: paths,
    status: 'supported',
    defaultValue: '',
    note: 'an `http(s)` URL answered instead of proxying; no variables',
  },
  {
    name: 'permanent-redirect-code',
    family: paths,
    status: 'supported',
    defaultValue: '`301`',
    note: '300 to 308; others count as 301',
  },
  {
    name: 'temporal-redirect',
    family: paths,
    status: 'supported',
    defaultValue: '',
    note: 'as `permanent-redirect`, and wins over it',
  },
  { name: 'temporal-redirect-code', family: paths, status: 'supported', defaultValue: '`302`', note: '300 to 307; others count as 302' },
  {
    name: 'from-to-www-redirect',
    family: paths,
    status: 'differs',
    defaultValue: '`false`',
    note: 'the `www.` twin of each host redirects to it (ConfigMap `http-redirect-code`), unless any other resource claims that name; its TLS uses this Ingress\'s certificate when it covers the name, else the default certificate',
  },
  {
    name: 'server-alias',
    family: paths,
    status: 'differs',
    defaultValue: '',
    note: 'comma-separated extra host names (DNS names or `*.` wildcards; no regexes) served like the Ingress\'s hosts, unless any other resource claims them',
  },
  {
    name: 'x-forwarded-prefix',
    family: paths,
    status: 'supported',
    defaultValue: '',
    note: 'value of an `X-Forwarded-Prefix` header to the backend (a path)',
  },
  {
    name: 'upstream-vhost',
    family: paths,
    status: 'supported',
    defaultValue: '',
    note: '`Host` header sent to the backend (a host name with an optional port; no variables)',
  },
  // ------------------------------------------------------------------ proxy tuning
  { name: 'proxy-body-size', family: proxy, status: 'supported', defaultValue: 'ConfigMap `proxy-body-size` (`1m`)', note: '`client_max_body_size` (`0` = unlimited)' },
  { name: 'client-body-buffer-size', family: proxy, status: 'supported', defaultValue: 'ConfigMap `client-body-buffer-size` (`8k`)', note: '`client_body_buffer_size`' },
  { name: 'proxy-connect-timeout', family: proxy, status: 'supported', defaultValue: 'ConfigMap `proxy-connect-timeout` (`5`)', note: 'seconds' },
  { name: 'proxy-read-timeout', family: proxy, status: 'supported', defaultValue: 'ConfigMap `proxy-read-timeout` (`60`)', note: 'seconds' },
  { name: 'proxy-send-timeout', family: proxy, status: 'supported', defaultValue: 'ConfigMap `proxy-send-timeout` (`60`)', note: 'seconds' },
  { name: 'proxy-buffering', family: proxy, status: 'supported', defaultValue: 'ConfigMap `proxy-buffering` (`off`)', note: '`on` or `off`' },
  { name: 'proxy-buffer-size', family: proxy, status: 'supported', defaultValue: 'ConfigMap `proxy-buffer-size` (`4k`)', note: 'also the size of each of the `proxy-buffers-number` buffers' },
  { name: 'proxy-buffers-number', family: proxy, status: 'supported', defaultValue: 'ConfigMap `proxy-buffers-number` (`4`)', note: '1 to 1024' },
  {
    name: 'proxy-busy-buffers-size',
    family: proxy,
    status: 'supported',
    defaultValue: 'ConfigMap `proxy-busy-buffers-size` (nginx\'s: two buffers)',
    note: 'from one buffer to all buffers but one (`proxy-buffer-size`, `proxy-buffers-number`, here or from the ConfigMap), which nginx requires: a size outside that is an error and the ConfigMap\'s (or nginx\'s) applies',
  },
  { name: 'proxy-request-buffering', family: proxy, status: 'supported', defaultValue: 'ConfigMap `proxy-request-buffering` (`on`)', note: '`on` or `off`' },
  { name: 'proxy-http-version', family: proxy, status: 'supported', defaultValue: 'ConfigMap `proxy-http-version` (`1.1`)', note: '`1.0` or `1.1`' },
  {
    name: 'proxy-next-upstream',
    family: proxy,
    status: 'supported',
    defaultValue: 'ConfigMap `proxy-next-upstream` (`error timeout`)',
    note: 'space-separated: `error`, `timeout`, `invalid_header`, `http_500`, `http_502`, `http_503`, `http_504`, `http_403`, `http_404`, `http_429`, `non_idempotent`, or `off`',
  },
  { name: 'proxy-next-upstream-tries', family: proxy, status: 'supported', defaultValue: 'ConfigMap `proxy-next-upstream-tries` (`3`)', note: '`0` = unlimited' },
  { name: 'proxy-next-upstream-timeout', family: proxy, status: 'supported', defaultValue: 'ConfigMap `proxy-next-upstream-timeout` (`0`)', note: 'seconds, `0` = unlimited' },
  {
    name: 'proxy-redirect-from',
    family: proxy,
    status: 'supported',
    defaultValue: '`off`',
    note: '`off`, `default`, or a URL prefix rewritten in `Location`/`Refresh` to `proxy-redirect-to`',
  },
  { name: 'proxy-redirect-to', family: proxy, status: 'supported', defaultValue: '`off`', note: 'replacement for `proxy-redirect-from`' },
  {
    name: 'connection-proxy-header',
    family: proxy,
    status: 'supported',
    defaultValue: '`upgrade` for WebSocket requests, else empty (keepalive)',
    note: '`close` or `keep-alive`: the `Connection` header to the backend, for every request of the Ingress\'s paths (WebSocket upgrades then fail, as in ingress-nginx)',
  },
  {
    name: 'custom-headers',
    family: proxy,
    status: 'differs',
    defaultValue: '',
    note: 'a ConfigMap (`name` or `namespace/name`; another namespace only with `--allow-cross-namespace-secrets`) of response headers for the Ingress\'s paths; every name must be in ConfigMap `global-allowed-response-headers`, else the paths answer 503, as in ingress-nginx 1.12+. Stock nginx has no `more_set_headers`: each is `proxy_hide_header` (the backend\'s header of that name is dropped) plus `add_header … always` (every status), and names nginx writes itself (`Server`, `Date`, `Content-Length`, `Connection`, …) are refused; a `$` in a value stays a literal `$`',
  },
  { name: 'http2-push-preload', family: proxy, status: 'ignored', defaultValue: '`false`', note: 'HTTP/2 push was removed from nginx 1.25.1 (and from browsers); the `Link: rel=preload` headers the application sends still make browsers preload' },
  {
    name: 'service-upstream',
    family: proxy,
    status: 'supported',
    defaultValue: '`false`',
    note: '`true`: with `--upstreams endpoints`, the Ingress\'s backends are reached at the Service\'s cluster IP (kube-proxy picks the endpoint; `affinity` and `upstream-hash-by` then cannot hold, a warning says so); with `--upstreams service` (the default) every Ingress is reached so already',
  },
  {
    name: 'mirror-target',
    family: proxy,
    status: 'differs',
    defaultValue: '',
    note: 'nginx `mirror`: a copy of each request goes to this `http(s)` URL and its answer is dropped; the client gets the backend\'s. The copy carries the client\'s headers (and credentials) to the target, which the tenant chooses, as in ingress-nginx; the target is held to the rules of `auth-url` (a Service in the input at its address, another namespace\'s only with a ReferenceGrant, no special addresses, other names only with `--resolver`). The host is literal; the path and query may use `$request_uri`, `$is_args`, `$args` (write `https://mirror.example$request_uri` for the original URI). A target that is rejected or cannot be reached leaves the mirror out (an error), not the Ingress',
  },
  { name: 'mirror-request-body', family: proxy, status: 'supported', defaultValue: '`on`', note: '`on` or `off`: whether the copy carries the request body' },
  { name: 'mirror-host', family: proxy, status: 'supported', defaultValue: 'the host name of `mirror-target`', note: '`Host` of the copy: a host name or address, with an optional port' },
  { name: 'mirror-uri', family: proxy, status: 'ignored', defaultValue: '', note: 'removed from ingress-nginx (0.28.1); put the path in `mirror-target`, e.g. `https://mirror.example$request_uri`' },
  {
    name: 'fastcgi-index',
    family: proxy,
    status: 'supported',
    defaultValue: '',
    note: 'with `backend-protocol: FCGI`: `fastcgi_index`, the file appended to a URI ending in `/` in `$fastcgi_script_name` (letters, digits, `.`, `-`, `_`). The backend gets nginx\'s standard FastCGI parameters (its `fastcgi_params` file, written out in the location); request headers of other annotations (`x-forwarded-prefix`, `auth-response-headers`) do not reach a FastCGI backend',
  },
  {
    name: 'fastcgi-params-configmap',
    family: proxy,
    status: 'supported',
    defaultValue: '',
    note: 'a ConfigMap (`name` or `namespace/name`; another namespace only with `--allow-cross-namespace-secrets`) of FastCGI parameters, each replacing the standard one of its name. As in ingress-nginx: names of letters, digits, `.`, `-`, `_`; values of those, `/` and nginx variables, here only those nginx has for every request (`$document_root`, `$fastcgi_script_name`, `$request_uri`, `$http_<name>`, …). A ConfigMap that is missing or has another value makes the paths answer 503',
  },
  // ------------------------------------------------------------------ CORS
  {
    name: 'enable-cors',
    family: cors,
    status: 'differs',
    defaultValue: '`false`',
    note: 'CORS headers on responses to allowed origins, and a 204 for their preflight `OPTIONS`; headers are set with `add_header … always` (stock nginx), so they are added, not replaced, if the backend sends its own',
  },
  {
    name: 'cors-allow-origin',
    family: cors,
    status: 'differs',
    defaultValue: '`*`',
    note: 'comma-separated origins (`https://a.example`, `https://*.example`, ports, `null`) or `*`; a list with an invalid origin allows none (an error), where ingress-nginx would fall back to `*`',
  },
  {
    name: 'cors-allow-methods',
    family: cors,
    status: 'supported',
    defaultValue: '`GET, PUT, POST, DELETE, PATCH, OPTIONS`',
    note: 'method names',
  },
  {
    name: 'cors-allow-headers',
    family: cors,
    status: 'supported',
    defaultValue: 'ingress-nginx\'s list (`DNT,Keep-Alive,User-Agent,…,Authorization`)',
    note: 'header names',
  },
  { name: 'cors-allow-credentials', family: cors, status: 'supported', defaultValue: '`true`', note: '' },
  { name: 'cors-expose-headers', family: cors, status: 'supported', defaultValue: '', note: 'header names or `*`' },
  { name: 'cors-max-age', family: cors, status: 'supported', defaultValue: '`1728000`', note: 'seconds' },
  // ------------------------------------------------------------------ error pages
  {
    name: 'custom-http-errors',
    family: errors,
    status: 'differs',
    defaultValue: '',
    note: 'comma-separated codes (400–599) from the backend answered by `default-backend`, which gets `X-Code`, `X-Format`, `X-Original-URI`, `X-Namespace`, `X-Ingress-Name`, `X-Service-Name`, `X-Service-Port`, `X-Request-ID`; without `default-backend`, nginx answers them with its own page (there is no controller default backend)',
  },
  {
    name: 'default-backend',
    family: errors,
    status: 'differs',
    defaultValue: '',
    note: 'a Service of the Ingress\'s namespace (its first port) for `custom-http-errors`, and for paths whose Service has no ready endpoints (`--upstreams endpoints`)',
  },
  {
    name: 'disable-proxy-intercept-errors',
    family: errors,
    status: 'supported',
    defaultValue: '`false`',
    note: '`true` keeps the backend\'s own error responses despite `custom-http-errors`',
  },
  // ------------------------------------------------------------------ load balancing and affinity
  {
    name: 'affinity',
    family: balancing,
    status: 'differs',
    defaultValue: '',
    note: '`cookie`: the upstream hashes consistently (`hash … consistent`) over the Service\'s endpoints by the cookie, and a client without it gets one, whose value is a fresh request id (ingress-nginx\'s value has another shape; a cookie it set still pins the client, to some endpoint). Needs `--upstreams endpoints` (a warning says so otherwise). Takes precedence over `upstream-hash-by` and `load-balance`',
  },
  {
    name: 'affinity-mode',
    family: balancing,
    status: 'differs',
    defaultValue: '`balanced`',
    note: '`balanced` as ingress-nginx: when endpoints are added, about a share of new/total of the clients move to them. `persistent` behaves as `balanced` (keeping every session on its endpoint through a scale-out needs Lua)',
  },
  {
    name: 'affinity-canary-behavior',
    family: balancing,
    status: 'differs',
    defaultValue: '`sticky`',
    note: 'on the canary Ingress: `sticky` splits the weight by the affinity cookie, so a client stays with the side it got and the canary is balanced like the main; `legacy` splits each request anew. `canary-by-header`/`-cookie` still decide before the weight (ingress-nginx lets the cookie win)',
  },
  { name: 'session-cookie-name', family: balancing, status: 'supported', defaultValue: '`INGRESSCOOKIE`', note: 'letters, digits, `.`, `_`, `~`, `-`' },
  {
    name: 'session-cookie-path',
    family: balancing,
    status: 'supported',
    defaultValue: 'the Ingress path',
    note: 'with `use-regex` paths and no value, `Path=/` and a warning (ingress-nginx writes the regex)',
  },
  { name: 'session-cookie-domain', family: balancing, status: 'supported', defaultValue: '', note: 'a DNS name, optionally with a leading `.`' },
  {
    name: 'session-cookie-expires',
    family: balancing,
    status: 'differs',
    defaultValue: '',
    note: 'seconds, written as `Max-Age` when `session-cookie-max-age` is not set (stock nginx cannot compute the `Expires` date; browsers read both alike)',
  },
  { name: 'session-cookie-max-age', family: balancing, status: 'supported', defaultValue: '', note: 'seconds' },
  { name: 'session-cookie-secure', family: balancing, status: 'supported', defaultValue: '`false` (`Secure` over HTTPS)', note: '`true`: `Secure` over plain HTTP too' },
  { name: 'session-cookie-samesite', family: balancing, status: 'supported', defaultValue: '', note: '`None`, `Lax` or `Strict`' },
  {
    name: 'session-cookie-conditional-samesite-none',
    family: balancing,
    status: 'supported',
    defaultValue: '`false`',
    note: 'no `SameSite=None` for the browsers ingress-nginx lists as rejecting it',
  },
  {
    name: 'session-cookie-change-on-failure',
    family: balancing,
    status: 'differs',
    defaultValue: '`false`',
    note: 'either way a failed attempt is retried on another endpoint (`proxy-next-upstream`) and the cookie is kept: the client returns to its endpoint once nginx stops counting it as failed (ingress-nginx retries the same endpoint with `false`, and sets a new cookie with `true`)',
  },
  {
    name: 'load-balance',
    family: balancing,
    status: 'differs',
    defaultValue: '`round_robin`',
    note: '`round_robin`, or `least_conn` (which older ingress-nginx releases had; needs `--upstreams endpoints`). `ewma` needs Lua: round-robin',
  },
  {
    name: 'upstream-hash-by',
    family: balancing,
    status: 'supported',
    defaultValue: '',
    note: '`hash … consistent` over the Service\'s endpoints (`--upstreams endpoints`): request variables (`$request_uri`, `${http_x_user}`, `$arg_id`, `$cookie_…`, `$binary_remote_addr`, ...) joined with letters, digits, `-`, `_`; any other variable is refused. Takes precedence over `load-balance`',
  },
  {
    name: 'upstream-hash-by-subset',
    family: balancing,
    status: 'ignored',
    defaultValue: '`false`',
    note: 'spreading a key over a subset of endpoints needs Lua: each key goes to one endpoint by `upstream-hash-by`; to spread one key\'s load, hash by a finer key (e.g. `$request_uri$remote_addr`)',
  },
  { name: 'upstream-hash-by-subset-size', family: balancing, status: 'ignored', defaultValue: '`3`', note: 'see `upstream-hash-by-subset`' },
  // ------------------------------------------------------------------ logging, tracing, WAF
  {
    name: 'enable-access-log',
    family: observability,
    status: 'supported',
    defaultValue: '`true`',
    note: '`false` turns the access log (`--access-log`) off in the Ingress\'s locations; the cluster mode\'s request metrics still count their requests',
  },
  { name: 'enable-rewrite-log', family: observability, status: 'supported', defaultValue: '`false`', note: '`rewrite_log on` in the Ingress\'s locations (notice level, in the error log)' },
  { name: 'enable-opentelemetry', family: observability, status: 'ignored', defaultValue: '`false`', note: 'needs the OpenTelemetry module, which stock nginx does not have. Trace in the application: every request reaches it with `X-Request-ID` (ConfigMap `generate-request-id`) to correlate with the access log' },
  { name: 'opentelemetry-trust-incoming-span', family: observability, status: 'ignored', defaultValue: '', note: 'see `enable-opentelemetry`' },
  { name: 'opentelemetry-operation-name', family: observability, status: 'ignored', defaultValue: '', note: 'see `enable-opentelemetry`' },
  { name: 'enable-opentracing', family: observability, status: 'ignored', defaultValue: '', note: 'removed from ingress-nginx; see `enable-opentelemetry`' },
  { name: 'opentracing-trust-incoming-span', family: observability, status: 'ignored', defaultValue: '', note: 'see `enable-opentracing`' },
  {
    name: 'enable-modsecurity',
    family: observability,
    status: 'refused',
    defaultValue: '`false`',
    note: 'refused: stock nginx has no ModSecurity module, and serving without the WAF the Ingress asks for would expose the backend. Put a WAF in front, or remove the annotation knowingly',
  },
  { name: 'enable-owasp-core-rules', family: observability, status: 'refused', defaultValue: '`false`', note: 'refused, as `enable-modsecurity`' },
  { name: 'modsecurity-transaction-id', family: observability, status: 'ignored', defaultValue: '', note: 'see `enable-modsecurity`' },
  { name: 'modsecurity-snippet', family: snippets, status: 'refused', defaultValue: '', note: snippetNote },
  { name: 'influxdb-measurement', family: observability, status: 'ignored', defaultValue: '', note: 'removed from ingress-nginx (needed Lua); the sidecar\'s `/metrics` has the request series under ingress-nginx\'s Prometheus names' },
  { name: 'influxdb-port', family: observability, status: 'ignored', defaultValue: '', note: 'see `influxdb-measurement`' },
  { name: 'influxdb-host', family: observability, status: 'ignored', defaultValue: '', note: 'see `influxdb-measurement`' },
  { name: 'influxdb-server-name', family: observability, status: 'ignored', defaultValue: '', note: 'see `influxdb-measurement`' },
  { name: 'enable-influxdb', family: observability, status: 'ignored', defaultValue: '', note: 'see `influxdb-measurement`' },
  // ------------------------------------------------------------------ snippets
  { name: 'configuration-snippet', family: snippets, status: 'refused', defaultValue: '', note: placedSnippetNote("in each location of the Ingress") },
  { name: 'server-snippet', family: snippets, status: 'refused', defaultValue: '', note: placedSnippetNote("in the host's server (the oldest Ingress's, one per host)") },
  { name: 'stream-snippet', family: snippets, status: 'refused', defaultValue: '', note: placedSnippetNote('in the `stream` block') },
  { name: 'auth-snippet', family: snippets, status: 'refused', defaultValue: '', note: placedSnippetNote("in the location of the Ingress's `auth-url` subrequest") },
  ...directiveSlices.map(({ name, family, defaultValue, note }): AnnotationEntry => ({
    name,
    family,
    status: 'supported',
    defaultValue: `ConfigMap \`${name}\` (${defaultValue})`,
    note,
  })),
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
    note: 'external auth for every Ingress without its own `auth-url` (and without `enable-global-auth: "false"`), as `auth-url` but for the operator: another namespace\'s Service needs no ReferenceGrant. A target nginx cannot reach leaves the Ingresses it guards out',
  },
  { key: 'global-auth-method', status: 'supported', defaultValue: '', note: 'as `auth-method`' },
  { key: 'global-auth-signin', status: 'differs', defaultValue: '', note: 'as `auth-signin` (the original URL is not URL-encoded)' },
  { key: 'global-auth-signin-redirect-param', status: 'supported', defaultValue: '`rd`', note: 'as `auth-signin-redirect-param`' },
  { key: 'global-auth-response-headers', status: 'supported', defaultValue: '', note: 'as `auth-response-headers`' },
  { key: 'global-auth-request-redirect', status: 'supported', defaultValue: '', note: 'as `auth-request-redirect`' },
  { key: 'global-auth-cache-key', status: 'differs', defaultValue: '', note: 'as `auth-cache-key`: answers are kept per Ingress' },
  { key: 'global-auth-cache-duration', status: 'supported', defaultValue: '`200 202 401 5m`', note: 'as `auth-cache-duration`' },
  { key: 'global-auth-always-set-cookie', status: 'supported', defaultValue: '`false`', note: 'as `auth-always-set-cookie`' },
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
    note: 'allows the snippet annotations (and this ConfigMap\'s `main-snippet`, `http-snippet`, `stream-snippet`, `server-snippet`, `location-snippet`); ours: `--snippet-namespace` and `--snippet-namespace-selector` limit the annotations to chosen namespaces (see "Allowing snippets")',
  },
  {
    key: 'annotations-risk-level',
    status: 'differs',
    defaultValue: '`Critical`',
    note: 'read for snippets only: below `Critical` the snippet annotations stay refused. ingress-nginx 1.12+ defaults to `High`; ours is `Critical`, so that `allow-snippet-annotations` alone allows them, as before 1.12',
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

const byName = new Map(annotationCatalog.map((entry) => [entry.name, entry]));

/** The catalog entry for an annotation name (without the prefix). */
export function catalogEntry(name: string): AnnotationEntry | undefined {
  return byName.get(name);
}
