import { closeSync, fstatSync, ftruncateSync, openSync, readSync } from 'node:fs';
import type { RequestLogTables, RequestRoute } from '../translate/dataplane/request-log.js';

/**
 * Request metrics from the lines nginx sends per request and per passthrough connection (the
 * `i2n_request` and `i2n_connection` log formats, templates/partials/requestLog.hbs), under
 * ingress-nginx's names, types, labels and buckets (its socket collector and the defaults of its
 * `--time-buckets`, `--length-buckets` and `--size-buckets` flags), so that its dashboards and alerts
 * keep working. Aggregated here rather than in prom-client: a request touches one counter and seven
 * histograms, and prom-client hashes the label set on every observation, which at thousands of requests
 * a second is most of the sidecar's work; here a request costs one map lookup.
 */

/** prometheus.DefBuckets. */
const timeBuckets = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** prometheus.LinearBuckets(10, 10, 10). */
const lengthBuckets = [10, 20, 30, 40, 50, 60, 70, 80, 90, 100];
/** prometheus.ExponentialBuckets(10, 10, 7). */
const sizeBuckets = [10, 100, 1e3, 1e4, 1e5, 1e6, 1e7];
/** Passthrough sessions last from milliseconds to hours. */
const sessionBuckets = [0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 1800, 3600];

/** Fields of an `i2n_request` line after its `h`. */
const enum Field {
  Route = 1,
  Status,
  Method,
  RequestLength,
  RequestTime,
  BytesSent,
  ConnectTime,
  HeaderTime,
  ResponseTime,
  /** `$proxy_host`: the upstream that served, a canary's or not. */
  Upstream,
  Host,
}

interface HistogramSpec {
  readonly name: string;
  readonly help: string;
  readonly buckets: readonly number[];
  /** Field of the request line observed; `-` or several values (retries) are not observed, as in ingress-nginx. */
  readonly field: Field;
}

const requestHistograms: readonly HistogramSpec[] = [
  { name: 'nginx_ingress_controller_connect_duration_seconds', help: 'Time to connect to the upstream server', buckets: timeBuckets, field: Field.ConnectTime },
  { name: 'nginx_ingress_controller_header_duration_seconds', help: 'Time until the first header from the upstream server', buckets: timeBuckets, field: Field.HeaderTime },
  { name: 'nginx_ingress_controller_request_duration_seconds', help: 'Time nginx spent on the request, from its first byte to the last byte of the response', buckets: timeBuckets, field: Field.RequestTime },
  { name: 'nginx_ingress_controller_response_duration_seconds', help: 'Time spent receiving the response from the upstream server', buckets: timeBuckets, field: Field.ResponseTime },
  { name: 'nginx_ingress_controller_request_size', help: 'Request length (request line, headers and body)', buckets: lengthBuckets, field: Field.RequestLength },
  { name: 'nginx_ingress_controller_response_size', help: 'Response length (status line, headers and body)', buckets: lengthBuckets, field: Field.BytesSent },
  { name: 'nginx_ingress_controller_bytes_sent', help: 'Bytes sent to the client (deprecated by ingress-nginx in favour of response_size)', buckets: sizeBuckets, field: Field.BytesSent },
];

/** What ingress-nginx's `method` label can be; anything else is a client's invention, counted as `OTHER`. */
const methods = new Set(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'CONNECT', 'OPTIONS', 'TRACE', 'PATCH']);

export interface RequestMetricsOptions {
  /** ingress-nginx's constant labels: `controller_namespace`, `controller_class`, `controller_pod`. */
  readonly controller: { readonly namespace: string; readonly class: string; readonly pod: string };
  /** A line that could not be counted as it came: `malformed`, `unknown-route`, `unknown-server-name`. */
  readonly onLineDropped: (reason: 'malformed' | 'unknown-route' | 'unknown-server-name') => void;
  /** A label value a client chose and that was replaced: `host` (by ""), `method` (by `OTHER`). */
  readonly onValueDropped: (label: 'host' | 'method') => void;
}

class Histogram {
  readonly counts: Float64Array;
  sum = 0;
  count = 0;
  constructor(readonly buckets: readonly number[]) {
    this.counts = new Float64Array(buckets.length);
  }
  observe(value: number): void {
    this.sum += value;
    this.count += 1;
    for (let i = 0; i < this.buckets.length; i++) {
      if (value <= (this.buckets[i] as number)) {
        (this.counts as Float64Array)[i] = (this.counts[i] as number) + 1;
        break;
      }
    }
  }
}

interface RequestSeries {
  readonly route: string;
  /** Rendered labels, without braces. */
  readonly labels: string;
  requests: number;
  readonly histograms: readonly Histogram[];
}

interface ConnectionSeries {
  readonly serverName: string;
  readonly labels: string;
  connections: Map<string, number>;
  received: number;
  sent: number;
  readonly duration: Histogram;
}

