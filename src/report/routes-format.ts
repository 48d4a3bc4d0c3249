import type { Provenance } from '../model/provenance.js';
import { markdownCode } from './escape.js';
import { printable } from '../model/printable.js';
import { refName, type RouteBackend, type RouteRow, type RouteTable } from './routes.js';

/** The route table as text (aligned columns), JSON (fixed key order) and markdown (a table). */

export const routeColumns = ['PORT', 'HOST', 'PATH', 'MODE', 'BACKEND', 'CERTIFICATE', 'PLAIN HTTP', 'CLAIMED BY', 'NOTES'] as const;

/** The cells of a row, as plain strings (not yet escaped for any output form). */
export function routeCells(row: RouteRow): string[] {
  return [
    String(row.port),
    row.mode === 'tcp' || row.mode === 'udp' ? '(whole port)' : hostLabel(row.host),
    pathLabel(row),
    row.mode,
    backendLabel(row),
    certificateLabel(row),
    plainHttpLabel(row),
    row.claimant ? provenanceLabel(row.claimant) : '-',
    notesLabel(row),
  ];
}

export function hostLabel(host: string): string {
  return host === '' ? '(any host)' : host;
}

export function pathLabel(row: Pick<RouteRow, 'path' | 'pathType' | 'mode'>): string {
  if (row.mode === 'tcp' || row.mode === 'udp') return '-';
  if (row.pathType === undefined) return '(TLS by SNI)';
  return `${row.path} (${row.pathType})`;
}

function backendsLabel(backends: readonly RouteBackend[], closedWeight: number): string {
  const weighted = backends.length > 1 || closedWeight > 0;
  const parts = backends.map(
    (b) =>
      `${b.service}:${b.port}${weighted ? ` weight ${b.weight}` : ''} [${b.assignedByCluster ? 'cluster IP at apply' : b.addresses.join(' ') || 'no address'}]`,
  );
  if (closedWeight > 0) parts.push(`closed weight ${closedWeight}`);
  return parts.join(', ');
}

export function backendLabel(row: RouteRow): string {
  const backends = row.answers !== undefined ? `answers ${row.answers}` : backendsLabel(row.backends, row.closedWeight) || 'closed';
  const tls = row.backendTls;
  if (!tls) return backends;
  const details = [
    tls.verify ? `verify on (depth ${tls.verifyDepth})` : 'verify off',
    ...(tls.ca ? [`CA ${tls.ca.subject ?? tls.ca.file}`] : []),
    ...(tls.name !== undefined ? [`name ${tls.name}`] : []),
    tls.sni ? 'SNI on' : 'SNI off',
    ...(tls.clientCertificate !== undefined ? [`client certificate ${tls.clientCertificate}`] : []),
    ...(tls.policy !== undefined ? [`policy ${tls.policy}`] : []),
  ];
  return `${backends} (TLS: ${details.join(', ')})`;
}

export function certificateLabel(row: RouteRow): string {
  const certificate = row.certificate;
  if (!certificate) return '-';
  const what =
    certificate.source === 'secret'
      ? certificate.secret !== undefined
        ? `Secret ${certificate.secret}${certificate.expectedFrom !== undefined ? ` (not in the input: ${certificate.expectedFrom})` : ''}`
        : 'listener certificate'
      : `default (${certificate.defaultReason ?? 'default'})`;
  const subject = certificate.subject !== undefined ? `: ${certificate.subject}` : '';
  const until = certificate.notAfter !== undefined ? `, until ${certificate.notAfter.slice(0, 10)}` : '';
  return `${what}${subject}${until}`;
}

export function plainHttpLabel(row: RouteRow): string {
  const redirect = { redirect: '308 to HTTPS', serve: 'served', 'redirect-unless-forwarded-https': '308 unless forwarded HTTPS' } as const;
  const parts = [...(row.plainHttp ? [redirect[row.plainHttp]] : ['-']), ...(row.hsts !== undefined ? ['HSTS'] : [])];
  return parts.join(', ');
}

export function provenanceLabel(provenance: Provenance): string {
  const line = provenance.line !== undefined ? `:${provenance.line}${provenance.column !== undefined ? `:${provenance.column}` : ''}` : '';
  const where = provenance.file !== undefined ? ` (${provenance.file}${line})` : '';
  return `${provenance.resource.kind} ${refName(provenance.resource)}${where}`;
}

export function notesLabel(row: RouteRow): string {
  const parts = [...row.notes];
  if (row.listener !== undefined) parts.unshift(`listener ${row.listener}`);
  if (row.losers.length > 0) parts.push(`lost the claim: ${row.losers.map((l) => `${l.resource.kind} ${refName(l.resource)}`).join(', ')}`);
  return parts.join('; ') || '-';
}

/** What `routes` prints without `--wide` fits a terminal this wide. */
export const routesTextWidth = 120;

/** The columns shown without `--wide` (indexes into `routeColumns`): what a route is and where it goes. */
const narrowColumns = [0, 1, 2, 3, 4] as const;

/**
 * Aligned columns, control characters made visible. Without `wide`, port, host, path, mode and backend,
 * cut (`…`) to fit `routesTextWidth`; with it, every column in full.
 */
