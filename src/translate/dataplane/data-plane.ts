/**
 * The data plane: the settled claims (the plan) → the nginx model. Upstreams, extensions and the key,
 * CA and user files come from the winners only: an upstream block is written for a location that uses
 * it, a file for a name the config holds (`filesNamedBy`). The dataplane/ folder runs after settle/ and
 * may import it, the front ends' settings and the shared ground; nothing in translate/ imports it but
 * translate.ts.
 */
import { withLogLabels, type LogLabelsMemo } from './request-log.js';
import type { ContextMemo } from '../memo/context-memo.js';
import type { OutputFile, TlsFiles } from '../../model/files.js';
import {
  generationPlaceholder,
  type CertificateMap,
  type ControllerErrorPages,
  type Directive,
  type EndpointResolution,
  type ForwardedHeaders,
  type Handoff,
  type HttpExtensions,
  type HttpUpstream,
  type NginxConfig,
  type OwnPortServers,
  type ProxyDefaults,
  type TlsListener,
  type VirtualHost,
} from '../../model/nginx.js';
import { withFields } from '../../model/objects.js';
import { internalErrorServer, internalGrpcErrorServer, type ResolvedBackend } from '../backends.js';
import { resolvesEndpoints, type ResolvingModule } from '../endpoints.js';
import { authKeepaliveShares } from './auth-keepalive.js';
import { directiveSlices, httpDirectiveSlices } from '../ingress/annotations/directive-slices.js';
import { hstsHeaderValue, type ControllerSettings } from '../ingress/configmap.js';
import type { HttpExtensionRegistry } from '../settle/extensions.js';
import type { MergedHosts } from '../settle/settled.js';
import { listenerPortVariable } from '../gateway/http-routes.js';
import { filesNamedBy } from './named-files.js';
import { locationFacts, type FactsOf, type LocationFacts, type LocationFactsMemo } from './location-facts.js';
import type { NginxFeatures } from '../nginx-version.js';
import type { TranslateOptions } from '../options.js';
import { byString } from '../settle/precedence.js';
import { sharePlainHttpServers, sharingPlainHttp, type RedirectServerMemo } from './redirect-server.js';
import type { SecretFiles } from '../secrets/secret-files.js';
import { shareSslContexts, sharingDefaultTls } from './ssl-contexts.js';
import { hashSizes, type StreamParts } from '../settle/sni.js';
import { compareUpstreamNames, readablePart } from '../upstream-names.js';
import type { SortedMemo } from '../memo/sorted-memo.js';
import type { StreamServices } from './stream-services.js';
import type { ConfigMapSnippets } from '../ingress/snippets.js';
import type { HeaderDefaults } from '../ingress/header-configmaps.js';

/** Each backend's upstream block, while the keepalive share is the same (`DataPlaneInput.upstreamBlocks`). */
export type UpstreamBlockMemo = ContextMemo<ResolvedBackend, HttpUpstream>;

/**
 * Hosts copied with a field more, by the host they copy (`DataPlaneInput.hostCopies`): the same copy of an
 * unchanged host from one build to the next, so that what comes after (`VirtualHostMemo`, render) finds
 * it by identity instead of comparing it field by field (at 10,000 hosts that was 14 ms of each build).
 */
export interface HostCopies {
  readonly sharesDefaultTls: ContextMemo<VirtualHost, VirtualHost>;
  readonly plainHttpShared: ContextMemo<VirtualHost, VirtualHost>;
  /** The host with its locations labelled for the logs (request-log.ts). */
  readonly labelled: ContextMemo<VirtualHost, VirtualHost>;
}

