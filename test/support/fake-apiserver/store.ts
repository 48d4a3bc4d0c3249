import { clone } from './patch.js';
import type { JsonObject } from './status.js';

/**
 * The etcd of the fake: objects by storage/namespace/name, one revision counter for all of them
 * (resourceVersion is the etcd revision of an object's last write), and the log of changes that
 * watches replay and older list snapshots are rebuilt from, until it is compacted.
 */

type ChangeType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface Change {
  readonly revision: number;
  readonly storage: string;
  readonly type: ChangeType;
  /** The object after the change; for DELETED, its last state with the deletion's resourceVersion. */
  readonly object: JsonObject;
  /** The object before the change (undefined for ADDED). */
  readonly previous: JsonObject | undefined;
}

/** Key order of etcd: `namespace/name` (or `name`), compared as bytes. */
function storageKey(namespace: string, name: string): string {
  return namespace === '' ? name : `${namespace}/${name}`;
}

function metadataOf(object: JsonObject): JsonObject {
  return (object.metadata ?? {}) as JsonObject;
}

export function keyOf(object: JsonObject): string {
  const metadata = metadataOf(object);
  return storageKey(String(metadata.namespace ?? ''), String(metadata.name ?? ''));
}

export class CompactedError extends Error {
  constructor(readonly compactedRevision: number) {
    super(`revision compacted at ${compactedRevision}`);
  }
}

export class ObjectStore {
  #revision = 0;
  #compactedRevision = 0;
  readonly #objects = new Map<string, Map<string, JsonObject>>();
  #log: Change[] = [];
  readonly #listeners = new Set<(change: Change) => void>();

  get revision(): number {
    return this.#revision;
  }

  /** Snapshots at this revision or before are gone; so are the changes up to it. */
  get compactedRevision(): number {
    return this.#compactedRevision;
  }

  onChange(listener: (change: Change) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  #bucket(storage: string): Map<string, JsonObject> {
    let bucket = this.#objects.get(storage);
    if (!bucket) {
      bucket = new Map();
      this.#objects.set(storage, bucket);
    }
    return bucket;
  }

  get(storage: string, namespace: string, name: string): JsonObject | undefined {
    const object = this.#objects.get(storage)?.get(storageKey(namespace, name));
    return object && clone(object);
  }

  /** Current objects in key order, all namespaces unless `namespace` is given. */
  list(storage: string, namespace?: string): JsonObject[] {
    return this.#sorted([...(this.#objects.get(storage)?.values() ?? [])], namespace);
  }

  /** The objects as they were right after `revision`; throws CompactedError when that is no longer known. */
  listAt(storage: string, revision: number, namespace?: string): JsonObject[] {
    if (revision < this.#compactedRevision) throw new CompactedError(this.#compactedRevision);
    const state = new Map(this.#objects.get(storage) ?? []);
    for (let index = this.#log.length - 1; index >= 0; index--) {
      const change = this.#log[index]!;
      if (change.revision <= revision) break;
      if (change.storage !== storage) continue;
      const key = keyOf(change.object);
      if (change.previous === undefined) state.delete(key);
      else state.set(key, change.previous);
    }
    return this.#sorted([...state.values()], namespace);
  }

  /** Changes after `revision`, oldest first; throws CompactedError when some of them are gone. */
  changesSince(revision: number): Change[] {
    if (revision < this.#compactedRevision) throw new CompactedError(this.#compactedRevision);
    return this.#log.filter((change) => change.revision > revision);
  }

  #sorted(objects: JsonObject[], namespace: string | undefined): JsonObject[] {
    return objects
      .filter((object) => namespace === undefined || metadataOf(object).namespace === namespace)
      .map((object) => ({ key: keyOf(object), object }))
      .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
      .map(({ object }) => clone(object));
  }

  /** Writes (creates or replaces) `object`, stamping the new revision as its resourceVersion. */
  put(storage: string, object: JsonObject): JsonObject {
    const key = keyOf(object);
    const bucket = this.#bucket(storage);
    const previous = bucket.get(key);
    const revision = ++this.#revision;
    const stored = clone(object);
    stored.metadata = { ...metadataOf(stored), resourceVersion: String(revision) };
    bucket.set(key, stored);
    this.#record({ revision, storage, type: previous ? 'MODIFIED' : 'ADDED', object: clone(stored), previous });
    return clone(stored);
  }

  remove(storage: string, namespace: string, name: string): JsonObject | undefined {
    const key = storageKey(namespace, name);
    const bucket = this.#bucket(storage);
    const previous = bucket.get(key);
    if (!previous) return undefined;
    bucket.delete(key);
    const revision = ++this.#revision;
    // etcd's watch reports a delete with the last state at the delete's revision.
    const deleted = clone(previous);
    deleted.metadata = { ...metadataOf(deleted), resourceVersion: String(revision) };
    this.#record({ revision, storage, type: 'DELETED', object: deleted, previous });
    return clone(deleted);
  }

  #record(change: Change): void {
    this.#log.push(change);
    for (const listener of [...this.#listeners]) listener(change);
  }

  /** Forgets history up to `revision` (default: all of it), as etcd compaction does. */
  compact(revision = this.#revision): void {
    const upTo = Math.min(revision, this.#revision);
    if (upTo <= this.#compactedRevision) return;
    this.#compactedRevision = upTo;
    this.#log = this.#log.filter((change) => change.revision > upTo);
  }
}
