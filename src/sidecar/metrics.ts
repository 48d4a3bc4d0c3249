import http from 'node:http';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { ServedCertificate } from '../translate/dataplane/served-lists.js';

export interface MetricsOptions {
  /** `--ingress-class`: the `class` label of ingress-nginx's certificate metric. */
  readonly ingressClass: string;
  /** Kinds that may be watched: each starts with a restart count of 0. */
  readonly watchedKinds: readonly string[];
  /** Kinds the admission webhook reviews (`--validating-webhook`): each starts with review counts of 0. */
  readonly reviewedKinds?: readonly string[];
}

/** The `result` of an admission review: answered allowed or denied, or refused as unreadable (HTTP 4xx). */
export const admissionResults = ['allowed', 'denied', 'malformed'] as const;
export type AdmissionResult = (typeof admissionResults)[number];

/**
 * The cluster mode's Prometheus metrics in a registry of their own. The process's own (CPU, memory,
 * event loop, GC) under the standard `process_*` and `nodejs_*` names that stock dashboards read; ours
 * under `ingress2nginx_`; the certificate expiry under ingress-nginx's name and labels, so that its
 * alerts keep working. Counters are there at 0 for every label value they can have from the start, so
 * that `rate()` and `increase()` see the first failure.
 */
export class Metrics {
  readonly registry = new Registry();

  /** Series the registry does not hold, in the text exposition (the request metrics). */
  readonly more: (() => string | Promise<string>)[] = [];

  constructor(private readonly options: MetricsOptions) {
    collectDefaultMetrics({ register: this.registry });
    for (const reason of ['malformed', 'unknown-route', 'unknown-server-name']) this.requestLinesDropped.inc({ reason }, 0);
    for (const label of ['host', 'method']) this.requestLabelValuesDropped.inc({ label }, 0);
    for (const result of ['success', 'failure']) this.reloads.inc({ result }, 0);
    for (const kind of options.watchedKinds) this.watchRestarts.inc({ kind }, 0);
    for (const kind of options.reviewedKinds ?? []) for (const result of admissionResults) this.admissionReviews.inc({ kind, result }, 0);
  }

