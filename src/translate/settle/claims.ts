/**
 * The claim vocabulary every front end speaks: claims on names (a host for passthrough or TLS, a host
 * and path for a location, a path to split for a canary), each with what it references and what settling
 * needs of the resource's settings, so that settle never reads an annotation. The Ingress front end makes
 * them from an Ingress, the Gateway API front end from an HTTPRoute's rules. Types only.
 */
import type { FieldPath } from '../../model/diagnostics.js';
import type { HttpExtensions, Location, LocationBehaviour, PlainHttpAction, Proxy } from '../../model/nginx.js';
import type { SourceObject } from '../../sources/snapshot.js';
import type { ResolvedBackend } from '../backends.js';
import type { ObjectRef } from '../secrets/secret-files.js';

export interface Claim {
  readonly ingress: SourceObject;
  readonly field: FieldPath;
}

export interface PassthroughClaim extends Claim {
  readonly host: string;
  /** Absent when the backend cannot be used: the host's connections are closed. */
  readonly backend?: ResolvedBackend;
  /** Plain HTTP to the host is redirected to HTTPS (`force-ssl-redirect`, or `ssl-redirect` with spec.tls for the host). */
  readonly redirectsPlainHttp?: boolean;
}

/**
 * `server-alias` and `from-to-www-redirect` ask for host names the Ingress does not list in its rules.
 * Such a claim is weak: it is dropped wherever any other resource claims the name, whatever its age.
 */
export type WeakClaim = 'server-alias' | 'from-to-www-redirect';

export interface TlsClaim extends Claim {
  readonly host: string;
  /** Absent: `spec.tls` without `secretName`, served with the default certificate. */
  readonly secret?: ObjectRef;
  readonly weak?: WeakClaim;
}

export type PathType = 'Exact' | 'Prefix' | 'ImplementationSpecific';

export interface RouteClaim extends Claim {
  /** Empty for rules without a host (the default server). */
  readonly host: string;
  /** `~*`: a regex path of a `use-regex` (or `rewrite-target`) Ingress; `path` is the regex. */
  readonly modifier: '=' | '' | '~*';
  readonly path: string;
  /** From `spec.defaultBackend`: used only where no explicit path claims the location. */
  readonly fallback: boolean;
  /** From `pathType: Exact`, which beats the exact half of a Prefix path. */
  readonly exact: boolean;
  /** Position within the Ingress, to order claims of one Ingress. */
  readonly ordinal: number;
  /** The Ingress path these locations come from, as written (`/` for defaultBackend). */
  readonly ingressPath: string;
  readonly pathType: PathType | 'defaultBackend';
  readonly comment: string;
  readonly proxy?: Proxy;
  /** Without `proxy`: the status the location answers; 503 unless said (an HTTPRoute's unusable backends: 500; no match: 404). */
  readonly unavailableStatus?: 404 | 500 | 503;
  /** The resolved backend of `proxy`, which a canary splits against. */
  readonly backend?: ResolvedBackend;
  /** The backend's TLS name was chosen for it (verify on, no `proxy-ssl-name`): a canary gets its own. */
  readonly implicitSslName: boolean;
  readonly sslRedirect?: boolean;
  readonly forceSslRedirect: boolean;
  /** How the redirect to HTTPS writes the URI (`preserve-trailing-slash`, `use-port-in-redirects`); absent: as requested. */
  readonly redirectUri?: Pick<PlainHttpAction, 'trimTrailingSlash' | 'namePort'>;
  readonly behaviour?: LocationBehaviour;
  /** Locations the behaviour needs on the same host (auth endpoints, error pages). */
  readonly companions: readonly Location[];
  /** What the host's TLS server must ask of clients for this location's `auth-tls-*`. */
  readonly clientCertificate?: ClientCertificateRequest;
  /** http-level groups (zones, maps) the location refers to. */
  readonly references: readonly string[];
  readonly weak?: WeakClaim;
  /** An HTTPRoute match beyond the path (headers, query, method, a regex path): the claim serves only requests that meet it. */
  readonly requestMatch?: RequestMatch;
  /** http-level blocks the location's values name (an HTTPRoute filter's maps): defined when the claim is settled. */
  readonly definitions?: readonly ExtensionDefinition[];
  /** The Ingress's `ssl-ciphers` / `ssl-prefer-server-ciphers`: server-level, settled per host (server-tls.ts). */
  readonly serverTls?: ServerTlsAsk;
  /** A location that hands each request to the named location of the claim whose match it meets (request-dispatch.ts). */
  readonly dispatch?: { readonly variable: string; readonly references: readonly string[] };
}

/** What an Ingress asks of its hosts' server TLS, and the annotation that asks it. */
export interface ServerTlsAsk {
  readonly ciphers?: string;
  readonly preferServerCiphers?: boolean;
  readonly field: FieldPath;
}

/**
 * Conditions on a request besides its path, each an nginx variable tested by a regex (built from checked
 * values only), with the counts the Gateway API's precedence compares.
 */
export interface RequestMatch {
  /** The same conditions give the same key: claims on one location with the same key compete. */
  readonly key: string;
  readonly conditions: readonly RequestCondition[];
  /** A RegularExpression path: the claim stands on `/` and tests `$uri`. */
  readonly pathRegex?: string;
  readonly method: boolean;
  readonly headers: number;
  readonly queryParams: number;
}

export interface ExtensionDefinition {
  readonly reference: string;
  readonly blocks: Partial<HttpExtensions>;
}

export interface RequestCondition {
  /** The variable tested: `$http_<name>`, `$args`, `$request_method` or `$uri`. */
  readonly source: string;
  /** A regex over the variable, of safe characters only (no quote, no `\\` but escapes). */
  readonly regex: string;
}

export interface IngressContribution {
  readonly passthrough: readonly PassthroughClaim[];
  readonly tls: readonly TlsClaim[];
  readonly routes: readonly RouteClaim[];
  readonly canaries: readonly CanaryClaim[];
}

/** The server-level half of `auth-tls-*` that an Ingress asks of each of its hosts. */
export interface ClientCertificateRequest {
  readonly caFile: string;
  readonly crlFile?: string;
  readonly depth: number;
  readonly secret: string;
}

export interface CanaryPolicy {
  readonly weight: number;
  readonly weightTotal: number;
  readonly header?: string;
  readonly headerValue?: string;
  readonly headerPattern?: string;
  readonly cookie?: string;
  /** `affinity-canary-behavior`: with the main's cookie affinity, `sticky` splits by the affinity cookie. */
  readonly affinity: 'sticky' | 'legacy';
}

export interface CanaryClaim {
  readonly ingress: SourceObject;
  readonly field: FieldPath;
  /** Empty for rules without a host. */
  readonly host: string;
  readonly ingressPath: string;
  readonly pathType: PathType;
  /** The canary's Service, before the main location's TLS settings are applied to it. */
  readonly backend: ResolvedBackend;
  readonly policy: CanaryPolicy;
}

export type ProxyProtocolVersion = 'v1' | 'v2';

/** An Ingress's ask for a PROXY protocol header to its passthrough backends, and where it asks. */
export interface ProxyProtocolRequest {
  readonly version: ProxyProtocolVersion;
  readonly field: FieldPath;
}
