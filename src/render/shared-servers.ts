import type { NginxConfig, HttpConfig, VirtualHost } from '../model/nginx.js';
import { withAddedFields } from '../model/objects.js';

/** One server block for every host whose block would be the same but for `server_name`. */
export interface SharedServer {
  /** In the order of `http.virtualHosts` (sorted by name). */
  readonly serverNames: readonly string[];
  /** Everything inside the block after `listen` and `server_name`, as rendered. */
  readonly body: string;
}

/**
 * What the template reads for a host: the plain-HTTP and TLS servers it heads. A host whose block joined
 * an earlier host's has none of its own, and neither has a host without one (plain HTTP shared, TLS
 * passed through).
 */
export interface VirtualHostView extends VirtualHost {
  readonly plainServer?: SharedServer;
  readonly tlsServer?: SharedServer;
}

export interface NginxConfigView extends NginxConfig {
  readonly http: Omit<HttpConfig, 'virtualHosts'> & { readonly virtualHosts: readonly VirtualHostView[] };
}

export interface ServerBodies {
  readonly plain: (host: VirtualHost) => string;
  readonly tls: (host: VirtualHost) => string;
}

/**
 * Hosts whose server blocks render to the same bytes share one, listing all their names. For TLS that is
 * one SSL context, and one load of the certificate per reload, instead of one per host: an Ingress that
 * names several hosts with the same paths and one certificate for them all is common, and every SSL
 * context costs nginx about half a millisecond at each reload (README, "Data plane and performance").
 * Comparing the rendered bytes, not the model, makes the rule exact: nginx does the same for each name
 * as it did with a block of its own. The one thing that tells the names of a block apart is its first
 * name, which `$server_name` and `server_name_in_redirect on` use: a body that mentions `server_name`
 * (a snippet can) keeps its block to itself.
 */
export function shareServers(model: NginxConfig, bodies: ServerBodies): NginxConfigView {
  const plain = new Map<string, { serverNames: string[]; body: string }>();
  const tls = new Map<string, { serverNames: string[]; body: string }>();
  const virtualHosts = model.http.virtualHosts.map((host): VirtualHostView => {
    const plainServer = host.plainHttpShared ? undefined : join(plain, bodies.plain(host), host.serverName);
    const tlsServer = host.tls ? join(tls, bodies.tls(host), host.serverName) : undefined;
    return withAddedFields(host, { ...(plainServer && { plainServer }), ...(tlsServer && { tlsServer }) });
  });
  return { ...model, http: { ...model.http, virtualHosts } };
}

/** The group's server when `serverName` heads it; undefined when it joins one an earlier host heads. */
function join(groups: Map<string, { serverNames: string[]; body: string }>, body: string, serverName: string): SharedServer | undefined {
  if (body.includes('server_name')) return { serverNames: [serverName], body };
  const group = groups.get(body);
  if (group) {
    group.serverNames.push(serverName);
    return undefined;
  }
  const headed = { serverNames: [serverName], body };
  groups.set(body, headed);
  return headed;
}
