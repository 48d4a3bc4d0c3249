import { X509Certificate, createHash } from 'node:crypto';
import type { ResourceRef } from '../model/diagnostics.js';
import type { Location, NginxConfig, OwnPortServers, PlainHttpAction, ProxySsl, SniRoute, StreamService, VirtualHost } from '../model/nginx.js';
import { compareStrings } from '../model/order.js';
import type { BackendShare, LocationOrigin, Provenance, ServicePortRef } from '../model/provenance.js';
import type { BuildResult } from '../build/build.js';

/**
 * The route table: what a config does, one row per (port, host, path), independent of nginx syntax.
 * Computed from the model's provenance and the build's served certificates; every report (routes,
 * diff, review page) starts from it.
 */

/** `tcp` and `udp`: a port forwarded to a Service port as a whole (TCP/UDP services ConfigMaps). */
export type RouteMode = 'passthrough' | 'terminate' | 'terminate+reencrypt' | 'http' | 'closed' | 'tcp' | 'udp';

export interface RouteBackend {
  /** `namespace/name` of the Service. */
  readonly service: string;
  readonly port: number;
  readonly weight: number;
  /** Empty when the address is assigned by the cluster (`assignedByCluster`). */
  readonly addresses: readonly string[];
  /** The Service has no cluster IP in the manifests: the API server assigns it when they are applied. */
  readonly assignedByCluster?: true;
}

export interface CaSummary {
  /** Relative path beside nginx.conf, or the system bundle's absolute path. */
  readonly file: string;
  /** Subject of the first certificate in the bundle; absent for a bundle outside the output. */
  readonly subject?: string;
  /** SHA-256 of the whole bundle, to tell a changed CA from an unchanged one. */
  readonly sha256?: string;
}

export interface BackendTls {
  readonly verify: boolean;
  /** Longest certificate chain accepted from the backend. */
  readonly verifyDepth: number;
  readonly ca?: CaSummary;
  /** Name verified and, when `sni` is on, sent as SNI. */
  readonly name?: string;
  readonly sni: boolean;
  /** `namespace/name` of the Secret whose client certificate is presented to the backend. */
  readonly clientCertificate?: string;
  /** `namespace/name` of the BackendTLSPolicy (Gateway API). */
  readonly policy?: string;
}

export interface RouteCertificate {
  /** `secret`: the host's own; `default`: the default certificate, for `defaultReason`. */
  readonly source: 'secret' | 'default';
  readonly secret?: string;
  /** The Secret is not in the input (manifests from git): where it is expected to come from. */
  readonly expectedFrom?: string;
  readonly defaultReason?: 'no-tls' | 'no-secret' | 'secret-invalid';
  readonly subject?: string;
  readonly issuer?: string;
  readonly dnsNames?: readonly string[];
  /** RFC 3339. */
  readonly notAfter?: string;
}

/** What a request over plain HTTP gets: a 308 to HTTPS, the backend, or a 308 unless a trusted proxy says HTTPS. */
export type PlainHttp = 'redirect' | 'serve' | 'redirect-unless-forwarded-https';

export interface RouteRow {
  /** Stable identity across two configs: port, host, path type and path. */
  readonly key: string;
  readonly port: number;
  /** Host name or `*.suffix`; empty for requests that match no host (the default server). */
  readonly host: string;
  /** Empty for routes chosen by SNI alone (passthrough, Gateway TLS listeners). */
  readonly path: string;
  readonly pathType?: LocationOrigin['pathType'];
  readonly mode: RouteMode;
  readonly backends: readonly RouteBackend[];
  /** Summed weight of backends that cannot be used: that share of connections is closed. */
  readonly closedWeight: number;
  /** The route answers this status itself (its backend cannot be used safely). */
  readonly answers?: number;
  readonly backendTls?: BackendTls;
  readonly certificate?: RouteCertificate;
  readonly plainHttp?: PlainHttp;
  /** Strict-Transport-Security header value sent on HTTPS responses. */
  readonly hsts?: string;
  readonly claimant?: Provenance;
  readonly losers: readonly Provenance[];
  /** Gateway API: `namespace/name` of the Gateway and the listener's name. */
  readonly listener?: string;
  readonly notes: readonly string[];
}

export interface RouteTable {
  readonly httpPort: number;
  readonly httpsPort: number;
  readonly rows: readonly RouteRow[];
}

