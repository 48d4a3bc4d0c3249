/**
 * What one Ingress, and one namespace, may make nginx and us do. Every path of every host (and of every
 * `server-alias`, and each `from-to-www-redirect` twin) is a location to translate, render and load,
 * and the work grows with their product: an Ingress of 51 KB with 3,000 aliases and 100 paths took
 * `validate` 44 s, and the cluster mode pays it on every sync. Bounded per Ingress and per namespace, the
 * work of a build is linear in the input however a tenant writes it, and no tenant can spend everyone's
 * reload on itself. Each location's own size is bounded by the value limits of its annotations.
 */
import type { ContextMemo } from '../memo/context-memo.js';
import type { Reporter } from '../report.js';
import type { IngressSpec, Typed } from '../resources.js';
import { annotationPrefix } from './annotations/index.js';
import { maxServerAliases } from './annotations/paths.js';

/** Locations one Ingress may ask for; far above what any Ingress written by hand has. */
export const maxRoutesPerIngress = 5_000;
/** Locations the Ingresses of one namespace may ask for together; the oldest Ingresses are served first. */
export const maxRoutesPerNamespace = 50_000;

/**
 * The Ingresses (in the order given: oldest first) whose routes fit the limits; each other one is reported.
 * `routesOf` may be kept across builds (`RouteCountMemo`).
 */
export function withinSizeLimits(ingresses: readonly Typed<IngressSpec>[], report: Reporter, routesOf: (ingress: Typed<IngressSpec>) => number = routeCountOf): Typed<IngressSpec>[] {
  const used = new Map<string, number>();
  return ingresses.filter((ingress) => {
    const { object } = ingress;
    const routes = routesOf(ingress);
    if (routes > maxRoutesPerIngress) {
      report.error(
        'ingress-too-large',
        object,
        `this Ingress asks for ${routes} locations (hosts and server-alias names times paths), more than the ${maxRoutesPerIngress} one Ingress may have; it is not rendered. Split it, or share paths between hosts with fewer aliases`,
      );
      return false;
    }
    const namespace = object.metadata.namespace;
    const total = (used.get(namespace) ?? 0) + routes;
    if (total > maxRoutesPerNamespace) {
      report.error(
        'namespace-too-large',
        object,
        `the Ingresses of namespace ${namespace} ask for more than ${maxRoutesPerNamespace} locations together; this one, newer than those served, is not rendered`,
      );
      return false;
    }
    used.set(namespace, total);
    return true;
  });
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
