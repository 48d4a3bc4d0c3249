import { compareDiagnostics, type Diagnostic } from '../model/diagnostics.js';
import { generationPlaceholder, type CertificateMap, type ForwardedHeaders, type Handoff, type HttpExtensions, type HttpUpstream, type Location, type NginxConfig, type ProxyDefaults, type TlsListener, type VirtualHost } from '../model/nginx.js';
import type { OutputFile, TlsFiles } from '../model/files.js';
import type { Snapshot, SourceObject } from '../sources/snapshot.js';
import { passthroughProxyProtocols, requestedProxyProtocol, type ProxyProtocolVersion } from './ingress/backend-proxy-protocol.js';
import type { BackendPolicy, ResolvedBackend } from './backends.js';
import { gatewayKinds, planGateways, type GatewayPlan } from './gateway/index.js';
import type { ResourceStatus } from '../model/status.js';
import { ingressClassDecision } from './ingress/classes.js';
import { defaultControllerSettings, hstsHeaderValue, parseControllerSettings, type ControllerSettings } from './ingress/configmap.js';
import { bundledDefaultCertificate, bundledDefaultKey } from './default-certificate.js';
import { claimantsOf, keepOwnedClaims, mergeHosts } from './ingress/hosts.js';
import { HttpExtensionRegistry } from './ingress/extensions.js';
import { translateIngress } from './ingress/ingress.js';
import type { IngressContext, IngressContribution } from './ingress/claims.js';
import { ReferenceGrants } from './gateway/reference-grants.js';
import { withinSizeLimits } from './ingress/size-limits.js';
import { referenceGrantSchema } from './gateway/schemas.js';
import { objectId, type TranslateOptions } from './options.js';
import { hostOwners, type HostClaimant } from './ownership.js';
import { byString, compareAge } from './precedence.js';
import { Reporter } from './report.js';
import { indexResources, withoutDuplicates, type Resources } from './resources.js';
import { SecretFiles, type CertificateSummary } from './secrets.js';
import { SecretOrigins } from './cluster-provided.js';
import { filesNamedBy } from './named-files.js';
import { nginxFeatures } from './nginx-version.js';
import { sharePlainHttpServers } from './redirect-server.js';
import { shareSslContexts } from './ssl-contexts.js';
import { buildStream, hashSizes } from './stream.js';
import { streamServices } from './stream-services.js';
import { ingressSnippetScope, SnippetRegistry, withoutSnippetKeys, configMapSnippets, type ConfigMapSnippets, type SnippetScope } from './ingress/snippets.js';
import { readablePart } from './upstream-names.js';
import { withFields } from '../model/objects.js';

/** Written into route and policy status as the controller that programs them. */
export const controllerName = 'ingress2nginx.dev/controller';

export interface TranslateResult {
  readonly model: NginxConfig;
  readonly diagnostics: readonly Diagnostic[];
  /** Gateway API status of every Gateway, TLSRoute and BackendTLSPolicy that is ours. */
  readonly statuses: readonly ResourceStatus[];
  /** Ingresses of our class, rendered or not: the cluster mode writes their load-balancer status. */
  readonly ingresses: readonly { readonly namespace: string; readonly name: string }[];
  /** The certificate served for each host name (Ingress and Gateway Terminate), sorted by host. */
  readonly certificates: readonly ServedCertificate[];
}

export interface ServedCertificate extends CertificateSummary {
  readonly host: string;
}

