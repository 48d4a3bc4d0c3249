/**
 * The http block of the nginx view-model (model/nginx.ts, the module to import it from): its settings and
 * maps, the servers, and the locations with what they proxy to.
 */

import type { ResourceRef } from './diagnostics.js';
import type { TlsFiles } from './files.js';
import type { EndpointResolution, UpstreamServer } from './nginx-shared.js';
import type { LocationOrigin, ServicePortRef, VirtualHostOrigin } from './provenance.js';

export interface TlsListener {
  /** `443` or `unix:/abs/path.sock`. */
  readonly address: string;
  /** A PROXY header comes first: from the SNI front, or from an outer load balancer. */
  readonly proxyProtocol: boolean;
}

export interface HttpConfig {
  /** The controller ConfigMap's `http-snippet`, when the operator allows snippets: raw text. */
  readonly snippet?: string;
  /** Its `server-snippet` (every server) and `location-snippet` (every proxying location): raw text. */
  readonly serverSnippet?: string;
  readonly locationSnippet?: string;
  /** `resolver` addresses (`--resolver`), for backends that nginx resolves per request. */
  readonly resolvers: readonly string[];
  /**
   * Instead of `resolvers`: the sidecar's resolver, which also relays other names to them, and the
   * loopback server it sends upstreams to while their Service has no endpoint (it answers 503).
   */
  readonly endpointResolution?: EndpointResolution & { readonly noEndpointsListen: string };
  readonly httpPort: number;
  readonly httpsPort: number;
  /**
   * Where the TLS servers listen: the unix socket the SNI front hands connections to, or the HTTPS port
   * itself when no name on it goes anywhere but the http servers (no front, no hop), then with the
   * PROXY/unix hand-off the unix socket as well (see `httpsListener` in translate).
   */
  readonly httpsListeners: readonly TlsListener[];
  /** Who may send the PROXY headers those listeners read (`set_real_ip_from`); empty when none does. */
  readonly httpsRealIpFrom: readonly string[];
  /** `http2 on;` in the TLS servers (nginx >= 1.25.1) instead of the older `listen … http2`. */
  readonly http2Directive: boolean;
  /**
   * `http2 on;` in the plain HTTP servers (nginx >= 1.25.1 tells HTTP/2 with prior knowledge from
   * HTTP/1.x by its preface; the default server decides for the port, the named one answers 421 without
   * it): a GRPCRoute is served through an HTTP listener.
   */
  readonly cleartextHttp2: boolean;
  readonly serverNamesHashBucketSize: number;
  readonly serverNamesHashMaxSize: number;
  readonly mapHashBucketSize: number;
  readonly mapHashMaxSize: number;
  readonly sslProtocols: string;
  readonly sslCiphers: string;
  /** Full Strict-Transport-Security header value, when HSTS is on. */
  readonly hstsHeader?: string;
  readonly forwardedHeaders: ForwardedHeaders;
  /** `use-proxy-protocol`: the plain HTTP port also expects a PROXY header from an outer load balancer. */
  readonly acceptProxyProtocol: boolean;
  /** Addresses trusted to send that header (`proxy-real-ip-cidr`). */
  readonly proxyProtocolTrusted: readonly string[];
  readonly upstreams: readonly HttpUpstream[];
  /** `:<port>` by `$scheme` (empty for 80 and 443), when an HTTPRoute redirect keeps the listener's port. */
  readonly listenerPorts?: { readonly variable: string; readonly http: string; readonly https: string };
  /** Unix socket of a server that answers 500, when an upstream weighs the unusable share of an HTTPRoute's backends onto it. */
  readonly errorSocket?: string;
  /** The same for a GRPCRoute's backends: a server that answers 503 over HTTP/2 (gRPC's UNAVAILABLE). */
  readonly grpcErrorSocket?: string;
  /** `https://$host…` prefix of 308 redirects (carries the port when it is not 443). */
  readonly redirectBase: string;
  /** `https://$host:<port>`, for redirects that name the port even when it is 443 (`use-port-in-redirects`). */
  readonly redirectBaseWithPort: string;
  /** The request URI without one trailing `/`, when a redirect drops it (`PlainHttpAction.trimTrailingSlash`). */
  readonly trimmedRequestUri?: { readonly variable: string };
  readonly defaultServer: DefaultServer;
  /**
   * The controller ConfigMap's `custom-http-errors`, answered by `--default-backend-service`: in every
   * server, `proxy_intercept_errors on`, an `error_page` per code and the named locations they go to. A
   * location with `error_page`s of its own (an Ingress's `custom-http-errors`) replaces them all in nginx.
   */
  readonly controllerErrorPages?: ControllerErrorPages;
  /** Sorted by server name. */
  readonly virtualHosts: readonly VirtualHost[];
  /** One plain-HTTP server for every host whose plain HTTP only redirects (ACME challenges aside). */
  readonly redirectServer?: RedirectServer;
  /** Host names whose plain HTTP answers only 404 (passthrough hosts, mostly): one server for all. */
  readonly notFoundServerNames: readonly string[];
  /**
   * Gateway listeners on ports other than the Ingress ports, each port with servers of its own (so the
   * routes of one host name on two ports never merge); sorted by port. Absent when there are none.
   */
  readonly ownPorts?: readonly OwnPortServers[];
  /** Certificates chosen per handshake by the default server (many TLS servers), instead of one SSL context each. */
  readonly certificateMap?: CertificateMap;
  /** Status of the redirects to HTTPS (ConfigMap `http-redirect-code`). */
  readonly redirectCode: RedirectCode;
  /** What every location gets unless its Ingress says otherwise (ConfigMap keys, ingress-nginx's defaults). */
  readonly proxyDefaults: ProxyDefaults;
  /** Headers every proxied request carries, as ingress-nginx sends them. */
  readonly requestHeaders: RequestHeaders;
  /**
   * ConfigMap `add-headers`: `add_header … always` on every response. A server or location with an
   * `add_header` of its own repeats them (nginx inherits `add_header` all or nothing).
   */
  readonly responseHeaders: readonly Header[];
  /** `proxy_hide_header` (and `grpc_hide_header`): ConfigMap `hide-headers`, and the names `add-headers` replaces. */
  readonly hiddenHeaders: readonly string[];
  /** ConfigMap `keep-alive`: `keepalive_timeout` for clients, in seconds (0: no keep-alive). */
  readonly keepaliveTimeout: number;
  /** ConfigMap `use-gzip` and its companions, as ingress-nginx renders them; absent when gzip is off. */
  readonly gzip?: Gzip;
  /** ConfigMap keys without annotations that set a directive in every upstream block that keeps connections (directive-slices.ts). */
  readonly upstreamDirectives: readonly Directive[];
  /** A gRPC location inherits them (`inheritsRequestHeaders`), so the http block sets them for gRPC too. */
  readonly grpcInheritsRequestHeaders: boolean;
  /** http-level blocks that locations refer to by variable or zone name: canaries, CORS, rate limits. */
  readonly extensions: HttpExtensions;
  /** Set by translate/dataplane/request-log.ts when the config logs requests (the access log, the request metrics' lines). */
  readonly logging?: RequestLogging;
  /** Sized for the variables those blocks define, so that nginx builds its variables hash without a warning. */
  readonly variablesHashMaxSize: number;
  readonly variablesHashBucketSize: number;
}

