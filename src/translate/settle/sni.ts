import { createHash } from 'node:crypto';
import type {
  Handoff,
  PassthroughBackend,
  PassthroughServer,
  ProxyProtocolServer,
  SniFrontend,
  SniRoute,
  StreamUpstream,
  TerminateServer,
  UpstreamServer,
} from '../../model/nginx.js';
import type { BackendShare, Claim as ClaimProvenance, Provenance, SniRouteOrigin } from '../../model/provenance.js';
import type { SourceObject } from '../../sources/snapshot.js';
import type { ProxyProtocolRequest, ProxyProtocolVersion } from './claims.js';
import type { PortPlan, SniRoutePlan, WeightedBackend } from './port-plan.js';
import type { PassthroughRoute, TerminatedHost } from './settled.js';
import { byString, compareAge, groupInOrder } from './precedence.js';
import { compareStrings } from '../../model/order.js';
import { losersOf, provenanceOf } from './provenance.js';
import { resourceName, type Reporter } from '../report.js';
import { mapKey } from '../checks/map-keys.js';
import type { HostOwnership } from './ownership.js';
import { wildcardCovers } from './wildcards.js';
import { readablePart, upstreamName } from '../upstream-names.js';
import { withAddedFields, withFields } from '../../model/objects.js';

export interface StreamInput {
  readonly handoff: Handoff;
  readonly httpsPort: number;
  readonly runDir: string;
  readonly httpsSocket: string;
  readonly acceptProxyProtocol: boolean;
  readonly trustedProxies: readonly string[];
  /** Ingress passthrough hosts, on the HTTPS port. */
  readonly passthrough: readonly PassthroughRoute[];
  /** Passthrough hosts whose backends get a PROXY protocol header (`ingress2nginx.dev/backend-proxy-protocol`). */
  readonly backendProxyProtocol?: ReadonlyMap<string, ProxyProtocolVersion>;
  /**
   * Ingress hosts terminated by the http servers, on the HTTPS port, with the Ingress that claimed each
   * first. One with `spec.tls` keeps its name against a TLSRoute; one without it against a newer one.
   */
  readonly terminated: readonly TerminatedHost[];
  readonly gatewayPorts: readonly PortPlan[];
  /**
   * `first-namespace-owns-host`: the namespace that owns each host on the HTTPS port. A route from
   * another namespace gets no connections for it.
   */
  readonly hostOwnership?: HostOwnership;
  /** Finds a TLSRoute by `namespace/name`, to report on it. */
  readonly routeObject: (namespace: string, name: string) => SourceObject | undefined;
  readonly report: Reporter;
}

export interface StreamParts {
  readonly frontends: readonly SniFrontend[];
  readonly upstreams: readonly StreamUpstream[];
  readonly passthroughServers: readonly PassthroughServer[];
  readonly proxyProtocolServers: readonly ProxyProtocolServer[];
  readonly terminateServers: readonly TerminateServer[];
  readonly rejectSocket?: string;
}

/** Where a passthrough claim's connections go once the front has routed them. */
interface PassthroughTarget {
  /** Upstream block name, or `name:port` resolved per connection. */
  readonly backend: string;
  readonly noRetry: boolean;
  /** What `backend` is, when it is an address that does not say so itself. */
  readonly description?: string;
  /** The backend reads a PROXY protocol header of this version first. */
  readonly proxyProtocol?: ProxyProtocolVersion;
}

/** What one SNI host name on one port leads to, with who asked for it. */
interface Claim {
  readonly serverName: string;
  /** A listener (`unix:…`), or a passthrough backend that the port's passthrough server proxies to. */
  readonly target: string | PassthroughTarget;
  readonly comment: string;
  /** For settling collisions between Ingress and Gateway API claims. */
  readonly owner?: SourceObject;
  /**
   * An Ingress host the http servers terminate. The map's default already sends it there, so it needs
   * an entry only when a wildcard claim would otherwise take it.
   */
  readonly terminated?: { readonly declaresTls: boolean };
  /** For reports; the claim's losers are added once collisions are settled. */
  readonly origin: SniRouteOrigin;
}

