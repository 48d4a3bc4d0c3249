import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { isIP } from 'node:net';
import { checkConfig } from '../apply/check.js';
import { environment } from '../apply/environment.js';
import { OutputFolder } from '../apply/write.js';
import { workerOwner } from '../apply/worker-user.js';
import { mainConfigName } from '../model/nginx.js';
import { loadClusterAccess } from '../sources/cluster/access.js';
import { ApiClient } from '../sources/cluster/client.js';
import { objectPath, watchedKinds, type WatchedKind } from '../sources/cluster/kinds.js';
import { defaultReflectorTiming, type RawObject, type ReflectorTiming } from '../sources/cluster/reflector.js';
import { ClusterSource } from '../sources/cluster/source.js';
import type { BaseTranslateOptions, TranslateOptions } from '../translate/options.js';
import { namesUrlByAddress, resolvesEndpoints } from '../translate/endpoints.js';
import { EndpointResolver, resolverAddress } from './endpoint-resolver.js';
import { controllerName } from '../translate/translate.js';
import { KeyPairCache } from '../translate/secrets/key-pairs.js';
import { snapshotWhileUnchanged, startAdmission, type AdmissionFlags } from './admission-server.js';
import { reviewedKinds } from './admission.js';
import { keepWebhookCertificate } from './webhook-certificate.js';
import { EventRecorder, eventReason } from './events.js';
import { LeaderElection } from './leader.js';
import { Logger, type LogFormat, type LogLevel } from './log.js';
import { Metrics, serveMetrics } from './metrics.js';
import { controllerLabels, followRequestLog, RequestMetrics, type RequestMetricsOptions } from './request-metrics.js';
import { nginxProcessExposition } from './nginx-process-metrics.js';
import { requestLogTables } from '../translate/dataplane/request-log.js';
import { ExternalNginx, nginxBuild, servedGeneration, SpawnedNginx, waitForGeneration, type NginxBuild, type NginxDriver } from './nginx.js';
import { Reconciler, type Round } from './reconciler.js';
import type { LoadBalancerIngress } from './status.js';
import { StatusWriter } from './status-writer.js';

/** Knobs that only tests and benchmarks turn; production uses the defaults. */
export interface RunTiming {
  readonly reflector: ReflectorTiming;
  readonly debounceMs: number;
  readonly maxDelayMs: number;
  readonly reloadTimeoutMs: number;
  readonly discoveryIntervalMs: number;
  readonly leaseDurationSeconds: number;
  readonly leaseRetryPeriodMs: number;
  readonly leaseRenewDeadlineMs: number;
}

export const defaultRunTiming: RunTiming = {
  reflector: defaultReflectorTiming,
  debounceMs: 100,
  maxDelayMs: 1000,
  reloadTimeoutMs: 30_000,
  discoveryIntervalMs: 60_000,
  leaseDurationSeconds: 15,
  leaseRetryPeriodMs: 2000,
  leaseRenewDeadlineMs: 10_000,
};

export interface RunOptions {
  /** The folder nginx reads; a relative one is resolved once, at start, against the working directory. */
  readonly output: string;
  /** Everything `render` takes except what comes from the nginx that is there (version, stream module). */
  readonly translate: BaseTranslateOptions;
  readonly kubeconfig?: string;
  readonly namespaces: readonly string[];
  readonly spawnNginx: boolean;
  readonly nginxBin: string;
  readonly metricsHost: string;
  readonly metricsPort: number;
  /** Request metrics from the lines nginx appends to `RUN/requests.log` (`--request-metrics`). */
  readonly requestMetrics?: boolean;
  readonly publishService?: string;
  readonly publishAddresses: readonly string[];
  /** Write Ingress status (`--update-status`, default true). */
  readonly updateStatus: boolean;
  readonly electionId: string;
  readonly electionNamespace?: string;
  readonly upstreams: 'service' | 'endpoints';
  readonly logFormat: LogFormat;
  readonly logLevel: LogLevel;
  readonly timing: RunTiming;
  /** `--validating-webhook` and its certificate: answer admission reviews (every replica). */
  readonly admission?: AdmissionFlags;
}

