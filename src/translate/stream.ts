import { createHash } from 'node:crypto';
import type {
  PassthroughServer,
  SniFrontend,
  SniRoute,
  StreamUpstream,
  TerminateServer,
  UpstreamServer,
  VirtualHost,
} from '../model/nginx.js';
import type { SourceObject } from '../sources/snapshot.js';
import type { PortPlan, SniRoutePlan, WeightedBackend } from './gateway/plan.js';
import type { PassthroughRoute } from './ingress/hosts.js';
import { byString, compareAge, groupBy } from './precedence.js';
import { resourceName, type Reporter } from './report.js';

export interface StreamInput {
  readonly httpsPort: number;
  readonly runDir: string;
  readonly httpsSocket: string;
  readonly acceptProxyProtocol: boolean;
  readonly trustedProxies: readonly string[];
  /** Ingress passthrough hosts, on the HTTPS port. */
  readonly passthrough: readonly PassthroughRoute[];
  /** Ingress hosts terminated by the http servers, on the HTTPS port. */
  readonly virtualHosts: readonly VirtualHost[];
  /** Those of them with their own certificate (`spec.tls`): they keep their name against a TLSRoute. */
  readonly ingressTlsHosts: readonly string[];
  readonly gatewayPorts: readonly PortPlan[];
  /** Finds a TLSRoute by `namespace/name`, to report on it. */
  readonly routeObject: (namespace: string, name: string) => SourceObject | undefined;
  readonly report: Reporter;
}

export interface StreamParts {
  readonly frontends: readonly SniFrontend[];
  readonly upstreams: readonly StreamUpstream[];
  readonly passthroughServers: readonly PassthroughServer[];
  readonly terminateServers: readonly TerminateServer[];
  readonly rejectSocket?: string;
}

/** What one SNI host name on one port leads to, with who asked for it. */
interface Claim {
  readonly serverName: string;
  readonly target: string;
  readonly comment: string;
  /** For settling collisions between Ingress and Gateway API claims. */
  readonly owner?: SourceObject;
}

/** Public CA chains carry intermediates; nginx's default depth of 1 would refuse them. */
const backendTlsVerifyDepth = 4;

/**
 * The SNI fronts, one per TLS port. Ingress passthrough hosts and Gateway API routes go to per-backend-set
 * unix listeners (second hop); Gateway Terminate routes to stream servers that terminate TLS; terminated
 * Ingress hosts to the http servers. Unmatched SNI goes to the http servers on the Ingress HTTPS port and
 * is closed on a port that only Gateway listeners use.
 */
export function buildStream(input: StreamInput): StreamParts {
  const builder = new StreamBuilder(input.runDir);
  const ports = new Map<number, Claim[]>();
  const claimsOn = (port: number): Claim[] => {
    let claims = ports.get(port);
    if (!claims) ports.set(port, (claims = []));
    return claims;
  };

  const ingressClaims = claimsOn(input.httpsPort);
  for (const route of input.passthrough) {
    const upstream = builder.upstream([{ ...route.backend, weight: 1 }], 0);
    ingressClaims.push({
      serverName: route.host,
      target: builder.passthroughTarget(upstream),
      comment: route.comment,
      owner: route.owner,
    });
  }

  for (const portPlan of input.gatewayPorts) {
    const claims = claimsOn(portPlan.port);
    for (const hostname of portPlan.isolatedHostnames) {
      claims.push({ serverName: hostname, target: builder.rejectTarget(), comment: 'listener hostname without a route: closed' });
    }
    for (const route of portPlan.routes) {
      claims.push({
        serverName: route.hostname,
        target: builder.gatewayTarget(route),
        comment: `TLSRoute ${route.route.namespace}/${route.route.name} via Gateway ${route.listener.gatewayNamespace}/${route.listener.gatewayName} listener ${route.listener.listenerName}`,
        owner: input.routeObject(route.route.namespace, route.route.name),
      });
    }
  }

  const terminatedIngressHosts = input.virtualHosts.filter((host) => host.tls).map((host) => host.serverName);
  const frontends = [...ports.entries()]
    .sort(([a], [b]) => a - b)
    .map(([port, claims]): SniFrontend => {
      const isIngressPort = port === input.httpsPort;
      const settled = oneClaimPerName(claims, isIngressPort ? input.ingressTlsHosts : [], input.report);
      // A terminated Ingress host under a wildcard claim needs its own entry, or the wildcard would take it.
      const wildcards = settled.filter((c) => c.serverName.startsWith('*.')).map((c) => c.serverName.slice(1));
      const taken = new Set(settled.map((c) => c.serverName));
      const shadowed = isIngressPort
        ? terminatedIngressHosts
            .filter((name) => !taken.has(name) && wildcards.some((suffix) => name.endsWith(suffix) && name.length > suffix.length + 1))
            .map((name): SniRoute => ({ serverName: name, target: `unix:${input.httpsSocket}`, comment: 'terminated here' }))
        : [];
      return {
        port,
        routeVariable: `i2n_route_${port}`,
        acceptProxyProtocol: input.acceptProxyProtocol,
        trustedProxies: input.trustedProxies,
        routes: [...settled.map(({ serverName, target, comment }) => ({ serverName, target, comment })), ...shadowed].sort(
          byString((r) => r.serverName),
        ),
        defaultTarget: isIngressPort ? `unix:${input.httpsSocket}` : builder.rejectTarget(),
        defaultComment: isIngressPort ? 'terminating http servers (default certificate)' : 'reject socket (connection closed)',
      };
    });

  return { frontends, ...builder.parts() };
}

