import { readFileSync } from 'node:fs';
import type { RequestRoute } from '../src/translate/dataplane/request-log.js';
import { followRequestLog, RequestMetrics } from '../src/sidecar/request-metrics.js';

/**
 * The cluster mode's request-line reader alone, for the data-plane bench: follows the file at `log` and
 * counts the lines of the config at `nginx.conf` as the sidecar does, so that the bench can price it
 * in CPU per request. Its route table is read back from the config (each location's key, the host
 * names, the passthrough names): the labels' values do not change the work. On SIGTERM it prints what
 * it counted and the lines it dropped, by reason: a dropped line is one the sidecar would not count.
 *
 *   node dist/bench/request-reader.js <log> <nginx.conf>
 */
const [logPath = '', confPath = ''] = process.argv.slice(2);
const conf = readFileSync(confPath, 'utf8');
const routes = new Map<string, RequestRoute>();
for (const match of conf.matchAll(/set \$i2n_route ([0-9a-f]+);/g)) routes.set(match[1] as string, { namespace: 'bench', ingress: 'bench', service: 'bench', path: '/' });
const hosts = [...conf.matchAll(/server_name ([^;_]+);/g)].flatMap((m) => (m[1] as string).trim().split(/\s+/));
const passthroughNames = [...conf.matchAll(/map \$ssl_preread_server_name \$i2n_passthrough_\d+ \{\n\s*hostnames;\n([^}]*)\}/g)].flatMap((m) =>
  (m[1] as string).split('\n').flatMap((line) => /^\s*(\S+) \S+;/.exec(line)?.[1] ?? []),
);
const dropped = new Map<string, number>();
const metrics = new RequestMetrics({
  controller: { namespace: 'bench', class: 'nginx', pod: 'bench' },
  onLineDropped: (reason) => dropped.set(reason, (dropped.get(reason) ?? 0) + 1),
  onValueDropped: () => undefined,
});
metrics.setTables('bench', () => ({ routes, hosts, passthroughNames, canaries: new Map() }));
const listener = followRequestLog(logPath, metrics);
process.on('SIGTERM', () => {
  void listener.close().then(() => {
    const exposition = metrics.exposition();
    const total = (series: RegExp) => [...exposition.matchAll(series)].reduce((n, m) => n + Number(m[1]), 0);
    const requests = total(/^nginx_ingress_controller_requests\{.*\} (\d+)$/gm);
    const connections = total(/^ingress2nginx_passthrough_connections_total\{.*\} (\d+)$/gm);
    const drops = [...dropped].map(([reason, n]) => `${n} ${reason}`).join(', ') || 'none';
    console.error(`request reader: ${requests} requests and ${connections} passthrough connections counted; lines dropped: ${drops}`);
    process.exit(0);
  });
});
console.log('listening');