export interface RunIo {
  readonly env: NodeJS.ProcessEnv;
  readonly log: (line: string) => void;
  /** Resolves when the process should stop (SIGTERM, SIGINT). */
  readonly stopRequested: Promise<void>;
  /** Called once the metrics server listens, with its port (tests bind port 0). */
  readonly onListening?: (port: number) => void;
}

/** Something started that must be stopped on the way out, newest first. */
type Cleanup = () => Promise<void>;

/**
 * `ingress2nginx run`: watches the cluster and keeps nginx's config true, as a sidecar of a stock nginx.
 * Resolves with the exit code once asked to stop, which may come at any moment, during start-up or a
 * reload included: whatever was started by then is stopped, a spawned nginx too. Errors before the loop
 * starts (no cluster access, no nginx) are thrown for the CLI to report, after the same clean-up.
 */
export async function runSidecar(options: RunOptions, io: RunIo): Promise<number> {
  const log = new Logger(options.logFormat, io.log, options.logLevel);
  const stopping = new AbortController();
  void io.stopRequested.then(() => stopping.abort());
  const cleanups: Cleanup[] = [];
  try {
    await startSidecar({ ...options, output: resolve(options.output) }, io, log, cleanups, stopping.signal);
    await io.stopRequested;
    log.info('stopping');
  } finally {
    for (const cleanup of cleanups.reverse()) {
      await cleanup().catch((error: Error) => log.error('stopping failed', { error: error.message }));
    }
  }
  log.info('stopped');
  return 0;
}