export function refName(ref: ResourceRef): string {
  return ref.namespace ? `${ref.namespace}/${ref.name}` : ref.name;
}

export function routeTable(result: Pick<BuildResult, 'model' | 'certificates'>): RouteTable {
  const { model } = result;
  const certificates = new Map(result.certificates.map((c) => [c.host, c]));
  const files = new Map(model.files.map((f) => [f.path, f.contents]));
  const caSummaries = new Map<string, CaSummary>();
  const caSummary = (file: string): CaSummary => {
    let summary = caSummaries.get(file);
    if (!summary) {
      summary = summarizeCa(file, files.get(file));
      caSummaries.set(file, summary);
    }
    return summary;
  };
  const context: RowContext = { model, certificates, caSummary };
  const httpsFront = model.stream.frontends.find((f) => f.port === model.http.httpsPort);
  const tlsElsewhere = new Map(
    (httpsFront?.routes ?? []).filter((r) => r.origin && r.origin.destination.kind !== 'http').map((r) => [r.serverName, r]),
  );

  const rows: RouteRow[] = [];
  for (const host of model.http.virtualHosts) rows.push(...virtualHostRows(host, tlsElsewhere.get(host.serverName), context));
  rows.push(...locationRows('', model.http.defaultServer.locations, { tlsLosers: [], mode: 'http', port: model.http.httpPort, notes: [] }, context));
  for (const own of model.http.ownPorts ?? []) rows.push(...ownPortRows(own, context));
  for (const frontend of model.stream.frontends) {
    for (const route of frontend.routes) {
      const row = sniRow(frontend.port, route, context);
      if (row) rows.push(row);
    }
  }
  rows.push(...model.stream.services.flatMap(streamServiceRow));
  return { httpPort: model.http.httpPort, httpsPort: model.http.httpsPort, rows: withUniqueKeys(rows.sort(compareRows)) };
}

/** The rows of a port Gateway listeners have to themselves: its hosts, with that port on both sides. */
function ownPortRows(own: OwnPortServers, context: RowContext): RouteRow[] {
  const model = { ...context.model, http: { ...context.model.http, httpPort: own.port, httpsPort: own.port } };
  const portContext = { ...context, model };
  return [
    ...own.virtualHosts.flatMap((host) => virtualHostRows(host, undefined, portContext)),
    ...locationRows('', own.defaultServer.locations, { tlsLosers: [], mode: own.tls ? 'terminate' : 'http', port: own.port, notes: [] }, portContext),
  ];
}

interface RowContext {
  readonly model: NginxConfig;
  readonly certificates: ReadonlyMap<string, BuildResult['certificates'][number]>;
  readonly caSummary: (file: string) => CaSummary;
}

interface HostSide {
  readonly tlsLosers: readonly Provenance[];
  readonly mode: 'http' | 'terminate';
  readonly port: number;
  readonly certificate?: RouteCertificate;
  readonly hsts?: string;
  readonly notes: readonly string[];
}

function virtualHostRows(host: VirtualHost, tlsElsewhere: SniRoute | undefined, context: RowContext): RouteRow[] {
  const { http } = context.model;
  const source = host.origin?.certificate;
  const ownTls = host.tls !== undefined && source !== undefined && !(source.kind === 'default' && source.reason === 'no-tls');
  const notes: string[] = [];
  if (host.tls === undefined) notes.push('TLS for this host is passed through by SNI: plain HTTP only here');
  if (ownTls && tlsElsewhere) {
    const owner = tlsElsewhere.origin?.claim?.claimant.resource;
    notes.push(`TLS for this host goes to ${owner ? `${owner.kind} ${refName(owner)}` : 'another route'}: plain HTTP only here`);
  }
  const terminates = ownTls && !tlsElsewhere;
  const served = context.certificates.get(host.serverName);
  const certificate: RouteCertificate | undefined =
    host.tls === undefined || source === undefined
      ? undefined
      : {
          source: source.kind,
          ...(source.kind === 'secret'
            ? { secret: refName(source.secret), ...(source.expectedFrom !== undefined && { expectedFrom: source.expectedFrom }) }
            : { defaultReason: source.reason }),
          ...(served && { subject: served.subject, issuer: served.issuer, dnsNames: served.dnsNames, notAfter: served.notAfter }),
        };
  const side: HostSide = {
    // Ingresses whose claim on the host's TLS lost lost every terminated path of it.
    tlsLosers: terminates ? (host.origin?.claim.losers ?? []) : [],
    mode: terminates ? 'terminate' : 'http',
    port: terminates ? http.httpsPort : http.httpPort,
    ...(terminates && certificate && { certificate }),
    ...(terminates && host.hsts && http.hstsHeader !== undefined && { hsts: http.hstsHeader }),
    notes,
  };
  return locationRows(host.serverName, host.locations, side, context);
}