/** What the data plane is made from: the settled Ingress hosts, the SNI stream, and what they refer to. */
export interface DataPlaneInput {
  readonly options: TranslateOptions;
  /** Some Service has IPv6: the resolver is asked for AAAA records too (endpoints.ts). */
  readonly ipv6Services: boolean;
  readonly settings: ControllerSettings;
  readonly features: NginxFeatures;
  readonly handoff: Handoff;
  /** The unix socket the SNI front hands terminated TLS to. */
  readonly httpsSocket: string;
  /** A GRPCRoute is served over plain HTTP: the plain port takes HTTP/2 with prior knowledge too. */
  readonly cleartextHttp2?: boolean;
  readonly defaultTls: TlsFiles;
  readonly hosts: MergedHosts;
  readonly stream: StreamParts;
  /** Every backend a claim resolved, by upstream name: only those the winners use become blocks. */
  readonly backends: ReadonlyMap<string, ResolvedBackend>;
  readonly extensions: HttpExtensionRegistry;
  readonly secrets: SecretFiles;
  /** TCP/UDP services: stream servers and their upstream blocks. */
  readonly streamServices: StreamServices;
  /** Allowed snippets of the controller ConfigMap, and the Ingresses' `stream-snippet`s (oldest first). */
  readonly snippets: ConfigMapSnippets & { readonly streamSnippets: readonly string[] };
  /** The header ConfigMaps the controller ConfigMap names (`add-headers`, `proxy-set-headers`, `hide-headers`). */
  readonly headers: HeaderDefaults;
  /** The controller ConfigMap's `custom-http-errors`, answered by the controller's default backend. */
  readonly controllerErrorPages?: ControllerErrorPages;
  /** What the builds before this one labelled (the cluster mode keeps one). */
  readonly logLabels?: LogLabelsMemo;
  /** What the builds before this one found in each host's locations (the cluster mode keeps one). */
  readonly locationFacts?: LocationFactsMemo;
  /** The upstream blocks' order of the build before (the cluster mode keeps one, `compareUpstreamNames`). */
  readonly upstreamOrder?: SortedMemo;
  /**
   * The upstream blocks of the last build, by backend, while the keepalive share is the same: the claim memo
   * keeps an unchanged Ingress's backends, so render reuses their blocks' text (the cluster mode keeps one).
   */
  readonly upstreamBlocks?: UpstreamBlockMemo;
  /** Hosts copied with a field more by the builds before this one (the cluster mode keeps them). */
  readonly hostCopies?: HostCopies;
  /** The redirect server of the build before (the cluster mode keeps one). */
  readonly redirectServer?: RedirectServerMemo;
  /** The stream section of the build before (the cluster mode keeps one). */
  readonly streamConfig?: StreamConfigMemo;
  /** Gateway listeners' ports other than the Ingress ports, each settled on its own, sorted by port. */
  readonly ownPorts?: readonly OwnPortHosts[];
}

/** The settled hosts of one port that Gateway listeners have to themselves. */
export interface OwnPortHosts {
  readonly port: number;
  readonly tls: boolean;
  readonly hosts: MergedHosts;
  /** The unix socket its SNI front hands terminated TLS to. */
  readonly httpsSocket: string;
  /** For names no route serves: the port's host-less HTTPS listener's certificate, else the controller's default. */
  readonly defaultTls: TlsFiles;
}

export function nginxConfig(input: DataPlaneInput): NginxConfig {
  const { options, settings, handoff, defaultTls, secrets, snippets } = input;
  const runDir = options.runDir;
  const factsOf = input.locationFacts?.of ?? locationFacts;
  const http = httpConfig(input, factsOf);
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
    accessLogEscapeJson: settings.logFormatEscapeJson,
    ...(settings.logFormatUpstream !== undefined && { accessLogFormat: settings.logFormatUpstream }),
    ...(options.requestLog !== undefined && { requestLog: options.requestLog, stubStatus: options.stubStatus ?? false }),
    workerConnections: settings.maxWorkerConnections,
    ...(snippets['main-snippet'] !== undefined && { mainSnippet: snippets['main-snippet'] }),
    http,
    stream: input.streamConfig ? input.streamConfig.kept(input) : streamConfig(input),
  };
  // The default certificate is always written: stand-ins for Secrets the cluster makes hold the same.
  const named = filesNamedBy(config, (locations) => factsOf(locations).files).add(defaultTls.certificate).add(defaultTls.certificateKey);
  const files = readByWorkers(secrets.checkedFiles().filter((file) => named.has(file.path)), http.certificateMap);
  return withLogLabels({ ...config, files }, input.logLabels, (locations) => factsOf(locations).canaries, input.hostCopies?.labelled);
}

