import type { Location } from '../../model/nginx.js';
import { listenerPortVariable } from '../gateway/http-routes.js';
import { locationFiles } from './named-files.js';
import { plainHttpSharing, type PlainHttpSharing } from './redirect-server.js';

/**
 * What the data plane reads from one host's locations to build the parts of the http block that every
 * host contributes to (upstream blocks, files, the shared plain-HTTP servers, the maps). Made from the
 * locations alone, so one host's facts stand as long as its locations array does.
 */
export interface LocationFacts {
  /** The upstream blocks the locations use, in the order they first use them (`upstreamsOf`). */
  readonly upstreams: readonly string[];
  /** The key, CA and user files they name. */
  readonly files: readonly string[];
  /** The upstreams of their canaries. */
  readonly canaries: readonly string[];
  /** How the host's plain HTTP could be shared, as far as its locations tell (redirect-server.ts). */
  readonly plainHttp: PlainHttpSharing;
  /** A redirect names the listener's port variable. */
  readonly namesListenerPort: boolean;
  /** An HTTPS redirect drops the trailing `/` of the request URI. */
  readonly trimsRequestUri: boolean;
  /** A gRPC proxy inherits the http block's request headers. */
  readonly grpcInheritsRequestHeaders: boolean;
}

export type FactsOf = (locations: readonly Location[]) => LocationFacts;

export function locationFacts(locations: readonly Location[]): LocationFacts {
  const upstreams = new Set<string>();
  const files: string[] = [];
  const canaries: string[] = [];
  for (const location of locations) {
    for (const upstream of upstreamsOf(location)) upstreams.add(upstream);
    files.push(...locationFiles(location));
    if (location.proxy?.canary) canaries.push(location.proxy.canary.upstream);
  }
  return {
    upstreams: [...upstreams],
    files,
    canaries,
    plainHttp: plainHttpSharing(locations),
    namesListenerPort: locations.some((l) => l.behaviour?.redirect?.url.includes(`$${listenerPortVariable}`) === true),
    trimsRequestUri: locations.some((l) => l.plainHttp.redirect && l.plainHttp.trimTrailingSlash === true),
    grpcInheritsRequestHeaders: locations.some((l) => l.proxy?.grpc === true && l.proxy.inheritsRequestHeaders === true),
  };
}

/** The upstream blocks a location uses: its backend, its canary's, its auth service's, its mirror's, its error pages'. */
function upstreamsOf(location: Location): string[] {
  return [
    ...(location.proxy ? [location.proxy.upstream] : []),
    ...(location.proxy?.canary ? [location.proxy.canary.upstream] : []),
    ...(location.authEndpoint?.upstream !== undefined ? [location.authEndpoint.upstream] : []),
    ...(location.mirrorEndpoint?.upstream !== undefined ? [location.mirrorEndpoint.upstream] : []),
    ...(location.errorPage?.proxy ? [location.errorPage.proxy.upstream] : []),
  ];
}

/**
 * The facts of each host's locations by its locations array: the array of an unchanged host is the same
 * from one build to the next (translate/settle/hosts.ts `HostSettleMemo`, and `LogLabelsMemo` after
 * it), and the model is never changed in place, so a build after one change looks at the changed hosts'
 * locations only. The cluster mode keeps one across builds (translate.ts `TranslateMemo`).
 */
export class LocationFactsMemo {
  private readonly facts = new WeakMap<readonly Location[], LocationFacts>();
  /**
   * One string for each ACME proxy shape: thousands of hosts have the same one, and sharePlainHttpServers
   * compares them all with the most common, which is quick for the same string and a walk through a
   * kilobyte or so for an equal copy. Only speed depends on it, so it is just emptied when it grows large.
   */
  private readonly shapes = new Map<string, string>();

  readonly of: FactsOf = (locations) => {
    let facts = this.facts.get(locations);
    if (facts === undefined) this.facts.set(locations, (facts = this.withSharedShape(locationFacts(locations))));
    return facts;
  };

  private withSharedShape(facts: LocationFacts): LocationFacts {
    const sharing = facts.plainHttp;
    if (typeof sharing !== 'object') return facts;
    let shape = this.shapes.get(sharing.shape);
    if (shape === undefined) {
      if (this.shapes.size >= maxShapes) this.shapes.clear();
      this.shapes.set(sharing.shape, (shape = sharing.shape));
    }
    return { ...facts, plainHttp: { ...sharing, shape } };
  }
}

const maxShapes = 10_000;
