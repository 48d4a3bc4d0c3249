import { createHash } from 'node:crypto';
import type { CacheZone, GeoBlock, HttpExtensions, LimitZone, MapBlock, SplitBlock } from '../../model/nginx.js';
import { compareStrings } from '../../model/order.js';

/**
 * http-level blocks that locations refer to (canary splits, CORS maps, rate-limit and cache zones), each group
 * under the name a location uses to refer to it. Groups are defined while Ingresses are translated, and
 * only those that a rendered location still refers to are rendered: an Ingress whose paths all lost to
 * older claims leaves no zone or map behind.
 */
export class HttpExtensionRegistry {
  private readonly groups = new Map<string, Partial<HttpExtensions>>();

  /** Defines the blocks of one group; a group defined twice keeps its first definition (same content by construction). */
  define(reference: string, blocks: Partial<HttpExtensions>): void {
    if (!this.groups.has(reference)) this.groups.set(reference, blocks);
  }

  /** Defines every group of `other` here, in the order `other` defined them. */
  absorb(other: HttpExtensionRegistry): void {
    for (const [reference, blocks] of other.groups) this.define(reference, blocks);
  }

  /** The blocks of the groups in `references`, each kind sorted by its variable or name. */
  collect(references: Iterable<string>): HttpExtensions {
    const geos: GeoBlock[] = [];
    const maps: MapBlock[] = [];
    const splits: SplitBlock[] = [];
    const limitZones: LimitZone[] = [];
    const cacheZones: CacheZone[] = [];
    for (const reference of [...new Set(references)].sort(compareStrings)) {
      const group = this.groups.get(reference);
      if (!group) continue;
      geos.push(...(group.geos ?? []));
      maps.push(...(group.maps ?? []));
      splits.push(...(group.splits ?? []));
      limitZones.push(...(group.limitZones ?? []));
      cacheZones.push(...(group.cacheZones ?? []));
    }
    return {
      geos: geos.sort((a, b) => compareStrings(a.variable, b.variable)),
      maps: maps.sort((a, b) => compareStrings(a.variable, b.variable)),
      splits: splits.sort((a, b) => compareStrings(a.variable, b.variable)),
      limitZones: limitZones.sort((a, b) => compareStrings(a.name, b.name)),
      cacheZones: cacheZones.sort((a, b) => compareStrings(a.name, b.name)),
    };
  }
}

/**
 * A short stable name part from `parts`: variable and zone names must not depend on input order or on
 * unrelated resources, so that a change to one Ingress changes only its own lines.
 */
export function digestOf(...parts: readonly string[]): string {
  return createHash('sha256').update(parts.join('\0')).digest('hex').slice(0, 12);
}

/** `"~regex"` as a map key: the regex passed a safe alphabet without quotes or stray backslashes. */
export function regexKey(regex: string, caseInsensitive = false): string {
  return `"${caseInsensitive ? '~*' : '~'}${regex}"`;
}

/** A literal as a regex, every metacharacter escaped (the callers' alphabets hold no quotes or backslashes). */
export function escapeLiteral(text: string): string {
  return text.replace(/[.^$|?*+()[\]{}\\/]/g, (character) => `\\${character}`);
}

/** A geo variable that holds `$`: how a tenant's `$` reaches a header value without naming a variable. */
export const literalDollarVariable = 'i2n_dollar';