export interface RequestLogging {
  /** The access log's `access_log` target, when it is on. */
  readonly accessLogFile?: string;
  /** The canary upstreams, each with ingress-nginx's name for it, which `$proxy_alternative_upstream_name` holds for a request the canary served. */
  readonly alternativeUpstreams: readonly { readonly upstream: string; readonly name: string }[];
}

/** `ssl_certificate $variable` in the default server: SNI → key file (certificate chain and key). */
export interface CertificateMap {
  readonly variable: string;
  /** Sorted by host name. */
  readonly entries: readonly { readonly mapKey: string; readonly file: string }[];
  /** Relative path of the default certificate, for no SNI or an unknown one. */
  readonly defaultFile: string;
}

/**
 * Hosts whose every plain-HTTP request gets a 308 to HTTPS, except ACME HTTP-01 challenges, which go to
 * the host's own plain-HTTP upstream: one server for all of them instead of one each.
 */
export interface RedirectServer {
  /** Sorted; exact names and `*.suffix`. */
  readonly serverNames: readonly string[];
  /** `$…` variable name (without `$`) that maps the request's host to its ACME challenge upstream. */
  readonly acmeVariable: string;
  readonly acmeUpstreams: readonly AcmeUpstream[];
  /** A 308 for `/`, the challenge prefix proxied to `$acmeVariable`. */
  readonly locations: readonly Location[];
}

