import { describeRejectedValue, isDnsHostname, isIpAddress, isWildcardHostname, type Checked } from '../checks/allowlist.js';
import { wildcardCovers } from '../settle/wildcards.js';

/**
 * Host names as the Gateway API uses them (design §5). A wildcard `*.example.com` stands for one or
 * more leading labels (`a.example.com`, `a.b.example.com`, never `example.com`); `*` alone — a listener
 * without hostname — stands for any name.
 */
export const anyHostname = '*';

/** RFC 1123, lowercase, no IP addresses, `*.` only as the whole first label. */
export function checkHostname(value: string): Checked<string> {
  if (isIpAddress(value)) return { ok: false, problem: `${describeRejectedValue(value)}: an IP address, and SNI carries host names only (RFC 6066)` };
  if (isDnsHostname(value) || isWildcardHostname(value)) return { ok: true, value };
  if (value.includes('*') && (!value.startsWith('*.') || value.lastIndexOf('*') !== 0)) {
    return { ok: false, problem: `${describeRejectedValue(value)}: a wildcard may only be the whole first label, as in *.example.com` };
  }
  return { ok: false, problem: `${describeRejectedValue(value)}: not a lowercase RFC 1123 host name (or *. followed by one)` };
}

export function isWildcard(hostname: string): boolean {
  return hostname.startsWith('*.');
}

/**
 * The names both a listener and a route hostname match, or undefined when they have none in common.
 * The result is the more specific of the two; `*` (or an absent listener hostname) intersects as the
 * other side.
 */
export function intersectHostnames(listener: string | undefined, route: string): string | undefined {
  const a = listener ?? anyHostname;
  if (a === anyHostname) return route;
  if (route === anyHostname) return a;
  if (!isWildcard(a) && !isWildcard(route)) return a === route ? a : undefined;
  if (isWildcard(a) && !isWildcard(route)) return wildcardCovers(a, route) ? route : undefined;
  if (!isWildcard(a) && isWildcard(route)) return wildcardCovers(route, a) ? a : undefined;
  if (a === route) return a;
  // Both wildcards: they overlap when one suffix lies under the other; the longer one is the overlap.
  if (wildcardCovers(route, a.slice(2))) return a;
  if (wildcardCovers(a, route.slice(2))) return route;
  return undefined;
}

/**
 * Orders listener hostnames most specific first: exact names, then wildcards with more labels after the
 * `*`, then none at all. Equal specificity compares as 0.
 */
export function compareSpecificity(a: string | undefined, b: string | undefined): number {
  const [rankA, labelsA] = specificity(a);
  const [rankB, labelsB] = specificity(b);
  return rankB - rankA || labelsB - labelsA;
}

function specificity(hostname: string | undefined): [number, number] {
  if (hostname === undefined || hostname === anyHostname) return [0, 0];
  if (isWildcard(hostname)) return [1, hostname.split('.').length - 1];
  return [2, hostname.split('.').length];
}
