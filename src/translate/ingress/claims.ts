/**
 * What the Ingress front end makes of one Ingress: claims on names (a host for passthrough or TLS, a
 * host and path for a location, a path to split for a canary), each with what it references, settled
 * against every other resource's claims in hosts.ts. Types only, so that the front end's files import
 * them without importing each other.
 */
import type { FieldPath } from '../../model/diagnostics.js';
import type { HttpExtensions, Location, LocationBehaviour, PlainHttpAction, Proxy, ProxyTuning } from '../../model/nginx.js';
import type { SourceObject } from '../../sources/snapshot.js';
import type { BackendPolicy, ResolvedBackend } from '../backends.js';
import type { ReferenceGrants } from '../gateway/reference-grants.js';
import type { Reporter } from '../report.js';
import type { Resources } from '../resources.js';
import type { ObjectRef, SecretFiles } from '../secrets/secret-files.js';
import type { HeaderDefaults } from './header-configmaps.js';
import type { ControllerSettings } from './configmap.js';
import type { HttpExtensionRegistry } from './extensions.js';
import type { SnippetRegistry, SnippetScope } from './snippets.js';

export interface IngressContext {
  readonly resources: Resources;
  readonly secrets: SecretFiles;
  readonly report: Reporter;
  readonly backendPolicy: BackendPolicy;
  readonly allowCrossNamespaceSecrets: boolean;
  /** `auth-url` may name another namespace's Service without a ReferenceGrant. */
  readonly allowCrossNamespaceAuthUrl: boolean;
  /** Every backend resolved so far, by upstream name. */
  readonly backends: Map<string, ResolvedBackend>;
  /** The controller ConfigMap: defaults for the annotations. */
  readonly settings: ControllerSettings;
  /** The header ConfigMaps the controller ConfigMap names, and which names `custom-headers` may set. */
  readonly headers: HeaderDefaults;
  /** http-level blocks the locations refer to. */
  readonly extensions: HttpExtensionRegistry;
  /** The client address as access checks see it: `$remote_addr`, or `$i2n_client_addr` behind PROXY protocol with forwarded headers. */
  readonly clientAddress: string;
  /** The rate-limit key for a client: `$binary_remote_addr`, or `$i2n_client_addr`. */
  readonly limitKey: string;
  /** Which cross-namespace references are allowed (auth-url to another namespace's Service). */
  readonly referenceGrants: ReferenceGrants;
  /** Where snippets are allowed, and the allowed snippets of each Ingress. */
  readonly snippetScope: SnippetScope;
  readonly snippets: SnippetRegistry;
}

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
  readonly unavailableStatus?: 404 | 500;
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
  /** A location that hands each request to the named location of the claim whose match it meets (request-dispatch.ts). */
  readonly dispatch?: { readonly variable: string; readonly references: readonly string[] };
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

/** The per-Ingress part of every location of the Ingress. */
export interface IngressBehaviour {
  readonly behaviour: LocationBehaviour;
  /** `custom-headers` names a ConfigMap that cannot be used: the locations answer 503, as ingress-nginx denies them. */
  readonly denied?: true;
  /** Locations the behaviour needs beside its own on each host (the auth endpoint). */
  readonly companions: readonly Location[];
  readonly clientCertificate?: ClientCertificateRequest;
  /** Request headers to the backend besides the standard ones. */
  readonly headers: readonly { readonly name: string; readonly value: string }[];
  /** `upstream-vhost`, else undefined (the client's host is sent). */
  readonly host?: string;
  /** `backend-protocol: FCGI`: its parameters and index. */
  readonly fastcgi?: Proxy['fastcgi'];
  /** `connection-proxy-header`, else undefined (`upgrade` for WebSocket requests, empty otherwise). */
  readonly connectionHeader?: Proxy['connectionHeader'];
  readonly tuning?: ProxyTuning;
  readonly httpVersion: '1.0' | '1.1';
  /** Names of the http-level groups (zones, maps) the behaviour refers to. */
  readonly references: readonly string[];
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