export interface AcmeUpstream {
  /** Server name as a `map` key (a leading `\\` for map's own parameter names). */
  readonly mapKey: string;
  readonly upstream: string;
}

export type RedirectCode = 301 | 302 | 307 | 308;

/** Rendered once in the http block; a location that differs carries its own `ProxyTuning`. */
export interface ProxyDefaults {
  readonly clientMaxBodySize: string;
  readonly clientBodyBufferSize: string;
  readonly connectTimeout: number;
  readonly readTimeout: number;
  readonly sendTimeout: number;
  readonly buffering: boolean;
  readonly bufferSize: string;
  readonly buffersNumber: number;
  /** `proxy_busy_buffers_size`, when nginx's default (two buffers) would not fit `buffersNumber`. */
  readonly busyBuffersSize?: string;
  readonly requestBuffering: boolean;
  readonly nextUpstream: string;
  readonly nextUpstreamTries: number;
  readonly nextUpstreamTimeout: number;
  readonly limitReqStatus: number;
  readonly limitConnStatus: number;
  /** The directive slices' ConfigMap keys that are set; the rest keep nginx's defaults. */
  readonly directives: readonly Directive[];
}

export interface RequestHeaders {
  /** X-Request-ID: the client's, else `$request_id` (ConfigMap `generate-request-id`); off: only the client's. */
  readonly generateRequestId: boolean;
  /**
   * X-Forwarded-For: the chain a trusted proxy sent plus the peer (ConfigMap
   * `compute-full-forwarded-for` with `use-forwarded-headers`), else the client address alone.
   */
  readonly fullForwardedFor: boolean;
  /**
   * `use-proxy-protocol` and `use-forwarded-headers` together: over plain HTTP the client address comes
   * from the last X-Forwarded-For entry when the PROXY header's source is trusted, else from the PROXY
   * header; `$i2n_client_addr` holds it, and address checks and limits use it.
   */
  readonly clientFromForwardedChain: boolean;
  /** ConfigMap `proxy-set-headers`, after ours. */
  readonly custom: readonly Header[];
}

export interface Gzip {
  readonly level: number;
  readonly minLength: number;
  /** Space-separated MIME types, or `*`. */
  readonly types: string;
  /** `gzip_disable` (quoted in the config): `msie6` or a safe regex over the User-Agent. */
  readonly disable?: string;
}

/** A header name (an allow-listed token) and its value as nginx reads it (a quoted string, variables as allowed). */
export interface Header {
  readonly name: string;
  readonly value: string;
}

/** http-level blocks, each already in nginx's terms; every key and value passed an allow-list. */
export interface HttpExtensions {
  readonly geos: readonly GeoBlock[];
  readonly maps: readonly MapBlock[];
  readonly splits: readonly SplitBlock[];
  readonly limitZones: readonly LimitZone[];
  /** `proxy_cache_path` zones under the run dir (`auth-cache-key`). */
  readonly cacheZones: readonly CacheZone[];
}

/** `proxy_cache_path <runDir>/<name> … keys_zone=<name>:10m`, sized as ingress-nginx sizes its auth cache. */
export interface CacheZone {
  readonly comment: string;
  readonly name: string;
}

/** `geo $source $variable { default …; network value; … }` */
export interface GeoBlock {
  readonly comment: string;
  /** Address variable to look up, e.g. `$remote_addr`; `geo` reads it as an address. */
  readonly source: string;
  readonly variable: string;
  readonly defaultValue: string;
  readonly entries: readonly { readonly network: string; readonly value: string }[];
}

/** `map source $variable { key value; … default value; }`; keys in nginx syntax (quoted regexes). */
export interface MapBlock {
  readonly comment: string;
  /** A variable, or a quoted string of variables (`"$request_method:$http_origin"`). */
  readonly source: string;
  readonly variable: string;
  readonly entries: readonly { readonly key: string; readonly value: string }[];
  readonly defaultValue: string;
  /** Keys are host names, `*.` wildcards among them (`hostnames`). */
  readonly hostnames?: boolean;
}