/** The series a request line's labels settle to, and whether its method and host were replaced. */
interface SettledLabels {
  readonly series: RequestSeries;
  readonly method: boolean;
  readonly host: boolean;
}

/**
 * Label fields as logged that the cache keeps: clients choose hosts and methods, so past this many the
 * rest are settled line by line (their series are bounded all the same; only the cache is not grown).
 */
const maxSettledKeys = 10_000;

/** Where the bars of the request line being read are: `bars[f]` ends field `f` (0 is the `h`). */
const bars = new Int32Array(Field.Host);

/** Three digits from 100 to 599 at `[start, end)`. */
function isStatus(line: string, start: number, end: number): boolean {
  if (end - start !== 3) return false;
  const first = line.charCodeAt(start);
  return first >= 49 && first <= 53 && isDigit(line.charCodeAt(start + 1)) && isDigit(line.charCodeAt(start + 2));
}

function isDigit(code: number): boolean {
  return code >= 48 && code <= 57;
}

const powersOfTen = Array.from({ length: 16 }, (_, i) => 10 ** i);

/**
 * The number nginx logged at `[start, end)` (`0.004`, `512`), read without making a string; NaN for `-`,
 * several values (`0.001, 0.002`) and anything else. Digits over a power of ten: both exact, so the one
 * division rounds as `Number()` of the text would.
 */
function loggedNumberAt(line: string, start: number, end: number): number {
  let digits = 0;
  let fraction = -1;
  for (let i = start; i < end; i++) {
    const code = line.charCodeAt(i);
    if (isDigit(code)) {
      digits = digits * 10 + (code - 48);
      if (fraction >= 0) fraction++;
    } else if (code === 46 && fraction < 0 && i > start) fraction = 0;
    else return Number.NaN;
  }
  if (end === start || fraction === 0 || end - start > 15) return Number.NaN;
  return fraction > 0 ? digits / (powersOfTen[fraction] as number) : digits;
}

const emptyRoute: RequestRoute = { namespace: '', ingress: '', service: '', path: '' };

export class RequestMetrics {
  private readonly constant: string;
  private readonly series = new Map<string, RequestSeries>();
  /** A request line's label fields as logged → their series; emptied with each config, bounded in size. */
  private readonly settled = new Map<string, SettledLabels>();
  private readonly connections = new Map<string, ConnectionSeries>();
  private current: RequestLogTables = { routes: new Map(), hosts: [], passthroughNames: [], canaries: new Map() };
  /** The routes of the config before: its workers may still be sending lines while they finish. */
  private previousRoutes: ReadonlyMap<string, RequestRoute> = new Map();
  private hosts = new Set<string>();
  private passthroughNames = new Set<string>();

  constructor(private readonly options: RequestMetricsOptions) {
    this.constant = controllerLabels(options.controller);
  }

  private generation = '';

  /**
   * The config nginx is about to run (once per generation); series of routes that are in neither it nor
   * the one before are removed.
   */
  setTables(generation: string, tablesOf: () => RequestLogTables): void {
    if (generation === this.generation) return;
    this.generation = generation;
    const tables = tablesOf();
    this.previousRoutes = this.current.routes;
    this.current = tables;
    this.hosts = new Set(tables.hosts);
    this.passthroughNames = new Set(tables.passthroughNames);
    this.settled.clear();
    for (const [key, series] of this.series) {
      if (series.route !== '-' && !tables.routes.has(series.route) && !this.previousRoutes.has(series.route)) this.series.delete(key);
    }
    for (const [key, series] of this.connections) {
      if (!this.passthroughNames.has(series.serverName)) this.connections.delete(key);
    }
  }

  /** Lines nginx wrote, without the last newline. */
  handleLines(text: string): void {
    for (const line of text.split('\n')) {
      if (line.startsWith('h|')) this.handleRequest(line);
      else if (line.startsWith('c|')) this.handleConnection(line);
      else this.options.onLineDropped('malformed');
    }
  }

