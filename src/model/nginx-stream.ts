/**
 * The stream block of the nginx view-model (model/nginx.ts, the module to import it from): the SNI fronts
 * that hand TLS connections on, the passthrough and terminating servers, and forwarded TCP/UDP ports.
 */

import type { TlsFiles } from './files.js';
import type { EndpointResolution, UpstreamServer } from './nginx-shared.js';
import type { SniRouteOrigin, StreamServiceOrigin } from './provenance.js';

export interface StreamConfig {
  /** `resolver` addresses (`--resolver`), for backends that nginx resolves per connection. */
  readonly resolvers: readonly string[];
  /** Instead of `resolvers`: the sidecar's resolver, which also relays other names to them. */
  readonly endpointResolution?: EndpointResolution;
  readonly mapHashBucketSize: number;
  readonly mapHashMaxSize: number;
  /**
   * `proxy_buffer_size`: with the PROXY/unix hand-off every byte is copied twice inside the worker, and
   * larger buffers make each copy cheaper (measured: bulk passthrough then equals a single hop).
   */
  readonly proxyBufferSize: string;
  /** Protocols and ciphers for TLS that the stream servers terminate (Gateway Terminate listeners). */
  readonly sslProtocols: string;
  readonly sslCiphers: string;
  /** One SNI front per TLS port, sorted by port. */
  readonly frontends: readonly SniFrontend[];
  readonly upstreams: readonly StreamUpstream[];
  /** Where passthrough connections are proxied to their backends: a few shared listeners per TLS port. */
  readonly passthroughServers: readonly PassthroughServer[];
  /**
   * Passthrough hosts whose backends read a PROXY header (`ingress2nginx.dev/backend-proxy-protocol`),
   * with the `pass` hand-off. (With the PROXY/unix hand-off the front proxies them to the backend itself:
   * it sends that header on every connection it proxies.)
   */
  readonly proxyProtocolServers: readonly ProxyProtocolServer[];
  /** TLS terminated in the stream module, plain TCP (or re-encrypted TLS) to the backend set. */
  readonly terminateServers: readonly TerminateServer[];
  /** Unix socket of a server that closes every connection at once: rejected SNI and backend shares. */
  readonly rejectSocket?: string;
  /** Allowed `stream-snippet`s, raw: the controller ConfigMap's, then the Ingresses' (oldest first). */
  readonly snippets: readonly string[];
  /** TCP and UDP ports forwarded to a Service port (`--tcp-services-configmap`, `--udp-services-configmap`), sorted. */
  readonly services: readonly StreamService[];
}

/** A port of nginx's own forwarded to a Service port, as ingress-nginx's TCP/UDP services ConfigMaps ask. */
export interface StreamService {
  readonly port: number;
  readonly protocol: 'tcp' | 'udp';
  /** `protocol` is `udp`: the template's `listen … udp`. */
  readonly udp: boolean;
  /** Read a PROXY protocol header first (the first `PROXY` of the entry), trusting these senders' addresses. */
  readonly acceptProxyProtocol: boolean;
  readonly trustedProxies: readonly string[];
  /** Send a PROXY protocol header to the backend (the second `PROXY`). */
  readonly sendProxyProtocol: boolean;
  readonly upstream: string;
  /** Instead of the upstream block: `name:port` that nginx resolves per connection (`resolver`). */
  readonly resolve?: string;
  readonly comment: string;
  readonly origin?: StreamServiceOrigin;
}

export interface SniFrontend {
  readonly port: number;
  /** `$…` variable name (without `$`) that the SNI map sets. */
  readonly routeVariable: string;
  /** Expect a PROXY protocol header from an outer load balancer on this port. */
  readonly acceptProxyProtocol: boolean;
  /** Addresses trusted to send that header (`set_real_ip_from`). */
  readonly trustedProxies: readonly string[];
  readonly routes: readonly SniRoute[];
  /** Where unmatched or absent SNI goes: the terminating http listener, or the reject socket. */
  readonly defaultTarget: string;
  readonly defaultComment: string;
}

export interface SniRoute {
  /** Exact host name or `*.suffix`. */
  readonly serverName: string;
  /** `serverName` as a `map` key: with a leading `\\` when it is one of map's parameter names (`default`, ...). */
  readonly mapKey: string;
  /** `unix:/abs/path.sock` */
  readonly target: string;
  /** Who asked for it, for the reader of the config. */
  readonly comment: string;
  readonly origin?: SniRouteOrigin;
}

export interface StreamUpstream {
  readonly name: string;
  readonly servers: readonly UpstreamServer[];
  /** A server resolves at run time: the block is in the shared zone of `endpointResolution`. */
  readonly resolves?: true;
  readonly comment: string;
}

/**
 * A listener shared by the passthrough hosts of one TLS port: it reads the SNI again (a map lookup, far
 * cheaper than a listener per host) and proxies the untouched TLS to the host's backend.
 */
export interface PassthroughServer {
  /** Absolute unix socket path (without `unix:`). */
  readonly socket: string;
  readonly port: number;
  /** `$…` variable name (without `$`) that its SNI map sets to the backend. */
  readonly backendVariable: string;
  /** Sorted by server name. */
  readonly routes: readonly PassthroughBackend[];
  /** Its upstreams hold a share for the reject socket: a failed attempt must not be retried elsewhere. */
  readonly noRetry: boolean;
}

/**
 * A server that proxies passthrough hosts to backends with a PROXY protocol header first. The front
 * `pass`es connections to it at a loopback address of the TLS port, not a unix socket: `pass` makes the
 * address it passes to the connection's local address, and nginx writes the local address into the
 * header, where a unix socket path is not a valid destination. The front's listener on the port is the
 * wildcard one, so nothing more is bound, and the header carries the client's address and port, then
 * this loopback address and the TLS port.
 */
export interface ProxyProtocolServer {
  /** `127.0.0.x:port`. */
  readonly address: string;
  readonly port: number;
  readonly version: 'v1' | 'v2';
  /** `proxy_protocol` argument: `on` writes version 1, `v2` version 2 (nginx >= 1.31.4). */
  readonly directive: 'on' | 'v2';
  /** `$…` variable name (without `$`) that its SNI map sets to the backend. */
  readonly backendVariable: string;
  /** Sorted by server name. */
  readonly routes: readonly PassthroughBackend[];
}

export interface PassthroughBackend {
  readonly serverName: string;
  readonly mapKey: string;
  /**
   * The backend's one address (`ip:port`), an upstream block's name (several addresses or weights), or
   * `name:port` that nginx resolves per connection (`resolver`).
   */
  readonly backend: string;
  readonly comment: string;
}

export interface TerminateServer {
  readonly socket: string;
  /** One per key type; nginx picks by the client's capabilities. */
  readonly certificates: readonly TlsFiles[];
  readonly upstream: string;
  /** Instead of the upstream block: `name:port` that nginx resolves per connection (`resolver`). */
  readonly resolve?: string;
  /** As for PassthroughServer: a re-encryption handshake with the reject socket fails, and is final. */
  readonly noRetry: boolean;
  readonly backendTls?: StreamBackendTls;
  readonly comment: string;
}

export interface StreamBackendTls {
  readonly trustedCertificate: string;
  /** Verified name and SNI. */
  readonly name: string;
  readonly verifyDepth: number;
}
