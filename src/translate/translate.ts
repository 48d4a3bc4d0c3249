/**
 * translate: snapshot → nginx model + diagnostics, pure. The outline of its stages: the inputs
 * (inputs.ts), the front ends' claims (ingress/, gateway/), settling (settle/), and the data plane
 * (dataplane/). checks/ (allow-lists), secrets/ (key material) and memo/ (what a build reuses from the
 * last) serve them all.
 */
import { compareDiagnostics, type Diagnostic } from '../model/diagnostics.js';
import type { Handoff, NginxConfig } from '../model/nginx.js';
import type { ResourceStatus } from '../model/status.js';
import type { Snapshot } from '../sources/snapshot.js';
import { nginxConfig, StreamConfigMemo, type HostCopies, type OwnPortHosts, type UpstreamBlockMemo } from './dataplane/data-plane.js';
import { ContextMemo } from './memo/context-memo.js';
import { planGateways, type GatewayPlan, type PortContribution } from './gateway/index.js';
import type { StreamParts } from './settle/sni.js';
import { withPathConflicts } from './gateway/http-routes.js';
import { IngressClaimMemo } from './ingress/claim-memo.js';
import { HostSettleMemo } from './settle/hosts.js';
import { type MergedHosts } from './settle/settled.js';
import { type RouteCountMemo } from './ingress/size-limits.js';
import { nginxFeatures } from './nginx-version.js';
import { servicesHaveIpv6 } from './endpoints.js';
import { type TranslateOptions } from './options.js';
import { byString } from './settle/precedence.js';
import { Reporter } from './report.js';
import { IndexMemo } from './resources.js';
import { SecretFiles, type Reference } from './secrets/secret-files.js';
import { StreamMemo } from './settle/sni-memo.js';
import { RedirectServerMemo } from './dataplane/redirect-server.js';
import { ResourceChangeCache } from './memo/resource-changes.js';
import { streamServices, tcpServicePorts, type StreamServices } from './dataplane/stream-services.js';
import type { NamespacedName } from './ingress/annotations/references.js';
import { VirtualHostMemo } from './memo/virtual-host-memo.js';
import type { LogLabelsMemo } from './dataplane/request-log.js';
import { LocationFactsMemo } from './dataplane/location-facts.js';
import { SortedMemo } from './memo/sorted-memo.js';
import { ingressNames, servedCertificates, ServedListsMemo, type IngressName, type ServedCertificate } from './dataplane/served-lists.js';
import { compareUpstreamNames, readablePart } from './upstream-names.js';

import { readInputs, type Inputs } from './inputs.js';
import { controllerDefaultBackend } from './default-backend.js';
import { ingressClaims } from './ingress/index.js';
import { NamespaceBudget } from './checks/size-budget.js';
import { settle } from './settle/index.js';

/** Written into route and policy status as the controller that programs them. */
export const controllerName = 'ingress2nginx.dev/controller';

export interface TranslateResult {
  readonly model: NginxConfig;
  readonly diagnostics: readonly Diagnostic[];
  /** Gateway API status of every Gateway, TLSRoute and BackendTLSPolicy that is ours. */
  readonly statuses: readonly ResourceStatus[];
  /** Ingresses of our class, rendered or not: the cluster mode writes their load-balancer status. */
  readonly ingresses: readonly IngressName[];
  /** The certificate served for each host name (Ingress and Gateway Terminate), sorted by host. */
  readonly certificates: readonly ServedCertificate[];
  /**
   * The Secrets and ConfigMaps this build read besides TLS Secrets of served certificates (which the
   * cluster mode watches by type): the controller ConfigMap, and what claims name for a CA, a client
   * certificate or users. Sorted; the cluster mode follows exactly these.
   */
  readonly references: readonly Reference[];
}


