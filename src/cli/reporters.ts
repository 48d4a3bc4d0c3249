import type { Diagnostic } from '../model/diagnostics.js';
import type { ResourceStatus } from '../translate/gateway/plan.js';

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

/** Control characters from the input (a newline in a name, say) must not fake extra report lines. */
function printable(line: string): string {
  return line.replace(/[\u0000-\u001f\u007f]/g, (c) => JSON.stringify(c).slice(1, -1));
}

/**
 * `{ diagnostics, status }`: diagnostics with a fixed key order (the field path as data is left out),
 * Gateway API status keyed by `Kind/namespace/name`, as the sidecar will write it back, and with
 * `render --check` the outcome of `nginx -t` in nginx's own words.
 */
export function formatJson(
  diagnostics: readonly Diagnostic[],
  statuses: readonly ResourceStatus[],
  nginx?: { readonly ok: boolean; readonly output: string },
): string {
  const rows = diagnostics.map((d) => ({
    severity: d.severity,
    code: d.code,
    resource: d.resource ?? null,
    file: d.file ?? null,
    line: d.line ?? null,
    column: d.column ?? null,
    field: d.field ?? null,
    message: d.message,
  }));
  const status = Object.fromEntries(
    statuses.map((entry) => {
      const { kind, namespace, name, ...rest } = entry;
      return [`${kind}/${namespace}/${name}`, rest];
    }),
  );
  return JSON.stringify({ diagnostics: rows, status, ...(nginx && { nginx: { ok: nginx.ok, output: nginx.output } }) }, null, 2) + '\n';
}

export function formatSummary(diagnostics: readonly Diagnostic[]): string {
  const count = (severity: Diagnostic['severity']) => diagnostics.filter((d) => d.severity === severity).length;
  return `${count('error')} error(s), ${count('warning')} warning(s), ${count('info')} info\n`;
}
