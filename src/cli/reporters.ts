import type { Diagnostic } from '../model/diagnostics.js';
import { diagnosticJson } from '../report/diagnostics-format.js';
import type { ResourceStatus } from '../model/status.js';

export { formatSummary, formatTextReport } from '../report/diagnostics-format.js';

/**
 * `{ diagnostics, status }`: diagnostics with a fixed key order (the field path as data is left out),
 * Gateway API status keyed by `Kind/namespace/name`, as the sidecar will write it back, and with
 * `render --check` the outcome of `nginx -t` in nginx's own words; `more` adds a command's own fields
 * (`diff --against`: the drift).
 */
export function formatJson(
  diagnostics: readonly Diagnostic[],
  statuses: readonly ResourceStatus[],
  nginx?: { readonly ok: boolean; readonly output: string },
  more: Readonly<Record<string, unknown>> = {},
): string {
  const rows = diagnostics.map(diagnosticJson);
  const status = Object.fromEntries(
    statuses.map((entry) => {
      const { kind, namespace, name, ...rest } = entry;
      return [`${kind}/${namespace}/${name}`, rest];
    }),
  );
  return JSON.stringify({ diagnostics: rows, status, ...(nginx && { nginx: { ok: nginx.ok, output: nginx.output } }), ...more }, null, 2) + '\n';
}
