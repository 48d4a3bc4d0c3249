import type { FieldPath } from '../../model/diagnostics.js';
import { byString, compareAge } from '../settle/precedence.js';
import { resourceName } from '../report.js';
import { compareSpecificity, intersectHostnames } from './hostnames.js';
import type { TlsRouteInput } from './inputs.js';
import type { Listener } from './listeners.js';
import type { PortPlan, SniRoutePlan } from '../settle/port-plan.js';
import type { OnceReporter, Traffic } from './traffic.js';

/** A (listener, route) pair asking for the connections of one host name on one port. */
export interface Claim {
  readonly hostname: string;
  readonly listener: Listener;
  readonly route: TlsRouteInput;
  readonly routeHostnameIndex?: number;
  readonly traffic: Traffic;
}

/**
 * Settles claims on the same port and host name: the more specific listener hostname first (exact, then
 * longer wildcard suffix, then none), then the oldest route, then route namespace/name. Different host
 * names need no settling — nginx's `map … hostnames` prefers exact, then the longest wildcard — so each
 * port gets one entry per distinct host name. Every port with a programmed listener is listed, even
 * without routes: unmatched SNI there is closed, and so is a listener hostname that no route claims
 * (listener isolation: a narrower listener owns its names even when it has no route for them).
 */
export function settleClaims(claims: readonly Claim[], programmed: readonly Listener[], once: OnceReporter): PortPlan[] {
  const ports = new Map<number, Map<string, Claim[]>>();
  for (const listener of programmed) if (!ports.has(listener.port)) ports.set(listener.port, new Map());
  for (const claim of claims) {
    if (lostToNarrowerListener(claim, claims, programmed, once)) continue;
    const byHost = ports.get(claim.listener.port) ?? new Map<string, Claim[]>();
    ports.set(claim.listener.port, byHost);
    const list = byHost.get(claim.hostname) ?? [];
    list.push(claim);
    byHost.set(claim.hostname, list);
  }
  return [...ports.entries()]
    .sort(([a], [b]) => a - b)
    .map(([port, byHost]) => ({
      port,
      routes: [...byHost.entries()]
        .sort(byString(([hostname]) => hostname))
        .map(([hostname, list]) => winner(port, hostname, list, once)),
      isolatedHostnames: [
        ...new Set(
          programmed
            .filter((l) => l.port === port && l.hostname !== undefined && !byHost.has(l.hostname))
            .map((l) => l.hostname as string),
        ),
      ].sort(),
    }));
}

/**
 * Listener isolation: a name under a more specific listener on the same port belongs to that listener,
 * whether or not it has a route for the name. When a claim through a narrower listener exists, the
 * settling below prefers it (and says so); when none does, the broader claim is dropped here.
 */
function lostToNarrowerListener(claim: Claim, claims: readonly Claim[], programmed: readonly Listener[], once: OnceReporter): boolean {
  const narrower = (listener: Listener) =>
    listener.port === claim.listener.port && compareSpecificity(listener.hostname, claim.listener.hostname) < 0;
  const owner = programmed.find((other) => narrower(other) && intersectHostnames(other.hostname, claim.hostname) === claim.hostname);
  if (!owner) return false;
  if (claims.some((other) => other.hostname === claim.hostname && narrower(other.listener))) return false;
  const path: FieldPath = claim.routeHostnameIndex !== undefined ? ['spec', 'hostnames', claim.routeHostnameIndex] : ['spec'];
  once.warning(
    'route-hostname-conflict',
    claim.route.object,
    `${claim.hostname} on port ${claim.listener.port} belongs to listener ${owner.spec.name} of Gateway ${resourceName(owner.gateway.object)} (its hostname ${owner.hostname ?? '(none)'} is more specific than ${claim.listener.hostname ?? '(none)'}), which has no route for it; this route gets no connections for it`,
    path,
  );
  return true;
}

function compareClaims(a: Claim, b: Claim): number {
  return (
    compareSpecificity(a.listener.hostname, b.listener.hostname) ||
    compareAge(a.route.object, b.route.object) ||
    compareAge(a.listener.gateway.object, b.listener.gateway.object) ||
    a.listener.index - b.listener.index
  );
}

function winner(port: number, hostname: string, claims: readonly Claim[], once: OnceReporter): SniRoutePlan {
  const [first, ...rest] = [...claims].sort(compareClaims);
  if (!first) throw new Error('a host name without claims');
  const via = (c: Claim) => `listener ${c.listener.spec.name} of Gateway ${resourceName(c.listener.gateway.object)}`;
  for (const loser of rest) {
    if (loser.route.object === first.route.object) continue;
    const why =
      compareSpecificity(first.listener.hostname, loser.listener.hostname) < 0
        ? `its listener hostname ${first.listener.hostname ?? '(none)'} is more specific than ${loser.listener.hostname ?? '(none)'}`
        : 'it is older, or first by namespace/name';
    const path: FieldPath = loser.routeHostnameIndex !== undefined ? ['spec', 'hostnames', loser.routeHostnameIndex] : ['spec'];
    once.warning(
      'route-hostname-conflict',
      loser.route.object,
      `${hostname} on port ${port} is served by TLSRoute ${resourceName(first.route.object)} through ${via(first)} (${why}); this route gets no connections for it through ${via(loser)}`,
      path,
    );
  }
  const { traffic, listener, route } = first;
  return {
    hostname,
    mode: listener.mode,
    listener: listener.ref,
    route: { namespace: route.object.metadata.namespace, name: route.object.metadata.name },
    backends: traffic.backends,
    rejectedWeight: traffic.rejectedWeight,
    certificates: listener.mode === 'Terminate' ? listener.certificates : [],
    ...(traffic.backendTls && { backendTls: traffic.backendTls }),
  };
}