  readonly reloads = new Counter({
    name: 'ingress2nginx_reloads_total',
    help: 'nginx reloads by result (success: the new config generation is served; failure: nginx refused it or the reload did not take)',
    labelNames: ['result'],
    registers: [this.registry],
  });
  readonly endpointResolverAnswers = new Counter({
    name: 'ingress2nginx_endpoint_resolver_answers_total',
    help: 'Questions the endpoint resolver answered (--endpoint-resolver), by record type (SRV: a Service port\'s endpoints, nginx asks about every 2 s each) and response code',
    labelNames: ['type', 'rcode'],
    registers: [this.registry],
  });
  readonly lastSuccessfulReload = new Gauge({
    name: 'ingress2nginx_last_successful_reload_timestamp_seconds',
    help: 'Unix time of the last reload whose config generation nginx then served',
    registers: [this.registry],
  });
  readonly renderDuration = new Histogram({
    name: 'ingress2nginx_render_duration_seconds',
    help: 'Time to build the config from the watched resources (translate and render, with nginx -t where it ran, and any quarantine search)',
    buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.registry],
  });
  readonly reloadDuration = new Histogram({
    name: 'ingress2nginx_reload_duration_seconds',
    help: 'Time from the reload signal until nginx serves the new config generation',
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.registry],
  });
  readonly settingsRejected = new Gauge({
    name: 'ingress2nginx_configmap_rejected',
    help: '1 for each key of the controller ConfigMap whose change is not applied (invalid, or it would leave out Ingresses the last good settings serve): the last good settings are served meanwhile',
    labelNames: ['key'],
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
    name: 'nginx_ingress_controller_ssl_expire_time_seconds',
    help: 'Unix time at which the certificate served for a host expires (ingress-nginx\'s metric). To alert 10 days ahead: nginx_ingress_controller_ssl_expire_time_seconds < (time() + 10 * 24 * 3600)',
    labelNames: ['namespace', 'class', 'host', 'secret_name', 'identifier'],
    registers: [this.registry],
  });
  readonly watchRestarts = new Counter({
    name: 'ingress2nginx_watch_restarts_total',
    help: 'Watches restarted after an error, a 410, a silent stream or a dropped connection, by kind',
    labelNames: ['kind'],
    registers: [this.registry],
  });
  readonly requestLinesDropped = new Counter({
    name: 'ingress2nginx_request_lines_dropped_total',
    help: 'Lines from nginx not counted in the request metrics: malformed, for a route no config in memory has (unknown-route), for an SNI name not passed through (unknown-server-name)',
    labelNames: ['reason'],
    registers: [this.registry],
  });
  readonly requestLabelValuesDropped = new Counter({
    name: 'ingress2nginx_request_label_values_dropped_total',
    help: 'Requests counted with a label value a client chose replaced, to keep the label sets bounded: a host no server names (by ""), a method not in HTTP\'s list (by OTHER)',
    labelNames: ['label'],
    registers: [this.registry],
  });
  readonly admissionReviews = new Counter({
    name: 'ingress2nginx_admission_reviews_total',
    help: 'Admission reviews answered, by kind and result (allowed, denied, malformed: refused with HTTP 4xx); dry-run reviews included',
    labelNames: ['kind', 'result'],
    registers: [this.registry],
  });
  readonly admissionReviewDuration = new Histogram({
    name: 'ingress2nginx_admission_review_duration_seconds',
    help: 'Time from reading an admission review to answering it (the wait for earlier reviews and the candidate build included), by kind and result',
    labelNames: ['kind', 'result'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });
  readonly leader = new Gauge({
    name: 'ingress2nginx_leader',
    help: '1 while this replica holds the leader Lease (writes status and Events)',
    registers: [this.registry],
  });

  private lastReload?: { readonly ok: boolean; readonly at?: number };
  /** The config generation nginx serves. */
  servedGeneration?: string;

  /** A reload nginx took, or one it refused or did not take. */
  reloaded(ok: boolean): void {
    this.reloads.inc({ result: ok ? 'success' : 'failure' });
    if (ok) this.lastSuccessfulReload.set(Date.now() / 1000);
    this.lastReload = ok ? { ok, at: Date.now() / 1000 } : { ...this.lastReload, ok };
  }

  /**
   * The reload series of ingress-nginx's controller collector under its names and constant labels
   * (`labels`, rendered), which its dashboard and the usual "reload failed" alerts read; ours above say
   * the same under our names.
   */
  async ingressNginxReloadSeries(labels: string): Promise<string> {
    const values = (await this.reloads.get()).values;
    const count = (result: string) => values.find((v) => v.labels['result'] === result)?.value ?? 0;
    const series = (name: string, type: string, help: string, value: number) =>
      [`# HELP nginx_ingress_controller_${name} ${help}`, `# TYPE nginx_ingress_controller_${name} ${type}`, `nginx_ingress_controller_${name}{${labels}} ${value}`];
    const last = this.lastReload;
    return `${[
      ...series('success', 'counter', 'Reloads nginx took', count('success')),
      ...series('errors', 'counter', 'Reloads nginx refused or did not take', count('failure')),
      ...series('config_last_reload_successful', 'gauge', 'Whether the last reload took (1) or not (0)', last === undefined || last.ok ? 1 : 0),
      ...(last?.at !== undefined ? series('config_last_reload_successful_timestamp_seconds', 'gauge', 'Unix time of the last reload that took', last.at) : []),
      ...(this.servedGeneration !== undefined ? series('config_hash', 'gauge', 'The served config generation, as a number', parseInt(this.servedGeneration.slice(0, 13), 16)) : []),
    ].join('\n')}\n`;
  }

  /**
   * The certificates nginx now serves, from Secrets (the bundled default certificate is not renewed by
   * anyone and has no Secret). The value is the absolute expiry time: it needs no update to stay true,
   * so an alert on it fires while nothing changes in the cluster. The identifier is ingress-nginx's:
   * the issuer's serialNumber attribute and the certificate's serial number.
   */
  setCertificates(certificates: readonly ServedCertificate[]): void {
    this.certificateExpiry.reset();
    for (const certificate of certificates) {
      if (!certificate.secret) continue;
      const labels = {
        namespace: certificate.secret.namespace,
        class: this.options.ingressClass,
        host: certificate.host,
        secret_name: certificate.secret.name,
        identifier: `${certificate.issuerSerialNumber ?? ''}-${certificate.serialNumber}`,
      };
      this.certificateExpiry.set(labels, Date.parse(certificate.notAfter) / 1000);
    }
  }
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
      Promise.all([metrics.registry.metrics(), ...metrics.more.map((more) => more())]).then(
        (texts) => answer(200, texts.join(''), metrics.registry.contentType),
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