/** The stream section: the SNI front and passthrough of the plan, and the TCP/UDP services. */
function streamConfig(input: StreamConfigInput): NginxConfig['stream'] {
  const { stream, streamServices, snippets, settings } = input;
  const streamHash = hashSizes(stream.frontends.flatMap((f) => f.routes.map((r) => r.serverName)));
  const upstreams = [...stream.upstreams, ...streamServices.upstreams.filter((u) => !stream.upstreams.some((s) => s.name === u.name))]
    .sort(byString((u) => readablePart(u.name)))
    .map((u) => (u.servers.some((server) => server.resolve !== undefined) ? { ...u, resolves: true as const } : u));
  return {
    resolvers: input.options.resolvers ?? [],
    mapHashBucketSize: streamHash.bucketSize,
    mapHashMaxSize: streamHash.maxSize,
    proxyBufferSize: '64k',
    sslProtocols: settings.sslProtocols,
    sslCiphers: settings.sslCiphers,
    ...stream,
    ...endpointResolution(input.options, 'stream', upstreams.filter((u) => u.resolves).length, input.ipv6Services),
    upstreams,
    services: streamServices.services,
    snippets: [...(snippets['stream-snippet'] !== undefined ? [snippets['stream-snippet']] : []), ...snippets.streamSnippets],
  };
}

type StreamConfigInput = Pick<DataPlaneInput, 'options' | 'settings' | 'stream' | 'streamServices' | 'snippets' | 'ipv6Services'>;

/**
 * The stream section of the last build, for the next (the cluster mode keeps one): the same object while
 * its parts are (`StreamMemo`) and what else it reads is equal, so that render writes it again only when
 * it changed. At 10,000 hosts its SNI maps are 850 KB of text, made by the template on every build.
 */
export class StreamConfigMemo {
  private last: { readonly parts: StreamParts; readonly read: string; readonly config: NginxConfig['stream'] } | undefined;

  kept(input: StreamConfigInput): NginxConfig['stream'] {
    const { stream, streamServices, snippets, settings } = input;
    const read = JSON.stringify([input.options.resolvers, input.options.endpointResolver, input.ipv6Services, settings.sslProtocols, settings.sslCiphers, streamServices, snippets['stream-snippet'], snippets.streamSnippets]);
    const last = this.last;
    const config = last && last.parts === stream && last.read === read ? last.config : streamConfig(input);
    this.last = { parts: stream, read, config };
    return config;
  }
}