/** `split_clients "<source>" $variable { share% value; * rest; }`. */
export interface SplitBlock {
  readonly comment: string;
  /** What is hashed into the split: `${request_id}` (a random choice per request), or the affinity key. */
  readonly source: string;
  readonly variable: string;
  /** Percent with at most two decimals, e.g. `12.5`. */
  readonly share: string;
  readonly value: string;
  readonly rest: string;
}

/** `limit_req_zone` / `limit_conn_zone`. */
export interface LimitZone {
  readonly comment: string;
  readonly kind: 'req' | 'conn';
  readonly name: string;
  /** Key variable; an empty value is not limited. */
  readonly key: string;
  /** `r/s` or `r/m` for `req`. */
  readonly rate?: string;
}

export interface ForwardedHeaders {
  readonly enabled: boolean;
  /** Trust X-Forwarded-* from these CIDRs (`use-forwarded-headers` + `proxy-real-ip-cidr`). */
  readonly trustedCidrs: readonly string[];
  /** `0.0.0.0/0` or `::/0` was given: every address is trusted (the `geo` default). */
  readonly trustAllAddresses: boolean;
  /** `trustedCidrs` without the catch-alls, which `geo` would report as duplicates of its default. */
  readonly trustedNetworks: readonly string[];
  /**
   * The address of the proxy that sent the forwarded headers, which must be trusted and which
   * `compute-full-forwarded-for` appends: the peer (`$realip_remote_addr`), or, behind PROXY protocol,
   * the PROXY header's source (`$remote_addr` once realip has read it), as ingress-nginx does.
   */
  readonly trustSource: string;
}

export interface HttpUpstream {
  readonly name: string;
  /** `hash "<key>" consistent`: the key is allow-listed nginx variable text (affinity, `upstream-hash-by`). */
  readonly hashKey?: string;
  /** `least_conn` (`load-balance`). */
  readonly leastConn?: boolean;
  readonly servers: readonly UpstreamServer[];
  /** A server resolves at run time: the block is in the shared zone of `endpointResolution`. */
  readonly resolves?: true;
  /** Idle connections kept per worker; 0 leaves `keepalive` out (nginx rejects `keepalive 0`). */
  readonly keepalive: number;
  /** Instead of the ConfigMap's `upstream-keepalive-*` (`http.upstreamDirectives`): `auth-keepalive-*`. */
  readonly keepaliveDirectives?: readonly { readonly name: string; readonly value: string }[];
  readonly comment: string;
}

export interface ControllerErrorPages {
  readonly pages: readonly { readonly code: number; readonly target: string }[];
  /** The named locations (`errorPage`) the pages go to. */
  readonly locations: readonly Location[];
  /**
   * Variables (without `$`) the named locations send as headers, which Ingress locations set: each server
   * sets them empty first, so that a request no Ingress location took sends them empty.
   */
  readonly variables: readonly string[];
}

/** The servers of one port that Gateway listeners have to themselves: plain HTTP, or TLS (HTTPS, beside TLS listeners by SNI). */
export interface OwnPortServers {
  readonly port: number;
  readonly tls: boolean;
  /** TLS: where its TLS servers listen (the port, or the socket its SNI front hands connections to); empty for plain HTTP. */
  readonly httpsListeners: readonly TlsListener[];
  /** Unknown host names: 404, with the default certificate over TLS (or the handshake rejected). */
  readonly defaultServer: DefaultServer;
  /** Sorted by server name. */
  readonly virtualHosts: readonly VirtualHost[];
}

export interface DefaultServer {
  /** Default certificate, unless handshakes without a known SNI are rejected. */
  readonly tls?: TlsFiles;
  readonly rejectHandshake: boolean;
  /** Locations from host-less Ingress rules and `defaultBackend`, and a 404 for the rest. */
  readonly locations: readonly Location[];
}

/**
 * One host name. It gets a plain-HTTP server on `httpPort` and, unless its TLS is passed through, a
 * terminating server on the HTTPS socket. Both serve the same locations.
 */