/**
 * Where the front `pass`es hosts whose backends read a PROXY header, by version: loopback addresses of the
 * TLS port that nothing else uses (127.0.0.1 stays the port's own for local clients). The front listens
 * on the port's wildcard address, which covers them, so they are not bound; `pass` finds the server by the
 * address alone.
 */
const proxyProtocolLoopback: Readonly<Record<ProxyProtocolVersion, string>> = { v1: '127.0.0.2', v2: '127.0.0.3' };

/** Public CA chains carry intermediates; nginx's default depth of 1 would refuse them. */
const backendTlsVerifyDepth = 4;

/**
 * The SNI fronts, one per TLS port. Each hands a connection on by its SNI: passthrough hosts and Gateway
 * API passthrough routes to the port's shared passthrough listener, which reads the SNI again and proxies
 * to the backend; Gateway Terminate routes to stream servers that terminate TLS; terminated Ingress hosts
 * to the http servers. Unmatched SNI goes to the http servers on the Ingress HTTPS port and is closed on a
 * port that only Gateway listeners use. With `pass` the hand-off is not a proxy hop at all. The Ingress
 * HTTPS port gets no front when every name on it goes to the http servers: they listen on it themselves.
 */
export function buildStream(input: StreamInput): StreamParts {
  const builder = new StreamBuilder(input.runDir);
  const ports = claimsByPort(input, builder);
  const passthroughServers: PassthroughServer[] = [];
  const proxyProtocolServers: ProxyProtocolServer[] = [];
  const frontends = [...ports.entries()]
    .sort(([a], [b]) => a - b)
    .map(([port, claims]): SniFrontend => {
      const isIngressPort = port === input.httpsPort;
      const owned = isIngressPort && input.hostOwnership ? ownedClaims(claims, input.hostOwnership, port) : claims;
      const settled = oneClaimPerName(owned, port, input.report);
      const wildcards = settled.filter((c) => !c.terminated && c.serverName.startsWith('*.')).map((c) => c.serverName);
      const routes = settled
        .filter((c) => !c.terminated || wildcards.some((wildcard) => wildcard !== c.serverName && wildcardCovers(wildcard, c.serverName)))
        .sort(byString((c) => c.serverName));
      const shared = new Map<string, { server: Omit<PassthroughServer, 'routes'>; routes: PassthroughBackend[] }>();
      const withProxyProtocol = new Map<ProxyProtocolVersion, { server: Omit<ProxyProtocolServer, 'routes'>; routes: PassthroughBackend[] }>();
      const frontRoute = ({ serverName, target, comment, origin }: Claim): SniRoute => {
        if (typeof target === 'string') return { serverName, mapKey: mapKey(serverName), target, comment, origin };
        const backendComment = target.description === undefined ? comment : `${comment} to ${target.description}`;
        if (target.proxyProtocol && input.handoff.proxyProtocol) {
          // The front sends a PROXY header on every connection it proxies, with the client's address and
          // its own: it can be the one hop to such a backend.
          return { serverName, mapKey: mapKey(serverName), target: target.backend, comment: `${backendComment}, PROXY protocol v1`, origin };
        }
        if (target.proxyProtocol) {
          const version = target.proxyProtocol;
          let entry = withProxyProtocol.get(version);
          if (!entry) {
            const server = {
              address: `${proxyProtocolLoopback[version]}:${port}`,
              port,
              version,
              directive: version === 'v2' ? ('v2' as const) : ('on' as const),
              backendVariable: `i2n_proxy_protocol_${port}_${version}`,
            };
            withProxyProtocol.set(version, (entry = { server, routes: [] }));
          }
          entry.routes.push({ serverName, mapKey: mapKey(serverName), backend: target.backend, comment: backendComment });
          return { serverName, mapKey: mapKey(serverName), target: entry.server.address, comment: `${comment}, PROXY protocol ${version}`, origin };
        }
        const kind = target.noRetry ? '-once' : '';
        let entry = shared.get(kind);
        if (!entry) {
          const server = {
            socket: `${input.runDir}/passthrough-${port}${kind}.sock`,
            port,
            backendVariable: `i2n_passthrough_${port}${kind.replaceAll('-', '_')}`,
            noRetry: target.noRetry,
          };
          shared.set(kind, (entry = { server, routes: [] }));
        }
        entry.routes.push({ serverName, mapKey: mapKey(serverName), backend: target.backend, comment: backendComment });
        return { serverName, mapKey: mapKey(serverName), target: `unix:${entry.server.socket}`, comment, origin };
      };
      const frontRoutes = routes.map(frontRoute);
      for (const { server, routes: backends } of shared.values()) passthroughServers.push(withAddedFields(server, { routes: backends }));
      for (const { server, routes: backends } of withProxyProtocol.values()) proxyProtocolServers.push(withAddedFields(server, { routes: backends }));
      return {
        port,
        routeVariable: `i2n_route_${port}`,
        acceptProxyProtocol: input.acceptProxyProtocol,
        trustedProxies: input.trustedProxies,
        routes: frontRoutes,
        defaultTarget: isIngressPort ? `unix:${input.httpsSocket}` : builder.rejectTarget(),
        defaultComment: isIngressPort ? 'terminating http servers (default certificate)' : 'reject socket (connection closed)',
      };
    });

  return {
    frontends: frontends.filter((front) => front.port !== input.httpsPort || front.routes.length > 0),
    passthroughServers: passthroughServers.sort(byString((s) => s.socket)),
    proxyProtocolServers: proxyProtocolServers.sort(byString((s) => s.address)),
    ...builder.parts(),
  };
}

