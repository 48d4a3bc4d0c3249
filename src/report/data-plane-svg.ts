import type { NginxConfig } from '../model/nginx.js';
import type { ServicePortRef } from '../model/provenance.js';
import { htmlText } from './escape.js';

/**
 * The data plane as an inline SVG, drawn from the model: listening ports → SNI front per TLS port →
 * what names lead to (http servers, passthrough, stream termination, closed) → upstreams. Boxes carry
 * counts and a few example names; with 10,000 routes the picture stays the same size. Every edge carries
 * `data-from`/`data-to`, and one that skips a column runs below the boxes of the column it skips, so an
 * arrow never seems to enter a box it does not lead to.
 */

interface Box {
  readonly id: string;
  readonly column: number;
  readonly title: string;
  readonly lines: readonly string[];
  readonly kind: 'port' | 'front' | 'http' | 'passthrough' | 'terminate' | 'closed' | 'upstream';
}

interface Edge {
  readonly from: string;
  readonly to: string;
  readonly label: string;
}

interface Placed {
  readonly x: number;
  readonly y: number;
  readonly width: number;
  readonly height: number;
}

const examples = 4;
const columnX = [10, 230, 560, 900];
const boxWidth = [180, 240, 260, 260];
const lineHeight = 15;

function sample(names: readonly string[]): string[] {
  const shown = names.slice(0, examples);
  return names.length > examples ? [...shown, `+ ${names.length - examples} more`] : shown;
}

function serviceLabel(service: ServicePortRef): string {
  return `${service.namespace}/${service.name}:${service.port}`;
}

export function dataPlaneSvg(model: NginxConfig): string {
  const { boxes, edges } = layout(model);
  const placed = place(boxes);
  const totalHeight = Math.max(...[...placed.values()].map((p) => p.y + p.height)) + 34;
  const width = columnX[3]! + boxWidth[3]! + 10;
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" id="data-plane" role="img" aria-label="data plane" viewBox="0 0 ${width} ${totalHeight}" width="${width}" height="${totalHeight}">`,
    '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" class="arrow"/></marker></defs>',
  ];
  for (const edge of edges) {
    const from = placed.get(edge.from);
    const to = placed.get(edge.to);
    if (!from || !to) continue;
    const { d, labelX, labelY } = edgePath(edge, from, to, boxes, placed);
    parts.push(
      `<path class="edge" data-from="${htmlText(edge.from)}" data-to="${htmlText(edge.to)}" d="${d}" marker-end="url(#arrow)"/>`,
      `<text class="edge-label" x="${labelX}" y="${labelY}" text-anchor="middle">${htmlText(edge.label)}</text>`,
    );
  }
  for (const box of boxes) {
    const at = placed.get(box.id)!;
    parts.push(
      `<g class="box ${box.kind}" data-box="${htmlText(box.id)}">`,
      `<rect x="${at.x}" y="${at.y}" width="${at.width}" height="${at.height}" rx="6"/>`,
      `<text class="title" x="${at.x + 8}" y="${at.y + 17}">${htmlText(box.title)}</text>`,
      ...box.lines.map(
        (line, i) => `<text x="${at.x + 8}" y="${at.y + 17 + (i + 1) * lineHeight}">${htmlText(truncate(line, box.column === 0 ? 22 : 34))}</text>`,
      ),
      '</g>',
    );
  }
  parts.push('</svg>');
  return parts.join('\n');
}