function httpConfig(input: DataPlaneInput, factsOf: FactsOf): NginxConfig['http'] {
  const { options, settings, features, handoff, httpsSocket, hosts, stream, defaultTls } = input;
  const defaultServerTls = settings.sslRejectHandshake ? undefined : defaultTls;
  const copies = input.hostCopies;
  const contexts = shareSslContexts(
    hosts.virtualHosts,
    defaultServerTls,
    options.certificatesPerHandshake ?? false,
    copies?.sharesDefaultTls.in('', sharingDefaultTls),
  );
  const shared = sharePlainHttpServers(
    contexts.virtualHosts,
    (locations) => factsOf(locations).plainHttp,
    copies?.plainHttpShared.in('', sharingPlainHttp),
    input.redirectServer,
  );
  // The default server's and every host's; the hosts after sharing hold the same locations arrays.
  const ownPorts = (input.ownPorts ?? []).map((own) => ownPortServers(own, input));
  const facts = [
    factsOf(hosts.defaultLocations),
    ...hosts.virtualHosts.map((host) => factsOf(host.locations)),
    ...(input.controllerErrorPages ? [factsOf(input.controllerErrorPages.locations)] : []),
    ...ownPorts.flatMap((own) => [own.defaultServer.locations, ...own.virtualHosts.map((host) => host.locations)].map(factsOf)),
  ];
  const serverNameHash = hashSizes([...hosts.virtualHosts, ...ownPorts.flatMap((own) => own.virtualHosts)].map((h) => h.serverName));
  const httpMapHash = hashSizes([...(shared.redirectServer?.serverNames ?? []), ...(contexts.certificateMap?.entries.map((e) => e.mapKey) ?? [])]);
  const hstsHeader = hstsHeaderValue(settings);
  const extensions = input.extensions.collect([...hosts.references, ...(input.ownPorts ?? []).flatMap((own) => own.hosts.references)]);
  const upstreams = httpUpstreams(facts, input.backends, settings, upstreamOrder(input.upstreamOrder), input.upstreamBlocks);
  const { snippets } = input;
  return {
    ...(snippets['http-snippet'] !== undefined && { snippet: snippets['http-snippet'] }),
    ...(snippets['server-snippet'] !== undefined && { serverSnippet: snippets['server-snippet'] }),
    ...(snippets['location-snippet'] !== undefined && { locationSnippet: snippets['location-snippet'] }),
    resolvers: options.resolvers ?? [],
    httpPort: options.httpPort,
    httpsPort: options.httpsPort,
    ...withOwnPortsRealIp(httpsListener(stream.frontends.some((front) => front.port === options.httpsPort), handoff, httpsSocket, options.httpsPort, settings), ownPorts),
    http2Directive: features.http2Directive,
    cleartextHttp2: features.http2Directive && input.cleartextHttp2 === true,
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
    ...listenerPorts(facts.some((f) => f.namesListenerPort), options),
    ...upstreamsWithErrorServer(upstreams, options.runDir),
    ...httpEndpointResolution(options, upstreams, input.ipv6Services),
    redirectBase: options.httpsPort === 443 ? 'https://$host' : `https://$host:${options.httpsPort}`,
    redirectBaseWithPort: `https://$host:${options.httpsPort}`,
    ...trimmedRequestUri(facts.some((f) => f.trimsRequestUri)),
    defaultServer: {
      ...(defaultServerTls && { tls: defaultServerTls }),
      rejectHandshake: settings.sslRejectHandshake,
      locations: hosts.defaultLocations,
    },
    ...(input.controllerErrorPages && { controllerErrorPages: input.controllerErrorPages }),
    virtualHosts: shared.virtualHosts,
    ...(shared.redirectServer && { redirectServer: shared.redirectServer }),
    notFoundServerNames: shared.notFoundServerNames,
    ...(ownPorts.length > 0 && { ownPorts: ownPorts.map(({ httpsRealIpFrom: _from, ...servers }) => servers) }),
    ...(contexts.certificateMap && { certificateMap: contexts.certificateMap }),
    redirectCode: settings.httpRedirectCode,
    proxyDefaults: proxyDefaults(settings),
    requestHeaders: {
      generateRequestId: settings.generateRequestId,
      fullForwardedFor: settings.computeFullForwardedFor && settings.useForwardedHeaders,
      clientFromForwardedChain: settings.useForwardedHeaders && settings.useProxyProtocol,
      custom: input.headers.request,
    },
    responseHeaders: input.headers.response,
    hiddenHeaders: input.headers.hidden,
    keepaliveTimeout: settings.keepAlive,
    ...(settings.useGzip && {
      gzip: {
        level: settings.gzipLevel,
        minLength: settings.gzipMinLength,
        types: settings.gzipTypes,
        ...(settings.gzipDisable !== undefined && { disable: settings.gzipDisable }),
      },
    }),
    upstreamDirectives: sliceDirectives(settings, 'upstream'),
    grpcInheritsRequestHeaders: [...facts, factsOf(shared.redirectServer?.locations ?? [])].some((f) => f.grpcInheritsRequestHeaders),
    extensions,
    ...variablesHashSizes(extensions),
  };
}

/**
 * The servers of a port Gateway listeners have to themselves: its hosts as settled on their own, with
 * the default server for unknown names (404; over TLS the default certificate). Their TLS servers keep
 * their own SSL contexts (no certificate map: that is the Ingress ports' one variable); plain HTTP is
 * served, never redirected or shared, as HTTP listeners ask.
 */
