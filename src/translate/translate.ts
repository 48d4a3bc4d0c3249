import { compareDiagnostics, type Diagnostic } from '../model/diagnostics.js';
import type { Handoff, NginxConfig } from '../model/nginx.js';
import type { ResourceStatus } from '../model/status.js';
import type { Snapshot, SourceObject } from '../sources/snapshot.js';
import type { ResolvedBackend } from './backends.js';
import { nginxConfig, StreamConfigMemo, type HostCopies, type UpstreamBlockMemo } from './dataplane/data-plane.js';
import { ContextMemo } from './memo/context-memo.js';
import { planGateways, type GatewayPlan } from './gateway/index.js';
import { withPathConflicts } from './gateway/http-routes.js';
import { ReferenceGrants } from './gateway/reference-grants.js';
import { referenceGrantSchema } from './gateway/schemas.js';
import { passthroughProxyProtocols, requestedProxyProtocol, type ProxyProtocolVersion } from './ingress/backend-proxy-protocol.js';
import type { IngressContribution } from './ingress/claims.js';
import { IngressClaimMemo, ingressClaimValue, type SharedIngressContext } from './ingress/claim-memo.js';
import { ingressClassDecision } from './ingress/classes.js';
import { HttpExtensionRegistry } from './ingress/extensions.js';
import { claimantsOf, HostSettleMemo, keepOwnedClaims, mergeHosts, type MergedHosts } from './ingress/hosts.js';
import { routeCountOf, withinSizeLimits, type RouteCountMemo } from './ingress/size-limits.js';
import { nginxFeatures, type NginxFeatures } from './nginx-version.js';
import { type TranslateOptions } from './options.js';
import { HostOwnership, hostOwners, type HostClaimant } from './settle/ownership.js';
import { byString, compareAge } from './settle/precedence.js';
import { Reporter } from './report.js';
import { IndexMemo, type IngressSpec, type Typed } from './resources.js';
import { SecretFiles, type Reference } from './secrets/secret-files.js';
import { buildStream, type StreamInput, type StreamParts } from './settle/sni.js';
import { StreamMemo } from './memo/stream-memo.js';
import { RedirectServerMemo } from './dataplane/redirect-server.js';
import { ResourceChangeCache } from './memo/resource-changes.js';
import { streamServices, type StreamServices } from './dataplane/stream-services.js';
import type { NamespacedName } from './ingress/annotations/references.js';
import { VirtualHostMemo } from './memo/virtual-host-memo.js';
import type { LogLabelsMemo } from './dataplane/request-log.js';
import { LocationFactsMemo } from './dataplane/location-facts.js';
import { SortedMemo } from './memo/sorted-memo.js';
import { ingressNames, servedCertificates, ServedListsMemo, type IngressName, type ServedCertificate } from './dataplane/served-lists.js';
import { compareUpstreamNames } from './upstream-names.js';
import { SnippetRegistry } from './ingress/snippets.js';

import { readInputs, type Inputs } from './inputs.js';

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

/** The Ingress front end's output: the Ingresses of our class, and the claims each makes. */
interface IngressClaims {
  readonly ours: readonly Typed<IngressSpec>[];
  readonly contributions: readonly IngressContribution[];
  readonly proxyProtocolRequests: ReadonlyMap<SourceObject, ProxyProtocolVersion>;
  readonly backends: Map<string, ResolvedBackend>;
  readonly extensions: HttpExtensionRegistry;
  readonly snippets: SnippetRegistry;
}

/**
 * snapshot → nginx model + diagnostics. Pure: no I/O, no clock (options.now), order-independent. Three
 * stages: the front ends turn resources into claims (Ingress) and a plan of ports (Gateway API), the
 * claims are settled against each other, and the data plane turns the winners into the model.
 */