/** What a build may reuse from the builds before it (the cluster mode keeps one): the same result, sooner. */
export interface TranslateMemo {
  readonly ingressClaims: IngressClaimMemo;
  readonly hosts: HostSettleMemo;
  readonly virtualHosts: VirtualHostMemo;
  readonly logLabels: LogLabelsMemo;
  readonly hostCopies: HostCopies;
  readonly redirectServer: RedirectServerMemo;
  readonly locationFacts: LocationFactsMemo;
  readonly upstreamOrder: SortedMemo;
  readonly upstreamBlocks: UpstreamBlockMemo;
  readonly index: IndexMemo;
  readonly stream: StreamMemo;
  readonly streamConfig: StreamConfigMemo;
  readonly routeCounts: RouteCountMemo;
  readonly servedLists: ServedListsMemo;
}

export function newTranslateMemo(): TranslateMemo {
  const changes = new ResourceChangeCache();
  return {
    ingressClaims: new IngressClaimMemo(changes),
    hosts: new HostSettleMemo(changes),
    virtualHosts: new VirtualHostMemo(),
    logLabels: new ContextMemo(),
    hostCopies: { sharesDefaultTls: new ContextMemo(), plainHttpShared: new ContextMemo(), labelled: new ContextMemo() },
    redirectServer: new RedirectServerMemo(),
    locationFacts: new LocationFactsMemo(),
    upstreamOrder: new SortedMemo(compareUpstreamNames),
    upstreamBlocks: new ContextMemo(),
    index: new IndexMemo(),
    stream: new StreamMemo(),
    streamConfig: new StreamConfigMemo(),
    routeCounts: new ContextMemo(),
    servedLists: new ServedListsMemo(),
  };
}

/**
 * snapshot → nginx model + diagnostics. Pure: no I/O, no clock (options.now), order-independent. Three
 * stages: the front ends turn resources into claims (Ingress) and a plan of ports (Gateway API), the
 * claims are settled against each other, and the data plane turns the winners into the model.
 */
export function translate(snapshot: Snapshot, options: TranslateOptions, memo?: TranslateMemo): TranslateResult {
  const settled = settledClaims(snapshot, options, memo);
  const { inputs, ingress, gateways, report } = settled;
  const { settings, secrets } = inputs;
  const built = nginxConfig({
    options,
    ipv6Services: servicesHaveIpv6(inputs.resources.services.values()),
    streamServices: settled.tcpUdp,
    snippets: { ...inputs.configMapSnippets, streamSnippets: ingress.snippets.streamSnippets() },
    settings,
    features: settled.features,
    handoff: settled.handoff,
    httpsSocket: settled.httpsSocket,
    cleartextHttp2: gateways.http.cleartextHttp2,
    defaultTls: inputs.defaultTls,
    hosts: settled.hosts,
    stream: settled.stream,
    backends: ingress.backends,
    extensions: ingress.extensions,
    secrets,
    headers: inputs.headers,
    ...(settled.ownPorts.length > 0 && { ownPorts: settled.ownPorts }),
    ...(settled.controllerErrorPages && { controllerErrorPages: settled.controllerErrorPages }),
    ...(memo && {
      logLabels: memo.logLabels,
      hostCopies: memo.hostCopies,
      redirectServer: memo.redirectServer,
      locationFacts: memo.locationFacts,
      upstreamOrder: memo.upstreamOrder,
      upstreamBlocks: memo.upstreamBlocks,
      streamConfig: memo.streamConfig,
    }),
  });
  const model = memo ? memo.virtualHosts.kept(built) : built;
  return {
    model,
    diagnostics: diagnosticsOf(report, options),
    statuses: withPathConflicts(gateways.statuses, model.http),
    ingresses: memo ? memo.servedLists.ingressNames(ingress.ours) : ingressNames(ingress.ours),
    certificates: memo ? memo.servedLists.servedCertificates(model, gateways.ports, secrets) : servedCertificates(model, gateways.ports, secrets),
    references: referencesOf(secrets, [options.configMap, options.tcpServicesConfigMap, options.udpServicesConfigMap], inputs.headers.configMaps),
  };
}

