import { createHash } from 'node:crypto';
import type { Diagnostic } from '../model/diagnostics.js';
import type { NginxConfig } from '../model/nginx.js';
import type { ServedCertificate } from '../translate/dataplane/served-lists.js';
import { dataPlaneSvg } from './data-plane-svg.js';
import { diagnosticHelp } from './diagnostic-help.js';
import { changeDetails, diffSummary } from './diff-format.js';
import type { RouteDiff } from './diff.js';
import { htmlText } from './escape.js';
import { reviewPageClient } from './review-page-client.js';
import { provenanceLabel, routeCells, routeColumns } from './routes-format.js';
import type { RouteTable } from './routes.js';

/**
 * One self-contained HTML file: route table, data-plane picture, diagnostics, certificate expiry and,
 * with a base, the risky changes and the diff. No external assets and nothing fetched: the
 * Content-Security-Policy allows only the page's own script and style, by hash. Values from manifests
 * travel as JSON text in a non-executed script element and are set as text by the page's script; the
 * few parts rendered here are HTML-escaped.
 */

export interface ReviewPageInput {
  readonly table: RouteTable;
  readonly model: NginxConfig;
  readonly diagnostics: readonly Diagnostic[];
  readonly certificates: readonly ServedCertificate[];
  /** The time certificates were checked at (`--now`), so that the page is the same for the same input. */
  readonly now: Date;
  readonly diff?: RouteDiff;
}

const dayMs = 24 * 60 * 60 * 1000;

const style = `
:root { color-scheme: light; --fg: #1b1f24; --muted: #59636e; --line: #d1d9e0; --bg: #f6f8fa; --risky: #9a3412; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.4 system-ui, sans-serif; color: var(--fg); }
header { padding: 16px 24px; background: var(--bg); border-bottom: 1px solid var(--line); }
header h1 { margin: 0 0 4px; font-size: 20px; }
.summary { display: flex; flex-wrap: wrap; gap: 8px; margin: 0; padding: 0; list-style: none; }
.summary li { background: #fff; border: 1px solid var(--line); border-radius: 12px; padding: 2px 10px; }
.summary li.bad { border-color: var(--risky); color: var(--risky); font-weight: 600; }
main { padding: 8px 24px 40px; }
section { margin-top: 24px; }
h2 { font-size: 16px; margin: 0 0 8px; }
.controls { display: flex; gap: 12px; align-items: center; margin-bottom: 6px; }
.controls input { width: 360px; padding: 4px 8px; font: inherit; }
.count { color: var(--muted); }
.vt { border: 1px solid var(--line); border-radius: 6px; overflow: hidden; }
.head, .r { display: grid; }
.head { position: sticky; top: 0; z-index: 1; background: var(--bg); border-bottom: 1px solid var(--line); }
.head button { font: inherit; font-weight: 600; text-align: left; border: 0; background: none; padding: 4px 6px; cursor: pointer; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
.head button[aria-sort=ascending]::after { content: " \\25B2"; }
.head button[aria-sort=descending]::after { content: " \\25BC"; }
.viewport { height: 420px; overflow: auto; }
.spacer { position: relative; }
.r { position: absolute; left: 0; right: 0; height: 24px; border-bottom: 1px solid #eef1f4; }
.c { padding: 2px 6px; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; font-family: ui-monospace, monospace; font-size: 12px; line-height: 20px; }
#routes .head, #routes .r { grid-template-columns: 50px 200px 180px 150px 260px 260px 150px 260px 1fr; min-width: 1600px; }
#diff .head, #diff .r { grid-template-columns: 80px 50px 200px 180px 150px 260px 1fr; min-width: 1400px; }
#diagnostics .head, #diagnostics .r { grid-template-columns: 70px 230px 300px 220px 1fr; min-width: 1400px; }
#certificates .head, #certificates .r { grid-template-columns: 220px 100px 80px 260px 260px 1fr 80px; min-width: 1300px; }
.k-passthrough .c:nth-child(4) { color: #6f42c1; }
.k-terminate .c:nth-child(4), .k-terminate-reencrypt .c:nth-child(4) { color: #1a7f37; }
.k-closed .c:nth-child(4), .k-error .c:first-child, .k-expiring .c, .k-removed .c:first-child { color: #cf222e; }
.k-warning .c:first-child, .k-changed .c:first-child { color: #9a6700; }
.k-added .c:first-child { color: #1a7f37; }
.risky { border: 1px solid var(--risky); border-radius: 6px; padding: 8px 16px; background: #fff7ed; }
.risky li { margin: 4px 0; }
.risky code, .where { font-family: ui-monospace, monospace; font-size: 12px; }
.rule { font-weight: 600; color: var(--risky); }
.plane { overflow: auto; border: 1px solid var(--line); border-radius: 6px; background: #fff; }
#data-plane text { font: 12px system-ui, sans-serif; fill: var(--fg); }
#data-plane .title { font-weight: 600; }
#data-plane rect { fill: #f6f8fa; stroke: #8c959f; }
#data-plane .passthrough rect { fill: #f5f0ff; stroke: #6f42c1; }
#data-plane .terminate rect, #data-plane .http rect { fill: #eefbf1; stroke: #1a7f37; }
#data-plane .closed rect { fill: #fff0f0; stroke: #cf222e; }
#data-plane .upstream rect { fill: #eef6ff; stroke: #0969da; }
#data-plane .edge { fill: none; stroke: #8c959f; stroke-width: 1.5; }
#data-plane .arrow { fill: #8c959f; }
#data-plane .edge-label { fill: var(--muted); font-size: 11px; }
footer { color: var(--muted); padding: 0 24px 24px; }
`;