export interface VirtualHost {
  readonly serverName: string;
  /** Absent when TLS for this host is passed through by SNI: no terminating server. */
  readonly tls?: TlsFiles;
  /**
   * The server names no certificate, so nginx keeps the default server's SSL context for it instead of
   * building (and loading a certificate into) one more: its certificate is the default one, or the
   * default server picks it by SNI (`http.certificateMap`).
   */
  readonly sharesDefaultTls?: boolean;
  /** Its plain HTTP is answered by `http.redirectServer` or the not-found server: no plain-HTTP server of its own. */
  readonly plainHttpShared?: boolean;
  readonly hsts: boolean;
  readonly locations: readonly Location[];
  readonly origin?: VirtualHostOrigin;
  /** An allowed `server-snippet`, raw operator-chosen text (ingress/snippets.ts). */
  readonly serverSnippet?: string;
  /** `ssl-ciphers` of the host (an OpenSSL cipher list); needs the server's own SSL context. */
  readonly sslCiphers?: string;
  /** `ssl-prefer-server-ciphers` of the host. */
  readonly sslPreferServerCiphers?: 'on' | 'off';
  /** Client certificates are asked for in the handshake; the locations that require one check it. */
  readonly clientCertificate?: ServerClientCertificate;
}

/** Server-level half of `auth-tls-*`: one CA and depth per host. */
export interface ServerClientCertificate {
  /** Relative path of the CA bundle (`ssl_client_certificate`). */
  readonly caFile: string;
  readonly crlFile?: string;
  /** `optional` verifies a certificate that is sent; `optional_no_ca` lets a location accept any. */
  readonly verify: 'optional' | 'optional_no_ca';
  readonly depth: number;
}

export interface Location {
  /**
   * `=` exact, `` prefix (or, with a `path` starting with `@`, a named location reached only through
   * `error_page`), `^~` a prefix that regex locations never take over (another namespace's path on a
   * host with `use-regex` paths), `~*` a case-insensitive regex (`path` is the regex, quoted).
   */
  readonly modifier: '=' | '' | '^~' | '~*';
  readonly path: string;
  /** Which Ingress path this came from, for the reader of the config. */
  readonly comment: string;
  /** What a request over plain HTTP gets. */
  readonly plainHttp: PlainHttpAction;
  /** An allowed `configuration-snippet`, raw operator-chosen text (ingress/snippets.ts). */
  readonly snippet?: string;
  readonly proxy?: Proxy;
  /**
   * Without `proxy`: 503 when the backend could not be resolved safely, 404 where nothing routes;
   * neither when `behaviour.redirect` answers every request.
   */
  readonly returnStatus?: 404 | 500 | 503;
  /** Only for plain HTTP (the ACME challenge location): over HTTPS the location it copies serves the same. */
  readonly plainHttpOnly?: boolean;
  /** Absent for the 404 location that only stands where no Ingress path matches. */
  readonly origin?: LocationOrigin;
  /**
   * With a log on (translate/dataplane/request-log.ts): what the location logs for each request, ingress-nginx's
   * upstream name (`namespace-service-port`) for the access log, and the key of its labels for the request
   * metrics.
   */
  readonly logLabels?: { readonly upstreamName?: string; readonly route?: string };
  /** The ingress-nginx annotations that act on this location, in the order nginx applies them. */
  readonly behaviour?: LocationBehaviour;
  /** An internal location that `auth_request` asks (`auth-url`); nothing else is set then. */
  readonly authEndpoint?: AuthEndpoint;
  /** An internal location that `mirror` sends copies of requests to (`mirror-target`); nothing else is set then. */
  readonly mirrorEndpoint?: MirrorEndpoint;
  /** A named location that answers `custom-http-errors` from the `default-backend`. */
  readonly errorPage?: ErrorPageLocation;
  /**
   * Not rendered: the location named here (`/`, `= /x`) gets its requests and handles them the same way
   * (`markShadowedLocations`).
   */
  readonly servedBy?: string;
  /**
   * HTTPRoute matches on headers, query or method: the location sends each request to the named location
   * this variable names (`error_page 418 = $variable; return 418;`), with the http-level maps it needs.
   */
  readonly dispatch?: { readonly variable: string; readonly references: readonly string[] };
  /** http-level groups the location's values name besides those its other fields show (an HTTPRoute filter's maps). */
  readonly references?: readonly string[];
}