/**
 * translate's diagnostics alone: every one is said by the front ends, settling, snippet placement or the
 * TCP/UDP services; the data plane is given no reporter and only shapes the winners into the model
 * (a test holds the two equal). The admission webhook's build: at 10,000 hosts the data plane and the
 * served lists were a quarter of a review.
 */
export function translateDiagnostics(snapshot: Snapshot, options: TranslateOptions, memo?: TranslateMemo): readonly Diagnostic[] {
  return diagnosticsOf(settledClaims(snapshot, options, memo).report, options);
}

function diagnosticsOf(report: Reporter, options: TranslateOptions): Diagnostic[] {
  return saidOnce([...report.diagnostics].sort(compareDiagnostics), options.configMap);
}

/** What the stages before the data plane make of a snapshot, and what they reported. */
interface SettledClaims {
  readonly report: Reporter;
  readonly inputs: Inputs;
  readonly features: ReturnType<typeof nginxFeatures>;
  readonly ingress: ReturnType<typeof ingressClaims>;
  readonly gateways: GatewayPlan;
  readonly handoff: Handoff;
  readonly httpsSocket: string;
  readonly hosts: MergedHosts;
  readonly stream: ReturnType<typeof settle>['stream'];
  readonly ownPorts: readonly OwnPortHosts[];
  readonly tcpUdp: StreamServices;
  readonly controllerErrorPages?: NonNullable<ReturnType<typeof controllerDefaultBackend>>['errorPages'];
}

/** The inputs read, the front ends' claims and the Gateway API's plan, settled; snippets placed. */
function settledClaims(snapshot: Snapshot, options: TranslateOptions, memo: TranslateMemo | undefined): SettledClaims {
  const report = new Reporter();
  const inputs = readInputs(snapshot, options, report, memo?.index);
  const { settings, secrets } = inputs;
  const features = nginxFeatures(options.nginxVersion);
  // One budget of what nginx must load per namespace, for the Ingresses and then the routes.
  const sizeBudget = new NamespaceBudget();
  const ingress = ingressClaims(inputs, options, features, report, memo, sizeBudget);
  const controllerConfigMap = options.configMap === undefined ? undefined : inputs.resources.configMaps.get(options.configMap)?.object;
  const defaultBackend = controllerDefaultBackend(options.defaultBackendService, settings, inputs.resources, inputs.backendPolicy, report, controllerConfigMap);
  if (defaultBackend) ingress.backends.set(defaultBackend.backend.upstream, defaultBackend.backend);
  const gateways = planGateways({
    operatorPorts: operatorPorts(inputs, options),
    objects: inputs.objects,
    resources: inputs.resources,
    secrets,
    report,
    gatewayClass: options.gatewayClass,
    ...(options.gateways && { servedGateways: new Set(options.gateways) }),
    controllerName,
    backendPolicy: inputs.backendPolicy,
    systemCaBundle: options.systemCaBundle,
    plainHttpPorts: [options.httpPort],
    httpPort: options.httpPort,
    httpsPort: options.httpsPort,
    runDir: options.runDir,
    sizeBudget,
    cleartextHttp2: features.http2Directive,
  });
  const handoff: Handoff = features.streamPass ? { directive: 'pass', proxyProtocol: false } : { directive: 'proxy_pass', proxyProtocol: true };
  const httpsSocket = `${options.runDir}/https-${options.httpsPort}.sock`;
  for (const backend of gateways.http.backends) ingress.backends.set(backend.upstream, backend);
  const settled = settle(
    {
      contributions: [...ingress.contributions, gateways.http.contribution],
      proxyProtocolRequests: ingress.proxyProtocolRequests,
      backends: ingress.backends,
      extensions: ingress.extensions,
      // A port Gateway HTTPS listeners have to themselves is settled with its servers (`ownPorts`).
      gatewayPorts: gateways.ports.filter((p) => !gateways.http.ownPorts.some((own) => own.tls && own.port === p.port)),
      objects: inputs.objects,
      settings: { ...settings, firstNamespaceOwnsHost: options.firstNamespaceOwnsHost || settings.firstNamespaceOwnsHost },
      secrets,
      defaultTls: inputs.defaultTls,
      httpsPort: options.httpsPort,
      runDir: options.runDir,
      handoff,
      httpsSocket,
      report,
      ...(defaultBackend && { fallback: defaultBackend.proxy }),
    },
    memo,
  );
  // Allowed snippets go into the settled hosts' servers and locations (ingress/snippets.ts).
  const hosts: MergedHosts = {
    ...settled.hosts,
    virtualHosts: ingress.snippets.place(settled.hosts.virtualHosts, report),
    defaultLocations: settled.hosts.defaultLocations.map((location) => ingress.snippets.withLocationSnippet(location)),
  };
  const own = gateways.http.ownPorts.map((port) => settleOwnPort(port, gateways, inputs, options, handoff, ingress, report));
  const tcpUdp = tcpUdpServices(inputs, gateways, options, report);
  const controllerErrorPages = defaultBackend?.errorPages;
  const stream = withOwnStreams(settled.stream, own.map((o) => o.stream));
  const ownPorts = own.map((o) => o.hosts);
  return { report, inputs, features, ingress, gateways, handoff, httpsSocket, hosts, stream, ownPorts, tcpUdp, ...(controllerErrorPages && { controllerErrorPages }) };
}