export function formatRoutesText(table: RouteTable, options: { readonly wide?: boolean } = {}): string {
  if (table.rows.length === 0) return 'no routes\n';
  const rows = table.rows.map((row) => routeCells(row).map(printable));
  if (options.wide) return alignedTable([...routeColumns], rows) + `${table.rows.length} route(s)\n`;
  const header = narrowColumns.map((i) => routeColumns[i]);
  const fitted = fitColumns(header, rows.map((cells) => narrowColumns.map((i) => cells[i]!)), routesTextWidth);
  return alignedTable(header, fitted) + `${table.rows.length} route(s); --wide adds certificates, plain HTTP, claimants and notes, uncut\n`;
}

/**
 * Cells cut so that the aligned table (two spaces between columns) is at most `width` wide: the widest
 * column gives up a character at a time, down to its header's width; a cut cell ends in `…`.
 */
export function fitColumns(header: readonly string[], rows: readonly (readonly string[])[], width: number): string[][] {
  const widths = header.map((title, i) => Math.max(title.length, ...rows.map((cells) => cells[i]!.length)));
  const floor = header.map((title) => Math.max(title.length, 4));
  const total = () => widths.reduce((sum, w) => sum + w, 0) + 2 * (widths.length - 1);
  while (total() > width) {
    let widest = -1;
    widths.forEach((w, i) => {
      if (w > floor[i]! && (widest === -1 || w > widths[widest]!)) widest = i;
    });
    if (widest === -1) break;
    widths[widest]! -= 1;
  }
  return rows.map((cells) => cells.map((cell, i) => (cell.length > widths[i]! ? `${cell.slice(0, widths[i]! - 1)}…` : cell)));
}

export function alignedTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((title, i) => Math.max(title.length, ...rows.map((cells) => cells[i]!.length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd() + '\n';
  return line(header) + rows.map(line).join('');
}

export function formatRoutesMarkdown(table: RouteTable): string {
  const lines = [`### Routes (${table.rows.length})`, ''];
  if (table.rows.length === 0) return `${lines.join('\n')}No routes.\n`;
  lines.push(...markdownTable([...routeColumns], table.rows.map(routeCells)));
  return lines.join('\n') + '\n';
}

/** A GFM table; every cell is a code span (shown verbatim) or empty for `-`. */
export function markdownTable(header: readonly string[], rows: readonly (readonly string[])[]): string[] {
  const cell = (value: string) => (value === '-' ? '' : markdownCode(value));
  return [
    `| ${header.join(' | ')} |`,
    `|${header.map(() => ' --- ').join('|')}|`,
    ...rows.map((cells) => `| ${cells.map(cell).join(' | ')} |`),
  ];
}

/** JSON with a fixed key order, so that the same routes always give the same bytes. */
export function routeJson(row: RouteRow): Record<string, unknown> {
  return {
    key: row.key,
    port: row.port,
    host: row.host,
    path: row.path,
    pathType: row.pathType ?? null,
    mode: row.mode,
    backends: row.backends.map((b) => ({
      service: b.service,
      port: b.port,
      weight: b.weight,
      addresses: b.addresses,
      ...(b.assignedByCluster && { assignedByCluster: true }),
    })),
    closedWeight: row.closedWeight,
    answers: row.answers ?? null,
    backendTls: row.backendTls
      ? {
          verify: row.backendTls.verify,
          verifyDepth: row.backendTls.verifyDepth,
          ca: row.backendTls.ca ? { file: row.backendTls.ca.file, subject: row.backendTls.ca.subject ?? null, sha256: row.backendTls.ca.sha256 ?? null } : null,
          name: row.backendTls.name ?? null,
          sni: row.backendTls.sni,
          clientCertificate: row.backendTls.clientCertificate ?? null,
          policy: row.backendTls.policy ?? null,
        }
      : null,
    certificate: row.certificate
      ? {
          source: row.certificate.source,
          secret: row.certificate.secret ?? null,
          ...(row.certificate.expectedFrom !== undefined && { expectedFrom: row.certificate.expectedFrom }),
          defaultReason: row.certificate.defaultReason ?? null,
          subject: row.certificate.subject ?? null,
          issuer: row.certificate.issuer ?? null,
          dnsNames: row.certificate.dnsNames ?? [],
          notAfter: row.certificate.notAfter ?? null,
        }
      : null,
    plainHttp: row.plainHttp ?? null,
    hsts: row.hsts ?? null,
    claimant: row.claimant ? provenanceJson(row.claimant) : null,
    losers: row.losers.map(provenanceJson),
    listener: row.listener ?? null,
    notes: row.notes,
  };
}

export function provenanceJson(provenance: Provenance): Record<string, unknown> {
  return {
    kind: provenance.resource.kind,
    namespace: provenance.resource.namespace ?? null,
    name: provenance.resource.name,
    field: provenance.field ?? null,
    file: provenance.file ?? null,
    line: provenance.line ?? null,
    column: provenance.column ?? null,
  };
}

export function formatRoutesJson(table: RouteTable): string {
  return JSON.stringify({ httpPort: table.httpPort, httpsPort: table.httpsPort, routes: table.rows.map(routeJson) }, null, 2) + '\n';
}
