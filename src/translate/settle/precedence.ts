import type { SourceObject } from '../../sources/snapshot.js';
import { compareStrings } from '../../model/order.js';

/**
 * Conflict order between resources: oldest `creationTimestamp` first, then `namespace/name`
 * alphabetically. A resource without a timestamp (plain manifests), or with one that is not RFC 3339
 * with a zone, counts as newest.
 */
export function compareAge(a: SourceObject, b: SourceObject): number {
  const ta = timestamp(a);
  const tb = timestamp(b);
  if (ta !== tb) return ta < tb ? -1 : 1;
  const na = `${a.metadata.namespace}/${a.metadata.name}`;
  const nb = `${b.metadata.namespace}/${b.metadata.name}`;
  return na < nb ? -1 : na > nb ? 1 : 0;
}

/** RFC 3339 with an explicit zone, as the API server writes it; anything else would parse in local time. */
export const rfc3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/** Parsed once per object: sorting thousands of claims compares the same objects many times. */
const timestamps = new WeakMap<SourceObject, number>();

function timestamp(object: SourceObject): number {
  let cached = timestamps.get(object);
  if (cached === undefined) {
    const value = object.metadata.creationTimestamp;
    const parsed = rfc3339.test(value) ? Date.parse(value) : Number.NaN;
    cached = Number.isNaN(parsed) ? Number.POSITIVE_INFINITY : parsed;
    timestamps.set(object, cached);
  }
  return cached;
}

export function byString<T>(keyOf: (item: T) => string): (a: T, b: T) => number {
  return (a, b) => compareStrings(keyOf(a), keyOf(b));
}

/** Items grouped by key, groups in key order, items in input order within a group. */
export function groupBy<T>(items: readonly T[], keyOf: (item: T) => string): Map<string, T[]> {
  return new Map([...groupInOrder(items, keyOf)].sort(([a], [b]) => compareStrings(a, b)));
}

/** Items grouped by key, groups in the order their first item comes, items in input order within a group. */
export function groupInOrder<T>(items: readonly T[], keyOf: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const key = keyOf(item);
    const group = groups.get(key);
    if (group) group.push(item);
    else groups.set(key, [item]);
  }
  return groups;
}

export function uniqueIngresses(ingresses: readonly SourceObject[]): SourceObject[] {
  return [...new Set(ingresses)].sort(compareAge);
}