/**
 * One port Gateway listeners have to themselves, settled on its own: its HTTPRoutes' claims and, for TLS,
 * the TLSRoutes' SNI names there, apart from the Ingresses and every other port (a host name routed on
 * two ports is two hosts). No memo: the cluster mode's memos are the Ingress ports'.
 */
function settleOwnPort(
  own: PortContribution,
  gateways: GatewayPlan,
  inputs: Inputs,
  options: TranslateOptions,
  handoff: Handoff,
  ingress: ReturnType<typeof ingressClaims>,
  report: Reporter,
): { hosts: OwnPortHosts; stream?: StreamParts } {
  const httpsSocket = `${options.runDir}/https-${own.port}.sock`;
  const settled = settle({
    contributions: [own.contribution],
    proxyProtocolRequests: new Map(),
    backends: ingress.backends,
    extensions: ingress.extensions,
    gatewayPorts: own.tls ? gateways.ports.filter((p) => p.port === own.port) : [],
    objects: inputs.objects,
    settings: { ...inputs.settings, firstNamespaceOwnsHost: false },
    secrets: inputs.secrets,
    defaultTls: own.defaultCertificate ?? inputs.defaultTls,
    httpsPort: own.port,
    runDir: options.runDir,
    handoff,
    httpsSocket,
    report,
  });
  const defaultTls = own.defaultCertificate ?? inputs.defaultTls;
  return { hosts: { port: own.port, tls: own.tls, hosts: settled.hosts, httpsSocket, defaultTls }, ...(own.tls && { stream: settled.stream }) };
}

/** The Ingress ports' stream parts with the own TLS ports' (their fronts, terminate servers and upstreams), each once. */
function withOwnStreams(main: StreamParts, own: readonly (StreamParts | undefined)[]): StreamParts {
  const parts = own.filter((p): p is StreamParts => p !== undefined);
  if (parts.length === 0) return main;
  const all = [main, ...parts];
  const once = <T>(items: readonly T[], id: (item: T) => string) => [...new Map(items.map((item) => [id(item), item])).values()];
  const rejectSocket = all.find((p) => p.rejectSocket !== undefined)?.rejectSocket;
  return {
    frontends: all.flatMap((p) => p.frontends).sort((a, b) => a.port - b.port),
    upstreams: once(all.flatMap((p) => p.upstreams), (u) => u.name).sort(byString((u) => readablePart(u.name))),
    passthroughServers: once(all.flatMap((p) => p.passthroughServers), (s) => s.socket).sort(byString((s) => s.socket)),
    proxyProtocolServers: once(all.flatMap((p) => p.proxyProtocolServers), (s) => s.address).sort(byString((s) => s.address)),
    terminateServers: once(all.flatMap((p) => p.terminateServers), (s) => s.socket).sort(byString((s) => s.socket)),
    ...(rejectSocket !== undefined && { rejectSocket }),
  };
}

