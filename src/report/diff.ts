import type { Diagnostic } from '../model/diagnostics.js';
import { routeJson } from './routes-format.js';
import type { RouteRow } from './routes.js';
import { riskyChanges, type ReviewSide, type RiskyChange } from './risky.js';

/** Two route tables compared: what a pull request changes, risky changes first. */

export interface RowChange {
  readonly key: string;
  readonly before: RouteRow;
  readonly after: RouteRow;
  /** Names of the route-table fields that differ, in table order. */
  readonly fields: readonly string[];
}

export interface RouteDiff {
  readonly risky: readonly RiskyChange[];
  readonly added: readonly RouteRow[];
  readonly removed: readonly RouteRow[];
  readonly changed: readonly RowChange[];
  /** Diagnostics that the new input has and the base has not, and the other way round. */
  readonly diagnostics: { readonly added: readonly Diagnostic[]; readonly removed: readonly Diagnostic[] };
}

/** A review side together with its diagnostics (positions already refined). */
export interface DiffSide extends ReviewSide {
  readonly diagnostics: readonly Diagnostic[];
}

export function routeDiff(base: DiffSide, next: DiffSide, now: Date): RouteDiff {
  const before = new Map(base.table.rows.map((r) => [r.key, r]));
  const after = new Map(next.table.rows.map((r) => [r.key, r]));
  const changed: RowChange[] = [];
  for (const row of next.table.rows) {
    const old = before.get(row.key);
    if (!old) continue;
    const fields = changedFields(old, row);
    if (fields.length > 0) changed.push({ key: row.key, before: old, after: row, fields });
  }
  return {
    risky: riskyChanges(base, next, now),
    added: next.table.rows.filter((r) => !before.has(r.key)),
    removed: base.table.rows.filter((r) => !after.has(r.key)),
    changed,
    diagnostics: { added: missingFrom(next.diagnostics, base.diagnostics), removed: missingFrom(base.diagnostics, next.diagnostics) },
  };
}

export function hasChanges(diff: RouteDiff): boolean {
  return (
    diff.risky.length + diff.added.length + diff.removed.length + diff.changed.length + diff.diagnostics.added.length + diff.diagnostics.removed.length >
    0
  );
}

/**
 * A row as compared: the JSON form without where its resources were read, down to the field (base and
 * new manifests live in different folders, a moved document is no route change, and neither is a path
 * that another path added before it moves to the next index).
 */
function comparable(row: RouteRow): Record<string, string> {
  const json = routeJson({
    ...row,
    ...(row.claimant && { claimant: withoutLocation(row.claimant) }),
    losers: row.losers.map(withoutLocation),
  });
  return Object.fromEntries(Object.entries(json).map(([field, value]) => [field, JSON.stringify(value)]));
}

function withoutLocation<T extends { readonly file?: string; readonly line?: number; readonly column?: number; readonly field?: string; readonly path?: unknown }>(
  provenance: T,
): Omit<T, 'file' | 'line' | 'column' | 'field' | 'path'> {
  const { file: _file, line: _line, column: _column, field: _field, path: _path, ...rest } = provenance;
  return rest;
}

function changedFields(before: RouteRow, after: RouteRow): string[] {
  const a = comparable(before);
  const b = comparable(after);
  return Object.keys(b).filter((field) => a[field] !== b[field]);
}

/** Identity of a diagnostic across two inputs: what it says about which resource, not where that was read. */
function diagnosticIdentity(d: Diagnostic): string {
  return JSON.stringify([d.severity, d.code, d.resource?.kind, d.resource?.namespace, d.resource?.name, d.field, d.message]);
}

/** `from` less `other`, counting repeats (a second identical diagnostic is a change too). */
function missingFrom(from: readonly Diagnostic[], other: readonly Diagnostic[]): Diagnostic[] {
  const counts = new Map<string, number>();
  for (const d of other) counts.set(diagnosticIdentity(d), (counts.get(diagnosticIdentity(d)) ?? 0) + 1);
  return from.filter((d) => {
    const id = diagnosticIdentity(d);
    const left = counts.get(id) ?? 0;
    if (left === 0) return true;
    counts.set(id, left - 1);
    return false;
  });
}