/** snapshot → nginx model + diagnostics. Pure: no I/O, no clock (options.now), order-independent. */
export function translate(snapshot: Snapshot, options: TranslateOptions): TranslateResult {
  const report = new Reporter();
  const objects = withoutQuarantined(withoutDuplicates(snapshot.objects, report), options.quarantine, report);
  const isGatewayKind = (object: SourceObject) => Object.hasOwn(gatewayKinds, object.kind);
  const resources = indexResources({ objects: objects.filter((o) => !isGatewayKind(o)) }, report);
  const { settings, snippets: configMapSnippetTexts, snippetScope } = controllerSettings(objects, resources, options, report);
  const snippets = new SnippetRegistry(configMapSnippetTexts['location-snippet']);
  const secrets = new SecretFiles(resources, options.now, options.expectClusterProvided ? new SecretOrigins(objects, new Set(options.quarantine?.keys())) : undefined);
  const defaultTls = defaultCertificate(resources, options, secrets, report);
  secrets.useAsStandIn(defaultTls);

  const backends = new Map<string, ResolvedBackend>();
  const resolvers = options.resolvers ?? [];
  const backendPolicy: BackendPolicy = {
    clusterDomain: options.clusterDomain,
    runtimeDns: resolvers.length > 0,
    externalNameDisabled: options.disableExternalName ?? false,
    externalNameSuffixes: options.externalNameSuffixes ?? [],
    endpoints: options.upstreams === 'endpoints',
    clusterAssignsAddresses: options.expectClusterProvided ?? false,
  };
  const extensions = new HttpExtensionRegistry();
  const context: IngressContext = {
    resources,
    secrets,
    report,
    backendPolicy,
    allowCrossNamespaceSecrets: options.allowCrossNamespaceSecrets,
    backends,
    settings,
    extensions,
    // Behind PROXY protocol with forwarded headers the client is in X-Forwarded-For (see the http maps).
    clientAddress: settings.useForwardedHeaders && settings.useProxyProtocol ? '$i2n_client_addr' : '$remote_addr',
    limitKey: settings.useForwardedHeaders && settings.useProxyProtocol ? '$i2n_client_addr' : '$binary_remote_addr',
    // Read quietly here: the Gateway API front end reports malformed ReferenceGrants.
    snippetScope,
    snippets,
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
  );
  const features = nginxFeatures(options.nginxVersion);
  const proxyProtocolRequests = new Map<SourceObject, ProxyProtocolVersion>();
  const contributions = ours.map((ingress): IngressContribution => {
    const proxyProtocol = requestedProxyProtocol(ingress.object, features, report);
    if (proxyProtocol === false) return { passthrough: [], tls: [], routes: [], canaries: [] };
    if (proxyProtocol) proxyProtocolRequests.set(ingress.object, proxyProtocol);
    return translateIngress(ingress, context);
  });

  const gateways = planGateways({
    objects,
    resources,
    secrets,
    report,
    gatewayClass: options.gatewayClass,
    controllerName,
    backendPolicy,
    systemCaBundle: options.systemCaBundle,
    plainHttpPorts: [options.httpPort],
  });
  const routes = new Map(
    objects.filter((o) => o.kind === 'TLSRoute').map((o) => [`${o.metadata.namespace}/${o.metadata.name}`, o]),
  );
  const routeObject = (namespace: string, name: string) => routes.get(`${namespace}/${name}`);

  const owners =
    options.firstNamespaceOwnsHost || settings.firstNamespaceOwnsHost
      ? hostOwners([
          ...contributions.flatMap(claimantsOf),
          ...gateways.ports
            .filter((p) => p.port === options.httpsPort)
            .flatMap((p) => p.routes.map((r) => ({ host: r.hostname, object: routeObject(r.route.namespace, r.route.name) })))
            .filter((c): c is HostClaimant => c.object !== undefined),
        ])
      : undefined;
  const routeHostnames = new Set(gateways.ports.filter((p) => p.port === options.httpsPort).flatMap((p) => p.routes.map((r) => r.hostname)));
  const merged = mergeHosts(
    owners ? contributions.map((c) => keepOwnedClaims(c, owners, report)) : contributions,
    { sslRedirect: settings.sslRedirect, trustForwardedProto: settings.useForwardedHeaders, hsts: settings.hsts, defaultTls, routeHostnames },
    secrets,
    extensions,
    report,
  );
  // Allowed snippets go into the hosts' servers and locations (ingress/snippets.ts).
  const virtualHosts = snippets.place(merged.virtualHosts, report);
  const defaultLocations = merged.defaultLocations.map((location) => snippets.withLocationSnippet(location));
  for (const backend of merged.canaryBackends) backends.set(backend.upstream, backend);

  const runDir = options.runDir;
  const httpsSocket = `${runDir}/https-${options.httpsPort}.sock`;
  const handoff: Handoff = features.streamPass ? { directive: 'pass', proxyProtocol: false } : { directive: 'proxy_pass', proxyProtocol: true };
  const stream = buildStream({
    handoff,
    httpsPort: options.httpsPort,
    runDir,
    httpsSocket,
    acceptProxyProtocol: settings.useProxyProtocol,
    trustedProxies: settings.proxyRealIpCidr,
    passthrough: merged.passthrough,
    backendProxyProtocol: passthroughProxyProtocols(proxyProtocolRequests, merged.passthrough, report),
    terminated: merged.terminated,
    gatewayPorts: gateways.ports,
    ...(owners && { hostOwners: owners }),
    routeObject,
    report,
  });
  const tcpUdp = streamServices({
    resources,
    ...(options.tcpServicesConfigMap !== undefined && { tcp: options.tcpServicesConfigMap }),
    ...(options.udpServicesConfigMap !== undefined && { udp: options.udpServicesConfigMap }),
    reservedPorts: new Map([
      ...gateways.ports.map((p): [number, string] => [p.port, 'a Gateway listener port']),
      [options.httpsPort, 'the HTTPS port (--https-port)'],
      [options.httpPort, 'the HTTP port (--http-port)'],
    ]),
    policy: backendPolicy,
    trustedProxies: settings.proxyRealIpCidr,
    report,
  });
  const streamHash = hashSizes(stream.frontends.flatMap((f) => f.routes.map((r) => r.serverName)));
  const defaultServerTls = settings.sslRejectHandshake ? undefined : defaultTls;
  const contexts = shareSslContexts(virtualHosts, defaultServerTls, options.certificatesPerHandshake ?? false);
  const shared = sharePlainHttpServers(contexts.virtualHosts);
  const serverNameHash = hashSizes(virtualHosts.map((h) => h.serverName));
  const httpMapHash = hashSizes([...(shared.redirectServer?.serverNames ?? []), ...(contexts.certificateMap?.entries.map((e) => e.mapKey) ?? [])]);
  const hstsHeader = hstsHeaderValue(settings);
  const httpExtensions = extensions.collect(merged.references);

  const config: Omit<NginxConfig, 'files'> = {
    nginxVersion: options.nginxVersion,
    handoff,
    ...(options.streamModulePath !== undefined && { streamModulePath: options.streamModulePath }),
    runDir,
    pidFile: `${runDir}/nginx.pid`,
    controlSocket: `${runDir}/control.sock`,
    generation: generationPlaceholder,
    workerProcesses: settings.workerProcesses,
    accessLog: options.accessLog,
    workerConnections: settings.maxWorkerConnections,
    ...(configMapSnippetTexts['main-snippet'] !== undefined && { mainSnippet: configMapSnippetTexts['main-snippet'] }),
    http: {
      ...(configMapSnippetTexts['http-snippet'] !== undefined && { snippet: configMapSnippetTexts['http-snippet'] }),
      ...(configMapSnippetTexts['server-snippet'] !== undefined && { serverSnippet: configMapSnippetTexts['server-snippet'] }),
      ...(configMapSnippetTexts['location-snippet'] !== undefined && { locationSnippet: configMapSnippetTexts['location-snippet'] }),
      resolvers,
      httpPort: options.httpPort,
      httpsPort: options.httpsPort,
      ...httpsListener(stream.frontends.some((front) => front.port === options.httpsPort), handoff, httpsSocket, options.httpsPort, settings),
      http2Directive: features.http2Directive,
      serverNamesHashBucketSize: serverNameHash.bucketSize,
      serverNamesHashMaxSize: serverNameHash.maxSize,
      mapHashBucketSize: httpMapHash.bucketSize,
      mapHashMaxSize: httpMapHash.maxSize,
      sslProtocols: settings.sslProtocols,
      sslCiphers: settings.sslCiphers,
      ...(hstsHeader !== undefined && { hstsHeader }),
      forwardedHeaders: forwardedHeaders(settings),
      acceptProxyProtocol: settings.useProxyProtocol,
      proxyProtocolTrusted: settings.useProxyProtocol ? settings.proxyRealIpCidr : [],
      upstreams: httpUpstreams(virtualHosts, defaultLocations, backends, settings),
      redirectBase: options.httpsPort === 443 ? 'https://$host' : `https://$host:${options.httpsPort}`,
      defaultServer: {
        ...(defaultServerTls && { tls: defaultServerTls }),
        rejectHandshake: settings.sslRejectHandshake,
        locations: defaultLocations,
      },
      virtualHosts: shared.virtualHosts,
      ...(shared.redirectServer && { redirectServer: shared.redirectServer }),
      notFoundServerNames: shared.notFoundServerNames,
      ...(contexts.certificateMap && { certificateMap: contexts.certificateMap }),
      redirectCode: settings.httpRedirectCode,
      proxyDefaults: proxyDefaults(settings),
      requestHeaders: {
        generateRequestId: settings.generateRequestId,
        fullForwardedFor: settings.computeFullForwardedFor && settings.useForwardedHeaders,
        clientFromForwardedChain: settings.useForwardedHeaders && settings.useProxyProtocol,
      },
      grpcInheritsRequestHeaders: [
        ...shared.virtualHosts.flatMap((h) => h.locations),
        ...(shared.redirectServer?.locations ?? []),
        ...defaultLocations,
      ].some((location) => location.proxy?.grpc === true && location.proxy.inheritsRequestHeaders),
      extensions: httpExtensions,
      ...variablesHashSizes(httpExtensions),
    },
    stream: {
      resolvers,
      mapHashBucketSize: streamHash.bucketSize,
      mapHashMaxSize: streamHash.maxSize,
      proxyBufferSize: '64k',
      sslProtocols: settings.sslProtocols,
      sslCiphers: settings.sslCiphers,
      ...stream,
      upstreams: [...stream.upstreams, ...tcpUdp.upstreams.filter((u) => !stream.upstreams.some((s) => s.name === u.name))].sort(
        byString((u) => readablePart(u.name)),
      ),
      services: tcpUdp.services,
      snippets: [...(configMapSnippetTexts['stream-snippet'] !== undefined ? [configMapSnippetTexts['stream-snippet']] : []), ...snippets.streamSnippets()],
    },
  };
  // The default certificate is always written: stand-ins for Secrets the cluster makes hold the same.
  const named = new Set([...filesNamedBy(config), defaultTls.certificate, defaultTls.certificateKey]);
  const model: NginxConfig = { ...config, files: readByWorkers(secrets.checkedFiles().filter((file) => named.has(file.path)), contexts.certificateMap) };
  return {
    model,
    diagnostics: [...report.diagnostics].sort(compareDiagnostics),
    statuses: gateways.statuses,
    ingresses: ours.map((i) => ({ namespace: i.object.metadata.namespace, name: i.object.metadata.name })).sort(byString((i) => `${i.namespace}/${i.name}`)),
    certificates: servedCertificates(model, gateways.ports, secrets),
  };
}