/** Every SNI claim by port: Ingress passthrough and terminated hosts on the HTTPS port, TLSRoutes on theirs. */
function claimsByPort(input: StreamInput, builder: StreamBuilder): Map<number, Claim[]> {
  const ports = new Map<number, Claim[]>();
  const claimsOn = (port: number): Claim[] => {
    let claims = ports.get(port);
    if (!claims) ports.set(port, (claims = []));
    return claims;
  };

  const ingressClaims = claimsOn(input.httpsPort);
  for (const route of input.passthrough) {
    const backends = route.backend ? [withAddedFields(route.backend, { weight: 1 })] : [];
    const proxyProtocol = input.backendProxyProtocol?.get(route.host);
    ingressClaims.push({
      serverName: route.host,
      target: route.backend ? withAddedFields(builder.passthroughTarget(backends, 0), { ...(proxyProtocol && { proxyProtocol }) }) : builder.rejectTarget(),
      comment: route.comment,
      owner: route.owner,
      origin: {
        claim: { claimant: provenanceOf(route.owner, route.field), losers: route.losers },
        destination: { kind: 'passthrough', backends: backends.map(backendShare), rejectedWeight: 0 },
      },
    });
  }

  for (const portPlan of input.gatewayPorts) {
    const claims = claimsOn(portPlan.port);
    for (const hostname of portPlan.isolatedHostnames) {
      claims.push({
        serverName: hostname,
        target: builder.rejectTarget(),
        comment: 'listener hostname without a route: closed',
        origin: { destination: { kind: 'closed' } },
      });
    }
    for (const route of portPlan.routes) {
      const owner = input.routeObject(route.route.namespace, route.route.name);
      claims.push({
        serverName: route.hostname,
        target: builder.gatewayTarget(route),
        comment: `TLSRoute ${route.route.namespace}/${route.route.name} via Gateway ${route.listener.gatewayNamespace}/${route.listener.gatewayName} listener ${route.listener.listenerName}`,
        owner,
        origin: gatewayRouteOrigin(route, owner),
      });
    }
  }

  const httpsTarget = `unix:${input.httpsSocket}`;
  for (const host of input.terminated) {
    ingressClaims.push({
      serverName: host.host,
      target: httpsTarget,
      comment: 'terminated here',
      owner: host.owner,
      terminated: { declaresTls: host.declaresTls },
      origin: { claim: { claimant: provenanceOf(host.owner), losers: [] }, destination: { kind: 'http' } },
    });
  }
  return ports;
}


