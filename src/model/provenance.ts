import type { FieldPath, ResourceRef } from './diagnostics.js';
import type { TlsFiles } from './files.js';

/**
 * Where a model object comes from, as data: reports (route table, route diff, review page) link back
 * to the resource and field that produced it. Templates never read any of this, so it cannot change
 * the rendered config.
 */

export interface Provenance {
  readonly resource: ResourceRef;
  /** Dotted field path within the resource, e.g. `spec.rules[0].http.paths[1].path`. */
  readonly field?: string;
  /** The same path as data, so the sources stage can find the field's exact line (sources/positions.ts). */
  readonly path?: FieldPath;
  readonly file?: string;
  /** First line of the resource's document in `file`; the field's line once positions are refined. */
  readonly line?: number;
  /** Set when positions are refined to the field. */
  readonly column?: number;
}

/** The resource that holds a host, path or SNI name, and those that asked for it too and lost. */
export interface Claim {
  readonly claimant: Provenance;
  /** Sorted by age, then namespace/name, as precedence settled them; never the claimant itself. */
  readonly losers: readonly Provenance[];
}

export interface ServicePortRef {
  readonly namespace: string;
  readonly name: string;
  readonly port: number;
  /**
   * The Service has no cluster IP in the manifests: the API server assigns it when they are applied,
   * and the rendered address is a stand-in (`TranslateOptions.expectClusterProvided`).
   */
  readonly addressAssignedByCluster?: true;
}

/** An Ingress path (or `defaultBackend`) that one or more nginx locations were made from. */
export interface LocationOrigin {
  readonly claim: Claim;
  /** The path as written in the resource; `/` for `defaultBackend`. */
  readonly path: string;
  readonly pathType: 'Exact' | 'Prefix' | 'ImplementationSpecific' | 'defaultBackend';
}

/** Why a terminated host is served with the certificate it has. */
export type CertificateSource =
  | {
      readonly kind: 'secret';
      readonly secret: ResourceRef;
      readonly declaredBy: Provenance;
      /**
       * The Secret is not in the input (manifests from git): where it is expected to come from. A stand-in
       * certificate is rendered in its place (translate/cluster-provided.ts).
       */
      readonly expectedFrom?: string;
    }
  /**
   * The default certificate: `no-tls` when no Ingress has `spec.tls` for the host, `no-secret` for
   * `spec.tls` without `secretName`, `secret-invalid` when the Secret is missing or failed its checks.
   */
  | { readonly kind: 'default'; readonly reason: 'no-tls' | 'no-secret' | 'secret-invalid'; readonly declaredBy?: Provenance };

export interface VirtualHostOrigin {
  /** The oldest resource with a rule or `spec.tls` for the host; losers are those whose TLS claim lost. */
  readonly claim: Claim;
  /** Absent when the host's TLS is passed through (no terminating server). */
  readonly certificate?: CertificateSource;
}

/** A backend's share of a route's connections. */
export interface BackendShare {
  readonly service: ServicePortRef;
  readonly weight: number;
  /** `ip:port`, or `name:port` that nginx resolves when a connection comes. */
  readonly addresses: readonly string[];
}

/** What an SNI name on a TLS port leads to, independent of how the stream module is wired. */
export type SniDestination =
  /** TLS terminated by the http servers (an Ingress host). */
  | { readonly kind: 'http' }
  /** Connections are closed: a listener hostname no route claims. */
  | { readonly kind: 'closed' }
  | { readonly kind: 'passthrough'; readonly backends: readonly BackendShare[]; readonly rejectedWeight: number }
  | {
      readonly kind: 'terminate';
      readonly backends: readonly BackendShare[];
      readonly rejectedWeight: number;
      readonly certificates: readonly TlsFiles[];
      /** Re-encryption per BackendTLSPolicy: CA file, the name verified and sent as SNI, the chain depth accepted. */
      readonly backendTls?: { readonly trustedCertificate: string; readonly name: string; readonly verifyDepth: number; readonly policy: ResourceRef };
    };

export interface SniRouteOrigin {
  /** Absent for names nobody claims (a listener hostname kept closed). */
  readonly claim?: Claim;
  readonly destination: SniDestination;
  /** Gateway routes: the listener that carries the name. */
  readonly listener?: { readonly gateway: ResourceRef; readonly name: string };
}

/** A TCP/UDP services ConfigMap entry that a stream server was made from. */
export interface StreamServiceOrigin {
  /** The ConfigMap, with the field `data.<port>`. */
  readonly entry: Provenance;
  readonly backend: BackendShare;
}
