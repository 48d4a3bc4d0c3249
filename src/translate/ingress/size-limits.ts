/**
 * What one Ingress, and one namespace, may make nginx and us do: the budget both front ends share
 * (checks/size-budget.ts), here counted for an Ingress. Every path of every host (and of every
 * `server-alias`, and each `from-to-www-redirect` twin) is a location to translate, render and load,
 * and the work grows with their product: an Ingress of 51 KB with 3,000 aliases and 100 paths took
 * `validate` 44 s. Each location's own size is bounded by the value limits of its annotations.
 */
import type { ContextMemo } from '../memo/context-memo.js';
import { maxUnitsPerNamespace, maxUnitsPerObject, NamespaceBudget, type BudgetWords } from '../checks/size-budget.js';
import type { Reporter } from '../report.js';
import type { IngressSpec, Typed } from '../resources.js';
import { annotationPrefix } from './annotations/index.js';
import { maxServerAliases } from './annotations/paths.js';

/** Locations one Ingress may ask for. */
export const maxRoutesPerIngress = maxUnitsPerObject;
/** Locations the Ingresses (and routes) of one namespace may ask for together; the oldest are served first. */
export const maxRoutesPerNamespace = maxUnitsPerNamespace;

const words: BudgetWords = {
  objectCode: 'ingress-too-large',
  namespaceCode: 'namespace-too-large',
  units: 'locations (hosts and server-alias names times paths)',
  advice: 'Split it, or share paths between hosts with fewer aliases',
};

/**
 * The Ingresses (in the order given: oldest first) whose routes fit the limits; each other one is reported.
 * `routesOf` may be kept across builds (`RouteCountMemo`); `budget` is the build's, shared with the routes.
 */
export function withinSizeLimits(
  ingresses: readonly Typed<IngressSpec>[],
  report: Reporter,
  routesOf: (ingress: Typed<IngressSpec>) => number = routeCountOf,
  budget: NamespaceBudget = new NamespaceBudget(),
): Typed<IngressSpec>[] {
  return ingresses.filter((ingress) => budget.admit(ingress.object, routesOf(ingress), words, report));
}

/**
 * Route counts by Ingress, kept across builds by the cluster mode: an unchanged Ingress is the same
 * object, and counting all 10,000 again on every build took 9 ms.
 */
export type RouteCountMemo = ContextMemo<Typed<IngressSpec>, number>;

/** Locations the Ingress asks for, counted from its spec and annotations before anything is parsed. */
export function routeCountOf({ spec, object }: Typed<IngressSpec>): number {
  const annotations = object.metadata.annotations;
  const rules = spec.rules ?? [];
  const paths = rules.reduce((sum, rule) => sum + Math.max(1, rule.http?.paths?.length ?? 0), 0);
  const widest = rules.reduce((most, rule) => Math.max(most, rule.http?.paths?.length ?? 0), 0);
  const aliasList = annotations[`${annotationPrefix}server-alias`] ?? '';
  const aliases = new Set(aliasList.split(',').map((alias) => alias.trim()).filter((alias) => alias !== '')).size;
  // A list longer than the limit is refused as a whole: no alias is served.
  const served = aliases > maxServerAliases ? 0 : aliases;
  return paths + served * widest + rules.length;
}