/**
 * One claim per host name and port: the oldest owner wins (design §5 precedence), except that an Ingress
 * with `spec.tls` for the exact name keeps it against a Gateway route. Both sides of a collision between
 * different resources are told: the loser gets no connections for the name, and the winner should know
 * who else asked for it.
 */
function oneClaimPerName(claims: readonly Claim[], port: number, report: Reporter): Claim[] {
  const byName = groupInOrder(claims, (c) => c.serverName);
  // A name with one claim needs no settling: only contested names are sorted (collisions are reported
  // in name order). The order of the result does not matter: the routes are sorted by name.
  const settled: Claim[] = [];
  const contested: [string, Claim[]][] = [];
  for (const [serverName, group] of byName) {
    const [only] = group;
    if (only && group.length === 1) settled.push(only);
    else contested.push([serverName, group]);
  }
  for (const [serverName, group] of contested.sort(([a], [b]) => compareStrings(a, b))) {
    // Claims without an owner (a listener hostname kept closed) yield to any resource's claim.
    const sorted = [...group].sort((a, b) =>
      a.owner && b.owner ? compareAge(a.owner, b.owner) : Number(a.owner === undefined) - Number(b.owner === undefined),
    );
    const winner = sorted.find((c) => c.terminated?.declaresTls) ?? sorted[0];
    if (!winner) continue;
    const losers: SourceObject[] = [];
    for (const loser of sorted) {
      if (loser === winner || sameTarget(loser, winner) || !loser.owner || !winner.owner || loser.owner === winner.owner) continue;
      losers.push(loser.owner);
      reportCollision(serverName, port, winner as Claim & { owner: SourceObject }, loser as Claim & { owner: SourceObject }, report);
    }
    settled.push(winner.owner && losers.length > 0 ? withLosers(winner, winner.owner, losers) : winner);
  }
  return settled;
}

function sameTarget(a: Claim, b: Claim): boolean {
  return typeof a.target === 'string' || typeof b.target === 'string' ? a.target === b.target : JSON.stringify(a.target) === JSON.stringify(b.target);
}

function withLosers(claim: Claim, owner: SourceObject, losers: readonly SourceObject[]): Claim {
  const known: ClaimProvenance = claim.origin.claim ?? { claimant: provenanceOf(owner), losers: [] };
  const added: Provenance[] = losersOf(owner, losers.map((object) => ({ object })));
  const keys = new Set(known.losers.map(provenanceKey));
  const merged = [...known.losers, ...added.filter((p) => !keys.has(provenanceKey(p)))];
  return withFields(claim, { origin: withFields(claim.origin, { claim: withFields(known, { losers: merged }) }) });
}

function provenanceKey(provenance: Provenance): string {
  const { kind, namespace, name } = provenance.resource;
  return `${kind}/${namespace ?? ''}/${name}`;
}

function backendShare(backend: Pick<WeightedBackend, 'service' | 'weight' | 'runtimeName' | 'servers'>): BackendShare {
  return {
    service: backend.service,
    weight: backend.weight,
    addresses: backend.runtimeName !== undefined ? [backend.runtimeName] : backend.servers.map((s) => s.address),
  };
}

function gatewayRouteOrigin(route: SniRoutePlan, owner: SourceObject | undefined): SniRouteOrigin {
  const backends = route.backends.map(backendShare);
  const [policyNamespace = '', policyName = ''] = route.backendTls?.policy.split('/') ?? [];
  return {
    claim: {
      claimant: owner
        ? provenanceOf(owner, ['spec', 'hostnames'])
        : { resource: { kind: 'TLSRoute', namespace: route.route.namespace, name: route.route.name } },
      losers: [],
    },
    destination:
      route.mode === 'Passthrough'
        ? { kind: 'passthrough', backends, rejectedWeight: route.rejectedWeight }
        : {
            kind: 'terminate',
            backends,
            rejectedWeight: route.rejectedWeight,
            certificates: route.certificates,
            ...(route.backendTls && {
              backendTls: {
                trustedCertificate: route.backendTls.trustedCertificate,
                name: route.backendTls.hostname,
                verifyDepth: backendTlsVerifyDepth,
                policy: { kind: 'BackendTLSPolicy', namespace: policyNamespace, name: policyName },
              },
            }),
          },
    listener: {
      gateway: { kind: 'Gateway', namespace: route.listener.gatewayNamespace, name: route.listener.gatewayName },
      name: route.listener.listenerName,
    },
  };
}

