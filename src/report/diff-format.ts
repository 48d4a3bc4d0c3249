import type { Diagnostic } from '../model/diagnostics.js';
import { diagnosticJson, formatText } from './diagnostics-format.js';
import { hasChanges, type RouteDiff, type RowChange } from './diff.js';
import { markdownCode, markdownText } from './escape.js';
import { printable } from '../model/printable.js';
import type { RiskyChange } from './risky.js';
import {
  alignedTable,
  backendLabel,
  certificateLabel,
  hostLabel,
  notesLabel,
  pathLabel,
  plainHttpLabel,
  provenanceJson,
  provenanceLabel,
  routeCells,
  routeColumns,
  routeJson,
  markdownTable,
} from './routes-format.js';
import { refName, type RouteRow } from './routes.js';

/** The route diff as text, JSON and a markdown pull-request comment. */

export function diffSummary(diff: RouteDiff): string {
  return (
    `${diff.risky.length} risky change(s), ${diff.added.length} added, ${diff.removed.length} removed, ${diff.changed.length} changed route(s); ` +
    `diagnostics: ${diff.diagnostics.added.length} new, ${diff.diagnostics.removed.length} gone`
  );
}

/** What changed in a row, one aspect per entry: `[aspect, before, after]`. */
export function changeDetails(change: RowChange): [string, string, string][] {
  const aspects: [string, readonly string[], (row: RouteRow) => string][] = [
    ['mode', ['mode'], (row) => row.mode],
    ['backend', ['backends', 'closedWeight', 'answers', 'backendTls'], backendLabel],
    ['certificate', ['certificate'], certificateLabel],
    ['plain HTTP', ['plainHttp', 'hsts'], plainHttpLabel],
    ['claimed by', ['claimant'], (row) => (row.claimant ? `${row.claimant.resource.kind} ${refName(row.claimant.resource)}` : '-')],
    ['notes', ['losers', 'listener', 'notes'], notesLabel],
  ];
  return aspects
    .filter(([, fields]) => fields.some((f) => change.fields.includes(f)))
    .map(([aspect, , label]): [string, string, string] => [aspect, label(change.before), label(change.after)]);
}

function where(change: { readonly port?: number; readonly host?: string; readonly path?: string }): string {
  if (change.port === undefined) return '';
  return `${change.port} ${hostLabel(change.host ?? '')}${change.path ? ` ${change.path}` : ''}`;
}

export function formatDiffText(diff: RouteDiff): string {
  if (!hasChanges(diff)) return `No route changes.\n${diffSummary(diff)}\n`;
  const out: string[] = [];
  if (diff.risky.length > 0) {
    out.push(`Risky changes (${diff.risky.length}):\n`);
    for (const risky of diff.risky) {
      const place = [where(risky), risky.resource ? provenanceLabel(risky.resource) : ''].filter(Boolean).join('  ');
      out.push(printable(`  [${risky.rule}] ${place}`) + '\n', printable(`      ${risky.message}`) + '\n');
    }
    out.push('\n');
  }
  const table = (title: string, rows: readonly RouteRow[]) => {
    if (rows.length === 0) return;
    out.push(`${title} (${rows.length}):\n`, indent(alignedTable([...routeColumns], rows.map((row) => routeCells(row).map(printable)))), '\n');
  };
  table('Added routes', diff.added);
  table('Removed routes', diff.removed);
  if (diff.changed.length > 0) {
    out.push(`Changed routes (${diff.changed.length}):\n`);
    for (const change of diff.changed) {
      out.push(printable(`  ${where({ port: change.after.port, host: change.after.host, path: pathLabel(change.after) })}`) + '\n');
      for (const [aspect, before, after] of changeDetails(change)) out.push(printable(`      ${aspect}: ${before} -> ${after}`) + '\n');
    }
    out.push('\n');
  }
  const diagnostics = (title: string, sign: string, list: readonly Diagnostic[]) => {
    if (list.length === 0) return;
    out.push(`${title} (${list.length}):\n`, ...formatText(list).split('\n').filter(Boolean).map((line) => `  ${sign} ${line}\n`), '\n');
  };
  diagnostics('New diagnostics', '+', diff.diagnostics.added);
  diagnostics('Gone diagnostics', '-', diff.diagnostics.removed);
  out.push(`${diffSummary(diff)}\n`);
  return out.join('');
}

function indent(text: string): string {
  return text
    .split('\n')
    .map((line) => (line === '' ? line : `  ${line}`))
    .join('\n');
}