/** Starts every part, registering how to stop it; returns early once a stop is asked (`stop`). */
async function startSidecar(options: RunOptions, io: RunIo, log: Logger, cleanups: Cleanup[], stop: AbortSignal): Promise<void> {
  const access = loadClusterAccess({ ...(options.kubeconfig !== undefined && { kubeconfig: options.kubeconfig }), env: io.env });
  const nginx = await nginxBuild(options.nginxBin);
  const metrics = new Metrics({
    ingressClass: options.translate.ingressClass,
    watchedKinds: [...new Set(watchedKinds.map((k) => k.kind))],
    ...(options.admission && { reviewedKinds: Object.values(reviewedKinds).map((k) => k.kind) }),
  });
  const controller = { namespace: io.env['POD_NAMESPACE'] ?? access.namespace, class: options.translate.ingressClass, pod: io.env['POD_NAME'] ?? hostname() };
  const requests = await startRequestMetrics(options, controller, nginx.configureArguments, metrics, cleanups);
  const { translate, reserveMetricsPort } = sidecarTranslateOptions(options, nginx, requests?.translate);
  log.info('starting', {
    cluster: access.config.getCurrentCluster()?.server,
    credentials: access.source,
    nginx: nginx.version,
    ...(nginx.tlsLibrary !== undefined && { tls: nginx.tlsLibrary }),
    output: options.output,
  });
  if (stop.aborted) return;

  await mkdir(translate.runDir, { recursive: true, mode: 0o755 });
  const folder = await OutputFolder.open(options.output, { workerOwner: await workerOwner(options.nginxBin) });
  cleanups.push(() => folder.close());
  const controlSocket = `${translate.runDir}/control.sock`;
  const driver: NginxDriver = options.spawnNginx
    ? new SpawnedNginx(options.nginxBin, options.output, log)
    : new ExternalNginx(`${translate.runDir}/nginx.pid`, log);
  cleanups.push(() => driver.stop());
  const client = new ApiClient(access.config);
  const identity = `${hostname()}_${randomUUID()}`;

  const election = new LeaderElection({
    client,
    namespace: options.electionNamespace ?? access.namespace,
    name: options.electionId,
    identity,
    leaseDurationSeconds: options.timing.leaseDurationSeconds,
    retryPeriodMs: options.timing.leaseRetryPeriodMs,
    renewDeadlineMs: options.timing.leaseRenewDeadlineMs,
    onChange: (leader) => {
      metrics.leader.set(leader ? 1 : 0);
      log.info(leader ? 'this replica leads: it writes status and Events' : 'this replica follows', { identity });
      if (leader) reconciler.schedule();
    },
    onError: (message) => log.warn(message),
  });
  const events = new EventRecorder({ client, controllerName, instance: identity, log, dedupeWindowMs: 10 * 60_000, burst: 25, perSecond: 1 });
  // Our own status writes come back as watch events: they change nothing the config is made of.
  // Counts what the watches hold changing: the admission webhook assembles a snapshot only after a change.
  let sourceChanges = 0;
  const source = clusterSource(options, client, metrics, log, (kind, modified) => {
    sourceChanges++;
    if (endpointChanges.builds(kind, source) && (modified === undefined || !statusWriter.isEcho(modified))) reconciler.schedule();
  });
  const endpointChanges = new EndpointChanges(await startEndpointResolver(translate, source, metrics, log, cleanups));
  const statusWriter = statusWriterFor(options, client, log, source);

  const afterRound = roundReporter({ options, log, metrics, requests, election, source, events, statusWriter, client, pod: io.env['POD_NAME'], podNamespace: access.namespace });

  const reconciler = new Reconciler({
    source,
    translate,
    folder,
    nginxBin: options.nginxBin,
    driver,
    metrics,
    log,
    debounceMs: options.timing.debounceMs,
    maxDelayMs: options.timing.maxDelayMs,
    reloadTimeoutMs: options.timing.reloadTimeoutMs,
    afterRound,
    beforeReload: (result) => requests?.metrics.setTables(result.generation, () => requestLogTables(result.model)),
  });
  // Stopped in this order (the reverse of registration): the probes, the watches (no new rounds), the
  // round in flight, the Lease (given up), nginx, the output folder's lock.
  cleanups.push(() => election.stop());
  cleanups.push(() => reconciler.stop());
  cleanups.push(() => source.stop());

  await adoptOutput(options, reconciler, driver, controlSocket, translate.runDir, log, stop);
  if (stop.aborted) return;
  const server = await environment(`cannot listen on ${options.metricsHost}:${options.metricsPort} for metrics and probes`, () =>
    serveMetrics(metrics, { healthy: () => true, ready: () => reconciler.ready }, options.metricsHost, options.metricsPort),
  );
  cleanups.push(() => server.close());
  reserveMetricsPort(server.port);
  io.onListening?.(server.port);
  log.info('metrics and probes listening', { address: `${options.metricsHost}:${server.port}` });
  if (stop.aborted) return;
  if (options.admission) {
    const snapshot = snapshotWhileUnchanged(() => (source.synced() ? source.snapshot() : undefined), () => sourceChanges);
    await startWebhook(options.admission, { client, snapshot, translate, nginxBin: options.nginxBin, metrics, log }, cleanups);
  }

  source.start();
  election.start();
}


/**
 * The translate options of every build in the cluster mode, with the Pod's own ports reserved: no Gateway
 * listener or TCP service may take them (nginx -t never binds; the reload would fail). The metrics port
 * is reserved again once it is bound, when it was asked as 0.
 */
function sidecarTranslateOptions(
  options: RunOptions,
  nginx: NginxBuild,
  requestLog: { readonly requestLog: string; readonly stubStatus: boolean } | undefined,
) {
  const reservedPorts = new Map(options.translate.reservedPorts);
  const reserveMetricsPort = (port: number) => reservedPorts.set(port, `the sidecar's metrics and probes port (--metrics-address ${options.metricsHost}:${port})`);
  if (options.metricsPort !== 0) reserveMetricsPort(options.metricsPort);
  const resolver = options.translate.endpointResolver;
  if (resolver !== undefined) {
    const { port } = resolverAddress(resolver.address);
    reservedPorts.set(port, `the sidecar's endpoint resolver (--endpoint-resolver ${port})`);
    reservedPorts.set(resolver.noEndpointsPort, `nginx's 503 server for Services without endpoints (--unavailable-port ${resolver.noEndpointsPort})`);
  }
  if (options.admission && options.admission.port !== 0) reservedPorts.set(options.admission.port, `the sidecar's admission webhook port (--validating-webhook ${options.admission.host}:${options.admission.port})`);
  const translate = {
    ...options.translate,
    reservedPorts,
    ...requestLog,
    // One cache for every build: a Secret's pair is parsed again only when its texts change.
    keyPairs: new KeyPairCache(),
    nginxVersion: nginx.version,
    ...(nginx.streamModulePath !== undefined && { streamModulePath: nginx.streamModulePath }),
  };
  return { translate, reserveMetricsPort };
}

