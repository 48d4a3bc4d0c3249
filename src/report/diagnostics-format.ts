import type { Diagnostic } from '../model/diagnostics.js';

/** Diagnostics as text lines and as JSON rows: shared by the CLI reporters and the reports. */

/** `file:line:column: severity [code] Kind namespace/name field: message`, one line each. */
export function formatText(diagnostics: readonly Diagnostic[]): string {
  return diagnostics
    .map((d) => {
      const where = d.file ? `${d.file}${d.line ? `:${d.line}${d.column ? `:${d.column}` : ''}` : ''}: ` : '';
      const resource = d.resource
        ? ` ${d.resource.kind} ${d.resource.namespace ? `${d.resource.namespace}/` : ''}${d.resource.name}`
        : '';
      const field = d.field ? ` ${d.field}` : '';
      return `${printable(`${where}${d.severity} [${d.code}]${resource}${field}: ${d.message}`)}\n`;
    })
    .join('');
}

/** An info repeated word for word more times than this is shown `repeatedInfoShown` times and the rest counted. */
export const repeatedInfoCollapsedAbove = 10;
export const repeatedInfoShown = 3;

/**
 * The CLI's report on stderr: every diagnostic, then the totals, except that an info repeated word for word
 * (the same code, field and message) more than ten times, such as one for each of thousands of passthrough
 * Ingresses, is shown three times and then counted in one line, so that it cannot bury the warnings.
 * `--format json` and SARIF list every one, and the totals count them all.
 */
export function formatTextReport(diagnostics: readonly Diagnostic[]): string {
  if (diagnostics.length === 0) return '';
  const repeats = new Map<string, Diagnostic[]>();
  for (const d of diagnostics) {
    if (d.severity !== 'info') continue;
    const key = sameInfoKey(d);
    const group = repeats.get(key);
    if (group) group.push(d);
    else repeats.set(key, [d]);
  }
  const seen = new Map<string, number>();
  let text = '';
  for (const d of diagnostics) {
    if (d.severity !== 'info') {
      text += formatText([d]);
      continue;
    }
    const key = sameInfoKey(d);
    const count = (seen.get(key) ?? 0) + 1;
    seen.set(key, count);
    const group = repeats.get(key) ?? [];
    const collapsed = group.length > repeatedInfoCollapsedAbove;
    if (collapsed && count > repeatedInfoShown) continue;
    text += formatText([d]);
    if (collapsed && count === repeatedInfoShown) text += restLine(d, group.slice(repeatedInfoShown));
  }
  return text + formatSummary(diagnostics);
}

function sameInfoKey(d: Diagnostic): string {
  return JSON.stringify([d.code, d.field ?? '', d.message]);
}

/** `info [code] field: the same for 3,331 more Ingresses (…)`, after the last one shown. */
function restLine(shown: Diagnostic, rest: readonly Diagnostic[]): string {
  const kinds = new Set(rest.map((d) => d.resource?.kind));
  const kind = kinds.size === 1 ? [...kinds][0] : undefined;
  const what = kind === undefined ? 'places' : pluralOfKind(kind);
  const field = shown.field ? ` ${shown.field}` : '';
  return `${printable(`${shown.severity} [${shown.code}]${field}: the same for ${rest.length.toLocaleString('en-US')} more ${what} (--format json lists every one)`)}\n`;
}

/** Ingresses, BackendTLSPolicies, Gateways. */
function pluralOfKind(kind: string): string {
  if (kind.endsWith('s')) return `${kind}es`;
  if (kind.endsWith('y')) return `${kind.slice(0, -1)}ies`;
  return `${kind}s`;
}

/** Control characters from the input (a newline in a name, say) must not fake extra report lines. */
function printable(line: string): string {
  return line.replace(/[\u0000-\u001f\u007f]/g, (c) => JSON.stringify(c).slice(1, -1));
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
