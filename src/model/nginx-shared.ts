/** What the http and stream parts of the nginx view-model (model/nginx.ts) both use: an upstream block's server. */

export interface UpstreamServer {
  /** `ip:port`, `[ipv6]:port`, `dns.name:port`, or `unix:` for the reject socket. */
  readonly address: string;
  readonly weight?: number;
  /** `max_fails=0`: the reject socket must keep its share even though every connection to it fails. */
  readonly neverMarkedDown?: boolean;
}