/**
 * The resolver nginx asks for the Services' endpoints (endpoint-resolver.ts), when the build makes
 * upstream servers resolve (translate/endpoints.ts): started before nginx loads a config that names it.
 */
async function startEndpointResolver(translate: Omit<TranslateOptions, 'now'>, source: ClusterSource, metrics: Metrics, log: Logger, cleanups: Cleanup[]): Promise<EndpointResolver | undefined> {
  const wanted = translate.endpointResolver;
  if (wanted === undefined || !resolvesEndpoints(translate)) {
    if (wanted !== undefined && translate.upstreams === 'endpoints') {
      log.info('nginx is older than 1.27.3: endpoints are written into the config, and a change of them reloads nginx', { nginx: translate.nginxVersion });
    }
    return undefined;
  }
  const { host, port } = resolverAddress(wanted.address);
  const resolver = new EndpointResolver({
    host,
    port,
    noEndpointsPort: wanted.noEndpointsPort,
    objects: () => (source.synced() ? { services: source.objects('Service'), slices: source.objects('EndpointSlice') } : undefined),
    relayTo: translate.resolvers ?? [],
    log,
    onAnswered: (type, rcode) => metrics.endpointResolverAnswers.inc({ type, rcode }),
  });
  await environment(`cannot serve the endpoint resolver on ${wanted.address} (UDP and TCP)`, () => resolver.start());
  cleanups.push(() => resolver.close());
  log.info('endpoint resolver listening: nginx resolves the endpoints, and a change of them needs no reload', { address: wanted.address });
  return resolver;
}

/** The status writer; a data plane of chosen Gateways (`--gateway`) serves no Ingress, so it writes no Ingress status either. */
function statusWriterFor(options: RunOptions, client: ApiClient, log: Logger, source: ClusterSource): StatusWriter {
  const gateways = options.translate.gateways;
  return new StatusWriter({
    client,
    controllerName,
    ingressStatus: options.updateStatus && gateways === undefined,
    ...(gateways && { servedGateways: new Set(gateways) }),
    log,
    objects: (kind) => source.objects(kind),
  });
}

/**
 * What a change the watches hear means for the endpoint resolver, and whether it builds. With the
 * resolver, an endpoint change changes no byte of the config (translate/endpoints.ts), unless an Ingress
 * or ConfigMap names a URL by address (`namesUrlByAddress`).
 */
class EndpointChanges {
  /** Whether an Ingress or ConfigMap names a URL by address: looked for again only after one of them changed. */
  private urlByAddress: boolean | undefined;

  constructor(private readonly resolver: EndpointResolver | undefined) {}

  builds(kind: string, source: ClusterSource): boolean {
    if (!this.resolver) return true;
    if (kind === 'Ingress' || kind === 'ConfigMap' || kind === '') this.urlByAddress = undefined;
    if (kind === 'Service' || kind === 'EndpointSlice' || kind === '') this.resolver.changed();
    if (kind !== 'EndpointSlice') return true;
    this.urlByAddress ??= ['Ingress', 'ConfigMap'].some((named) => source.objects(named).some(namesUrlByAddress));
    return this.urlByAddress;
  }
}