/**
 * One claim per host name and port: the oldest owner wins a collision between an Ingress and a route
 * (design §5 precedence); a Gateway route also loses to an Ingress with `spec.tls` for that exact host.
 */
function oneClaimPerName(claims: readonly Claim[], ingressTlsHosts: readonly string[], report: Reporter): Claim[] {
  const terminated = new Set(ingressTlsHosts);
  const settled: Claim[] = [];
  for (const [serverName, group] of groupBy(claims, (c) => c.serverName)) {
    // Claims without an owner (a listener hostname kept closed) yield to any resource's claim.
    const [winner, ...losers] = [...group].sort((a, b) =>
      a.owner && b.owner ? compareAge(a.owner, b.owner) : Number(a.owner === undefined) - Number(b.owner === undefined),
    );
    if (!winner) continue;
    for (const loser of losers) {
      if (loser.target === winner.target || !loser.owner || !winner.owner) continue;
      report.warning(
        'sni-conflict',
        loser.owner,
        `${serverName} is already routed on this port by ${winner.owner.kind} ${resourceName(winner.owner)} (older, or first by namespace/name); this claim gets no traffic`,
      );
    }
    if (terminated.has(serverName) && winner.owner?.kind !== 'Ingress') {
      if (winner.owner) {
        report.warning(
          'sni-conflict',
          winner.owner,
          `${serverName} is terminated by an Ingress on this port; the Ingress keeps it and this route gets no traffic for it`,
        );
      }
      continue;
    }
    settled.push(winner);
  }
  return settled;
}

class StreamBuilder {
  private readonly upstreams = new Map<string, StreamUpstream>();
  private readonly passthroughServers = new Map<string, PassthroughServer>();
  private readonly terminateServers = new Map<string, TerminateServer>();
  /** Upstreams with a share for the reject socket. */
  private readonly rejecting = new Set<string>();
  private rejectSocket: string | undefined;

  constructor(private readonly runDir: string) {}

  /** An upstream for a backend set; a share of `rejectedWeight` goes to the reject socket. */
  upstream(backends: readonly WeightedBackend[], rejectedWeight: number): string {
    const only = backends[0];
    if (backends.length === 1 && only && rejectedWeight === 0) {
      if (!this.upstreams.has(only.upstream)) {
        this.upstreams.set(only.upstream, { name: only.upstream, servers: only.servers, comment: only.description });
      }
      return only.upstream;
    }
    const servers: UpstreamServer[] = backends.flatMap((b) => b.servers.map((s) => ({ address: s.address, weight: b.weight })));
    if (rejectedWeight > 0) servers.push({ address: this.rejectTarget(), weight: rejectedWeight, neverMarkedDown: true });
    const name = `weighted_${digest(JSON.stringify(servers))}`;
    if (rejectedWeight > 0) this.rejecting.add(name);
    if (!this.upstreams.has(name)) {
      const parts = backends.map((b) => `${b.description} weight ${b.weight}`);
      if (rejectedWeight > 0) parts.push(`unresolved weight ${rejectedWeight} (closed)`);
      this.upstreams.set(name, { name, servers, comment: parts.join('; ') });
    }
    return name;
  }

  passthroughTarget(upstream: string): string {
    let server = this.passthroughServers.get(upstream);
    if (!server) {
      server = { socket: `${this.runDir}/passthrough-${digest(upstream)}.sock`, upstream, noRetry: this.rejecting.has(upstream) };
      this.passthroughServers.set(upstream, server);
    }
    return `unix:${server.socket}`;
  }

  gatewayTarget(route: SniRoutePlan): string {
    if (route.backends.length === 0) return this.rejectTarget();
    const upstream = this.upstream(route.backends, route.rejectedWeight);
    if (route.mode === 'Passthrough') return this.passthroughTarget(upstream);
    const server: Omit<TerminateServer, 'socket' | 'comment'> = {
      certificates: route.certificates,
      upstream,
      noRetry: this.rejecting.has(upstream),
      ...(route.backendTls && {
        backendTls: {
          trustedCertificate: route.backendTls.trustedCertificate,
          name: route.backendTls.hostname,
          verifyDepth: backendTlsVerifyDepth,
        },
      }),
    };
    const identity = digest(JSON.stringify(server));
    let existing = this.terminateServers.get(identity);
    if (!existing) {
      const policy = route.backendTls ? `, re-encrypted per BackendTLSPolicy ${route.backendTls.policy}` : '';
      existing = {
        ...server,
        socket: `${this.runDir}/terminate-${identity}.sock`,
        comment: `Gateway ${route.listener.gatewayNamespace}/${route.listener.gatewayName} listener ${route.listener.listenerName}${policy}`,
      };
      this.terminateServers.set(identity, existing);
    }
    return `unix:${existing.socket}`;
  }

  rejectTarget(): string {
    this.rejectSocket ??= `${this.runDir}/reject.sock`;
    return `unix:${this.rejectSocket}`;
  }

  parts(): Omit<StreamParts, 'frontends'> {
    return {
      upstreams: [...this.upstreams.values()].sort(byString((u) => u.name)),
      passthroughServers: [...this.passthroughServers.values()].sort(byString((s) => s.upstream)),
      terminateServers: [...this.terminateServers.values()].sort(byString((s) => s.socket)),
      ...(this.rejectSocket !== undefined && { rejectSocket: this.rejectSocket }),
    };
  }
}

/** Short and stable: unix socket paths are limited to 107 bytes, names are not. */
function digest(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 16);
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