function reportCollision(
  serverName: string,
  port: number,
  winner: Claim & { readonly owner: SourceObject },
  loser: Claim & { readonly owner: SourceObject },
  report: Reporter,
): void {
  const winnerName = `${winner.owner.kind} ${resourceName(winner.owner)}`;
  const loserName = `${loser.owner.kind} ${resourceName(loser.owner)}`;
  const why = winner.terminated?.declaresTls && compareAge(winner.owner, loser.owner) > 0
    ? 'it terminates the name with spec.tls'
    : 'older, or first by namespace/name';
  if (loser.terminated) {
    report.warning(
      'sni-conflict',
      loser.owner,
      `TLS for ${serverName} on port ${port} goes to ${winnerName} (${why}), so this Ingress's paths for ${serverName} are served over plain HTTP only`,
    );
  } else {
    report.warning(
      'sni-conflict',
      loser.owner,
      `${serverName} is already routed on port ${port} by ${winnerName} (${why}); this claim gets no connections for it`,
    );
  }
  report.warning(
    'sni-conflict',
    winner.owner,
    `${loserName} also claims ${serverName} on port ${port}; this ${winner.owner.kind} keeps it (${why})${loser.terminated ? ', and that Ingress is served over plain HTTP only for it' : ''}`,
  );
}

/** `first-namespace-owns-host`: claims from a namespace other than the host's owner are dropped. */
function ownedClaims(claims: readonly Claim[], ownership: HostOwnership, port: number): Claim[] {
  return claims.filter(
    (claim) => !claim.owner || ownership.allows(claim.serverName, claim.owner, claim.serverName, `this claim gets no connections for it on port ${port}`),
  );
}

interface Destination {
  readonly upstream: string;
  readonly resolve?: string;
}

class StreamBuilder {
  private readonly upstreams = new Map<string, StreamUpstream>();
  private readonly terminateServers = new Map<string, TerminateServer>();
  /** Upstreams with a share for the reject socket. */
  private readonly rejecting = new Set<string>();
  private rejectSocket: string | undefined;

  constructor(private readonly runDir: string) {}

  /**
   * Where a stream server sends a backend set: an upstream block, with a share of `rejectedWeight` for
   * the reject socket; or, for a lone backend known by name, that name for nginx to resolve per
   * connection (the caller keeps such backends out of weighted sets).
   */
  destination(backends: readonly WeightedBackend[], rejectedWeight: number): Destination {
    const only = backends[0];
    if (backends.length === 1 && only && rejectedWeight === 0) {
      if (only.runtimeName !== undefined) return { upstream: only.upstream, resolve: only.runtimeName };
      if (!this.upstreams.has(only.upstream)) {
        this.upstreams.set(only.upstream, { name: only.upstream, servers: only.servers, comment: only.description });
      }
      return { upstream: only.upstream };
    }
    const servers: UpstreamServer[] = backends.flatMap((b) => b.servers.map((s) => ({ ...s, weight: b.weight })));
    if (rejectedWeight > 0) servers.push({ address: this.rejectTarget(), weight: rejectedWeight, neverMarkedDown: true });
    const name = upstreamName(`weighted_${digest(JSON.stringify(servers))}`);
    if (rejectedWeight > 0) this.rejecting.add(name);
    if (!this.upstreams.has(name)) {
      const parts = backends.map((b) => `${b.description} weight ${b.weight}`);
      if (rejectedWeight > 0) parts.push(`unresolved weight ${rejectedWeight} (closed)`);
      this.upstreams.set(name, { name, servers, comment: parts.join('; ') });
    }
    return { upstream: name };
  }

