import { compareDiagnostics, type Diagnostic } from '../model/diagnostics.js';
import type { TlsFiles } from '../model/files.js';
import type { Handoff, NginxConfig } from '../model/nginx.js';
import type { ResourceStatus } from '../model/status.js';
import type { Snapshot, SourceObject } from '../sources/snapshot.js';
import type { BackendPolicy, ResolvedBackend } from './backends.js';
import { SecretOrigins } from './cluster-provided.js';
import { nginxConfig, StreamConfigMemo, type HostCopies, type UpstreamBlockMemo } from './data-plane.js';
import { ContextMemo } from './context-memo.js';
import { bundledDefaultCertificate, bundledDefaultKey } from './default-certificate.js';
import { gatewayKinds, planGateways, type GatewayPlan } from './gateway/index.js';
import { withPathConflicts } from './gateway/http-routes.js';
import { ReferenceGrants } from './gateway/reference-grants.js';
import { referenceGrantSchema } from './gateway/schemas.js';
import { passthroughProxyProtocols, requestedProxyProtocol, type ProxyProtocolVersion } from './ingress/backend-proxy-protocol.js';
import type { IngressContribution } from './ingress/claims.js';
import { IngressClaimMemo, ingressClaimValue, type SharedIngressContext } from './ingress/claim-memo.js';
import { ingressClassDecision } from './ingress/classes.js';
import { defaultControllerSettings, parseControllerSettings, type ControllerSettings } from './ingress/configmap.js';
import { HttpExtensionRegistry } from './ingress/extensions.js';
import { claimantsOf, HostSettleMemo, keepOwnedClaims, mergeHosts, type MergedHosts } from './ingress/hosts.js';
import { routeCountOf, withinSizeLimits, type RouteCountMemo } from './ingress/size-limits.js';
import { nginxFeatures, type NginxFeatures } from './nginx-version.js';
import { objectId, type TranslateOptions } from './options.js';
import { HostOwnership, hostOwners, type HostClaimant } from './ownership.js';
import { byString, compareAge } from './precedence.js';
import { Reporter } from './report.js';
import { IndexMemo, indexResources, withoutDuplicates, type IngressSpec, type Resources, type Typed } from './resources.js';
import { SecretFiles, type Reference } from './secrets.js';
import { KeyPairCache } from './key-pairs.js';
import { buildStream, type StreamInput, type StreamParts } from './stream.js';
import { StreamMemo } from './stream-memo.js';
import { RedirectServerMemo } from './redirect-server.js';
import { ResourceChangeCache } from './resource-changes.js';
import { streamServices, type StreamServices } from './stream-services.js';
import { headerDefaults, type HeaderDefaults } from './ingress/header-configmaps.js';
import type { NamespacedName } from './ingress/annotations/references.js';
import { VirtualHostMemo } from './virtual-host-memo.js';
import type { LogLabelsMemo } from './request-log.js';
import { LocationFactsMemo } from './location-facts.js';
import { SortedMemo } from './sorted-memo.js';
import { ingressNames, servedCertificates, ServedListsMemo, type IngressName, type ServedCertificate } from './served-lists.js';
import { compareUpstreamNames } from './upstream-names.js';
import { ingressSnippetScope, SnippetRegistry, withoutSnippetKeys, configMapSnippets, type ConfigMapSnippets, type SnippetScope } from './ingress/snippets.js';

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

