import { cpus } from 'node:os';
import { RequestMetrics } from '../src/sidecar/request-metrics.js';
import type { RequestRoute } from '../src/translate/dataplane/request-log.js';

/**
 * `npm run bench:request-lines`: the sidecar's CPU per request line, apart from nginx and the file: the
 * lines of a busy Ingress (one route, spread statuses, methods and timings; a share of them with hosts
 * a client invented, which are settled line by line past the cache) counted by `RequestMetrics`, as
 * the reader hands them over (a 64 KB buffer at a time). Prints the median of 9 runs and the cores that
 * 10,000 requests/s take. The data-plane bench prices the same reader with nginx writing the file.
 */

const routes = new Map<string, RequestRoute>([
  ['5f0c1e2a9b7d', { namespace: 'shop', ingress: 'web', service: 'front', path: '/' }],
  ['c3a81f0e44d2', { namespace: 'shop', ingress: 'api', service: 'api', path: '/api' }],
]);
const statuses = ['200', '200', '200', '200', '201', '304', '404', '503'];
const methodsLogged = ['GET', 'GET', 'GET', 'POST', 'PUT', 'HEAD'];

function lines(count: number, inventedHostShare: number): string[] {
  return Array.from({ length: count }, (_, i) => {
    const [route, upstream] = i % 3 === 0 ? ['c3a81f0e44d2', 'shop_api_80'] : ['5f0c1e2a9b7d', 'shop_front_80'];
    const host = i % Math.round(1 / inventedHostShare) === 0 ? `x${i}.example.test` : 'shop.example.test';
    const time = ((i * 7) % 900) / 1000;
    return `h|${route}|${statuses[i % statuses.length]}|${methodsLogged[i % methodsLogged.length]}|${300 + (i % 700)}|${time.toFixed(3)}|${1000 + ((i * 13) % 90000)}|0.001|${(time / 2).toFixed(3)}|${time.toFixed(3)}|${upstream}|${host}`;
  });
}

/** Lines in 64 KB chunks of whole lines, as nginx writes them and the reader passes them on. */
function buffers(all: readonly string[]): string[] {
  const out: string[] = [];
  let current: string[] = [];
  let size = 0;
  for (const line of all) {
    if (size + line.length + 1 > 64 * 1024) {
      out.push(current.join('\n'));
      current = [];
      size = 0;
    }
    current.push(line);
    size += line.length + 1;
  }
  if (current.length > 0) out.push(current.join('\n'));
  return out;
}

function run(chunks: readonly string[]): number {
  const metrics = new RequestMetrics({ controller: { namespace: 'infra', class: 'nginx', pod: 'bench' }, onLineDropped: () => undefined, onValueDropped: () => undefined });
  metrics.setTables('bench', () => ({ routes, hosts: ['shop.example.test'], passthroughNames: [], canaries: new Map() }));
  const start = process.cpuUsage();
  for (const chunk of chunks) metrics.handleLines(chunk);
  const used = process.cpuUsage(start);
  metrics.exposition();
  return (used.user + used.system) / 1e6;
}

const count = 200_000;
console.log(`request lines bench — ${cpus().length} CPU(s) ${cpus()[0]?.model ?? ''}, node ${process.version}; ${count.toLocaleString('en-US')} lines a run`);
for (const share of [0.001, 0.1]) {
  const chunks = buffers(lines(count, share));
  run(chunks);
  const seconds = Array.from({ length: 9 }, () => run(chunks)).sort((a, b) => a - b);
  const perLine = (seconds[4] as number) / count;
  console.log(
    `| ${(share * 100).toFixed(1)}% of hosts invented | ${(perLine * 1e6).toFixed(2)} µs CPU per line (median of 9; ${((seconds[0] as number) / count * 1e6).toFixed(2)}–${((seconds[8] as number) / count * 1e6).toFixed(2)}) | ${(perLine * 10_000).toFixed(3)} cores at 10,000 requests/s |`,
  );
}
