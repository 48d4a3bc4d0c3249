import http from 'node:http';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/**
 * The cluster mode's Prometheus metrics, all prefixed `ingress2nginx_`, in a registry of their own,
 * with the process's own (memory, CPU, event-loop lag) under the same prefix.
 */
export class Metrics {
  readonly registry = new Registry();

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: 'ingress2nginx_' });
  }

  readonly reloads = new Counter({
    name: 'ingress2nginx_reloads_total',
    help: 'nginx reloads by result (success: the new config generation is served; failure: nginx -t or the reload failed)',
    labelNames: ['result'],
    registers: [this.registry],
  });
  readonly lastSuccessfulReload = new Gauge({
    name: 'ingress2nginx_last_successful_reload_timestamp_seconds',
    help: 'Unix time of the last reload whose config generation nginx then served',
    registers: [this.registry],
  });
  readonly renderDuration = new Histogram({
    name: 'ingress2nginx_render_duration_seconds',
    help: 'Time to build the config from the watched resources (translate and render, with nginx -t of any quarantine search)',
    buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.registry],
  });
  readonly reloadDuration = new Histogram({
    name: 'ingress2nginx_reload_duration_seconds',
    help: 'Time from the reload signal until nginx serves the new config generation',
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.registry],
  });
  readonly resources = new Gauge({
    name: 'ingress2nginx_resources',
    help: 'Watched resources held in memory, by kind',
    labelNames: ['kind'],
    registers: [this.registry],
  });
  readonly diagnostics = new Gauge({
    name: 'ingress2nginx_diagnostics',
    help: 'Diagnostics of the last build, by severity',
    labelNames: ['severity'],
    registers: [this.registry],
  });
  readonly certificateExpiry = new Gauge({
    name: 'ingress2nginx_certificate_expiry_seconds',
    help: 'Seconds until the certificate served for a host expires',
    labelNames: ['host'],
    registers: [this.registry],
  });
  readonly watchRestarts = new Counter({
    name: 'ingress2nginx_watch_restarts_total',
    help: 'Watches restarted after an error, a 410, a silent stream or a dropped connection, by kind',
    labelNames: ['kind'],
    registers: [this.registry],
  });
  readonly leader = new Gauge({
    name: 'ingress2nginx_leader',
    help: '1 while this replica holds the leader Lease (writes status and Events)',
    registers: [this.registry],
  });
}

export interface Probes {
  /** The process and its watches are alive. */
  readonly healthy: () => boolean;
  /** The first sync succeeded and nginx serves that config. */
  readonly ready: () => boolean;
}

/** `/healthz`, `/readyz` and `/metrics` on `host:port`; resolves with the bound port once listening. */
export async function serveMetrics(metrics: Metrics, probes: Probes, host: string, port: number): Promise<{ port: number; close: () => Promise<void> }> {
  const server = http.createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0];
    const answer = (status: number, body: string, type = 'text/plain; charset=utf-8') => {
      response.writeHead(status, { 'Content-Type': type });
      response.end(body);
    };
    if (path === '/healthz') answer(probes.healthy() ? 200 : 503, probes.healthy() ? 'ok\n' : 'unhealthy\n');
    else if (path === '/readyz') answer(probes.ready() ? 200 : 503, probes.ready() ? 'ok\n' : 'not ready\n');
    else if (path === '/metrics') {
      metrics.registry.metrics().then(
        (text) => answer(200, text, metrics.registry.contentType),
        (error: Error) => answer(500, `${error.message}\n`),
      );
    } else answer(404, 'not found\n');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address();
  return {
    port: typeof address === 'object' && address ? address.port : port,
    // Idle keep-alive connections of scrapers and probes would hold the close up for seconds.
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