  /**
   * Where a passthrough server proxies a backend set to. A lone backend with one address (not a name nginx
   * resolves at run time) is named by that
   * address, with no upstream block: a stream `proxy_pass` with a variable looks an upstream block up by
   * name per connection, through all of them (`ngx_stream_proxy_handler`), while an address is connected to
   * as it is, with the same single-peer behaviour an upstream block of one server has.
   */
  passthroughTarget(backends: readonly WeightedBackend[], rejectedWeight: number): PassthroughTarget {
    const only = backends[0];
    const server = only?.servers[0];
    const address = server?.resolve === undefined ? server?.address : undefined;
    if (backends.length === 1 && only && rejectedWeight === 0 && only.runtimeName === undefined && only.servers.length === 1 && address) {
      return { backend: address, noRetry: false, description: only.description };
    }
    const destination = this.destination(backends, rejectedWeight);
    return { backend: destination.resolve ?? destination.upstream, noRetry: this.rejecting.has(destination.upstream) };
  }

  gatewayTarget(route: SniRoutePlan): string | PassthroughTarget {
    if (route.backends.length === 0) return this.rejectTarget();
    if (route.mode === 'Passthrough') return this.passthroughTarget(route.backends, route.rejectedWeight);
    const destination = this.destination(route.backends, route.rejectedWeight);
    const server: Omit<TerminateServer, 'socket' | 'comment'> = {
      certificates: route.certificates,
      ...destination,
      noRetry: this.rejecting.has(destination.upstream),
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

  parts(): Omit<StreamParts, 'frontends' | 'passthroughServers' | 'proxyProtocolServers'> {
    return {
      upstreams: [...this.upstreams.values()].sort(byString((u) => readablePart(u.name))),
      terminateServers: [...this.terminateServers.values()].sort(byString((s) => s.socket)),
      ...(this.rejectSocket !== undefined && { rejectSocket: this.rejectSocket }),
    };
  }
}

/** Short and stable: unix socket paths are limited to 107 bytes, names are not. */
function digest(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 16);
}

/**
 * `*_hash_bucket_size` must hold the longest name, or nginx refuses to start; and a bucket that holds
 * only one or two entries makes nginx look for a table without collisions, which it may not find below
 * `*_hash_max_size` (it then warns and builds a slow one). Buckets for four of the longest entries (a
 * pointer and the name, padded to a pointer) and a table up to four slots per name always succeed.
 */
export function hashSizes(names: readonly string[]): { bucketSize: number; maxSize: number } {
  const longest = names.reduce((max, name) => Math.max(max, name.length), 0);
  const entry = 8 + Math.ceil((longest + 2) / 8) * 8;
  return {
    bucketSize: Math.max(64, nextPowerOfTwo(entry * 4)),
    maxSize: Math.max(1024, nextPowerOfTwo(names.length * 4)),
  };
}

function nextPowerOfTwo(n: number): number {
  let power = 1;
  while (power < n) power *= 2;
  return power;
}

/**
 * The PROXY protocol version for each passthrough host whose winning Ingress asks for one. An Ingress that
 * asks but wins no passthrough host (it terminates TLS, or older claims took its hosts) is told that
 * nothing is sent.
 */
export function passthroughProxyProtocols(
  requested: ReadonlyMap<SourceObject, ProxyProtocolRequest>,
  routes: readonly PassthroughRoute[],
  report: Reporter,
): Map<string, ProxyProtocolVersion> {
  const byHost = new Map<string, ProxyProtocolVersion>();
  const served = new Set<SourceObject>();
  for (const route of routes) {
    const request = requested.get(route.owner);
    if (request === undefined) continue;
    served.add(route.owner);
    // Without a usable backend the host's connections are closed, and the Ingress is told so already.
    if (route.backend) byHost.set(route.host, request.version);
  }
  for (const [object, { field }] of requested) {
    if (served.has(object)) continue;
    report.warning(
      'backend-proxy-protocol-ignored',
      object,
      'PROXY protocol to backends applies to ssl-passthrough hosts only, and this Ingress serves none (it terminates TLS, or older Ingresses hold its hosts): no PROXY header is sent',
      field,
    );
  }
  return byHost;
}
