import type { Resources, Typed } from '../resources.js';

/** The keyed collections of `Resources`. */
export type ResourceMapKind = 'services' | 'secrets' | 'configMaps' | 'ingressClasses' | 'endpointSlices';

const mapKinds: readonly ResourceMapKind[] = ['services', 'secrets', 'configMaps', 'ingressClasses', 'endpointSlices'];

/**
 * The keys, by kind, whose object is not the same one as in an earlier build's resources (or which one
 * of the two lacks); with no earlier build, every key. A memo whose entries all held for the earlier
 * resources asks this instead of looking every object an entry read up again: at 10,000 Ingresses that
 * was one lookup of each Ingress's Service and one of each host's Secret on every build, 20-30 ms with
 * the closures around them, where a build after one Ingress changed finds nothing here.
 */
export class ResourceChanges {
  private constructor(private readonly changed: ReadonlyMap<ResourceMapKind, ReadonlySet<string>> | undefined) {}

  static between(before: Resources | undefined, now: Resources): ResourceChanges {
    if (before === undefined) return new ResourceChanges(undefined);
    return new ResourceChanges(new Map(mapKinds.map((kind) => [kind, changedKeys(before[kind], now[kind])])));
  }

  /** Whether the object at `key` may not be the one the earlier build had. */
  changedAt(kind: ResourceMapKind, key: string): boolean {
    const keys = this.changed?.get(kind);
    return keys === undefined || (keys.size > 0 && keys.has(key));
  }

  /** Whether any object of `kind` may not be the one the earlier build had. */
  changedAny(kind: ResourceMapKind): boolean {
    const keys = this.changed?.get(kind);
    return keys === undefined || keys.size > 0;
  }
}

/**
 * One `ResourceChanges` for the memos of one build: each asks for the changes since the resources its
 * entries last held for, which for all of them is the last build's, so they are found once.
 */
export class ResourceChangeCache {
  private last: { readonly before: Resources | undefined; readonly now: Resources; readonly changes: ResourceChanges } | undefined;

  between(before: Resources | undefined, now: Resources): ResourceChanges {
    const last = this.last;
    if (last !== undefined && last.before === before && last.now === now) return last.changes;
    const changes = ResourceChanges.between(before, now);
    this.last = { before, now, changes };
    return changes;
  }
}

function changedKeys(before: ReadonlyMap<string, unknown>, now: ReadonlyMap<string, unknown>): ReadonlySet<string> {
  const keys = new Set<string>();
  if (before === now) return keys;
  for (const [key, value] of now) if (!sameObjects(value, before.get(key))) keys.add(key);
  for (const key of before.keys()) if (!now.has(key)) keys.add(key);
  return keys;
}

/** The parsed objects are new each build, the raw ones they are read from are not. */
function sameObjects(a: unknown, b: unknown): boolean {
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((item, i) => sameObjects(item, b[i]));
  if (a === undefined || b === undefined || Array.isArray(a) || Array.isArray(b)) return a === b;
  return (a as Typed<unknown>).object.raw === (b as Typed<unknown>).object.raw;
}