/**
 * Sorted diagnostics, those at the controller ConfigMap without repeats: what the operator's settings
 * cause is found once per Ingress that reads them (a `global-auth-url` nginx cannot reach) and said once,
 * at the ConfigMap key.
 */
function saidOnce(sorted: readonly Diagnostic[], configMap: string | undefined): Diagnostic[] {
  const atConfigMap = (d: Diagnostic) => d.resource?.kind === 'ConfigMap' && `${d.resource.namespace}/${d.resource.name}` === configMap;
  return sorted.filter((diagnostic, i) => i === 0 || !atConfigMap(diagnostic) || compareDiagnostics(sorted[i - 1]!, diagnostic) !== 0);
}

/**
 * The controller's ConfigMaps (settings, TCP and UDP services), the header ConfigMaps its settings name
 * (the operator's choice too, so followed in any namespace), and what the winners read.
 */
function referencesOf(secrets: SecretFiles, configMaps: readonly (string | undefined)[], headerConfigMaps: readonly NamespacedName[]): Reference[] {
  const controller: Reference[] = [
    ...configMaps.flatMap((configMap): Reference[] => {
      const [namespace, name] = configMap?.split('/') ?? [];
      return namespace !== undefined && name !== undefined ? [{ kind: 'ConfigMap', namespace, name }] : [];
    }),
    ...headerConfigMaps.map((ref): Reference => ({ kind: 'ConfigMap', namespace: ref.namespace, name: ref.name, operator: true })),
  ];
  const id = (r: Reference) => `${r.kind}/${r.namespace}/${r.name}`;
  // The operator's come last, so that their flag stays when a tenant names the same ConfigMap.
  return [...new Map([...secrets.references(), ...controller].map((r) => [id(r), r])).values()].sort(byString(id));
}

/** ingress-nginx's TCP and UDP services, on ports nothing else of the config listens on. */
function tcpUdpServices(inputs: Inputs, gateways: GatewayPlan, options: TranslateOptions, report: Reporter): StreamServices {
  return streamServices({
    resources: inputs.resources,
    ...(options.tcpServicesConfigMap !== undefined && { tcp: options.tcpServicesConfigMap }),
    ...(options.udpServicesConfigMap !== undefined && { udp: options.udpServicesConfigMap }),
    reservedPorts: new Map([
      ...[...gateways.ports, ...gateways.http.ownPorts].map((p): [number, string] => [p.port, 'a Gateway listener port']),
      ...(options.reservedPorts ?? []),
      [options.httpsPort, 'the HTTPS port (--https-port)'],
      [options.httpPort, 'the HTTP port (--http-port)'],
    ]),
    policy: inputs.backendPolicy,
    trustedProxies: inputs.settings.proxyRealIpCidr,
    report,
  });
}

/**
 * Ports a Gateway listener may not take: operator configuration outranks tenants. The TCP and UDP
 * services' ports (those on the HTTP and HTTPS ports are refused themselves) and the Pod's own ports.
 */
function operatorPorts(inputs: Inputs, options: TranslateOptions): Map<number, string> {
  const services = (configMap: string | undefined, what: string) =>
    tcpServicePorts(inputs.resources, configMap)
      .filter((port) => port !== options.httpPort && port !== options.httpsPort)
      .map((port): [number, string] => [port, `a ${what} service port of ConfigMap ${configMap ?? ''} (--${what.toLowerCase()}-services-configmap)`]);
  return new Map([...services(options.udpServicesConfigMap, 'UDP'), ...services(options.tcpServicesConfigMap, 'TCP'), ...(options.reservedPorts ?? [])]);
}