  /**
   * One request line. Its fields are found by their bars and its numbers read in place; the label
   * fields, as they came, key a cache of the series they settle to, so that a request of a series seen
   * before costs a lookup and no new strings beyond the key.
   */
  private handleRequest(line: string): void {
    let found = 0;
    for (let at = line.indexOf('|'); at >= 0 && found < Field.Host; at = line.indexOf('|', at + 1)) bars[found++] = at;
    if (found < Field.Host) return this.options.onLineDropped('malformed');
    const statusAt = (bars[Field.Status - 1] as number) + 1;
    if (!isStatus(line, statusAt, bars[Field.Status] as number)) return this.options.onLineDropped('malformed');
    // Route, status and method, then upstream and host (the host is last: whatever a client put in it stays in it).
    const rawKey = line.slice((bars[0] as number) + 1, bars[Field.Method]) + line.slice(bars[Field.Upstream - 1]);
    let settled = this.settled.get(rawKey);
    if (!settled) {
      settled = this.settle(line);
      if (!settled) return this.options.onLineDropped('unknown-route');
      if (this.settled.size < maxSettledKeys) this.settled.set(rawKey, settled);
    }
    if (settled.method) this.options.onValueDropped('method');
    if (settled.host) this.options.onValueDropped('host');
    const series = settled.series;
    series.requests += 1;
    for (let i = 0; i < requestHistograms.length; i++) {
      const field = (requestHistograms[i] as HistogramSpec).field;
      const value = loggedNumberAt(line, (bars[field - 1] as number) + 1, bars[field] as number);
      if (!Number.isNaN(value)) (series.histograms[i] as Histogram).observe(value);
    }
  }

  /** The series of a request line's labels, with what of them was replaced; none for an unknown route. */
  private settle(line: string): SettledLabels | undefined {
    const field = (f: Field) => line.slice((bars[f - 1] as number) + 1, bars[f]);
    const routeKey = field(Field.Route);
    const route = routeKey === '-' ? emptyRoute : (this.current.routes.get(routeKey) ?? this.previousRoutes.get(routeKey));
    if (!route) return undefined;
    const status = field(Field.Status);
    const loggedMethod = field(Field.Method);
    const method = methods.has(loggedMethod) ? loggedMethod : 'OTHER';
    const servedHost = this.servedName(line.slice((bars[Field.Host - 1] as number) + 1), this.hosts);
    const canary = this.current.canaries.get(field(Field.Upstream)) ?? '';
    const key = `${routeKey}\0${status}\0${method}\0${canary}\0${servedHost ?? ''}`;
    let series = this.series.get(key);
    if (!series) {
      const labels =
        `canary=${quote(canary)},${this.constant},host=${quote(servedHost ?? '')},ingress=${quote(route.ingress)},method=${quote(method)},` +
        `namespace=${quote(route.namespace)},path=${quote(route.path)},service=${quote(route.service)},status=${quote(status)}`;
      series = { route: routeKey, labels, requests: 0, histograms: requestHistograms.map((spec) => new Histogram(spec.buckets)) };
      this.series.set(key, series);
    }
    return { series, method: method !== loggedMethod, host: servedHost === undefined };
  }

  /**
   * One passthrough line: `c|status|received|sent|duration|sni`. The SNI is the client's own bytes (nginx
   * escapes only control bytes, quotes and backslashes), so it comes last and is the rest of the line:
   * a bar in it stays in it and cannot move another field.
   */
  private handleConnection(line: string): void {
    const fields: string[] = [];
    let start = 2;
    for (let at = line.indexOf('|', start); at >= 0 && fields.length < 4; at = line.indexOf('|', start)) {
      fields.push(line.slice(start, at));
      start = at + 1;
    }
    if (fields.length < 4) return this.options.onLineDropped('malformed');
    const [status = '', received = '', sent = '', duration = ''] = fields;
    const sni = line.slice(start);
    const serverName = this.servedName(sni, this.passthroughNames);
    if (serverName === undefined) return this.options.onLineDropped('unknown-server-name');
    let series = this.connections.get(serverName);
    if (!series) {
      series = { serverName, labels: `${this.constant},server_name=${quote(serverName)}`, connections: new Map(), received: 0, sent: 0, duration: new Histogram(sessionBuckets) };
      this.connections.set(serverName, series);
    }
    const code = /^[2-5][0-9][0-9]$/.test(status) ? status : '000';
    series.connections.set(code, (series.connections.get(code) ?? 0) + 1);
    series.received += loggedNumber(received) ?? 0;
    series.sent += loggedNumber(sent) ?? 0;
    const time = loggedNumber(duration);
    if (time !== undefined) series.duration.observe(time);
  }

  /** The name a server answers that covers `name`: itself, or the longest `*.suffix`. */
  private servedName(name: string, names: ReadonlySet<string>): string | undefined {
    const lower = name.toLowerCase();
    if (names.has(lower)) return lower;
    for (let dot = lower.indexOf('.'); dot >= 0; dot = lower.indexOf('.', dot + 1)) {
      const wildcard = `*${lower.slice(dot)}`;
      if (names.has(wildcard)) return wildcard;
    }
    return undefined;
  }