interface TableData {
  readonly id: string;
  readonly columns: readonly string[];
  readonly rows: readonly (readonly string[])[];
  readonly classColumn?: number;
}

function tableSection(id: string, title: string, placeholder: string): string {
  return [
    `<section id="${id}" aria-label="${htmlText(title)}">`,
    `<h2>${htmlText(title)}</h2>`,
    `<div class="controls"><input type="search" placeholder="${htmlText(placeholder)}" aria-label="${htmlText(placeholder)}"><span class="count"></span></div>`,
    '<div class="vt" role="table"><div class="viewport"><div class="head" role="row"></div><div class="spacer" role="rowgroup"></div></div></div>',
    '</section>',
  ].join('\n');
}

function diagnosticWhere(d: Diagnostic): string {
  if (d.file === undefined) return '';
  return `${d.file}${d.line !== undefined ? `:${d.line}${d.column !== undefined ? `:${d.column}` : ''}` : ''}`;
}

function certificateRows(certificates: readonly ServedCertificate[], now: Date): string[][] {
  return [...certificates]
    .sort((a, b) => Date.parse(a.notAfter) - Date.parse(b.notAfter) || (a.host < b.host ? -1 : a.host > b.host ? 1 : 0))
    .map((c) => {
      const days = Math.floor((Date.parse(c.notAfter) - now.getTime()) / dayMs);
      return [c.host, c.notAfter.slice(0, 10), String(days), c.subject, c.issuer, c.dnsNames.join(' '), days <= 30 ? 'expiring' : 'ok'];
    });
}

/** JSON inside `<script type="application/json">`: `<` escaped so no value can close the element. */
function scriptJson(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');
}

function sha256Base64(text: string): string {
  return createHash('sha256').update(text).digest('base64');
}

/** The rules' findings on the route changes. */
function riskySection(diff: NonNullable<ReviewPageInput['diff']>): string {
  return [
    '<section id="risky" aria-label="Risky changes">',
    `<h2>Risky changes (${diff.risky.length})</h2>`,
    diff.risky.length === 0
      ? '<p>None.</p>'
      : [
          '<ul class="risky">',
          ...diff.risky.map(
            (r) =>
              `<li><span class="rule">${htmlText(r.rule)}</span> ${r.resource ? `<span class="where">${htmlText(provenanceLabel(r.resource))}</span> ` : ''}${htmlText(r.message)}</li>`,
          ),
          '</ul>',
        ].join('\n'),
    `<p class="count">${htmlText(diffSummary(diff))}</p>`,
    '</section>',
  ].join('\n');
}

