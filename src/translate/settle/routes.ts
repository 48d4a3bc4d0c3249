/**
 * A host's paths: the winning claim of each location (oldest Ingress, then namespace/name), the losers
 * told, and the winners turned into locations with their redirects and the ACME challenge path.
 */
import type { Location, LocationBehaviour, PlainHttpAction } from '../../model/nginx.js';
import { withFields } from '../../model/objects.js';
import { Reporter, resourceName } from '../report.js';
import type { RouteClaim, TlsClaim } from './claims.js';
import { compareAge, groupBy, uniqueIngresses } from './precedence.js';
import { losersOf, provenanceOf } from './provenance.js';
import type { HostSettings } from './settled.js';
import { markShadowedLocations } from './shadowed-locations.js';

export const acmeChallengePrefix = '/.well-known/acme-challenge/';

export function reportYieldedWeakClaims(host: string, named: readonly (RouteClaim | TlsClaim)[], report: Reporter): void {
  const told = new Set<string>();
  for (const claim of named) {
    if (!claim.weak || told.has(resourceName(claim.ingress))) continue;
    told.add(resourceName(claim.ingress));
    report.warning(
      'host-alias-taken',
      claim.ingress,
      `${claim.weak} asks for ${host}, which another resource claims; an alias never takes a host, so it is not served here`,
      claim.field,
    );
  }
}

/**
 * Paths of one host from Ingresses in several namespaces: the namespace that claimed the host first
 * is told who adds to it, and each adding Ingress is told whose host it is. (The ConfigMap key
 * `first-namespace-owns-host` refuses such additions instead.)
 */
export function reportSharedHosts(routes: ReadonlyMap<string, readonly RouteClaim[]>, tls: readonly TlsClaim[], report: Reporter): void {
  const tlsByHost = groupBy(tls, (c) => c.host);
  for (const [host, winners] of routes) {
    if (host === '') continue;
    const claimants = [...winners.map((w) => w.ingress), ...(tlsByHost.get(host) ?? []).map((c) => c.ingress)];
    const owner = [...claimants].sort(compareAge)[0];
    if (!owner) continue;
    const guests = groupBy(
      winners.filter((w) => w.ingress.metadata.namespace !== owner.metadata.namespace),
      (w) => resourceName(w.ingress),
    );
    const acme = acmeChallengeRoute(winners);
    for (const guestRoutes of guests.values()) {
      const guest = guestRoutes[0]!.ingress;
      const paths = describePaths(guestRoutes);
      const acmeNote =
        acme?.ingress === guest ? ' It also answers ACME HTTP-01 challenges for the host, so certificates for the host can be issued to it.' : '';
      report.warning(
        'host-shared-across-namespaces',
        guest,
        `host ${host} belongs to namespace ${owner.metadata.namespace} (Ingress ${resourceName(owner)} claimed it first); this Ingress adds ${paths} to it.${acmeNote}`,
      );
      report.warning(
        'host-shared-across-namespaces',
        owner,
        `Ingress ${resourceName(guest)} from namespace ${guest.metadata.namespace} adds ${paths} to host ${host}, which this Ingress claimed first.${acmeNote} Set the ConfigMap key first-namespace-owns-host to refuse that`,
      );
    }
  }
}

export function describePaths(routes: readonly RouteClaim[]): string {
  const paths = [...new Set(routes.map((r) => (r.fallback ? 'its defaultBackend' : r.ingressPath)))].sort();
  return `path${paths.length === 1 ? '' : 's'} ${paths.join(', ')}`;
}

/** The route that serves `/.well-known/acme-challenge/…` on a host: nginx's longest prefix location. */
export function acmeChallengeRoute(winners: readonly RouteClaim[]): RouteClaim | undefined {
  const probe = `${acmeChallengePrefix}token`;
  return winners
    .filter((w) => w.modifier === '' && probe.startsWith(w.path))
    .sort((a, b) => b.path.length - a.path.length)[0];
}

/**
 * Order of claims on one location: explicit paths before defaultBackend, Exact before Prefix, then age
 * (an Ingress and an HTTPRoute alike), then, between an Ingress and an HTTPRoute of the same age and
 * name (manifests without timestamps), the Ingress.
 */
export function compareRouteClaims(a: RouteClaim, b: RouteClaim): number {
  return (
    Number(a.fallback) - Number(b.fallback) ||
    Number(b.exact) - Number(a.exact) ||
    compareAge(a.ingress, b.ingress) ||
    Number(a.ingress.kind !== 'Ingress') - Number(b.ingress.kind !== 'Ingress') ||
    a.ordinal - b.ordinal
  );
}

/** A location on a host: canaries and client certificates replace winning claims, never their location. */
export function routeKey(claim: RouteClaim): string {
  return `${claim.host} ${claim.modifier} ${claim.path}${claim.requestMatch ? `\n${claim.requestMatch.key}` : ''}`;
}

