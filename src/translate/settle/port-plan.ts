import type { UpstreamServer } from '../../model/nginx.js';
import type { TlsFiles } from '../../model/files.js';
import type { ServicePortRef } from '../../model/provenance.js';
import type { ResourceStatus } from '../../model/status.js';
import type { ResolvedBackend } from '../backends.js';
import type { IngressContribution } from './claims.js';

/**
 * What the Gateway API resources ask of the data plane, decided and validated, before it is merged
 * with the Ingress side into the nginx model. Produced by `planGateways` (pure).
 */
export interface GatewayPlan {
  /** One entry per listening port that has at least one programmed TLS listener (even without routes); sorted by port. */
  readonly ports: readonly PortPlan[];
  /** Conditions for every Gateway, TLSRoute, HTTPRoute, GRPCRoute and BackendTLSPolicy in the input that is ours. */
  readonly statuses: readonly ResourceStatus[];
  /**
   * HTTPRoutes on HTTP and HTTPS listeners, as claims of the same kind as an Ingress's (settled with them
   * in settle/), and the upstream blocks they may use.
   */
  readonly http: {
    readonly contribution: IngressContribution;
    /** HTTPRoutes on HTTP and HTTPS listeners on other ports than the Ingress ports: each port its own servers. */
    readonly ownPorts: readonly PortContribution[];
    readonly backends: readonly ResolvedBackend[];
    /** A GRPCRoute is served through an HTTP listener: the plain HTTP port takes HTTP/2 with prior knowledge too. */
    readonly cleartextHttp2: boolean;
  };
}

/** The HTTPRoutes' claims through listeners on one port other than the Ingress ports. */
export interface PortContribution {
  readonly port: number;
  /** HTTPS listeners (TLS servers, beside the port's TLS listeners by SNI); else HTTP (plain servers). */
  readonly tls: boolean;
  readonly contribution: IngressContribution;
  /**
   * TLS: the certificate of the port's HTTPS listener without a hostname, for names no route serves (no SNI,
   * an unknown one): the Gateway's, not the controller's default certificate.
   */
  readonly defaultCertificate?: TlsFiles;
}

export interface PortPlan {
  readonly port: number;
  /** SNI map entries, one per hostname; precedence between claims is already settled. Sorted by hostname. */
  readonly routes: readonly SniRoutePlan[];
  /**
   * Hostnames of programmed listeners on this port that no route claims, sorted. Their connections are
   * closed, so that a broader listener's route cannot take a name a narrower listener owns.
   */
  readonly isolatedHostnames: readonly string[];
}

export interface ListenerRef {
  readonly gatewayNamespace: string;
  readonly gatewayName: string;
  readonly listenerName: string;
}

export interface SniRoutePlan {
  /** Exact host name or `*.suffix`: the intersection of listener and route hostnames. */
  readonly hostname: string;
  readonly mode: 'Passthrough' | 'Terminate';
  readonly listener: ListenerRef;
  readonly route: { readonly namespace: string; readonly name: string };
  /** Backends that take traffic (weight > 0), sorted by upstream name. Empty: every connection is closed. */
  readonly backends: readonly WeightedBackend[];
  /** Summed weight of backendRefs that could not be resolved: that share of connections is closed. */
  readonly rejectedWeight: number;
  /** Terminate: the listener's certificates (one per key type), already checked and written. */
  readonly certificates: readonly TlsFiles[];
  /** Terminate + a BackendTLSPolicy on the backends: re-encrypt and verify. */
  readonly backendTls?: BackendTlsPlan;
}

export interface WeightedBackend {
  /** Stable block name, e.g. `ns_service_port`. */
  readonly upstream: string;
  readonly servers: readonly UpstreamServer[];
  /** `name:port` resolved by nginx at connect time instead of an upstream block (see ResolvedBackend). */
  readonly runtimeName?: string;
  readonly weight: number;
  readonly description: string;
  readonly service: ServicePortRef;
}

export interface BackendTlsPlan {
  /** Relative path of the CA bundle written beside nginx.conf, or the system bundle's absolute path. */
  readonly trustedCertificate: string;
  /** `validation.hostname`: sent as SNI and verified. */
  readonly hostname: string;
  /** `namespace/name` of the policy, for comments. */
  readonly policy: string;
}