function riskyJson(risky: RiskyChange): Record<string, unknown> {
  return {
    rule: risky.rule,
    port: risky.port ?? null,
    host: risky.host ?? null,
    path: risky.path ?? null,
    message: risky.message,
    resource: risky.resource ? provenanceJson(risky.resource) : null,
  };
}

export function formatDiffJson(diff: RouteDiff): string {
  return (
    JSON.stringify(
      {
        summary: {
          changed: hasChanges(diff),
          risky: diff.risky.length,
          added: diff.added.length,
          removed: diff.removed.length,
          changedRoutes: diff.changed.length,
          diagnosticsAdded: diff.diagnostics.added.length,
          diagnosticsRemoved: diff.diagnostics.removed.length,
        },
        risky: diff.risky.map(riskyJson),
        added: diff.added.map(routeJson),
        removed: diff.removed.map(routeJson),
        changed: diff.changed.map((c) => ({ key: c.key, fields: c.fields, before: routeJson(c.before), after: routeJson(c.after) })),
        diagnostics: { added: diff.diagnostics.added.map(diagnosticJson), removed: diff.diagnostics.removed.map(diagnosticJson) },
      },
      null,
      2,
    ) + '\n'
  );
}

/** GitHub refuses comments over 65,536 characters; stay well below, with room for a note. */
const markdownLimit = 60_000;

/**
 * A pull-request comment: a short summary, the risky changes, then each section collapsed. Values are
 * code spans and prose is escaped, so nothing from a manifest becomes markup, a link or a mention.
 * Sections are filled in order until `limit` characters; what does not fit is counted in a note.
 */
export function formatDiffMarkdown(diff: RouteDiff, limit = markdownLimit): string {
  const head: string[] = ['### ingress2nginx: route changes', ''];
  if (!hasChanges(diff)) return [...head, 'No route changes.', ''].join('\n');
  head.push(
    `**${diff.risky.length} risky change(s)** · ${diff.added.length} added · ${diff.removed.length} removed · ${diff.changed.length} changed route(s) · diagnostics: ${diff.diagnostics.added.length} new, ${diff.diagnostics.removed.length} gone`,
    '',
  );
  const budget = { left: limit - head.join('\n').length - 400, omitted: 0 };
  const take = (lines: readonly string[]): string[] => {
    const kept: string[] = [];
    for (const line of lines) {
      if (budget.left - line.length - 1 < 0) {
        budget.omitted += 1;
        continue;
      }
      budget.left -= line.length + 1;
      kept.push(line);
    }
    return kept;
  };
  const body: string[] = [];
  if (diff.risky.length > 0) {
    body.push('#### Risky changes', '');
    body.push(
      ...take(
        diff.risky.map((risky) => {
          const place = where(risky);
          const resource = risky.resource ? ` (${markdownCode(provenanceLabel(risky.resource))})` : '';
          return `- **${risky.rule}**${place ? ` ${markdownCode(place)}` : ''}${resource}: ${markdownText(risky.message)}`;
        }),
      ),
      '',
    );
  }
  const section = (title: string, count: number, lines: readonly string[]) => {
    if (count === 0) return;
    const kept = take(lines);
    body.push(`<details><summary>${title} (${count})</summary>`, '', ...kept, '', '</details>', '');
  };
  const rows = (list: readonly RouteRow[]) => {
    const [header = '', separator = '', ...cells] = markdownTable([...routeColumns], list.map(routeCells));
    return cells.length > 0 ? [header, separator, ...cells] : [];
  };
  section('Added routes', diff.added.length, rows(diff.added));
  section('Removed routes', diff.removed.length, rows(diff.removed));
  section(
    'Changed routes',
    diff.changed.length,
    diff.changed.flatMap((change) => [
      `- ${markdownCode(where({ port: change.after.port, host: change.after.host, path: pathLabel(change.after) }))}`,
      ...changeDetails(change).map(([aspect, before, after]) => `  - ${aspect}: ${markdownCode(before)} → ${markdownCode(after)}`),
    ]),
  );
  const diagnosticLines = (sign: string, list: readonly Diagnostic[]) =>
    list.map((d) => `- ${sign} ${markdownCode(formatText([d]).trimEnd())}`);
  section('New diagnostics', diff.diagnostics.added.length, diagnosticLines('new', diff.diagnostics.added));
  section('Gone diagnostics', diff.diagnostics.removed.length, diagnosticLines('gone', diff.diagnostics.removed));
  if (budget.omitted > 0) {
    body.push(
      `> ${budget.omitted} line(s) left out to stay under ${limit} characters. Run \`ingress2nginx diff --format text\` or open the review page for everything.`,
      '',
    );
  }
  return [...head, ...body].join('\n');
}
