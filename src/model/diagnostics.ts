import { compareStrings } from './order.js';

/** Diagnostics are data: every stage returns them, reporters at the edge format them. */

export type Severity = 'error' | 'warning' | 'info';

export interface ResourceRef {
  readonly kind: string;
  readonly namespace?: string;
  readonly name: string;
}

/** A path into a resource, e.g. ['metadata', 'annotations', 'nginx.ingress.kubernetes.io/ssl-passthrough']. */
export type FieldPath = readonly (string | number)[];

export interface Diagnostic {
  readonly severity: Severity;
  /** Stable, kebab-case identifier, e.g. `annotation-invalid`. */
  readonly code: string;
  readonly resource?: ResourceRef;
  readonly file?: string;
  readonly line?: number;
  readonly column?: number;
  /** Dotted field path for humans, e.g. `spec.rules[0].host`. */
  readonly field?: string;
  /** The same path as data, so the sources stage can find the field's exact line; not reported. */
  readonly path?: FieldPath;
  readonly message: string;
}

/** Renders a field path the way kubectl explains fields: `spec.rules[0].host`, `metadata.annotations["x/y"]`. */
export function formatFieldPath(path: FieldPath): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(part)) out += out === '' ? part : `.${part}`;
    else out += `[${JSON.stringify(part)}]`;
  }
  return out;
}

const severityRank: Record<Severity, number> = { error: 0, warning: 1, info: 2 };

/** Total order so that output does not depend on input order. */
export function compareDiagnostics(a: Diagnostic, b: Diagnostic): number {
  return (
    compareStrings(a.file ?? '', b.file ?? '') ||
    (a.line ?? 0) - (b.line ?? 0) ||
    compareStrings(a.resource?.kind ?? '', b.resource?.kind ?? '') ||
    compareStrings(a.resource?.namespace ?? '', b.resource?.namespace ?? '') ||
    compareStrings(a.resource?.name ?? '', b.resource?.name ?? '') ||
    severityRank[a.severity] - severityRank[b.severity] ||
    compareStrings(a.code, b.code) ||
    compareStrings(a.field ?? '', b.field ?? '') ||
    compareStrings(a.message, b.message)
  );
}

export function hasErrors(diagnostics: readonly Diagnostic[]): boolean {
  return diagnostics.some((d) => d.severity === 'error');
}
