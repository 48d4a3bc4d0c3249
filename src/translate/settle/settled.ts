/** What settling makes of the claims: the hosts, their servers and SNI routes, and what settling one host reads. */
import type { FieldPath } from '../../model/diagnostics.js';
import type { TlsFiles } from '../../model/files.js';
import type { Location, Proxy, VirtualHost } from '../../model/nginx.js';
import type { Provenance } from '../../model/provenance.js';
import type { SourceObject } from '../../sources/snapshot.js';
import type { ResolvedBackend } from '../backends.js';
import { Reporter } from '../report.js';
import { SecretFiles } from '../secrets/secret-files.js';
import type { PassthroughClaim, TlsClaim, RouteClaim, CanaryClaim } from './claims.js';
import { HttpExtensionRegistry } from './extensions.js';

export interface HostSettings {
  /** ConfigMap `ssl-redirect`: the default for hosts with TLS. */
  readonly sslRedirect: boolean;
  /** ConfigMap `use-forwarded-headers`: a trusted load balancer may say the client used HTTPS. */
  readonly trustForwardedProto: boolean;
  readonly hsts: boolean;
  readonly defaultTls: TlsFiles;
  /** Host names Gateway API routes claim on the HTTPS port: weak claims (aliases) yield to them. */
  readonly routeHostnames: ReadonlySet<string>;
  /** The controller's default backend, for what no Ingress path matches; absent: 404. */
  readonly fallback?: Proxy;
}

export interface PassthroughRoute {
  readonly host: string;
  /** Absent when the winner's backend cannot be used: connections for the host are closed. */
  readonly backend?: ResolvedBackend;
  readonly comment: string;
  /** The Ingress that won the host. */
  readonly owner: SourceObject;
  /** The winning claim's field (the rule's host). */
  readonly field: FieldPath;
  /** Ingresses whose claim on the host's TLS lost to this one. */
  readonly losers: readonly Provenance[];
  /** Plain HTTP to the host is redirected to HTTPS (the winner's `force-ssl-redirect` or `ssl-redirect`). */
  readonly redirectsPlainHttp?: boolean;
}

/** A host whose TLS the http servers terminate, and the Ingress that claimed it first. */
export interface TerminatedHost {
  readonly host: string;
  readonly owner: SourceObject;
  /** The host has `spec.tls` (its own certificate, or the default one by choice), not only rules. */
  readonly declaresTls: boolean;
}

export interface MergedHosts {
  readonly virtualHosts: readonly VirtualHost[];
  /** Every terminated host, sorted: for settling SNI names with Gateway API routes on the same port. */
  readonly terminated: readonly TerminatedHost[];
  readonly defaultLocations: readonly Location[];
  readonly passthrough: readonly PassthroughRoute[];
  /** Backends that canaries added to locations: they need upstream blocks too. */
  readonly canaryBackends: readonly ResolvedBackend[];
  /** http-level groups (zones, maps) that the rendered locations refer to. */
  readonly references: readonly string[];
}

/** Every claim on one host, each list in the order of the contributions. */
export interface HostClaims {
  readonly passthrough: PassthroughClaim[];
  readonly tls: TlsClaim[];
  readonly routes: RouteClaim[];
  readonly canaries: CanaryClaim[];
  /** Route and TLS claims together, in the order a contribution lists them (its routes, then its TLS). */
  readonly named: (RouteClaim | TlsClaim)[];
}

/** What settling one host gives; the host `''` (rules without host) gives the default server's locations. */
export interface SettledHost {
  readonly virtualHost?: VirtualHost;
  readonly defaultLocations?: readonly Location[];
  readonly passthrough?: PassthroughRoute;
  readonly terminated?: TerminatedHost;
  readonly canaryBackends: readonly ResolvedBackend[];
  readonly references: readonly string[];
}

/** Where settling a host reports to and records what it defines. */
export interface HostScope {
  readonly report: Reporter;
  readonly extensions: HttpExtensionRegistry;
  readonly secrets: SecretFiles;
}