/** The admission webhook, with its self-made certificate kept when asked (--validating-webhook-ca-secret). */
async function startWebhook(
  admission: AdmissionFlags,
  context: Parameters<typeof startAdmission>[1] & { readonly client: ApiClient },
  cleanups: Cleanup[],
): Promise<void> {
  const { selfSigned, certificateFile, keyFile } = admission;
  const { client, ...served } = context;
  if (selfSigned) {
    const stopRenewals = await keepWebhookCertificate(client, { ...selfSigned, clusterDomain: served.translate.clusterDomain, certificateFile, keyFile }, served.log);
    cleanups.push(async () => stopRenewals());
  }
  const webhook = await environment(`cannot serve the admission webhook on ${admission.host}:${admission.port}`, () => startAdmission(admission, served));
  cleanups.push(() => webhook.close());
}

/** The watches the options call for; `onChange` hears every change, with its kind (and the object of a MODIFIED event). */
function clusterSource(options: RunOptions, client: ApiClient, metrics: Metrics, log: Logger, onChange: (kind: string, modified?: RawObject) => void): ClusterSource {
  return new ClusterSource({
    client,
    namespaces: options.namespaces,
    ...(options.translate.configMap !== undefined && { controllerConfigMap: options.translate.configMap }),
    watchNamespaces: options.translate.snippets?.namespaceSelector !== undefined,
    servicesConfigMaps: [options.translate.tcpServicesConfigMap, options.translate.udpServicesConfigMap].filter((n) => n !== undefined),
    upstreams: options.upstreams,
    timing: options.timing.reflector,
    discoveryIntervalMs: options.timing.discoveryIntervalMs,
    onChange,
    onRestart: (kind, reason) => {
      metrics.watchRestarts.inc({ kind });
      log.warn('watch restarted', { kind, reason });
    },
  });
}

interface RoundReporting {
  readonly options: RunOptions;
  readonly log: Logger;
  readonly metrics: Metrics;
  readonly requests: Awaited<ReturnType<typeof startRequestMetrics>>;
  readonly election: LeaderElection;
  readonly source: ClusterSource;
  readonly events: EventRecorder;
  readonly statusWriter: StatusWriter;
  readonly client: ApiClient;
  /** The Pod a failed reload is reported on, when the sidecar knows it. */
  readonly pod: string | undefined;
  readonly podNamespace: string;
}

/**
 * What follows each round: the served generation and its request-label tables, and while this replica
 * leads, Events for the diagnostics (or the Pod, for a failed reload) and the resources' status.
 */
function roundReporter(parts: RoundReporting): (round: Round) => Promise<void> {
  const { options, log, metrics, requests, election, source, events, statusWriter, client, pod, podNamespace } = parts;
  const reportFailure = (failure: string): void => {
    if (election.isLeader && pod) {
      events.record({ apiVersion: 'v1', kind: 'Pod', namespace: podNamespace, name: pod }, 'Warning', 'ReloadFailed', 'Reload', failure);
    }
  };
  return async (round) => {
    // A config served since before this process started is reloaded by no round.
    if (round.applied) {
      metrics.servedGeneration = round.result.generation;
      requests?.metrics.setTables(round.result.generation, () => requestLogTables(round.result.model));
    } else reportFailure(round.failure ?? 'the config was not applied');
    if (!election.isLeader) return;
    for (const diagnostic of round.diagnostics) {
      if (diagnostic.severity === 'info' || !diagnostic.resource) continue;
      const { kind, namespace = '', name } = diagnostic.resource;
      const object = source.objects(kind).find((o) => o.metadata.name === name && (o.metadata.namespace ?? '') === namespace);
      if (!object) continue;
      const uid = (object.metadata as { uid?: string }).uid;
      events.record({ apiVersion: object.apiVersion, kind, namespace, name, ...(uid !== undefined && { uid }) }, 'Warning', eventReason(diagnostic.code), 'Render', `${diagnostic.field ? `${diagnostic.field}: ` : ''}${diagnostic.message}`);
    }
    const addresses = await publishedAddresses(client, options, log);
    const writes = await statusWriter.write(round.result, round.applied, addresses, new Date());
    if (writes > 0) log.debug('status written', { writes });
  };
}