export interface LocationBehaviour {
  /** `set` for variables that named error locations read (X-Namespace, ...), name and literal value. */
  readonly variables: readonly { readonly name: string; readonly value: string }[];
  /** `auth-tls-*`: the checks on the client certificate that the server asked for. */
  readonly clientCertificate?: ClientCertificateCheck;
  /** `app-root`: `/` is redirected (302) here. */
  readonly appRoot?: string;
  /** `use-port-in-redirects`: nginx's own redirects (a directory's slash) name the port (`port_in_redirect on`). */
  readonly portInRedirect?: true;
  /** `permanent-redirect` / `temporal-redirect`: answered instead of proxying. */
  readonly redirect?: { readonly code: number; readonly url: string };
  /** `rewrite-target`: `rewrite "<regex>" <target> break;` */
  readonly rewrite?: { readonly regex: string; readonly target: string };
  /** CORS (variables of an http-level map, or literal values for `*`). */
  readonly cors?: CorsHeaders;
  /**
   * Variables (without `$`) that a `geo` sets to 1 for a client address the location refuses with 403:
   * `denylist-source-range`, then `whitelist-source-range`.
   */
  readonly refusedWhen: readonly string[];
  readonly basicAuth?: { readonly realm: string; readonly userFile: string };
  readonly externalAuth?: ExternalAuthUse;
  /** `mirror-target`: the internal location copies go to, and whether they carry the request body. */
  readonly mirror?: { readonly endpoint: string; readonly requestBody: boolean };
  readonly rateLimits: readonly { readonly zone: string; readonly burst: number }[];
  readonly connectionLimit?: { readonly zone: string; readonly limit: number };
  /** `limit_rate` / `limit_rate_after`, in KB. */
  readonly limitRate?: number;
  readonly limitRateAfter?: number;
  readonly clientMaxBodySize?: string;
  readonly clientBodyBufferSize?: string;
  /**
   * Cookie affinity: a variable (without `$`) that holds the Set-Cookie value for a client that sent no
   * affinity cookie and is empty otherwise (nginx sends no header with an empty value), with the names of
   * the http-level maps it needs.
   */
  readonly stickyCookie?: { readonly variable: string; readonly references: readonly string[] };
  /** `custom-http-errors`: `error_page code = @name;` for each. */
  readonly errorPages: readonly { readonly code: number; readonly target: string }[];
  /**
   * The location adds response headers (CORS, auth cookies, `custom-headers`), which in nginx replaces the server's
   * `add_header`: the HSTS header is repeated here.
   */
  readonly repeatHsts: boolean;
  /**
   * When the location adds response headers: ConfigMap `add-headers` repeated (those `custom-headers`
   * does not set), then `custom-headers`; each `add_header … always`.
   */
  readonly responseHeaders?: readonly Header[];
  /** With `custom-headers`: the http block's hidden headers repeated, and the names it replaces. */
  readonly hiddenHeaders?: readonly string[];
  /** `enable-access-log: "false"`: no access log here (the request-metrics line stays). */
  readonly accessLogOff?: true;
  /** `enable-rewrite-log`: `rewrite_log on`. */
  readonly rewriteLog?: true;
}

export interface ClientCertificateCheck {
  /** `on` and `optional`: a certificate that was sent must verify (495 otherwise). */
  readonly rejectUnverified: boolean;
  /** `on`: a certificate is required (496 otherwise). */
  readonly requireCertificate: boolean;
  /** Regex over `$ssl_client_s_dn` (quoted in the config). */
  readonly matchCn?: string;
  /** `error_page 495 496` target. */
  readonly errorPage?: string;
}

export interface CorsHeaders {
  /** Value for Access-Control-Allow-Origin: `*`, or a variable that is empty for other origins. */
  readonly origin: string;
  /** Variables (or literal quoted values) of the other headers; empty when the origin is not allowed. */
  readonly methods: string;
  readonly headers: string;
  readonly credentials?: string;
  readonly exposeHeaders?: string;
  readonly maxAge: string;
  /** Variable that is not empty for a preflight request of an allowed origin: answered 204. */
  readonly preflight: string;
}

