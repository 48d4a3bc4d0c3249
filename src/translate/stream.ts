import { createHash } from 'node:crypto';
import type { PassthroughServer, SniFrontend, SniRoute, StreamUpstream, VirtualHost } from '../model/nginx.js';
import type { PassthroughRoute } from './hosts.js';
import { byString } from './precedence.js';

export interface StreamInput {
  readonly httpsPort: number;
  readonly runDir: string;
  readonly httpsSocket: string;
  readonly acceptProxyProtocol: boolean;
  readonly trustedProxies: readonly string[];
  readonly passthrough: readonly PassthroughRoute[];
  readonly virtualHosts: readonly VirtualHost[];
}

export interface StreamParts {
  readonly frontend: SniFrontend;
  readonly upstreams: readonly StreamUpstream[];
  readonly passthroughServers: readonly PassthroughServer[];
}

/**
 * The SNI front on the HTTPS port. Passthrough hosts go to a per-backend unix listener that strips the
 * PROXY header and forwards the untouched TLS; everything else goes to the terminating http servers.
 */
export function buildStream(input: StreamInput): StreamParts {
  const upstreams = new Map<string, StreamUpstream>();
  const servers = new Map<string, PassthroughServer>();
  const routes: SniRoute[] = [];
  for (const route of input.passthrough) {
    const { upstream } = route.backend;
    if (!upstreams.has(upstream)) {
      upstreams.set(upstream, { name: upstream, servers: route.backend.servers, comment: route.backend.description });
      servers.set(upstream, { socket: passthroughSocket(input.runDir, upstream), upstream });
    }
    routes.push({ serverName: route.host, target: `unix:${servers.get(upstream)!.socket}`, comment: route.comment });
  }
  // A terminated host under a passthrough wildcard needs its own entry, or the wildcard would take it.
  const wildcards = input.passthrough.filter((r) => r.host.startsWith('*.')).map((r) => r.host.slice(1));
  for (const host of input.virtualHosts) {
    if (!host.tls) continue;
    const name = host.serverName;
    const shadowed = wildcards.some((suffix) => name.endsWith(suffix) && name !== `*${suffix}`);
    if (shadowed) routes.push({ serverName: name, target: `unix:${input.httpsSocket}`, comment: 'terminated here' });
  }
  return {
    frontend: {
      port: input.httpsPort,
      routeVariable: `i2n_route_${input.httpsPort}`,
      acceptProxyProtocol: input.acceptProxyProtocol,
      trustedProxies: input.trustedProxies,
      routes: routes.sort(byString((r) => r.serverName)),
      defaultTarget: `unix:${input.httpsSocket}`,
    },
    upstreams: [...upstreams.values()].sort(byString((u) => u.name)),
    passthroughServers: [...servers.values()].sort(byString((s) => s.upstream)),
  };
}

/** Short and stable: unix socket paths are limited to 107 bytes, upstream names are not. */
function passthroughSocket(runDir: string, upstream: string): string {
  const digest = createHash('sha256').update(upstream).digest('hex').slice(0, 16);
  return `${runDir}/passthrough-${digest}.sock`;
}

/** `*_hash_bucket_size` must hold the longest name; nginx refuses to start otherwise. */
export function hashSizes(names: readonly string[]): { bucketSize: number; maxSize: number } {
  const longest = names.reduce((max, name) => Math.max(max, name.length), 0);
  return {
    bucketSize: Math.max(64, nextPowerOfTwo(longest + 32)),
    maxSize: Math.max(1024, nextPowerOfTwo(names.length * 2)),
  };
}

function nextPowerOfTwo(n: number): number {
  let power = 1;
  while (power < n) power *= 2;
  return power;
}