/** Winning claims per host, and per winning location (`routeKey`) the claims of other Ingresses it beat. */
export function settleRoutes(
  claims: readonly RouteClaim[],
  report: Reporter,
): { byHost: Map<string, RouteClaim[]>; losers: Map<string, RouteClaim[]> } {
  const byHost = new Map<string, RouteClaim[]>();
  const beaten = new Map<string, RouteClaim[]>();
  const reported = new Set<string>();
  for (const [host, hostClaims] of groupBy(claims, (c) => c.host)) {
    const winners: RouteClaim[] = [];
    for (const locationClaims of groupBy(hostClaims, routeKey).values()) {
      const [winner, ...losers] = [...locationClaims].sort(compareRouteClaims);
      if (!winner) continue;
      winners.push(winner);
      for (const loser of losers) {
        if (loser.fallback || winner.fallback || loser.exact !== winner.exact) continue;
        if (loser.ingress !== winner.ingress) beaten.set(routeKey(winner), [...(beaten.get(routeKey(winner)) ?? []), loser]);
        const once = `${resourceName(loser.ingress)} ${loser.field.join('.')}`;
        if (reported.has(once)) continue;
        reported.add(once);
        const where = host === '' ? 'rules without host' : `host ${host}`;
        const sameIngress = loser.ingress === winner.ingress;
        report.warning(
          'path-conflict',
          loser.ingress,
          sameIngress
            ? `this path repeats an earlier path of the same ${loser.ingress.kind} on ${where}; the first one is used`
            : `${where} path ${winner.path} is already routed by ${winner.ingress.kind} ${resourceName(winner.ingress)} (older, or first by namespace/name); this path is ignored there`,
          loser.field,
        );
      }
    }
    byHost.set(host, winners);
  }
  return { byHost, losers: beaten };
}

/**
 * Which of `hosts` a Gateway API route or a strong claim (a rule, `spec.tls` or a passthrough) names:
 * one pass over the claims, however many aliases there are.
 */
/**
 * Plain HTTP to a passthrough host whose Ingress asks for the redirect: every path answers 308 to HTTPS,
 * where the backend answers by SNI (ingress-nginx does the same; without the redirect it is 404 here,
 * never the passthrough backend spoken to in plain HTTP).
 */
export function passthroughRedirect(host: string): Location {
  // ingress-nginx's redirect drops a trailing `/` here too (the HTTP annotations do not apply to passthrough hosts).
  const plainHttp: PlainHttpAction = { redirect: true, serve: false, trimTrailingSlash: true };
  return { modifier: '', path: '/', comment: `ssl-passthrough host ${host}: plain HTTP is redirected to HTTPS`, plainHttp };
}