export interface ExternalAuthUse {
  /** Path of the internal location to ask. */
  readonly endpoint: string;
  /** Where a 401 is redirected (`auth-signin`), variables and all. */
  readonly signin?: string;
  /** `auth-always-set-cookie`: the auth service's `Set-Cookie` goes with every response, errors too. */
  readonly alwaysSetCookie: boolean;
  /** `auth_request_set $variable $upstream_http_…` then a request header to the backend. */
  readonly responseHeaders: readonly { readonly header: string; readonly variable: string; readonly upstreamVariable: string }[];
}

/** A URL a tenant named that nginx sends requests to from an internal location (auth-url, mirror-target). */
export interface ProxiedTarget {
  /** `proxy_pass` argument: a URL to an upstream block, or a variable set by `resolve`. */
  readonly pass: string;
  /** The URL, for a name nginx resolves per request: set into the variable `pass` names. */
  readonly resolve?: string;
  /** `Host` of the request: the URL's authority, or `$host`. */
  readonly host: string;
  /** HTTPS to the target: its name for SNI. */
  readonly sslServerName?: string;
  /** The upstream block `pass` names, when the target is a Service in the input. */
  readonly upstream?: string;
}

export interface MirrorEndpoint extends ProxiedTarget {
  /**
   * The copy carries the request body (`mirror_request_body`). Without it, the copy must not announce
   * the body either: a `Content-Length` with no body would leave the target waiting, and nginx with it.
   */
  readonly requestBody: boolean;
  /** A GRPCRoute's mirror: the copy goes by `grpc_pass` (HTTP/2), `pass` a `grpc://` upstream. */
  readonly grpc?: boolean;
}

export interface AuthEndpoint extends ProxiedTarget {
  readonly method?: string;
  /** `X-Auth-Request-Redirect` (`auth-request-redirect`, quoted); the request URI when absent. */
  readonly requestRedirect?: string;
  /** `auth-cache-key`: answers kept in `zone` under `key` (quoted), for the `proxy_cache_valid` entries. */
  readonly cache?: { readonly zone: string; readonly key: string; readonly valid: readonly string[] };
  /**
   * A variable (without `$`) that is empty unless the request's host is one the server serves: the
   * auth target is `$host`, and the client must not choose it (403 otherwise).
   */
  readonly servedHost?: string;
  /** An allowed `auth-snippet` of the Ingress, raw operator-chosen text (ingress/snippets.ts). */
  readonly snippet?: string;
  /** An https endpoint: its certificate is verified against this CA bundle (`proxy_ssl_verify on`). */
  readonly trustedCertificate?: string;
}

export interface ErrorPageLocation {
  readonly code: number;
  /** To the `default-backend`; without one nginx answers the code with its own page. */
  readonly proxy?: {
    /** `proxy_pass` argument, e.g. `http://ns_errors_80` or `http://$i2n_backend`. */
    readonly pass: string;
    /** `name:port` for `$i2n_backend`, resolved per request. */
    readonly resolve?: string;
    readonly upstream: string;
  };
}

/**
 * `redirect` alone: a 308 to HTTPS (`ssl-redirect`, `force-ssl-redirect`). `serve` alone: proxied.
 * Both: a 308 unless a trusted load balancer says the client used HTTPS (`use-forwarded-headers`),
 * and proxied then.
 */
export interface PlainHttpAction {
  readonly redirect: boolean;
  readonly serve: boolean;
  /** The redirect drops one trailing `/` of the request URI (ingress-nginx, unless `preserve-trailing-slash`). */
  readonly trimTrailingSlash?: true;
  /** The redirect names the HTTPS port even when it is 443 (`use-port-in-redirects`). */
  readonly namePort?: true;
}

export type BackendProtocol = 'http' | 'https' | 'grpc' | 'grpcs' | 'auto' | 'fcgi';

