import { compareStrings } from '../../model/order.js';
import type { ObjectMeta, Snapshot, SourceObject } from '../snapshot.js';
import type { RawObject } from './reflector.js';

/**
 * The watched objects as the Snapshot that translate reads, the same shape the file source makes.
 * The API server has validated their envelope, so only the fields are picked; objects held by more
 * than one watch (a TLS Secret that is also referenced) appear once. Sorted, so that the order of
 * watch events never shows in the output.
 */
export function clusterSnapshot(stores: Iterable<ReadonlyMap<string, RawObject>>): Snapshot {
  const objects = new Map<string, SourceObject>();
  for (const store of stores) {
    for (const raw of store.values()) {
      const object = sourceObject(raw);
      objects.set(`${object.kind}/${object.metadata.namespace}/${object.metadata.name}`, object);
    }
  }
  return { objects: [...objects].sort(([a], [b]) => compareStrings(a, b)).map(([, object]) => object) };
}

/**
 * The SourceObject made of each raw object the watches hold: the same while the object is unchanged,
 * so that a build can reuse what it made of it the round before (translate/ingress/claim-memo.ts).
 */
const madeOf = new WeakMap<RawObject, SourceObject>();

export function sourceObject(raw: RawObject): SourceObject {
  const known = madeOf.get(raw);
  if (known) return known;
  const made = newSourceObject(raw);
  madeOf.set(raw, made);
  return made;
}

function newSourceObject(raw: RawObject): SourceObject {
  const metadata = raw.metadata as Record<string, unknown>;
  const meta: ObjectMeta = {
    name: raw.metadata.name,
    namespace: raw.metadata.namespace ?? '',
    annotations: stringRecord(metadata['annotations']),
    labels: stringRecord(metadata['labels']),
    creationTimestamp: typeof metadata['creationTimestamp'] === 'string' ? metadata['creationTimestamp'] : '',
    ...(typeof metadata['uid'] === 'string' && { uid: metadata['uid'] }),
    ...(typeof metadata['resourceVersion'] === 'string' && { resourceVersion: metadata['resourceVersion'] }),
  };
  return { apiVersion: raw.apiVersion, kind: raw.kind, metadata: meta, raw };
}

function stringRecord(value: unknown): Record<string, string> {
  if (typeof value !== 'object' || value === null) return {};
  return Object.fromEntries(Object.entries(value).filter((entry): entry is [string, string] => typeof entry[1] === 'string'));
}
