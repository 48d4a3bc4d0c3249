import type { BudgetWords, LoadCost } from '../checks/size-budget.js';
import type { HttpRouteMatch, HttpRouteSpec } from './schemas.js';

/**
 * What an HTTPRoute makes nginx load, counted from its spec and the number of hosts it is served on,
 * before any claim is made (checks/size-budget.ts). An upper bound of what the rules become: each match
 * is a prefix's two locations (`= /p` and `/p/`) on every host; a match with conditions (headers, query
 * parameters, a method, a regex path) adds a map and an entry per condition, one over them, and on every
 * host a named location and two entries of the map that hands requests to it.
 */
export function httpRouteLoadCost(spec: HttpRouteSpec, hosts: number): LoadCost {
  const served = Math.max(1, hosts);
  // Each host's server has a `location /` of its own when no rule covers it.
  let locations = served;
  let maps = 0;
  let mapEntries = 0;
  for (const rule of spec.rules?.length ? spec.rules : [{}]) {
    const matches: readonly HttpRouteMatch[] = rule.matches?.length ? rule.matches : [{}];
    for (const match of matches) {
      locations += 2 * served;
      const conditions = conditionCount(match);
      if (conditions === 0) continue;
      locations += served;
      maps += conditions + 1 + served;
      mapEntries += conditions + 1 + 2 * served;
    }
  }
  return { locations, maps, mapEntries };
}

function conditionCount(match: HttpRouteMatch): number {
  const regexPath = match.path?.type === 'RegularExpression' ? 1 : 0;
  return (match.headers?.length ?? 0) + (match.queryParams?.length ?? 0) + (match.method !== undefined ? 1 : 0) + regexPath;
}

export const httpRouteBudgetWords: BudgetWords = {
  objectCode: 'httproute-too-large',
  namespaceCode: 'namespace-too-large',
  units: 'locations, maps and map entries (host names times matches, and a map per header, query parameter and method of each match)',
  advice: 'Split it into routes of fewer host names or matches, or match on fewer conditions',
};