/** The boxes and edges of the model, before placement. */
function layout(model: NginxConfig): { boxes: Box[]; edges: Edge[] } {
  const boxes: Box[] = [];
  const edges: Edge[] = [];
  const http = model.http;
  const terminating = http.virtualHosts.filter((h) => h.tls).map((h) => h.serverName);
  // A host whose TLS is passed through has an http server for port 80 only.
  const plainOnly = http.virtualHosts.filter((h) => !h.tls).map((h) => `${h.serverName} (:${http.httpPort} only)`);

  const passthrough: string[] = [];
  const terminate: string[] = [];
  const closed: string[] = [];
  const streamServices = new Set<string>();
  for (const front of model.stream.frontends) {
    const names = front.routes.map((r) => r.serverName);
    boxes.push({ id: `port-${front.port}`, column: 0, kind: 'port', title: `:${front.port} TLS`, lines: [front.acceptProxyProtocol ? 'PROXY protocol in' : 'SNI split'] });
    boxes.push({ id: `front-${front.port}`, column: 1, kind: 'front', title: `SNI front :${front.port}`, lines: [`${names.length} name(s) in the map`, ...sample(names)] });
    edges.push({ from: `port-${front.port}`, to: `front-${front.port}`, label: 'SNI' });
    const counts = { http: 0, passthrough: 0, terminate: 0, closed: 0 };
    for (const route of front.routes) {
      const destination = route.origin?.destination ?? { kind: 'http' as const };
      counts[destination.kind] += 1;
      if (destination.kind === 'passthrough') passthrough.push(route.serverName);
      if (destination.kind === 'terminate') terminate.push(route.serverName);
      if (destination.kind === 'closed') closed.push(route.serverName);
      if (destination.kind === 'passthrough' || destination.kind === 'terminate') {
        for (const share of destination.backends) streamServices.add(serviceLabel(share.service));
      }
    }
    // Names not in the map go to the http servers (the default) unless the port only passes TLS on.
    if (front.port === http.httpsPort || counts.http > 0) {
      edges.push({ from: `front-${front.port}`, to: 'http', label: counts.http > 0 ? `${counts.http} name(s) + the rest` : 'the rest' });
    }
    if (counts.passthrough > 0) edges.push({ from: `front-${front.port}`, to: 'passthrough', label: `${counts.passthrough} name(s)` });
    if (counts.terminate > 0) edges.push({ from: `front-${front.port}`, to: 'terminate', label: `${counts.terminate} name(s)` });
    if (counts.closed > 0) edges.push({ from: `front-${front.port}`, to: 'closed', label: `${counts.closed} name(s)` });
  }
  if (!model.stream.frontends.some((front) => front.port === http.httpsPort)) {
    // No name on the HTTPS port goes anywhere else: the http servers listen on it, with no SNI front.
    const proxyProtocol = http.httpsListeners.some((listener) => listener.proxyProtocol && !listener.address.startsWith('unix:'));
    boxes.push({ id: `port-${http.httpsPort}`, column: 0, kind: 'port', title: `:${http.httpsPort} TLS`, lines: [proxyProtocol ? 'PROXY protocol in' : 'no SNI front'] });
    edges.push({ from: `port-${http.httpsPort}`, to: 'http', label: 'TLS, by SNI' });
  }
  boxes.push({ id: 'port-http', column: 0, kind: 'port', title: `:${http.httpPort} plain HTTP`, lines: [`${http.virtualHosts.length} host(s)`] });
  edges.push({ from: 'port-http', to: 'http', label: 'by Host' });

  boxes.push({
    id: 'http',
    column: 2,
    kind: 'http',
    title: 'http servers',
    lines: [`${terminating.length} terminate TLS, ${plainOnly.length} :${http.httpPort} only`, ...sample([...terminating, ...plainOnly])],
  });
  if (passthrough.length > 0) {
    boxes.push({
      id: 'passthrough',
      column: 2,
      kind: 'passthrough',
      title: 'passthrough (TLS untouched)',
      lines: [`${passthrough.length} name(s)`, ...sample(passthrough)],
    });
    edges.push({ from: 'passthrough', to: 'stream-backends', label: 'TCP' });
  }
  if (terminate.length > 0) {
    boxes.push({
      id: 'terminate',
      column: 2,
      kind: 'terminate',
      title: 'stream termination (Gateway)',
      lines: [`${terminate.length} name(s), ${model.stream.terminateServers.length} server(s)`, ...sample(terminate)],
    });
    edges.push({ from: 'terminate', to: 'stream-backends', label: 'TCP/TLS' });
  }
  if (closed.length > 0) boxes.push({ id: 'closed', column: 2, kind: 'closed', title: 'closed', lines: [`${closed.length} name(s)`, ...sample(closed)] });

  const httpServices = [...new Set(http.upstreams.map((u) => u.comment))];
  boxes.push({ id: 'http-upstreams', column: 3, kind: 'upstream', title: 'http upstreams', lines: [`${http.upstreams.length} upstream(s)`, ...sample(httpServices)] });
  edges.push({ from: 'http', to: 'http-upstreams', label: 'HTTP(S)' });
  if (passthrough.length + terminate.length > 0) {
    // Counted by Service port: a lone backend is named by its address in the SNI map, with no upstream block.
    const services = [...streamServices].sort();
    boxes.push({ id: 'stream-backends', column: 3, kind: 'upstream', title: 'stream backends', lines: [`${services.length} Service port(s)`, ...sample(services)] });
  }
  return { boxes, edges };
}

/** Boxes top to bottom in their column, 24 apart. */
function place(boxes: readonly Box[]): Map<string, Placed> {
  const placed = new Map<string, Placed>();
  const nextY = [10, 10, 10, 10];
  for (const box of boxes) {
    const height = 26 + box.lines.length * lineHeight;
    const y = nextY[box.column]!;
    placed.set(box.id, { x: columnX[box.column]!, y, width: boxWidth[box.column]!, height });
    nextY[box.column] = y + height + 24;
  }
  return placed;
}

/**
 * Between neighbouring columns a curve. An edge that skips a column goes around it: right into the gap,
 * down to a lane below that column's boxes, across, and up into the gap before its target, which it
 * enters low, apart from the curves that arrive at the top.
 */
function edgePath(edge: Edge, from: Placed, to: Placed, boxes: readonly Box[], placed: ReadonlyMap<string, Placed>): { d: string; labelX: number; labelY: number } {
  const fromColumn = boxes.find((b) => b.id === edge.from)!.column;
  const toColumn = boxes.find((b) => b.id === edge.to)!.column;
  const x1 = from.x + from.width;
  const y1 = from.y + 18;
  const x2 = to.x;
  if (toColumn - fromColumn <= 1) {
    const y2 = to.y + 18;
    return { d: `M ${x1} ${y1} C ${x1 + 30} ${y1}, ${x2 - 30} ${y2}, ${x2} ${y2}`, labelX: (x1 + x2) / 2, labelY: (y1 + y2) / 2 - 4 };
  }
  const skipped = boxes.filter((b) => b.column > fromColumn && b.column < toColumn).map((b) => placed.get(b.id)!);
  const lane = Math.max(y1, ...skipped.map((p) => p.y + p.height + 14));
  const gapAfter = (x1 + columnX[fromColumn + 1]!) / 2;
  const gapBefore = x2 - 16;
  const y2 = to.y + to.height - 12;
  return {
    d: `M ${x1} ${y1} H ${gapAfter} V ${lane} H ${gapBefore} V ${y2} H ${x2}`,
    labelX: (gapAfter + gapBefore) / 2,
    labelY: lane - 4,
  };
}

function truncate(text: string, length: number): string {
  return text.length > length ? `${text.slice(0, length - 1)}…` : text;
}
