import type { Diagnostic } from '../model/diagnostics.js';
import { markdownCode } from './escape.js';
import { printable } from '../model/printable.js';

/** Diagnostics as text lines and as JSON rows: shared by the CLI reporters and the reports. */

/** `file:line:column: severity [code] Kind namespace/name field: message`, one line each. */
export function formatText(diagnostics: readonly Diagnostic[]): string {
  return diagnostics
    .map((d) => {
      const location = diagnosticLocation(d);
      const where = location ? `${location}: ` : '';
      const resource = d.resource
        ? ` ${d.resource.kind} ${d.resource.namespace ? `${d.resource.namespace}/` : ''}${d.resource.name}`
        : '';
      const field = d.field ? ` ${d.field}` : '';
      return `${printable(`${where}${d.severity} [${d.code}]${resource}${field}: ${d.message}`)}\n`;
    })
    .join('');
}

/** An info or warning repeated word for word more times than this is shown `repeatedShown` times and the rest counted. */
export const repeatedCollapsedAbove = 10;
export const repeatedShown = 3;

/** One entry of a report: a diagnostic, or the count of those like it that are not shown. */
export type ReportEntry =
  | { readonly diagnostic: Diagnostic }
  | { readonly sameAs: Diagnostic; readonly rest: readonly Diagnostic[] };

/**
 * Every error; every warning and info, except that one repeated word for word (the same severity, code,
 * field and message) more than ten times, such as an info for each of thousands of passthrough
 * Ingresses or a warning for each of thirty Ingresses with one ignored annotation, is shown three times
 * and then counted in one entry, so that it cannot bury the rest. Order is kept.
 */
export function foldRepeats(diagnostics: readonly Diagnostic[]): ReportEntry[] {
  const groups = new Map<string, Diagnostic[]>();
  for (const d of diagnostics) {
    if (d.severity === 'error') continue;
    const key = sameKey(d);
    const group = groups.get(key);
    if (group) group.push(d);
    else groups.set(key, [d]);
  }
  const seen = new Map<string, number>();
  const entries: ReportEntry[] = [];
  for (const d of diagnostics) {
    const key = sameKey(d);
    const group = d.severity === 'error' ? undefined : groups.get(key);
    if (!group || group.length <= repeatedCollapsedAbove) {
      entries.push({ diagnostic: d });
      continue;
    }
    const count = (seen.get(key) ?? 0) + 1;
    seen.set(key, count);
    if (count <= repeatedShown) entries.push({ diagnostic: d });
    if (count === repeatedShown) entries.push({ sameAs: d, rest: group.slice(repeatedShown) });
  }
  return entries;
}

/**
 * The CLI's report on stderr: the diagnostics (repeats folded, see `foldRepeats`), then the totals.
 * `--format json`, SARIF and markdown list every one, and the totals count them all.
 */
export function formatTextReport(diagnostics: readonly Diagnostic[]): string {
  if (diagnostics.length === 0) return '';
  const lines = foldRepeats(diagnostics).map((entry) =>
    'diagnostic' in entry ? formatText([entry.diagnostic]) : `${printable(restLine(entry.sameAs, entry.rest))}\n`,
  );
  return lines.join('') + formatSummary(diagnostics);
}

function sameKey(d: Diagnostic): string {
  return JSON.stringify([d.severity, d.code, d.field ?? '', d.message]);
}

/** `info [code] field: the same for 3,331 more Ingresses (…)`, after the last one shown. */
function restLine(shown: Diagnostic, rest: readonly Diagnostic[]): string {
  const field = shown.field ? ` ${shown.field}` : '';
  return `${shown.severity} [${shown.code}]${field}: ${restCount(rest)}`;
}

/** `the same for 3,331 more Ingresses (--format json lists every one)`. */
function restCount(rest: readonly Diagnostic[]): string {
  const kinds = new Set(rest.map((d) => d.resource?.kind));
  const kind = kinds.size === 1 ? [...kinds][0] : undefined;
  const what = kind === undefined ? 'places' : pluralOfKind(kind);
  return `the same for ${rest.length.toLocaleString('en-US')} more ${what} (--format json lists every one)`;
}

/** Ingresses, BackendTLSPolicies, Gateways. */
function pluralOfKind(kind: string): string {
  if (kind.endsWith('s')) return `${kind}es`;
  if (kind.endsWith('y')) return `${kind.slice(0, -1)}ies`;
  return `${kind}s`;
}

/** `file:line:column`, or empty. */
export function diagnosticLocation(d: Diagnostic): string {
  return d.file ? `${d.file}${d.line ? `:${d.line}${d.column ? `:${d.column}` : ''}` : ''}` : '';
}

/**
 * Diagnostics as markdown for a pull-request comment: the totals, then a table whose cells are code
 * spans (nothing from a manifest becomes markup), repeats folded as in the text report.
 */
export function formatDiagnosticsMarkdown(diagnostics: readonly Diagnostic[]): string {
  const lines = [`### Diagnostics: ${formatSummary(diagnostics).trimEnd()}`, ''];
  if (diagnostics.length === 0) return `${lines.join('\n')}No diagnostics.\n`;
  const cell = (value: string | undefined) => (value === undefined || value === '' ? '' : markdownCode(value));
  lines.push('| severity | code | where | resource | field | message |', '| --- | --- | --- | --- | --- | --- |');
  for (const entry of foldRepeats(diagnostics)) {
    const d = 'diagnostic' in entry ? entry.diagnostic : entry.sameAs;
    const resource = d.resource && 'diagnostic' in entry ? `${d.resource.kind} ${d.resource.namespace ? `${d.resource.namespace}/` : ''}${d.resource.name}` : '';
    const where = 'diagnostic' in entry ? diagnosticLocation(d) : '';
    const message = 'diagnostic' in entry ? d.message : restCount(entry.rest);
    lines.push(`| ${[d.severity, d.code, where, resource, d.field, message].map(cell).join(' | ')} |`);
  }
  return `${lines.join('\n')}\n`;
}

/** Fixed key order; the field path as data is left out. */
export function diagnosticJson(d: Diagnostic): Record<string, unknown> {
  return {
    severity: d.severity,
    code: d.code,
    resource: d.resource ?? null,
    file: d.file ?? null,
    line: d.line ?? null,
    column: d.column ?? null,
    field: d.field ?? null,
    message: d.message,
  };
}

export function formatSummary(diagnostics: readonly Diagnostic[]): string {
  const count = (severity: Diagnostic['severity']) => diagnostics.filter((d) => d.severity === severity).length;
  return `${count('error')} error(s), ${count('warning')} warning(s), ${count('info')} info\n`;
}