const acmeChallengePath = '/.well-known/acme-challenge/';

/** One row per Ingress path: the locations made from one path (Prefix gives two) have the same claimant and field. */
function locationRows(host: string, locations: readonly Location[], side: HostSide, context: RowContext): RouteRow[] {
  const groups = new Map<string, { origin: LocationOrigin; group: Location[] }>();
  for (const location of locations) {
    const origin = location.origin;
    if (!origin) continue;
    const id = `${provenanceKey(origin.claim.claimant)} ${origin.claim.claimant.field ?? ''} ${origin.pathType} ${origin.path}`;
    const entry = groups.get(id);
    if (entry) entry.group.push(location);
    else groups.set(id, { origin, group: [location] });
  }
  const rows: RouteRow[] = [];
  for (const { origin, group } of groups.values()) {
    // The ACME challenge location is added beside a redirecting one; the path's own location speaks for it.
    const main = group.find((l) => l.path !== acmeChallengePath || origin.path.startsWith(acmeChallengePath)) ?? group[0]!;
    const proxy = main.proxy;
    const reencrypt = side.mode === 'terminate' && proxy?.ssl !== undefined;
    rows.push({
      key: '',
      port: side.port,
      host,
      path: origin.path,
      pathType: origin.pathType,
      mode: reencrypt ? 'terminate+reencrypt' : side.mode,
      backends: proxy?.service ? [httpBackend(proxy.service, proxy.resolve, proxy.upstream, context.model)] : [],
      closedWeight: 0,
      ...(!proxy && { answers: main.returnStatus ?? 503 }),
      ...(proxy?.ssl && { backendTls: proxyBackendTls(proxy.ssl, context) }),
      ...(side.certificate && { certificate: side.certificate }),
      plainHttp: plainHttp(main.plainHttp),
      ...(side.hsts !== undefined && { hsts: side.hsts }),
      claimant: origin.claim.claimant,
      losers: uniqueProvenance([...group.flatMap((l) => l.origin?.claim.losers ?? []), ...side.tlsLosers]).filter(
        (l) => provenanceKey(l) !== provenanceKey(origin.claim.claimant),
      ),
      notes: side.notes,
    });
  }
  return rows;
}

export function provenanceKey(provenance: Provenance): string {
  return `${provenance.resource.kind} ${refName(provenance.resource)}`;
}

