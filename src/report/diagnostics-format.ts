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
