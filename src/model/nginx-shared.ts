/** What the http and stream parts of the nginx view-model (model/nginx.ts) both use: an upstream block's server. */

export interface UpstreamServer {
  /** `ip:port`, `[ipv6]:port`, `dns.name:port`, or `unix:` for the reject socket. */
  readonly address: string;
  readonly weight?: number;
  /** `max_fails=0`: the reject socket must keep its share even though every connection to it fails. */
  readonly neverMarkedDown?: boolean;
  /**
   * `address` is a name nginx resolves at run time from the sidecar's resolver (`resolve`), asking for the
   * SRV records of `service=` (endpoints.ts): the http module's name, or the stream module's.
   */
  readonly resolve?: { readonly httpService: string; readonly streamService: string };
}

/**
 * The sidecar's resolver, which nginx asks for the endpoints of the upstream servers that `resolve`
 * (translate/endpoints.ts). Those upstream blocks share one shared-memory zone: nginx resolves in one
 * worker and every worker reads the peers from there.
 */
export interface EndpointResolution {
  /** `ip:port` on loopback. */
  readonly resolver: string;
  readonly zone: string;
  /** Sized by the upstream blocks that resolve, never by their endpoints (a new size would be a reload). */
  readonly zoneSize: string;
  /** Ask for AAAA records too: some Service has IPv6 (`ipv6=off` otherwise). */
  readonly ipv6: boolean;
}