/** What every front end reads: the objects left after duplicates and quarantine, indexed, and the settings. */
interface Inputs {
  readonly objects: readonly SourceObject[];
  readonly resources: Resources;
  readonly settings: ControllerSettings;
  readonly secrets: SecretFiles;
  readonly defaultTls: TlsFiles;
  readonly backendPolicy: BackendPolicy;
  /** Where snippets are allowed, and the controller ConfigMap's own allowed snippets (ingress/snippets.ts). */
  readonly snippetScope: SnippetScope;
  readonly configMapSnippets: ConfigMapSnippets;
  /** The header ConfigMaps the controller ConfigMap names. */
  readonly headers: HeaderDefaults;
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

function readInputs(snapshot: Snapshot, options: TranslateOptions, report: Reporter, index?: IndexMemo): Inputs {
  const objects = withoutQuarantined(withoutDuplicates(snapshot.objects, report, index), options.quarantine, report);
  const isGatewayKind = (object: SourceObject) => Object.hasOwn(gatewayKinds, object.kind);
  const resources = indexResources({ objects: objects.filter((o) => !isGatewayKind(o)) }, report, index);
  const { settings, snippets: configMapSnippetTexts, snippetScope } = controllerSettings(objects, resources, options, report);
  const keyPairs = options.keyPairs ?? new KeyPairCache();
  keyPairs.retain(resources.secrets);
  const secrets = new SecretFiles(resources, options.now, keyPairs, options.expectClusterProvided ? new SecretOrigins(objects, new Set(options.quarantine?.keys())) : undefined);
  const defaultTls = defaultCertificate(resources, options, secrets, report);
  secrets.useAsStandIn(defaultTls);
  const backendPolicy: BackendPolicy = {
    clusterDomain: options.clusterDomain,
    runtimeDns: (options.resolvers ?? []).length > 0,
    externalNameDisabled: options.disableExternalName ?? false,
    externalNameSuffixes: options.externalNameSuffixes ?? [],
    endpoints: options.upstreams === 'endpoints',
    clusterAssignsAddresses: options.expectClusterProvided ?? false,
  };
  const controller = options.configMap === undefined ? undefined : resources.configMaps.get(options.configMap)?.object;
  const headers = headerDefaults(settings, resources, controller, report);
  return { objects, resources, settings, secrets, defaultTls, backendPolicy, snippetScope, configMapSnippets: configMapSnippetTexts, headers };
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

/** Leaves out what nginx rejected (apply/quarantine.ts), each with an error that carries nginx's words. */
function withoutQuarantined(
  objects: readonly SourceObject[],
  quarantine: ReadonlyMap<string, string> | undefined,
  report: Reporter,
): SourceObject[] {
  if (!quarantine || quarantine.size === 0) return [...objects];
  return objects.filter((object) => {
    const message = quarantine.get(objectId(object));
    if (message === undefined) return true;
    report.error(
      'nginx-rejected',
      object,
      `nginx -t fails with this ${object.kind} in the config (nginx: ${message}); it is left out so that everything else is served. Fix it and render again`,
    );
    return false;
  });
}

/** The controller ConfigMap's settings, and where snippets are allowed (its keys and the flags), with its own allowed snippets. */
function controllerSettings(
  objects: readonly SourceObject[],
  resources: Resources,
  options: TranslateOptions,
  report: Reporter,
): { settings: ControllerSettings; snippets: ConfigMapSnippets; snippetScope: SnippetScope } {
  const defaults = { settings: defaultControllerSettings, snippets: {}, snippetScope: ingressSnippetScope(objects, defaultControllerSettings, options) };
  if (options.configMap === undefined) return defaults;
  const configMap = resources.configMaps.get(options.configMap);
  if (!configMap) {
    report.warning('configmap-not-found', undefined, `ConfigMap ${options.configMap} (--configmap) is not in the input; using defaults`);
    return defaults;
  }
  const parsed = parseControllerSettings(configMap.spec);
  const scope = ingressSnippetScope(objects, parsed.value, options);
  for (const issue of withoutSnippetKeys(parsed.issues, scope)) report.add(issue.severity, issue.code, configMap.object, issue.message, ['data', issue.key]);
  const snippets = configMapSnippets(configMap.spec, scope);
  for (const problem of snippets.problems) report.error('snippet-invalid', configMap.object, problem.message, ['data', problem.key]);
  return { settings: parsed.value, snippets: snippets.snippets, snippetScope: scope };
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

function defaultCertificate(resources: Resources, options: TranslateOptions, secrets: SecretFiles, report: Reporter): TlsFiles {
  if (options.defaultCertificate !== undefined) {
    const [namespace = '', name = ''] = options.defaultCertificate.split('/');
    const checked = secrets.serverCertificate({ namespace, name }, undefined);
    if (checked.ok) return checked.value;
    const secret = resources.secrets.get(options.defaultCertificate);
    report.error(
      'default-certificate-invalid',
      secret?.object,
      `${checked.problem} (--default-certificate); using the bundled self-signed certificate instead`,
    );
  }
  return secrets.fixedKeyPair('default', bundledDefaultCertificate, bundledDefaultKey);
}

