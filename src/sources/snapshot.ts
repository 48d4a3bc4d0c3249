import type { Diagnostic } from '../model/diagnostics.js';

/** Where a resource was read from; enough to find a field's line again later, on demand. */
export interface Origin {
  /** File path as given by the user, or `<stdin>`. */
  readonly file: string;
  /** 1-based line of the first line of the YAML/JSON document holding the resource. */
  readonly line: number;
  /** For items of a `kind: List`, the index in `items`. */
  readonly listIndex?: number;
}

export interface ObjectMeta {
  readonly name: string;
  readonly namespace: string;
  readonly annotations: Readonly<Record<string, string>>;
  readonly labels: Readonly<Record<string, string>>;
  /** RFC 3339 as found in the input; empty when absent. */
  readonly creationTimestamp: string;
  readonly uid?: string;
  readonly resourceVersion?: string;
}

/**
 * One Kubernetes object as read, before any validation of its spec. `raw` is the whole parsed object;
 * translate validates the parts it needs with zod and reports problems with field paths.
 */
export interface SourceObject {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: ObjectMeta;
  readonly raw: Readonly<Record<string, unknown>>;
  readonly origin?: Origin;
}

/** Everything the sources read: the input of translate. Order carries no meaning. */
export interface Snapshot {
  readonly objects: readonly SourceObject[];
}

export interface SourceResult {
  readonly snapshot: Snapshot;
  readonly diagnostics: readonly Diagnostic[];
}
