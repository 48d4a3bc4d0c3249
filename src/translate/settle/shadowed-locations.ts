import type { Location } from '../../model/nginx.js';
import { groupBy } from './precedence.js';
import { sameJsonText, withFields } from '../../model/objects.js';

/**
 * Marks the locations nginx would answer the same way without: a Prefix or Exact path whose requests,
 * were it gone, would go to the longest shorter prefix location, which handles them identically (the
 * same backend, annotations and redirects). Hosts that list several paths to one Service are common, and
 * each location costs nginx about 9 KB and a share of every load and reload: at 10,000 Ingresses that is
 * half of nginx's memory. Marked locations stay in the model, so reports still show every path; the
 * config names them in a comment.
 *
 * Only on a server without regex locations: nginx tries regexes after the longest prefix match unless
 * that match is `=` or `^~`, so there taking a location away could hand its requests to a regex.
 */
export function markShadowedLocations(locations: readonly Location[]): Location[] {
  if (locations.some((l) => l.modifier === '~*')) return [...locations];
  const prefixes = locations.filter(isPrefix);
  const parentOf = new Map<Location, Location>();
  for (const location of locations) {
    if (!isRoute(location)) continue;
    const parent = longestPrefixOf(location, prefixes);
    if (!parent || !isRoute(parent) || parent.proxy?.upstream !== location.proxy?.upstream) continue;
    if (sameHandling(parent, location)) parentOf.set(location, parent);
  }
  const shadowed = keepingRedirects(locations, new Set(parentOf.keys()));
  return locations.map((location) => {
    if (!shadowed.has(location)) return location;
    // The parent may be left out too; name the one nginx keeps.
    let served = parentOf.get(location)!;
    while (shadowed.has(served)) served = parentOf.get(served)!;
    return withFields(location, { servedBy: locationName(served) });
  });
}

/**
 * nginx answers `/x` with a 301 to `/x/` when a proxying location is named `/x/` and none is named `/x`
 * (`auto_redirect`). Leaving out either one of such a pair would change that answer: without `/x/` the
 * 301 becomes a proxied request, and without `= /x` (or `/x`) a proxied request becomes a 301. So a
 * location named `/x/` stays unless one named `/x` exists, and one named `/x` stays while `/x/` does.
 */
function keepingRedirects(locations: readonly Location[], candidates: Set<Location>): Set<Location> {
  const byPath = groupBy(locations, (l) => l.path);
  const redirectsWithoutSlash = (l: Location) => l.proxy !== undefined && l.path.length > 1 && l.path.endsWith('/');
  for (let changed = true; changed; ) {
    changed = false;
    for (const location of candidates) {
      const withoutSlash = redirectsWithoutSlash(location) && !byPath.has(location.path.slice(0, -1));
      const withSlashKept = (byPath.get(`${location.path}/`) ?? []).some((l) => redirectsWithoutSlash(l) && !candidates.has(l));
      if (withoutSlash || withSlashKept) {
        candidates.delete(location);
        changed = true;
      }
    }
  }
  return candidates;
}

function isPrefix(location: Location): boolean {
  return location.modifier === '' || location.modifier === '^~';
}

/**
 * A location for request paths: not a named error location, the auth or mirror subrequest target, or plain HTTP's
 * ACME location. A `proxy_pass` with a URI replaces the matched location prefix, so its path matters.
 */
function isRoute(location: Location): boolean {
  const passesUri = location.proxy !== undefined && /^[^:]+:\/\/[^/]+\//.test(location.proxy.pass);
  return location.path.startsWith('/') && !location.authEndpoint && !location.mirrorEndpoint && !location.errorPage && !location.plainHttpOnly && !passesUri;
}

/**
 * The prefix location nginx picks for the requests `location` matches, were it gone: for a prefix, the
 * longest other prefix of its path; for an exact path, also a prefix location of the same path.
 */
function longestPrefixOf(location: Location, prefixes: readonly Location[]): Location | undefined {
  let best: Location | undefined;
  for (const candidate of prefixes) {
    if (candidate === location || !location.path.startsWith(candidate.path)) continue;
    if (candidate.path.length === location.path.length && location.modifier !== '=') continue;
    if (!best || candidate.path.length > best.path.length) best = candidate;
  }
  return best;
}

/** What a location's name and provenance are: not part of what the config says inside it. */
const notHandling: ReadonlySet<string> = new Set(['modifier', 'path', 'comment', 'origin']);

/** Whether the config says the same inside both locations: all their fields but `notHandling` are the same. */
function sameHandling(a: Location, b: Location): boolean {
  return sameJsonText(a, b, notHandling);
}

function locationName(location: Location): string {
  return location.modifier ? `${location.modifier} ${location.path}` : location.path;
}