export function reviewPage(input: ReviewPageInput): string {
  const { table, diff } = input;
  const tables: TableData[] = [{ id: 'routes', columns: [...routeColumns], rows: table.rows.map(routeCells), classColumn: 3 }];
  if (diff) {
    const diffRows: string[][] = [
      ...diff.added.map((row) => ['added', ...routeCells(row).slice(0, 5), '']),
      ...diff.removed.map((row) => ['removed', ...routeCells(row).slice(0, 5), '']),
      ...diff.changed.map((change) => [
        'changed',
        ...routeCells(change.after).slice(0, 5),
        changeDetails(change)
          .map(([aspect, before, after]) => `${aspect}: ${before} -> ${after}`)
          .join('; '),
      ]),
    ];
    tables.push({ id: 'diff', columns: ['CHANGE', 'PORT', 'HOST', 'PATH', 'MODE', 'BACKEND', 'WHAT CHANGED'], rows: diffRows, classColumn: 0 });
  }
  tables.push({
    id: 'diagnostics',
    columns: ['SEVERITY', 'CODE', 'WHERE', 'RESOURCE', 'MESSAGE'],
    rows: input.diagnostics.map((d) => [
      d.severity,
      d.code,
      diagnosticWhere(d),
      d.resource ? `${d.resource.kind} ${d.resource.namespace ? `${d.resource.namespace}/` : ''}${d.resource.name}` : '',
      `${d.field ? `${d.field}: ` : ''}${d.message} (${diagnosticHelp(d.code)})`,
    ]),
    classColumn: 0,
  });
  // Hosts without TLS of their own also answer HTTPS with the default certificate; the expiry view is
  // about the certificates routes are meant to be served with.
  const terminated = new Set(table.rows.filter((row) => row.certificate).map((row) => row.host));
  const certificates = certificateRows(input.certificates.filter((c) => terminated.has(c.host)), input.now);
  tables.push({
    id: 'certificates',
    columns: ['HOST', 'NOT AFTER', 'DAYS LEFT', 'SUBJECT', 'ISSUER', 'DNS NAMES', 'STATUS'],
    rows: certificates,
    classColumn: 6,
  });
  const expiring = certificates.filter((row) => row[6] === 'expiring').length;

  const count = (severity: Diagnostic['severity']) => input.diagnostics.filter((d) => d.severity === severity).length;
  const summary = [
    `<li>${table.rows.length} route(s)</li>`,
    `<li>${input.model.http.virtualHosts.length} host(s)</li>`,
    `<li class="${count('error') > 0 ? 'bad' : ''}">${count('error')} error(s)</li>`,
    `<li>${count('warning')} warning(s)</li>`,
    `<li class="${expiring > 0 ? 'bad' : ''}">${expiring} certificate(s) expiring within 30 days</li>`,
    ...(diff ? [`<li class="${diff.risky.length > 0 ? 'bad' : ''}">${diff.risky.length} risky change(s)</li>`] : []),
  ];
  const risky = diff ? riskySection(diff) : '';
  const script = `(${reviewPageClient.toString()})();`;
  const policy = [
    "default-src 'none'",
    `script-src 'sha256-${sha256Base64(script)}'`,
    `style-src 'sha256-${sha256Base64(style)}'`,
    "img-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
  ].join('; ');
  return [
    '<!doctype html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    `<meta http-equiv="Content-Security-Policy" content="${htmlText(policy)}">`,
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    '<title>ingress2nginx review</title>',
    `<style>${style}</style>`,
    '</head>',
    '<body>',
    '<header>',
    '<h1>ingress2nginx review</h1>',
    `<ul class="summary">${summary.join('')}</ul>`,
    '</header>',
    '<main>',
    risky,
    '<section id="plane" aria-label="Data plane"><h2>Data plane</h2><div class="plane">',
    dataPlaneSvg(input.model),
    '</div></section>',
    tableSection('routes', 'Routes', 'Filter routes: host, path, Service, mode, Secret...'),
    diff ? tableSection('diff', 'Route changes', 'Filter changes') : '',
    tableSection('diagnostics', 'Diagnostics', 'Filter diagnostics: code, file, resource...'),
    tableSection('certificates', `Certificates (checked at ${input.now.toISOString()})`, 'Filter certificates'),
    '</main>',
    `<footer>Generated by ingress2nginx for nginx ${htmlText(input.model.nginxVersion)}; config generation ${htmlText(input.model.generation)}.</footer>`,
    `<script type="application/json" id="review-data">${scriptJson(tables)}</script>`,
    `<script>${script}</script>`,
    '</body>',
    '</html>',
    '',
  ].join('\n');
}
