import type { SourceObject } from '../../sources/snapshot.js';
import { byString } from '../settle/precedence.js';
import type { Reporter } from '../report.js';
import { resourceName } from '../report.js';
import { key } from '../resources.js';
import type { BackendTlsPlan, WeightedBackend } from '../settle/port-plan.js';
import type { BackendTlsPolicies } from './policies.js';
import type { RouteBackend, RouteBackends } from './routes.js';

/** Where a route's connections go through one listener. */
export interface Traffic {
  readonly backends: readonly WeightedBackend[];
  readonly rejectedWeight: number;
  readonly backendTls?: BackendTlsPlan;
}

/** Passthrough: the resolved backends by weight; the TLS goes to them untouched, so no policy applies. */
export function passthroughTraffic(backends: RouteBackends): Traffic {
  return { backends: weighted(backends.resolved), rejectedWeight: backends.rejectedWeight };
}

/**
 * Terminate: backends get plain TCP unless a BackendTLSPolicy targets their Service port; then nginx
 * re-encrypts. nginx sets `proxy_ssl*` per server (one per SNI host name), not per upstream server, so
 * all backends of a route must agree: the same trust and hostname, or no policy at all. A backend whose
 * policy is invalid has its share closed; disagreeing backends close the whole route.
 */
export function terminateTraffic(
  route: SourceObject,
  backends: RouteBackends,
  policies: BackendTlsPolicies,
  gateway: string,
  once: OnceReporter,
): Traffic {
  let rejectedWeight = backends.rejectedWeight;
  const http = route.kind === 'HTTPRoute';
  const groups = new Map<string, { tls?: BackendTlsPlan; members: RouteBackend[] }>();
  for (const backend of backends.resolved) {
    const applied = policies.forBackend(backend, gateway);
    if (backend.weight === 0) continue;
    if (applied && !applied.tls) {
      rejectedWeight += backend.weight;
      once.error(
        'backend-tls-policy-unusable',
        route,
        `${backend.backend.description} is targeted by BackendTLSPolicy ${resourceName(applied.policy)}, which is not valid (${applied.problem ?? 'see its diagnostics'}); its share of ${http ? 'requests' : 'connections'} (weight ${backend.weight}) is ${http ? 'answered 500' : 'closed'} rather than sent in plaintext`,
        backend.field,
      );
      continue;
    }
    const tls = applied?.tls;
    const groupKey = tls ? `${tls.trustedCertificate}\n${tls.hostname}` : '';
    const group = groups.get(groupKey) ?? { ...(tls && { tls }), members: [] };
    group.members.push(backend);
    groups.set(groupKey, group);
  }
  if (groups.size > 1) {
    const described = [...groups.values()]
      .map((g) => `${g.members.map((m) => `Service ${key(m.namespace, m.service)}`).join(', ')}: ${g.tls ? `BackendTLSPolicy ${g.tls.policy} (hostname ${g.tls.hostname})` : 'no BackendTLSPolicy'}`)
      .join('; ');
    once.error(
      'backend-tls-mixed',
      route,
      `the backends of this route differ in backend TLS (${described}); nginx re-encrypts per ${http ? 'location' : 'host name'}, not per backend, so ${http ? "the rule's requests are answered 500" : 'connections through Terminate listeners are closed'}; give every backend the same BackendTLSPolicy settings, or none`,
      backends.resolved[0]?.field.slice(0, -1) ?? ['spec', 'rules', 0, 'backendRefs'],
    );
    const all = [...groups.values()].flatMap((g) => g.members).reduce((sum, m) => sum + m.weight, 0);
    return { backends: [], rejectedWeight: rejectedWeight + all };
  }
  const [only] = [...groups.values()];
  if (!only) return { backends: [], rejectedWeight };
  return { backends: weighted(only.members), rejectedWeight, ...(only.tls && { backendTls: only.tls }) };
}

/** Backends that take traffic, one entry per upstream (the same Service port twice adds up), sorted. */
function weighted(backends: readonly RouteBackend[]): WeightedBackend[] {
  const byUpstream = new Map<string, WeightedBackend>();
  for (const { backend, weight } of backends) {
    if (weight === 0) continue;
    const existing = byUpstream.get(backend.upstream);
    byUpstream.set(backend.upstream, {
      upstream: backend.upstream,
      servers: backend.servers,
      ...(backend.runtimeName !== undefined && { runtimeName: backend.runtimeName }),
      weight: (existing?.weight ?? 0) + weight,
      description: backend.description,
      service: backend.service,
    });
  }
  return [...byUpstream.values()].sort(byString((b) => b.upstream));
}

/**
 * A backend nginx resolves at connect time cannot be a weighted member of an upstream block (those are
 * resolved when the config loads), so it works only as a route's one backend; in a weighted set its
 * share of connections is closed.
 */
export function withoutRuntimeNamesInSets(traffic: Traffic, route: SourceObject, once: OnceReporter): Traffic {
  if (traffic.backends.length + (traffic.rejectedWeight > 0 ? 1 : 0) <= 1) return traffic;
  const byName = traffic.backends.filter((b) => b.runtimeName !== undefined);
  if (byName.length === 0) return traffic;
  for (const backend of byName) {
    once.error(
      'backend-weighted-by-name',
      route,
      `${backend.description} is reached by DNS name (${backend.runtimeName}), which nginx resolves per connection and cannot weigh against other backends; its share of connections (weight ${backend.weight}) is closed. Make it the route's only backend`,
      ['spec', 'rules', 0, 'backendRefs'],
    );
  }
  return {
    ...traffic,
    backends: traffic.backends.filter((b) => b.runtimeName === undefined),
    rejectedWeight: traffic.rejectedWeight + byName.reduce((sum, b) => sum + b.weight, 0),
  };
}

/** A route attached to several listeners would repeat the same finding; this says it once. */
export class OnceReporter {
  private readonly seen = new Set<string>();

  constructor(private readonly report: Reporter) {}

  error(code: string, object: SourceObject, message: string, path: readonly (string | number)[]): void {
    if (this.first(code, object, message)) this.report.error(code, object, message, path);
  }

  warning(code: string, object: SourceObject, message: string, path: readonly (string | number)[]): void {
    if (this.first(code, object, message)) this.report.warning(code, object, message, path);
  }

  private first(code: string, object: SourceObject, message: string): boolean {
    const id = `${object.kind}|${resourceName(object)}|${code}|${message}`;
    if (this.seen.has(id)) return false;
    this.seen.add(id);
    return true;
  }
}