/**
 * ingress-nginx's series (reloads; with `--request-metrics`, requests, passthrough connections, nginx's
 * connections and processes) beside ours on /metrics. With request metrics, the file nginx appends its
 * request lines to is followed from now on, and what translate must add to the config is returned.
 */
async function startRequestMetrics(
  options: RunOptions,
  controller: RequestMetricsOptions['controller'],
  configureArguments: string,
  metrics: Metrics,
  cleanups: Cleanup[],
): Promise<{ metrics: RequestMetrics; translate: { requestLog: string; stubStatus: boolean } } | undefined> {
  const constantLabels = controllerLabels(controller);
  metrics.more.push(() => metrics.ingressNginxReloadSeries(constantLabels));
  if (!options.requestMetrics) return undefined;
  const requests = new RequestMetrics({
    controller,
    onLineDropped: (reason) => metrics.requestLinesDropped.inc({ reason }),
    onValueDropped: (label) => metrics.requestLabelValuesDropped.inc({ label }),
  });
  const runDir = options.translate.runDir;
  const requestLog = `${runDir}/requests.log`;
  await mkdir(runDir, { recursive: true, mode: 0o755 });
  const follower = await environment(`cannot open ${requestLog} for nginx's request lines`, async () => followRequestLog(requestLog, requests));
  cleanups.push(() => follower.close());
  const stubStatus = /--with-http_stub_status_module(?=\s|$)/.test(configureArguments);
  const nginxProcesses = { pidFile: `${runDir}/nginx.pid`, controlSocket: `${runDir}/control.sock`, stubStatus, constantLabels };
  metrics.more.push(() => requests.exposition(), () => nginxProcessExposition(nginxProcesses));
  return { metrics: requests, translate: { requestLog, stubStatus } };
}

/**
 * A config already in the output folder (the sidecar restarted, or the API is unreachable at start) is
 * served as it is: nginx beside us already has it; in spawn mode nginx is started on it if it passes
 * `nginx -t`. A first round that builds the same bytes then needs no reload.
 */
async function adoptOutput(
  options: RunOptions,
  reconciler: Reconciler,
  driver: NginxDriver,
  controlSocket: string,
  runDir: string,
  log: Logger,
  stop: AbortSignal,
): Promise<void> {
  const confPath = join(options.output, mainConfigName);
  if (!existsSync(confPath)) return;
  const conf = await readFile(confPath, 'utf8');
  const generation = /return 200 "([0-9a-f]{32})\\n";/.exec(conf)?.[1];
  if (!generation) return;
  let served = (await servedGeneration(controlSocket)) === generation;
  if (!served && options.spawnNginx && (await checkConfig(options.output, runDir, options.nginxBin)).ok) {
    await driver.load();
    served = (await waitForGeneration(controlSocket, generation, options.timing.reloadTimeoutMs, stop)).ok;
  }
  log.info('found a config from before in the output folder', { generation, served });
  reconciler.adopt(generation, served);
}

/** `--publish-service` (its load-balancer addresses) or `--publish-address`, as status entries. */
async function publishedAddresses(client: ApiClient, options: RunOptions, log: Logger): Promise<LoadBalancerIngress[]> {
  if (options.publishService !== undefined) {
    const [namespace = '', name = ''] = options.publishService.split('/');
    const serviceKind = watchedKinds.find((k) => k.kind === 'Service') as WatchedKind;
    try {
      const service = await client.request<{ status?: { loadBalancer?: { ingress?: LoadBalancerIngress[] } } }>('GET', objectPath(serviceKind, namespace, name));
      return (service.status?.loadBalancer?.ingress ?? []).map((entry) => (entry.ip !== undefined ? { ip: entry.ip } : { hostname: entry.hostname ?? '' }));
    } catch (error) {
      log.warn('could not read --publish-service', { service: options.publishService, error: (error as Error).message });
      return [];
    }
  }
  return options.publishAddresses.map((address) => (isIP(address) ? { ip: address } : { hostname: address }));
}