export function toLocations(
  winners: readonly RouteClaim[],
  hostHasTls: boolean,
  hsts: boolean,
  settings: HostSettings,
  losers: ReadonlyMap<string, readonly RouteClaim[]>,
): Location[] {
  const plainHttp = (redirect: boolean, uri?: RouteClaim['redirectUri']): PlainHttpAction => ({
    redirect,
    serve: !redirect || settings.trustForwardedProto,
    ...(redirect && uri),
  });
  // A regex path never takes a request that a Prefix path of an Ingress in another namespace matches:
  // such prefix locations get `^~`, which stops nginx from trying regexes for them.
  const regexNamespaces = new Set(winners.filter((w) => w.modifier === '~*').map((w) => w.ingress.metadata.namespace));
  const guarded = (claim: RouteClaim) =>
    claim.modifier === '' && [...regexNamespaces].some((namespace) => namespace !== claim.ingress.metadata.namespace);
  const locations: Location[] = winners.map((claim) => {
    // A dispatcher and the 404 of no match route nothing themselves: the named locations carry the claims' origins.
    const bare = { modifier: claim.modifier, path: claim.path, comment: claim.comment, plainHttp: plainHttp(false) };
    if (claim.dispatch) return { ...bare, dispatch: claim.dispatch };
    if (claim.unavailableStatus === 404) return { ...bare, returnStatus: 404 };
    const behaviour = claim.behaviour && withFields(claim.behaviour, { repeatHsts: hsts && addsResponseHeaders(claim.behaviour) });
    return {
      modifier: guarded(claim) ? ('^~' as const) : claim.modifier,
      path: claim.path,
      comment: claim.comment,
      plainHttp: plainHttp(
        !claim.path.startsWith(acmeChallengePrefix.slice(0, -1)) &&
          (claim.forceSslRedirect || (hostHasTls && (claim.sslRedirect ?? settings.sslRedirect))),
        claim.redirectUri,
      ),
      // A redirect answers every request, so the location needs no backend.
      ...(behaviour?.redirect ? {} : claim.proxy ? { proxy: claim.proxy } : { returnStatus: claim.unavailableStatus ?? (503 as const) }),
      ...(behaviour && { behaviour }),
      ...(claim.definitions?.length && { references: claim.definitions.map((d) => d.reference) }),
      origin: {
        claim: {
          claimant: provenanceOf(claim.ingress, claim.field),
          losers: losersOf(claim.ingress, (losers.get(routeKey(claim)) ?? []).map((l) => ({ object: l.ingress, path: l.field }))),
        },
        path: claim.ingressPath,
        pathType: claim.pathType,
      },
    };
  });
  const acme = acmeChallengeLocation(locations, regexNamespaces.size > 0);
  if (acme) locations.push(acme);
  // Without a location for `/`, nginx would serve files from its prefix's html folder. The controller's
  // default backend takes what no Ingress path matches; a host only HTTPRoutes route keeps the Gateway
  // API's 404.
  if (!locations.some((l) => (l.modifier === '' || l.modifier === '^~') && l.path === '/')) {
    const fallback = settings.fallback && !(winners.length > 0 && winners.every((w) => w.ingress.kind === 'HTTPRoute' || w.ingress.kind === 'GRPCRoute')) ? settings.fallback : undefined;
    locations.push(
      fallback
        ? { modifier: '', path: '/', comment: 'no Ingress path matches: the default backend (--default-backend-service)', plainHttp: plainHttp(false), proxy: fallback }
        : { modifier: '', path: '/', comment: 'no Ingress path matches', plainHttp: plainHttp(false), returnStatus: 404 },
    );
  }
  const companions = new Map<string, Location>();
  // Every winner's: a location that answers 503 still sends that to its error pages.
  for (const companion of winners.flatMap((w) => w.companions)) {
    if (!companions.has(companion.path)) companions.set(companion.path, companion);
  }
  const byPath = (a: Location, b: Location) => (a.path < b.path ? -1 : a.path > b.path ? 1 : a.modifier === '=' ? -1 : 1);
  // nginx tries regex locations in the order they appear: the oldest Ingress's first, then the longer path.
  const regexOrder = new Map(
    winners
      .filter((w) => w.modifier === '~*')
      .sort((a, b) => compareAge(a.ingress, b.ingress) || b.path.length - a.path.length || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
      .map((w, index) => [w.path, index]),
  );
  return markShadowedLocations([
    ...locations.filter((l) => l.modifier !== '~*').sort(byPath),
    ...locations.filter((l) => l.modifier === '~*').sort((a, b) => (regexOrder.get(a.path) ?? 0) - (regexOrder.get(b.path) ?? 0)),
    ...[...companions.values()].sort(byPath),
  ]);
}

/**
 * A host with regex paths in several namespaces: the Prefix paths of each keep their requests from the
 * other namespaces' regexes (ingress-nginx would turn them all into regexes and let the longest win).
 */
export function reportRegexHosts(routes: ReadonlyMap<string, readonly RouteClaim[]>, report: Reporter): void {
  for (const [host, winners] of routes) {
    const regexIngresses = uniqueIngresses(winners.filter((w) => w.modifier === '~*').map((w) => w.ingress));
    for (const ingress of regexIngresses) {
      const others = uniqueIngresses(
        winners.filter((w) => w.modifier === '' && w.ingress.metadata.namespace !== ingress.metadata.namespace).map((w) => w.ingress),
      );
      if (others.length === 0) continue;
      report.warning(
        'regex-path-yields',
        ingress,
        `on ${host === '' ? 'rules without host' : `host ${host}`}, this Ingress's regex paths do not take requests that Prefix paths of ${others.map((o) => `Ingress ${resourceName(o)}`).join(', ')} (another namespace) match; ingress-nginx would turn those into regexes too`,
      );
    }
  }
}

/**
 * ACME HTTP-01 challenges must reach their backend over plain HTTP. When the location that would serve
 * them redirects, add one for the challenge prefix that serves them instead.
 */
export function acmeChallengeLocation(locations: readonly Location[], hostHasRegexes: boolean): Location | undefined {
  const covering = locations
    .filter((l) => (l.modifier === '' || l.modifier === '^~') && acmeChallengePrefix.startsWith(l.path))
    .sort((a, b) => b.path.length - a.path.length)[0];
  if (!covering || !covering.plainHttp.redirect) return undefined;
  return {
    // With regexes on the host, `^~` keeps the challenges where the location serving them says.
    modifier: hostHasRegexes ? '^~' : '',
    path: acmeChallengePrefix,
    comment: `ACME HTTP-01 challenges are never redirected; served as ${covering.comment}`,
    plainHttp: { redirect: false, serve: true },
    plainHttpOnly: true,
    ...(covering.proxy ? { proxy: covering.proxy } : { returnStatus: 503 as const }),
    ...(covering.origin && { origin: covering.origin }),
  };
}

/** The location adds response headers, which in nginx replaces the server's `add_header` (HSTS). */
export function addsResponseHeaders(behaviour: LocationBehaviour): boolean {
  return behaviour.cors !== undefined || behaviour.externalAuth !== undefined || behaviour.stickyCookie !== undefined || (behaviour.responseHeaders ?? []).length > 0;
}