export function translate(snapshot: Snapshot, options: TranslateOptions, memo?: TranslateMemo): TranslateResult {
  const report = new Reporter();
  const inputs = readInputs(snapshot, options, report, memo?.index);
  const { settings, secrets } = inputs;
  const features = nginxFeatures(options.nginxVersion);
  const ingress = ingressClaims(inputs, options, features, report, memo);
  const gateways = planGateways({
    objects: inputs.objects,
    resources: inputs.resources,
    secrets,
    report,
    gatewayClass: options.gatewayClass,
    controllerName,
    backendPolicy: inputs.backendPolicy,
    systemCaBundle: options.systemCaBundle,
    plainHttpPorts: [options.httpPort],
    httpPort: options.httpPort,
    httpsPort: options.httpsPort,
    runDir: options.runDir,
  });
  const handoff: Handoff = features.streamPass ? { directive: 'pass', proxyProtocol: false } : { directive: 'proxy_pass', proxyProtocol: true };
  const httpsSocket = `${options.runDir}/https-${options.httpsPort}.sock`;
  const settled = settle(inputs, ingress, gateways, options, report, { handoff, httpsSocket }, memo);
  const tcpUdp = tcpUdpServices(inputs, gateways, options, report);
  const built = nginxConfig({
    options,
    streamServices: tcpUdp,
    snippets: { ...inputs.configMapSnippets, streamSnippets: ingress.snippets.streamSnippets() },
    settings,
    features,
    handoff,
    httpsSocket,
    defaultTls: inputs.defaultTls,
    hosts: settled.hosts,
    stream: settled.stream,
    backends: ingress.backends,
    extensions: ingress.extensions,
    secrets,
    headers: inputs.headers,
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
    diagnostics: [...report.diagnostics].sort(compareDiagnostics),
    statuses: withPathConflicts(gateways.statuses, model.http),
    ingresses: memo ? memo.servedLists.ingressNames(ingress.ours) : ingressNames(ingress.ours),
    certificates: memo ? memo.servedLists.servedCertificates(model, gateways.ports, secrets) : servedCertificates(model, gateways.ports, secrets),
    references: referencesOf(secrets, [options.configMap, options.tcpServicesConfigMap, options.udpServicesConfigMap], inputs.headers.configMaps),
  };
}

/** The Ingress front end: the Ingresses of our class, oldest first, each turned into its claims. */
function ingressClaims(inputs: Inputs, options: TranslateOptions, features: NginxFeatures, report: Reporter, memo: TranslateMemo | undefined): IngressClaims {
  const { objects, resources, settings, secrets, backendPolicy } = inputs;
  const backends = new Map<string, ResolvedBackend>();
  const extensions = new HttpExtensionRegistry();
  const snippets = new SnippetRegistry(inputs.configMapSnippets['location-snippet']);
  const context: SharedIngressContext = {
    resources,
    secrets,
    backendPolicy,
    allowCrossNamespaceSecrets: options.allowCrossNamespaceSecrets,
    allowCrossNamespaceAuthUrl: options.allowCrossNamespaceAuthUrl ?? false,
    settings,
    headers: inputs.headers,
    // Behind PROXY protocol with forwarded headers the client is in X-Forwarded-For (see the http maps).
    clientAddress: settings.useForwardedHeaders && settings.useProxyProtocol ? '$i2n_client_addr' : '$remote_addr',
    limitKey: settings.useForwardedHeaders && settings.useProxyProtocol ? '$i2n_client_addr' : '$binary_remote_addr',
    snippetScope: inputs.snippetScope,
    // Read quietly here: the Gateway API front end reports malformed ReferenceGrants.
    referenceGrants: new ReferenceGrants(
      objects.filter((object) => object.kind === 'ReferenceGrant').flatMap((object) => {
        const parsed = referenceGrantSchema.safeParse(object.raw);
        return parsed.success ? [{ object, spec: parsed.data.spec }] : [];
      }),
    ),
  };
  const ours = withinSizeLimits(
    [...resources.ingresses]
      .sort((a, b) => compareAge(a.object, b.object))
      .filter((ingress) => {
        const decision = ingressClassDecision(ingress, resources, options.ingressClass, options.watchIngressWithoutClass);
        if (!decision.serve) report.info('ingress-class-skipped', ingress.object, `not ours: ${decision.reason}`);
        return decision.serve;
      }),
    report,
    memo ? memo.routeCounts.in('', routeCountOf) : routeCountOf,
  );
  const proxyProtocolRequests = new Map<SourceObject, ProxyProtocolVersion>();
  const claimsOf = memo && !options.expectClusterProvided ? memo.ingressClaims.begin(claimContext(inputs, options), resources) : ingressClaimValue;
  const contributions = ours.map((ingress): IngressContribution => {
    const proxyProtocol = requestedProxyProtocol(ingress.object, features, report);
    if (proxyProtocol === false) return { passthrough: [], tls: [], routes: [], canaries: [] };
    if (proxyProtocol) proxyProtocolRequests.set(ingress.object, proxyProtocol);
    // Each Ingress's claims are a value; the build takes in what making them produced, in Ingress order.
    const value = claimsOf(ingress, context);
    if (value.diagnostics.length > 0) report.diagnostics.push(...value.diagnostics);
    value.backends.forEach((backend, upstream) => backends.set(upstream, backend));
    extensions.absorb(value.extensions);
    snippets.absorb(value.snippets);
    secrets.replay(value.secrets);
    return value.contribution;
  });
  return { ours, contributions, proxyProtocolRequests, backends, extensions, snippets };
}

/**
 * What the context every Ingress shares is made of, by identity: the options but the clock and the
 * quarantine (which act through the objects) and the cache of parsed key pairs (which changes no result),
 * and the objects the settings, header defaults, snippet scope and ReferenceGrants are read from. A claim
 * that reads anything else records it itself.
 */
function claimContext(inputs: Inputs, options: TranslateOptions): unknown[] {
  const configMap = (namespacedName: string | undefined) => (namespacedName === undefined ? undefined : inputs.resources.configMaps.get(namespacedName)?.object.raw);
  return [
    JSON.stringify({ ...options, now: undefined, quarantine: undefined, keyPairs: undefined }),
    configMap(options.configMap),
    ...inputs.headers.configMaps.map((ref) => configMap(`${ref.namespace}/${ref.name}`)),
    ...inputs.objects.filter((o) => o.kind === 'Namespace' || o.kind === 'ReferenceGrant').map((o) => o.raw),
  ];
}

/**
 * Settles the Ingress claims among themselves and against the TLSRoutes on the HTTPS port (whose
 * precedence the Gateway API front end has settled): first-namespace-owns-host, then hosts and paths,
 * then the SNI front that hands each name to its winner.
 */
function settle(
  inputs: Inputs,
  ingress: IngressClaims,
  gateways: GatewayPlan,
  options: TranslateOptions,
  report: Reporter,
  handoff: { readonly handoff: Handoff; readonly httpsSocket: string },
  memo?: Pick<TranslateMemo, 'hosts' | 'stream'>,
): { hosts: MergedHosts; stream: StreamParts } {
  const { settings, secrets, defaultTls, objects } = inputs;
  const routes = new Map(objects.filter((o) => o.kind === 'TLSRoute').map((o) => [`${o.metadata.namespace}/${o.metadata.name}`, o]));
  const routeObject = (namespace: string, name: string) => routes.get(`${namespace}/${name}`);
  const httpsRoutes = gateways.ports.filter((p) => p.port === options.httpsPort).flatMap((p) => p.routes);
  // HTTPRoutes make claims of the Ingress kind: one routine settles both (ingress/hosts.ts).
  const contributions = [...ingress.contributions, gateways.http.contribution];
  for (const backend of gateways.http.backends) ingress.backends.set(backend.upstream, backend);
  const claimants = (): HostClaimant[] => [
    ...contributions.flatMap(claimantsOf),
    ...httpsRoutes
      .map((r) => ({ host: r.hostname, object: routeObject(r.route.namespace, r.route.name) }))
      .filter((c): c is HostClaimant => c.object !== undefined),
  ];
  const ownsHosts = options.firstNamespaceOwnsHost || settings.firstNamespaceOwnsHost;
  const ownership = ownsHosts ? new HostOwnership(hostOwners(claimants()), report) : undefined;
  const merged = mergeHosts(
    ownership ? contributions.map((c) => keepOwnedClaims(c, ownership)) : contributions,
    {
      sslRedirect: settings.sslRedirect,
      trustForwardedProto: settings.useForwardedHeaders,
      hsts: settings.hsts,
      defaultTls,
      routeHostnames: new Set(httpsRoutes.map((r) => r.hostname)),
    },
    secrets,
    ingress.extensions,
    report,
    memo?.hosts,
  );
  for (const backend of merged.canaryBackends) ingress.backends.set(backend.upstream, backend);
  // Allowed snippets go into the hosts' servers and locations (ingress/snippets.ts).
  const hosts: MergedHosts = {
    ...merged,
    virtualHosts: ingress.snippets.place(merged.virtualHosts, report),
    defaultLocations: merged.defaultLocations.map((location) => ingress.snippets.withLocationSnippet(location)),
  };
  const streamInput: StreamInput = {
    ...handoff,
    httpsPort: options.httpsPort,
    runDir: options.runDir,
    acceptProxyProtocol: settings.useProxyProtocol,
    trustedProxies: settings.proxyRealIpCidr,
    passthrough: hosts.passthrough,
    backendProxyProtocol: passthroughProxyProtocols(ingress.proxyProtocolRequests, hosts.passthrough, report),
    terminated: hosts.terminated,
    gatewayPorts: gateways.ports,
    ...(ownership && { hostOwnership: ownership }),
    routeObject,
    report,
  };
  return { hosts, stream: memo ? memo.stream.build(streamInput) : buildStream(streamInput) };
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
      ...gateways.ports.map((p): [number, string] => [p.port, 'a Gateway listener port']),
      [options.httpsPort, 'the HTTPS port (--https-port)'],
      [options.httpPort, 'the HTTP port (--http-port)'],
    ]),
    policy: inputs.backendPolicy,
    trustedProxies: inputs.settings.proxyRealIpCidr,
    report,
  });
}
