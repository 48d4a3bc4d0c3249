import type { MapBlock } from '../../model/nginx.js';
import type { RouteClaim } from './claims.js';
import { digestOf, type HttpExtensionRegistry } from './extensions.js';
import { compareAge } from './precedence.js';
import type { Reporter } from '../report.js';
import { resourceName } from '../report.js';

/**
 * HTTPRoute matches on headers, query parameters, method or a RegularExpression path, in nginx without
 * `if`. nginx picks a location by path as usual; where a request on that location may meet one of several
 * claims' conditions, the location becomes a dispatcher: a `map` per condition sets a variable to 1 or 0,
 * a `map` over those variables names the named location (`@i2n_route_…`) of the first claim, in the
 * Gateway API's precedence, whose conditions all hold, and the location goes there with
 * `error_page 418 = $variable; return 418;` (the request, its URI and body unchanged). The candidates of
 * a location are the claims that could serve its requests: its own and those of the shorter prefixes
 * around it (a request that meets no condition of its path falls through to them), and RegularExpression
 * paths, which stand on `/`. A request that meets none answers 404.
 *
 * An Ingress's location has no match to test and cannot be repeated as a named location: where an
 * Ingress holds the location itself, it keeps it and the conditional claims there are not served; where
 * an Ingress holds a shorter prefix around it, requests that meet no condition answer 404, said in a warning.
 */
export function withRequestDispatch(byHost: ReadonlyMap<string, RouteClaim[]>, extensions: HttpExtensionRegistry, report: Reporter): Map<string, RouteClaim[]> {
  const result = new Map<string, RouteClaim[]>();
  for (const [host, winners] of byHost) {
    result.set(host, winners.some((w) => w.requestMatch) ? dispatchHost(host, winners, extensions, report) : winners);
  }
  return result;
}

export const notFoundLocation = '@i2n_not_found';

function dispatchHost(host: string, winners: readonly RouteClaim[], extensions: HttpExtensionRegistry, report: Reporter): RouteClaim[] {
  const where = host === '' ? 'requests without a known host' : `host ${host}`;
  const heldByIngress = new Set(winners.filter((w) => w.ingress.kind === 'Ingress' && !w.requestMatch).map(locationOf));
  const kept = winners.filter((w) => {
    if (!w.requestMatch || !heldByIngress.has(locationOf(w))) return true;
    report.warning(
      'httproute-match-beside-ingress',
      w.ingress,
      `${where} path ${w.path} is routed by an Ingress, which has no header, query or method match to test; this match is not served there`,
      w.field,
    );
    return false;
  });
  const locations = new Map<string, { modifier: RouteClaim['modifier']; path: string }>();
  for (const w of kept) if (w.modifier !== '~*' && w.path.startsWith('/')) locations.set(locationOf(w), { modifier: w.modifier, path: w.path });
  if (kept.some((w) => w.requestMatch?.pathRegex !== undefined)) locations.set(' /', { modifier: '', path: '/' });
  const named = new Map<string, RouteClaim>();
  const dispatchers = new Map<string, RouteClaim>();
  let notFound = false;
  for (const [key, location] of locations) {
    if (heldByIngress.has(key)) continue;
    const candidates = kept.filter((w) => covers(w, location)).sort(comparePrecedence);
    const last = candidates.findIndex((c) => !c.requestMatch);
    const chosen = last < 0 ? candidates : candidates.slice(0, last + 1);
    if (!chosen.some((c) => c.requestMatch)) continue;
    const fallback = last < 0 ? undefined : chosen[last];
    if (fallback?.ingress.kind === 'Ingress') {
      report.warning(
        'httproute-match-fallthrough',
        chosen[0]!.ingress,
        `on ${where}, requests to ${location.path} that meet none of the HTTPRoute matches there answer 404: the shorter path ${fallback.path} of Ingress ${resourceName(fallback.ingress)} cannot be reached from a match`,
        chosen[0]!.field,
      );
    }
    const routed = chosen.filter((c) => c.ingress.kind !== 'Ingress');
    for (const claim of routed) {
      const name = namedLocationOf(claim);
      if (!named.has(name)) named.set(name, { ...withoutMatch(claim), modifier: '', path: name });
    }
    const conditional = routed.filter((c) => c.requestMatch);
    const otherwise = fallback && fallback.ingress.kind !== 'Ingress' ? namedLocationOf(fallback) : notFoundLocation;
    if (otherwise === notFoundLocation) notFound = true;
    const first = chosen[0]!;
    const { variable, references } = defineDispatch(host, location, conditional, otherwise, extensions);
    dispatchers.set(key, {
      ...withoutTarget(first),
      modifier: location.modifier,
      path: location.path,
      comment: `HTTPRoute matches on ${location.modifier ? `${location.modifier} ` : ''}${location.path}: the request goes to the first rule whose match it meets`,
      forceSslRedirect: false,
      sslRedirect: false,
      companions: [],
      references,
      dispatch: { variable, references },
    });
  }
  const served = kept.filter((w) => !w.requestMatch && !dispatchers.has(locationOf(w)));
  const missing = notFound ? [notFoundClaim(kept[0]!)] : [];
  return [...served, ...dispatchers.values(), ...[...named.values()].sort((a, b) => (a.path < b.path ? -1 : 1)), ...missing];
}

