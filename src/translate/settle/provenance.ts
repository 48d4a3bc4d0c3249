import { formatFieldPath, type FieldPath, type ResourceRef } from '../../model/diagnostics.js';
import type { Provenance } from '../../model/provenance.js';
import type { SourceObject } from '../../sources/snapshot.js';
import { compareAge } from './precedence.js';

export function resourceRef(object: SourceObject): ResourceRef {
  return {
    kind: object.kind,
    ...(object.metadata.namespace && { namespace: object.metadata.namespace }),
    name: object.metadata.name,
  };
}

/** A model object's source: the resource, the field that produced it, and where the resource was read. */
export function provenanceOf(object: SourceObject, path?: FieldPath): Provenance {
  return {
    resource: resourceRef(object),
    ...(path && path.length > 0 && { field: formatFieldPath(path), path }),
    ...(object.origin && { file: object.origin.file, line: object.origin.line }),
  };
}

/** Losers of a claim as provenance: each resource once, in precedence order, never the winner. */
export function losersOf(winner: SourceObject, losers: readonly { readonly object: SourceObject; readonly path?: FieldPath }[]): Provenance[] {
  const seen = new Set<SourceObject>([winner]);
  const result: Provenance[] = [];
  for (const { object, path } of [...losers].sort((a, b) => compareAge(a.object, b.object))) {
    if (seen.has(object)) continue;
    seen.add(object);
    result.push(provenanceOf(object, path));
  }
  return result;
}
