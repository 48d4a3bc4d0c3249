import type { SourceObject } from '../../sources/snapshot.js';
import type { Reporter } from '../report.js';

/**
 * What one object, and one namespace, may make nginx load, for both front ends alike: locations, maps
 * and map entries, each one unit. nginx's load time and memory, and our render's, grow with them, and a
 * tenant's object can multiply them (an Ingress's aliases times its paths, an HTTPRoute's host names
 * times its matches, and a map per condition of each match): one HTTPRoute within the CRD's maxima
 * asked for 49,162 maps, a 41 MB nginx.conf that `nginx -t` had not loaded after 9 minutes. Bounded per
 * object and per namespace before anything is rendered, a build is linear in its input however a
 * tenant writes it, and no tenant spends everyone's reload on itself. Objects are admitted oldest first,
 * Ingresses before routes; the namespace's budget is one for both.
 */

/** Units one object may ask for: far above what any object written by hand has. */
export const maxUnitsPerObject = 5_000;
/** Units the objects of one namespace may ask for together. */
export const maxUnitsPerNamespace = 50_000;

/** What an object makes nginx load. */
export interface LoadCost {
  readonly locations: number;
  readonly maps: number;
  readonly mapEntries: number;
}

export function unitsOf(cost: LoadCost): number {
  return cost.locations + cost.maps + cost.mapEntries;
}

/** How a front end names what is refused: the codes its diagnostics carry and the words for its units. */
export interface BudgetWords {
  readonly objectCode: string;
  readonly namespaceCode: string;
  /** What the units are, for this kind (`locations (hosts and server-alias names times paths)`). */
  readonly units: string;
  /** How to fit. */
  readonly advice: string;
}

/** The units used per namespace in one build, shared by the front ends (translate.ts makes one per build). */
export class NamespaceBudget {
  private readonly used = new Map<string, number>();

  /** Whether `object` (of `units`) fits its own limit and what is left of its namespace's; reported when not. */
  admit(object: SourceObject, units: number, words: BudgetWords, report: Reporter): boolean {
    if (units > maxUnitsPerObject) {
      report.error(words.objectCode, object, `this ${object.kind} asks for ${units} ${words.units}, more than the ${maxUnitsPerObject} one object may have; it is not rendered. ${words.advice}`);
      return false;
    }
    const namespace = object.metadata.namespace;
    const total = (this.used.get(namespace) ?? 0) + units;
    if (total > maxUnitsPerNamespace) {
      report.error(
        words.namespaceCode,
        object,
        `the Ingresses and routes of namespace ${namespace} ask for more than ${maxUnitsPerNamespace} locations, maps and map entries together; this ${object.kind}, newer than those served, is not rendered`,
      );
      return false;
    }
    this.used.set(namespace, total);
    return true;
  }
}