function ownPortServers(own: OwnPortHosts, input: DataPlaneInput): OwnPortServers & Pick<NginxConfig['http'], 'httpsRealIpFrom'> {
  const { settings, stream, handoff } = input;
  const defaultServerTls = own.tls && !settings.sslRejectHandshake ? own.defaultTls : undefined;
  const virtualHosts = own.tls ? shareSslContexts(own.hosts.virtualHosts, defaultServerTls, false).virtualHosts : [...own.hosts.virtualHosts];
  const listening = own.tls
    ? httpsListener(stream.frontends.some((front) => front.port === own.port), handoff, own.httpsSocket, own.port, settings)
    : { httpsListeners: [], httpsRealIpFrom: [] };
  return {
    port: own.port,
    tls: own.tls,
    ...listening,
    defaultServer: {
      ...(defaultServerTls && { tls: defaultServerTls }),
      rejectHandshake: own.tls && settings.sslRejectHandshake,
      locations: own.hosts.defaultLocations,
    },
    virtualHosts,
  };
}

/** The Ingress ports' `set_real_ip_from` sources, and those the own ports' TLS servers need too, each once. */
function withOwnPortsRealIp<T extends Pick<NginxConfig['http'], 'httpsRealIpFrom'>>(main: T, ownPorts: readonly Pick<NginxConfig['http'], 'httpsRealIpFrom'>[]): T {
  const added = ownPorts.flatMap((own) => own.httpsRealIpFrom).filter((from, i, all) => !main.httpsRealIpFrom.includes(from) && all.indexOf(from) === i);
  return added.length === 0 ? main : { ...main, httpsRealIpFrom: [...main.httpsRealIpFrom, ...added] };
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
    // The ConfigMap's (checked against its buffers); else nginx's default of two buffers, which must stay below all buffers but one.
    ...(settings.proxyBusyBuffersSize !== undefined
      ? { busyBuffersSize: settings.proxyBusyBuffersSize }
      : settings.proxyBuffersNumber < 4 && { busyBuffersSize: settings.proxyBufferSize }),
    requestBuffering: settings.proxyRequestBuffering,
    nextUpstream: settings.proxyNextUpstream,
    nextUpstreamTries: settings.proxyNextUpstreamTries,
    nextUpstreamTimeout: settings.proxyNextUpstreamTimeout,
    limitReqStatus: settings.limitReqStatusCode,
    limitConnStatus: settings.limitConnStatusCode,
    directives: [
      ...directiveSlices.flatMap((slice) => {
        const value = settings[slice.name];
        return value === undefined ? [] : [{ name: slice.directive, value }];
      }),
      ...sliceDirectives(settings, 'http'),
    ],
  };
}

/** The ConfigMap-only slices that are set, for the http block or for every upstream block. */
function sliceDirectives(settings: ControllerSettings, context: 'http' | 'upstream'): Directive[] {
  return httpDirectiveSlices.flatMap((slice) => {
    const value = settings[slice.name];
    return slice.context !== context || value === undefined ? [] : [{ name: slice.directive, value }];
  });
}

/** The upstream blocks the locations use, each once, in `compareUpstreamNames` order. */
function httpUpstreams(
  facts: readonly LocationFacts[],
  backends: ReadonlyMap<string, ResolvedBackend>,
  settings: ControllerSettings,
  sorted: (names: ReadonlySet<string>) => readonly string[],
  memo?: UpstreamBlockMemo,
): HttpUpstream[] {
  const used = new Set<string>();
  for (const { upstreams } of facts) for (const upstream of upstreams) used.add(upstream);
  const upstreams = sorted(used)
    .map((name) => backends.get(name))
    .filter((backend): backend is ResolvedBackend => backend !== undefined && backend.runtimeName === undefined);
  const keepalive = keepalivePerUpstream(settings.upstreamKeepaliveConnections, upstreams.length);
  const authShares = authKeepaliveShares(upstreams);
  const block = (backend: ResolvedBackend): HttpUpstream => ({
    name: backend.upstream,
    ...(backend.balancing?.hashKey !== undefined && { hashKey: backend.balancing.hashKey }),
    ...(backend.balancing?.leastConn && { leastConn: true }),
    servers: backend.servers,
    ...(backend.servers.some((server) => server.resolve !== undefined) && { resolves: true }),
    keepalive,
    ...backend.keepalive,
    ...(backend.keepalive && { keepalive: authShares.get(backend.upstream) ?? backend.keepalive.keepalive }),
    comment: backend.description,
  });
  const memoized = memo ? memo.in(String(keepalive), block) : block;
  // An auth block's share depends on its namespace's other auth blocks: never kept across builds.
  return upstreams.map((backend) => (backend.keepalive ? block(backend) : memoized(backend)));
}