function uniqueProvenance(all: readonly Provenance[]): Provenance[] {
  const seen = new Set<string>();
  return all.filter((p) => {
    const key = provenanceKey(p);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function httpBackend(service: ServicePortRef, resolve: string | undefined, upstream: string, model: NginxConfig): RouteBackend {
  const addresses = resolve !== undefined ? [resolve] : (model.http.upstreams.find((u) => u.name === upstream)?.servers ?? []).map((s) => s.address);
  return routeBackend(service, 1, addresses);
}

/** The stand-in address of a Service whose cluster IP is assigned at apply time is not shown as one. */
function routeBackend(service: ServicePortRef, weight: number, addresses: readonly string[]): RouteBackend {
  const common = { service: `${service.namespace}/${service.name}`, port: service.port, weight };
  return service.addressAssignedByCluster ? { ...common, addresses: [], assignedByCluster: true } : { ...common, addresses };
}

function proxyBackendTls(ssl: ProxySsl, context: RowContext): BackendTls {
  return {
    verify: ssl.verify,
    verifyDepth: ssl.verifyDepth,
    ...(ssl.trustedCertificate !== undefined && { ca: context.caSummary(ssl.trustedCertificate) }),
    ...(ssl.name !== undefined && { name: ssl.name }),
    sni: ssl.serverName,
    ...(ssl.clientCertificate && ssl.secret && { clientCertificate: refName(ssl.secret) }),
  };
}

function plainHttp(action: PlainHttpAction): PlainHttp {
  if (action.redirect && action.serve) return 'redirect-unless-forwarded-https';
  return action.redirect ? 'redirect' : 'serve';
}

function sniRow(port: number, route: SniRoute, context: RowContext): RouteRow | undefined {
  const origin = route.origin;
  if (!origin || origin.destination.kind === 'http') return undefined;
  const destination = origin.destination;
  const base = {
    key: '',
    port,
    host: route.serverName,
    path: '',
    ...(origin.claim && { claimant: origin.claim.claimant }),
    losers: origin.claim?.losers ?? [],
    ...(origin.listener && { listener: `${refName(origin.listener.gateway)} ${origin.listener.name}` }),
  };
  if (destination.kind === 'closed') {
    return { ...base, mode: 'closed', backends: [], closedWeight: 0, notes: ['a listener hostname no route claims: connections are closed'] };
  }
  const backends = destination.backends.map(shareBackend);
  const notes = backends.length === 0 ? ['no usable backend: connections are closed'] : [];
  if (destination.kind === 'passthrough') {
    return { ...base, mode: 'passthrough', backends, closedWeight: destination.rejectedWeight, notes };
  }
  const served = context.certificates.get(route.serverName);
  const policy = destination.backendTls;
  return {
    ...base,
    mode: policy ? 'terminate+reencrypt' : 'terminate',
    backends,
    closedWeight: destination.rejectedWeight,
    ...(policy && {
      backendTls: {
        verify: true,
        verifyDepth: policy.verifyDepth,
        ca: context.caSummary(policy.trustedCertificate),
        name: policy.name,
        sni: true,
        policy: refName(policy.policy),
      },
    }),
    ...(served && {
      certificate: { source: 'secret', subject: served.subject, issuer: served.issuer, dnsNames: served.dnsNames, notAfter: served.notAfter },
    }),
    notes,
  };
}

function streamServiceRow(service: StreamService): RouteRow[] {
  const origin = service.origin;
  if (!origin) return [];
  const notes = [
    ...(service.acceptProxyProtocol ? ['reads a PROXY protocol header from clients'] : []),
    ...(service.sendProxyProtocol ? ['sends a PROXY protocol header to the backend'] : []),
  ];
  return [
    {
      key: '',
      port: service.port,
      host: '',
      path: '',
      mode: service.protocol,
      backends: [shareBackend(origin.backend)],
      closedWeight: 0,
      claimant: origin.entry,
      losers: [],
      notes,
    },
  ];
}

function shareBackend(share: BackendShare): RouteBackend {
  return routeBackend(share.service, share.weight, share.addresses);
}

/** The first certificate of a CA bundle written beside nginx.conf; a bundle from elsewhere is named only. */
function summarizeCa(file: string, pem: string | undefined): CaSummary {
  if (pem === undefined) return { file };
  const sha256 = createHash('sha256').update(pem).digest('hex');
  const first = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/.exec(pem)?.[0];
  try {
    return { file, ...(first && { subject: new X509Certificate(first).subject.replace(/\n/g, ', ') }), sha256 };
  } catch {
    return { file, sha256 };
  }
}

const pathTypeOrder: Record<string, number> = { Exact: 0, Prefix: 1, ImplementationSpecific: 2, defaultBackend: 3 };

function compareRows(a: RouteRow, b: RouteRow): number {
  return (
    a.port - b.port ||
    compareStrings(a.host, b.host) ||
    compareStrings(a.path, b.path) ||
    (pathTypeOrder[a.pathType ?? ''] ?? 4) - (pathTypeOrder[b.pathType ?? ''] ?? 4) ||
    compareStrings(a.claimant ? refName(a.claimant.resource) : '', b.claimant ? refName(b.claimant.resource) : '')
  );
}

/** `port host pathType path`; a second row with the same identity (not expected) gets `#2`, and so on. */
function withUniqueKeys(rows: readonly RouteRow[]): RouteRow[] {
  const seen = new Map<string, number>();
  return rows.map((row) => {
    const identity = `${row.port} ${row.host} ${row.pathType ?? (row.mode === 'tcp' || row.mode === 'udp' ? row.mode : 'sni')} ${row.path}`;
    const count = (seen.get(identity) ?? 0) + 1;
    seen.set(identity, count);
    return { ...row, key: count === 1 ? identity : `${identity} #${count}` };
  });
}