/**
 * With certificates chosen per handshake, nginx's workers read the key files: when ingress2nginx writes
 * as root, those files then belong to the workers' user.
 */
function readByWorkers(files: readonly OutputFile[], certificateMap: CertificateMap | undefined): OutputFile[] {
  if (!certificateMap) return [...files];
  const read = new Set([certificateMap.defaultFile, ...certificateMap.entries.map((e) => e.file)]);
  return files.map((file) => (read.has(file.path) ? withFields(file, { readByWorkers: true }) : file));
}

function servedCertificates(model: NginxConfig, ports: GatewayPlan['ports'], secrets: SecretFiles): ServedCertificate[] {
  const served = new Map<string, ServedCertificate>();
  const add = (host: string, certificate: string | undefined) => {
    const summary = certificate === undefined ? undefined : secrets.summary(certificate);
    if (summary && !served.has(host)) served.set(host, { host, ...summary });
  };
  for (const host of model.http.virtualHosts) add(host.serverName, host.tls?.certificate);
  for (const route of ports.flatMap((p) => p.routes)) for (const files of route.certificates) add(route.hostname, files.certificate);
  return [...served.values()].sort(byString((c) => c.host));
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

function forwardedHeaders(settings: ControllerSettings): ForwardedHeaders {
  const trustedCidrs = settings.useForwardedHeaders ? settings.proxyRealIpCidr : [];
  const catchAll = (cidr: string) => cidr === '0.0.0.0/0' || cidr === '::/0';
  return {
    enabled: settings.useForwardedHeaders,
    trustedCidrs,
    trustAllAddresses: trustedCidrs.some(catchAll),
    trustedNetworks: trustedCidrs.filter((cidr) => !catchAll(cidr)),
    trustSource: settings.useProxyProtocol ? '$remote_addr' : '$realip_remote_addr',
  };
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

/**
 * nginx puts every variable name (its own some hundred, and each map, geo and split of ours) into one
 * hash, and warns on every load when they do not fit: ingress-nginx's sizes (2048, 256), grown with
 * the variables we define.
 */
function variablesHashSizes(extensions: HttpExtensions): { variablesHashMaxSize: number; variablesHashBucketSize: number } {
  const defined = extensions.geos.length + extensions.maps.length + extensions.splits.length;
  let maxSize = 2048;
  while (maxSize < (defined + 512) * 4) maxSize *= 2;
  return { variablesHashMaxSize: maxSize, variablesHashBucketSize: 256 };
}

/** What every location gets unless its Ingress says otherwise: the ConfigMap's proxy keys. */
function proxyDefaults(settings: ControllerSettings): ProxyDefaults {
  return {
    clientMaxBodySize: settings.proxyBodySize,
    clientBodyBufferSize: settings.clientBodyBufferSize,
    connectTimeout: settings.proxyConnectTimeout,
    readTimeout: settings.proxyReadTimeout,
    sendTimeout: settings.proxySendTimeout,
    buffering: settings.proxyBuffering,
    bufferSize: settings.proxyBufferSize,
    buffersNumber: settings.proxyBuffersNumber,
    // nginx's default busy size is two buffers, which must stay below all buffers but one.
    ...(settings.proxyBuffersNumber < 4 && { busyBuffersSize: settings.proxyBufferSize }),
    requestBuffering: settings.proxyRequestBuffering,
    nextUpstream: settings.proxyNextUpstream,
    nextUpstreamTries: settings.proxyNextUpstreamTries,
    nextUpstreamTimeout: settings.proxyNextUpstreamTimeout,
    limitReqStatus: settings.limitReqStatusCode,
    limitConnStatus: settings.limitConnStatusCode,
  };
}

/** The upstream blocks a location uses: its backend, its canary's, its auth service's, its error pages'. */
function upstreamsOf(location: Location): string[] {
  return [
    ...(location.proxy ? [location.proxy.upstream] : []),
    ...(location.proxy?.canary ? [location.proxy.canary.upstream] : []),
    ...(location.authEndpoint?.upstream !== undefined ? [location.authEndpoint.upstream] : []),
    ...(location.errorPage?.proxy ? [location.errorPage.proxy.upstream] : []),
  ];
}

function httpUpstreams(
  virtualHosts: readonly VirtualHost[],
  defaultLocations: VirtualHost['locations'],
  backends: ReadonlyMap<string, ResolvedBackend>,
  settings: ControllerSettings,
): HttpUpstream[] {
  const used = new Set<string>();
  for (const location of [...defaultLocations, ...virtualHosts.flatMap((h) => h.locations)]) {
    for (const upstream of upstreamsOf(location)) used.add(upstream);
  }
  const upstreams = [...used]
    .map((name) => backends.get(name))
    .filter((backend): backend is ResolvedBackend => backend !== undefined && backend.runtimeName === undefined);
  const keepalive = keepalivePerUpstream(settings.upstreamKeepaliveConnections, upstreams.length);
  return upstreams
    .map((backend) => ({ name: backend.upstream, servers: backend.servers, keepalive, comment: backend.description }))
    .sort(byString((u) => readablePart(u.name)));
}

/** Up to this many upstream blocks, each keeps `upstream-keepalive-connections` idle connections. */
const fullKeepaliveUpstreams = 100;
const leastKeepalive = 16;

/**
 * `upstream-keepalive-connections` is what ingress-nginx keeps per worker for its one balancer upstream;
 * here every Service port has an upstream block, and nginx allocates each block's whole cache when it
 * loads the config (320 entries: about 48 kB per block, 320 MB at 6,666 blocks). Past 100 blocks the
 * setting is shared out among them, never below 16 each.
 */
export function keepalivePerUpstream(setting: number, upstreams: number): number {
  if (setting === 0 || upstreams <= fullKeepaliveUpstreams) return setting;
  return Math.min(setting, Math.max(leastKeepalive, Math.floor((setting * fullKeepaliveUpstreams) / upstreams)));
}

/**
 * Where the TLS servers listen. Behind the SNI front, on its unix socket (after a PROXY header from the
 * front on the PROXY/unix hand-off). When the HTTPS port has no front, because every name on it goes to
 * the http servers, on the port itself: one hop less, and an outer load balancer's PROXY header
 * (use-proxy-protocol) is read there. With the PROXY/unix hand-off they keep the unix socket too: when a
 * reload takes the front away, the old workers still proxy the connections they have just accepted to
 * it, and a socket missing from the new config would be gone under them (`pass` needs no socket file).
 */
function httpsListener(
  fronted: boolean,
  handoff: Handoff,
  socket: string,
  port: number,
  settings: Pick<ControllerSettings, 'useProxyProtocol' | 'proxyRealIpCidr'>,
): Pick<NginxConfig['http'], 'httpsListeners' | 'httpsRealIpFrom'> {
  const viaUnix = handoff.proxyProtocol;
  const unixListener: TlsListener = { address: `unix:${socket}`, proxyProtocol: viaUnix };
  const fromFront = viaUnix ? ['unix:'] : [];
  if (fronted) return { httpsListeners: [unixListener], httpsRealIpFrom: fromFront };
  return {
    httpsListeners: [{ address: String(port), proxyProtocol: settings.useProxyProtocol }, ...(viaUnix ? [unixListener] : [])],
    httpsRealIpFrom: [...(settings.useProxyProtocol ? settings.proxyRealIpCidr : []), ...fromFront],
  };
}