function locationOf(claim: RouteClaim): string {
  return `${claim.modifier} ${claim.path}`;
}

/** Whether a request nginx sends to `location` could be served by `claim`: its own, or a shorter prefix's (`/` holds the regex paths). */
function covers(claim: RouteClaim, location: { modifier: string; path: string }): boolean {
  if (claim.modifier === location.modifier && claim.path === location.path) return true;
  return claim.modifier === '' && claim.path.endsWith('/') && location.path.startsWith(claim.path);
}

/** The Gateway API's order: Exact, then RegularExpression, then the longest prefix; method; most headers; most query parameters; oldest; first in the route. */
export function comparePrecedence(a: RouteClaim, b: RouteClaim): number {
  const kind = (c: RouteClaim) => (c.pathType === 'Exact' ? 0 : c.requestMatch?.pathRegex !== undefined ? 1 : 2);
  const length = (c: RouteClaim) => (kind(c) === 1 ? (c.requestMatch?.pathRegex?.length ?? 0) : c.ingressPath.replace(/\/+$/, '').length);
  return (
    kind(a) - kind(b) ||
    length(b) - length(a) ||
    Number(b.requestMatch?.method ?? false) - Number(a.requestMatch?.method ?? false) ||
    (b.requestMatch?.headers ?? 0) - (a.requestMatch?.headers ?? 0) ||
    (b.requestMatch?.queryParams ?? 0) - (a.requestMatch?.queryParams ?? 0) ||
    compareAge(a.ingress, b.ingress) ||
    a.ordinal - b.ordinal
  );
}

function namedLocationOf(claim: RouteClaim): string {
  const { kind, metadata } = claim.ingress;
  return `@i2n_route_${digestOf(kind, metadata.namespace ?? '', metadata.name, claim.field.join('.'))}`;
}

function withoutMatch(claim: RouteClaim): RouteClaim {
  const copy: { -readonly [Key in keyof RouteClaim]: RouteClaim[Key] } = { ...claim };
  delete copy.requestMatch;
  return copy;
}

/** The claim's resource and field, without what it serves. */
function withoutTarget(claim: RouteClaim): RouteClaim {
  const copy: { -readonly [Key in keyof RouteClaim]: RouteClaim[Key] } = { ...withoutMatch(claim) };
  delete copy.proxy;
  delete copy.backend;
  delete copy.behaviour;
  delete copy.unavailableStatus;
  return copy;
}

function notFoundClaim(like: RouteClaim): RouteClaim {
  return {
    ...withoutTarget(like),
    modifier: '',
    path: notFoundLocation,
    comment: 'a request that meets no HTTPRoute match of its path',
    forceSslRedirect: false,
    sslRedirect: false,
    companions: [],
    references: [],
    unavailableStatus: 404,
  };
}

/**
 * The maps of one dispatcher: one per condition (shared by every location that tests it), and one over
 * their values, in precedence order, that names the named location to go to.
 */
function defineDispatch(
  host: string,
  location: { modifier: string; path: string },
  conditional: readonly RouteClaim[],
  otherwise: string,
  extensions: HttpExtensionRegistry,
): { variable: string; references: string[] } {
  const variables: string[] = [];
  for (const claim of conditional) {
    for (const condition of claim.requestMatch!.conditions) {
      const variable = `i2n_match_${digestOf(condition.source, condition.regex)}`;
      if (!variables.includes(variable)) variables.push(variable);
      const block: MapBlock = {
        comment: `1 when ${condition.source} matches`,
        source: condition.source,
        variable,
        entries: [{ key: `"~${condition.regex}"`, value: '1' }],
        defaultValue: '0',
      };
      extensions.define(variable, { maps: [block] });
    }
  }
  const variable = `i2n_dispatch_${digestOf(host, location.modifier, location.path, ...conditional.map(namedLocationOf), otherwise)}`;
  const entries = conditional.map((claim) => {
    const wanted = new Set(claim.requestMatch!.conditions.map((c) => `i2n_match_${digestOf(c.source, c.regex)}`));
    return { key: `"~^${variables.map((v) => (wanted.has(v) ? '1' : '.')).join('')}"`, value: namedLocationOf(claim) };
  });
  extensions.define(variable, {
    maps: [
      {
        comment: `${host === '' ? 'requests without a known host' : host} ${location.modifier ? `${location.modifier} ` : ''}${location.path}: the first HTTPRoute match the request meets`,
        source: `"${variables.map((v) => `\${${v}}`).join('')}"`,
        variable,
        entries,
        defaultValue: otherwise,
      },
    ],
  });
  return { variable, references: [variable, ...variables] };
}