export interface Proxy {
  readonly upstream: string;
  /** gRPC backends use the grpc module (`grpc_pass`, `grpc_ssl_*`), the rest the proxy module. */
  readonly grpc: boolean;
  /** Directive prefix: `proxy`, `grpc` or `fastcgi` (`backend-protocol: FCGI`; then `fastcgi` is set). */
  readonly module: 'proxy' | 'grpc' | 'fastcgi';
  /** FastCGI: `fastcgi-index` and the parameters (nginx's standard ones and `fastcgi-params-configmap`'s, quoted). */
  readonly fastcgi?: { readonly index?: string; readonly params: readonly { readonly name: string; readonly value: string }[] };
  /** Argument of `proxy_pass`/`grpc_pass`, e.g. `https://default_web_443` or `$scheme://default_web_80`. */
  readonly pass: string;
  /**
   * `name:port` for `$i2n_backend`, which `pass` then names: nginx resolves it per request with the
   * configured `resolver` instead of at load time. No upstream block is rendered for it.
   */
  readonly resolve?: string;
  readonly ssl?: ProxySsl;
  /** The Service port behind `upstream`. */
  readonly service?: ServicePortRef;
  /** `http`, `https`, `grpc`, `grpcs` or `$scheme`: what `pass` starts with. */
  readonly scheme: string;
  /** `Host` sent to the backend: the client's (`$i2n_best_host`) or `upstream-vhost`. */
  readonly host: string;
  /** `proxy_http_version` (not for gRPC). */
  readonly httpVersion: '1.0' | '1.1';
  /** More request headers: `x-forwarded-prefix`, client certificate details, auth response headers. */
  readonly headers: readonly { readonly name: string; readonly value: string }[];
  /**
   * The location sends exactly the http block's request headers (no `upstream-vhost`, no `headers`), so it
   * sets none: nginx then inherits the http block's `proxy_set_header`s (`grpc_set_header`s for gRPC),
   * compiled once per server instead of once per location. At 10,000 Ingresses that is a config half the
   * size and 300 MB less nginx memory (a location with a set of its own costs about 17 KB more). A location
   * that sets any header sets them all, since nginx inherits all or none.
   */
  readonly inheritsRequestHeaders: boolean;
  /** `Connection` to an HTTP backend (`connection-proxy-header`); absent: `upgrade` for WebSocket requests, else empty (keepalive). */
  readonly connectionHeader?: 'close' | 'keep-alive';
  /** Annotations that differ from the http-level defaults. */
  readonly tuning?: ProxyTuning;
  /**
   * `canary-*`: the canary's upstream (the main one is `upstream`); `pass` names the variable of the
   * http-level split (`reference`, absent when the weight alone decides the same for every request).
   */
  readonly canary?: { readonly upstream: string; readonly comment: string; readonly reference?: string };
  /** `custom-http-errors` (unless `disable-proxy-intercept-errors`): the backend's errors go to `error_page`. */
  readonly interceptErrors: boolean;
}

/** Per-location proxy settings in nginx's words (`5s`, `on`); absent fields keep the http-level defaults. */
export interface ProxyTuning {
  readonly connectTimeout?: string;
  readonly readTimeout?: string;
  readonly sendTimeout?: string;
  /** `on` or `off`. */
  readonly buffering?: string;
  /** Both rendered when either annotation is set, from the annotation or the default. */
  readonly buffers?: { readonly size: string; readonly number: number; readonly busySize?: string };
  readonly requestBuffering?: string;
  readonly nextUpstream?: string;
  readonly nextUpstreamTries?: string;
  readonly nextUpstreamTimeout?: string;
  /** `proxy_redirect`: `off`, `default`, or `from to`. */
  readonly redirect?: string;
  /** The directive slices' annotations that are set (translate/ingress/annotations/directive-slices.ts). */
  readonly directives?: readonly Directive[];
}

/** A directive and its argument, both allow-listed: the value of a directive slice. */
export interface Directive {
  readonly name: string;
  readonly value: string;
}

export interface ProxySsl {
  readonly verify: boolean;
  readonly verifyDepth: number;
  /** Relative path of the CA bundle. */
  readonly trustedCertificate?: string;
  /** Name to verify and to send as SNI. */
  readonly name?: string;
  readonly serverName: boolean;
  readonly protocols: string;
  readonly ciphers: string;
  /** Client certificate presented to the backend. */
  readonly clientCertificate?: TlsFiles;
  /** The Secret the CA and client certificate come from (`proxy-ssl-secret`). */
  readonly secret?: ResourceRef;
}
