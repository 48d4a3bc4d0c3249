import { readFileSync } from 'node:fs';
import type { RequestRoute } from '../src/translate/request-log.js';
import { followRequestLog, RequestMetrics } from '../src/sidecar/request-metrics.js';

/**
 * The cluster mode's request-line reader alone, for the data-plane bench: follows the file at `log` and
 * counts the lines of the config at `nginx.conf` as the sidecar does, so that the bench can price it
 * in CPU per request. Its route table is read back from the config (each location's key, the host
 * names): the labels' values do not change the work.
 *
 *   node dist/bench/request-reader.js <log> <nginx.conf>
 */
const [logPath = '', confPath = ''] = process.argv.slice(2);
const conf = readFileSync(confPath, 'utf8');
const routes = new Map<string, RequestRoute>();
for (const match of conf.matchAll(/set \$i2n_route ([0-9a-f]+);/g)) routes.set(match[1] as string, { namespace: 'bench', ingress: 'bench', service: 'bench', path: '/' });
const hosts = [...conf.matchAll(/server_name ([^;_]+);/g)].flatMap((m) => (m[1] as string).trim().split(/\s+/));
let dropped = 0;
const metrics = new RequestMetrics({
  controller: { namespace: 'bench', class: 'nginx', pod: 'bench' },
  onLineDropped: () => dropped++,
  onValueDropped: () => undefined,
});
metrics.setTables('bench', () => ({ routes, hosts, passthroughNames: [], canaries: [] }));
const listener = followRequestLog(logPath, metrics);
process.on('SIGTERM', () => {
  void listener.close().then(() => {
    const requests = [...metrics.exposition().matchAll(/^nginx_ingress_controller_requests\{.*\} (\d+)$/gm)].reduce((n, m) => n + Number(m[1]), 0);
    console.error(`request reader: ${requests} requests counted, ${dropped} lines dropped`);
    process.exit(0);
  });
});
console.log('listening');