  /** The Prometheus text exposition of every series. */
  exposition(): string {
    const out: string[] = [];
    out.push('# HELP nginx_ingress_controller_requests Client requests', '# TYPE nginx_ingress_controller_requests counter');
    for (const series of this.series.values()) out.push(`nginx_ingress_controller_requests{${series.labels}} ${series.requests}`);
    requestHistograms.forEach((spec, i) => {
      out.push(`# HELP ${spec.name} ${spec.help}`, `# TYPE ${spec.name} histogram`);
      for (const series of this.series.values()) writeHistogram(out, spec.name, series.labels, series.histograms[i] as Histogram);
    });
    const passthrough = (name: string, help: string, type: string) => out.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
    passthrough('ingress2nginx_passthrough_connections_total', 'TLS connections passed through, by SNI name served and stream status', 'counter');
    for (const series of this.connections.values()) {
      for (const [status, count] of [...series.connections].sort()) out.push(`ingress2nginx_passthrough_connections_total{${series.labels},status="${status}"} ${count}`);
    }
    passthrough('ingress2nginx_passthrough_received_bytes_total', 'Bytes received from clients on passed-through connections', 'counter');
    for (const series of this.connections.values()) out.push(`ingress2nginx_passthrough_received_bytes_total{${series.labels}} ${series.received}`);
    passthrough('ingress2nginx_passthrough_sent_bytes_total', 'Bytes sent to clients on passed-through connections', 'counter');
    for (const series of this.connections.values()) out.push(`ingress2nginx_passthrough_sent_bytes_total{${series.labels}} ${series.sent}`);
    passthrough('ingress2nginx_passthrough_session_duration_seconds', 'Duration of passed-through connections', 'histogram');
    for (const series of this.connections.values()) writeHistogram(out, 'ingress2nginx_passthrough_session_duration_seconds', series.labels, series.duration);
    return `${out.join('\n')}\n`;
  }
}

/** ingress-nginx's constant labels, rendered for the text exposition. */
export function controllerLabels(controller: RequestMetricsOptions['controller']): string {
  return `controller_class=${quote(controller.class)},controller_namespace=${quote(controller.namespace)},controller_pod=${quote(controller.pod)}`;
}

function writeHistogram(out: string[], name: string, labels: string, histogram: Histogram): void {
  let cumulative = 0;
  histogram.buckets.forEach((bound, i) => {
    cumulative += histogram.counts[i] as number;
    out.push(`${name}_bucket{${labels},le="${bound}"} ${cumulative}`);
  });
  out.push(`${name}_bucket{${labels},le="+Inf"} ${histogram.count}`, `${name}_sum{${labels}} ${histogram.sum}`, `${name}_count{${labels}} ${histogram.count}`);
}

/** A number nginx logged (`0.004`, `512`); `-`, several values (`0.001, 0.002`) and anything else are none. */
function loggedNumber(text: string): number | undefined {
  const value = loggedNumberAt(text, 0, text.length);
  return Number.isNaN(value) ? undefined : value;
}

/** A label value in the text exposition. */
function quote(value: string): string {
  return `"${value.replaceAll('\\', '\\\\').replaceAll('"', '\\"').replaceAll('\n', '\\n')}"`;
}

/** What the file may grow to before it is emptied (once everything in it is read). */
const truncateAtBytes = 8 * 1024 * 1024;

/**
 * Follows the file nginx appends request lines to. nginx writes them in buffers (a write per 64 KB, or
 * a second), so a request costs a worker a copy into its buffer and no system call; a file never makes a
 * writer wait for its reader, so a slow, stopped or absent sidecar costs nginx nothing (the file grows
 * meanwhile, on the volume that holds nginx's temp files). Read every `intervalMs`; emptied once read
 * to its end past 8 MB (nginx appends with O_APPEND, so its next write lands at the new end; a buffer
 * written between the last look and the truncation, microseconds once per 8 MB, is lost). Started
 * empty: a sidecar that restarts does not count lines from before.
 */
export function followRequestLog(path: string, metrics: RequestMetrics, intervalMs = 250): { close: () => Promise<void> } {
  const fd = openSync(path, 'a+', 0o644);
  ftruncateSync(fd, 0);
  const chunk = Buffer.alloc(1024 * 1024);
  let offset = 0;
  let partial = '';
  const read = (): void => {
    let size = fstatSync(fd).size;
    if (size < offset) offset = 0;
    while (offset < size) {
      const count = readSync(fd, chunk, 0, Math.min(chunk.length, size - offset), offset);
      if (count <= 0) break;
      offset += count;
      const text = partial + chunk.toString('latin1', 0, count);
      const end = text.lastIndexOf('\n');
      partial = text.slice(end + 1);
      if (end >= 0) metrics.handleLines(text.slice(0, end));
      if (offset === size) size = fstatSync(fd).size;
    }
    // nginx writes whole buffers of whole lines: with nothing partial left, all that is there was read.
    if (offset >= truncateAtBytes && partial === '' && fstatSync(fd).size === offset) {
      ftruncateSync(fd, 0);
      offset = 0;
    }
  };
  const timer = setInterval(read, intervalMs);
  return {
    close: async () => {
      clearInterval(timer);
      read();
      closeSync(fd);
    },
  };
}