/** Upstream names in `compareUpstreamNames` order: from the last build's order with a memo, else sorted. */
function upstreamOrder(memo: SortedMemo | undefined): (names: ReadonlySet<string>) => readonly string[] {
  return memo ? (names) => memo.sorted(names) : (names) => [...names].sort(compareUpstreamNames);
}

/** The listener's port for redirects that keep it, when a location's redirect names the variable. */
function listenerPorts(named: boolean, options: TranslateOptions): Pick<NginxConfig['http'], 'listenerPorts'> {
  const variable = listenerPortVariable;
  if (!named) return {};
  const part = (port: number, wellKnown: number) => (port === wellKnown ? '' : `:${port}`);
  return { listenerPorts: { variable, http: part(options.httpPort, 80), https: part(options.httpsPort, 443) } };
}

/** The request URI without its trailing `/`, when an HTTPS redirect drops it (ingress-nginx, without `preserve-trailing-slash`). */
function trimmedRequestUri(trimmed: boolean): Pick<NginxConfig['http'], 'trimmedRequestUri'> {
  return trimmed ? { trimmedRequestUri: { variable: 'i2n_redirect_uri' } } : {};
}

/**
 * The sidecar's resolver when upstream servers resolve (translate/endpoints.ts). The zone holds every
 * resolved peer of every worker's view: about 1 kB each with their names, so 64 kB per block leaves room
 * for about 64 endpoints per Service port on average; untouched pages of a shared zone cost no memory.
 */
function endpointResolution(options: TranslateOptions, module: ResolvingModule, resolvingBlocks: number, ipv6: boolean): { endpointResolution?: EndpointResolution } {
  const resolver = options.endpointResolver;
  if (resolver === undefined || !resolvesEndpoints(options)) return {};
  const megabytes = Math.max(1, Math.ceil((resolvingBlocks * 64) / 1024));
  return { endpointResolution: { resolver: resolver.address, zone: `i2n_${module}_endpoints`, zoneSize: `${megabytes}m`, ipv6 } };
}

function httpEndpointResolution(options: TranslateOptions, upstreams: readonly HttpUpstream[], ipv6: boolean): Pick<NginxConfig['http'], 'endpointResolution'> {
  const { endpointResolution: found } = endpointResolution(options, 'http', upstreams.filter((u) => u.resolves).length, ipv6);
  const port = options.endpointResolver?.noEndpointsPort;
  return found && port !== undefined ? { endpointResolution: { ...found, noEndpointsListen: `127.0.0.1:${port}` } } : {};
}

/** The upstream blocks, and the 500 server (503 over HTTP/2 for gRPC) when one of them weighs a share onto it. */
function upstreamsWithErrorServer(upstreams: HttpUpstream[], runDir: string): Pick<NginxConfig['http'], 'upstreams' | 'errorSocket' | 'grpcErrorSocket'> {
  const socketIfUsed = (address: string) => (upstreams.some((u) => u.servers.some((s) => s.address === address)) ? address.slice('unix:'.length) : undefined);
  const errorSocket = socketIfUsed(internalErrorServer(runDir));
  const grpcErrorSocket = socketIfUsed(internalGrpcErrorServer(runDir));
  return { upstreams, ...(errorSocket !== undefined && { errorSocket }), ...(grpcErrorSocket !== undefined && { grpcErrorSocket }) };
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
