import type { NginxConfig } from '../model/nginx.js';
import { htmlText } from './escape.js';

/**
 * The data plane as an inline SVG, drawn from the model: listening ports → SNI front per TLS port →
 * what names lead to (http servers, passthrough, stream termination, closed) → upstreams. Boxes carry
 * counts and a few example names; with 10,000 routes the picture stays the same size.
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

const examples = 4;
const columnX = [10, 230, 560, 900];
const boxWidth = [180, 240, 260, 260];
const lineHeight = 15;

function sample(names: readonly string[]): string[] {
  const shown = names.slice(0, examples);
  return names.length > examples ? [...shown, `+ ${names.length - examples} more`] : shown;
}

export function dataPlaneSvg(model: NginxConfig): string {
  const boxes: Box[] = [];
  const edges: Edge[] = [];
  const http = model.http;
  const terminatingHosts = http.virtualHosts.filter((h) => h.tls).map((h) => h.serverName);
  const plainHosts = http.virtualHosts.map((h) => h.serverName);

  boxes.push({ id: 'port-http', column: 0, kind: 'port', title: `:${http.httpPort} plain HTTP`, lines: [`${plainHosts.length} host(s)`] });
  boxes.push({
    id: 'http',
    column: 2,
    kind: 'http',
    title: 'http servers',
    lines: [`${http.virtualHosts.length} host(s), ${terminatingHosts.length} terminating TLS`, ...sample(plainHosts)],
  });
  edges.push({ from: 'port-http', to: 'http', label: 'by Host' });
  if (!model.stream.frontends.some((front) => front.port === http.httpsPort)) {
    // No name on the HTTPS port goes anywhere else: the http servers listen on it, with no SNI front.
    boxes.push({ id: `port-${http.httpsPort}`, column: 0, kind: 'port', title: `:${http.httpsPort} TLS`, lines: [http.httpsListeners.some((listener) => listener.proxyProtocol && !listener.address.startsWith('unix:')) ? 'PROXY protocol in' : 'no SNI front'] });
    edges.push({ from: `port-${http.httpsPort}`, to: 'http', label: 'TLS, by SNI' });
  }

  const passthrough: string[] = [];
  const terminate: string[] = [];
  const closed: string[] = [];
  for (const front of model.stream.frontends) {
    const names = front.routes.map((r) => r.serverName);
    boxes.push({ id: `port-${front.port}`, column: 0, kind: 'port', title: `:${front.port} TLS`, lines: [front.acceptProxyProtocol ? 'PROXY protocol in' : 'SNI split'] });
    boxes.push({ id: `front-${front.port}`, column: 1, kind: 'front', title: `SNI front :${front.port}`, lines: [`${names.length} name(s) in the map`, ...sample(names)] });
    edges.push({ from: `port-${front.port}`, to: `front-${front.port}`, label: 'SNI' });
    const counts = { http: 0, passthrough: 0, terminate: 0, closed: 0 };
    for (const route of front.routes) {
      const kind = route.origin?.destination.kind ?? 'http';
      counts[kind] += 1;
      if (kind === 'passthrough') passthrough.push(route.serverName);
      if (kind === 'terminate') terminate.push(route.serverName);
      if (kind === 'closed') closed.push(route.serverName);
    }
    if (front.port === http.httpsPort || counts.http > 0) {
      edges.push({ from: `front-${front.port}`, to: 'http', label: `${counts.http} + default` });
    }
    if (counts.passthrough > 0) edges.push({ from: `front-${front.port}`, to: 'passthrough', label: `${counts.passthrough} name(s)` });
    if (counts.terminate > 0) edges.push({ from: `front-${front.port}`, to: 'terminate', label: `${counts.terminate} name(s)` });
    if (counts.closed > 0) edges.push({ from: `front-${front.port}`, to: 'closed', label: `${counts.closed} name(s)` });
  }
  if (passthrough.length > 0) {
    boxes.push({
      id: 'passthrough',
      column: 2,
      kind: 'passthrough',
      title: 'passthrough (TLS untouched)',
      lines: [`${passthrough.length} name(s), ${model.stream.passthroughServers.length} backend set(s)`, ...sample(passthrough)],
    });
    edges.push({ from: 'passthrough', to: 'stream-upstreams', label: 'TCP' });
  }
  if (terminate.length > 0) {
    boxes.push({
      id: 'terminate',
      column: 2,
      kind: 'terminate',
      title: 'stream termination (Gateway)',
      lines: [`${terminate.length} name(s), ${model.stream.terminateServers.length} server(s)`, ...sample(terminate)],
    });
    edges.push({ from: 'terminate', to: 'stream-upstreams', label: 'TCP/TLS' });
  }
  if (closed.length > 0) boxes.push({ id: 'closed', column: 2, kind: 'closed', title: 'closed', lines: [`${closed.length} name(s)`, ...sample(closed)] });
  boxes.push({
    id: 'http-upstreams',
    column: 3,
    kind: 'upstream',
    title: 'http upstreams',
    lines: [`${http.upstreams.length} upstream(s)`, ...sample(http.upstreams.map((u) => u.comment))],
  });
  edges.push({ from: 'http', to: 'http-upstreams', label: 'HTTP(S)' });
  if (passthrough.length + terminate.length > 0) {
    boxes.push({
      id: 'stream-upstreams',
      column: 3,
      kind: 'upstream',
      title: 'stream upstreams',
      lines: [`${model.stream.upstreams.length} upstream(s)`, ...sample(model.stream.upstreams.map((u) => u.comment))],
    });
  }

  const placed = new Map<string, { x: number; y: number; width: number; height: number }>();
  const nextY = [10, 10, 10, 10];
  for (const box of boxes) {
    const height = 26 + box.lines.length * lineHeight;
    const y = nextY[box.column]!;
    placed.set(box.id, { x: columnX[box.column]!, y, width: boxWidth[box.column]!, height });
    nextY[box.column] = y + height + 24;
  }
  const totalHeight = Math.max(...nextY) + 10;
  const width = columnX[3]! + boxWidth[3]! + 10;
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" id="data-plane" role="img" aria-label="data plane" viewBox="0 0 ${width} ${totalHeight}" width="${width}" height="${totalHeight}">`,
    '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" class="arrow"/></marker></defs>',
  ];
  for (const edge of edges) {
    const from = placed.get(edge.from);
    const to = placed.get(edge.to);
    if (!from || !to) continue;
    const x1 = from.x + from.width;
    const y1 = from.y + 18;
    const x2 = to.x;
    const y2 = to.y + 18;
    parts.push(
      `<path class="edge" d="M ${x1} ${y1} C ${x1 + 30} ${y1}, ${x2 - 30} ${y2}, ${x2} ${y2}" marker-end="url(#arrow)"/>`,
      `<text class="edge-label" x="${(x1 + x2) / 2}" y="${(y1 + y2) / 2 - 4}" text-anchor="middle">${htmlText(edge.label)}</text>`,
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

function truncate(text: string, length: number): string {
  return text.length > length ? `${text.slice(0, length - 1)}…` : text;
}
