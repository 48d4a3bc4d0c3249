import type { Location, PlainHttpAction, ServerClientCertificate, VirtualHost } from '../../model/nginx.js';
import type { TlsFiles } from '../../model/files.js';
import type { CertificateSource, Provenance } from '../../model/provenance.js';
import type { Diagnostic, FieldPath } from '../../model/diagnostics.js';
import type { SourceObject } from '../../sources/snapshot.js';
import type { ResolvedBackend } from '../backends.js';
import { defaultRedirectProblem, withoutDefaultRedirect } from './ingress.js';
import type { IngressContribution, PassthroughClaim, RouteClaim, TlsClaim } from './claims.js';
import { byString, compareAge, groupBy } from '../settle/precedence.js';
import { Reporter, resourceName } from '../report.js';
import type { SecretEffects, SecretFiles } from '../secrets/secret-files.js';
import type { HostClaimant, HostOwnership } from '../settle/ownership.js';
import { losersOf, provenanceOf } from '../settle/provenance.js';
import { addsResponseHeaders } from './behaviour.js';
import { literalDollarVariable } from './header-configmaps.js';
import { splitWithCanary } from './canary.js';
import type { CanaryClaim } from './claims.js';
import { HttpExtensionRegistry } from './extensions.js';
import { markShadowedLocations } from '../settle/shadowed-locations.js';
import { withRequestDispatch } from '../settle/request-dispatch.js';
import { withFields } from '../../model/objects.js';
import { compareStrings } from '../../model/order.js';
import { SortedMemo } from '../memo/sorted-memo.js';
import { withServerTls } from './server-tls.js';
import type { ResourceChangeCache } from '../memo/resource-changes.js';
import type { Resources } from '../resources.js';

export interface HostSettings {
  /** ConfigMap `ssl-redirect`: the default for hosts with TLS. */
  readonly sslRedirect: boolean;
  /** ConfigMap `use-forwarded-headers`: a trusted load balancer may say the client used HTTPS. */
  readonly trustForwardedProto: boolean;
  readonly hsts: boolean;
  readonly defaultTls: TlsFiles;
  /** Host names Gateway API routes claim on the HTTPS port: weak claims (aliases) yield to them. */
  readonly routeHostnames: ReadonlySet<string>;
}

export interface PassthroughRoute {
  readonly host: string;
  /** Absent when the winner's backend cannot be used: connections for the host are closed. */
  readonly backend?: ResolvedBackend;
  readonly comment: string;
  /** The Ingress that won the host. */
  readonly owner: SourceObject;
  /** The winning claim's field (the rule's host). */
  readonly field: FieldPath;
  /** Ingresses whose claim on the host's TLS lost to this one. */
  readonly losers: readonly Provenance[];
  /** Plain HTTP to the host is redirected to HTTPS (the winner's `force-ssl-redirect` or `ssl-redirect`). */
  readonly redirectsPlainHttp?: boolean;
}

/** A host whose TLS the http servers terminate, and the Ingress that claimed it first. */
export interface TerminatedHost {
  readonly host: string;
  readonly owner: SourceObject;
  /** The host has `spec.tls` (its own certificate, or the default one by choice), not only rules. */
  readonly declaresTls: boolean;
}

export interface MergedHosts {
  readonly virtualHosts: readonly VirtualHost[];
  /** Every terminated host, sorted: for settling SNI names with Gateway API routes on the same port. */
  readonly terminated: readonly TerminatedHost[];
  readonly defaultLocations: readonly Location[];
  readonly passthrough: readonly PassthroughRoute[];
  /** Backends that canaries added to locations: they need upstream blocks too. */
  readonly canaryBackends: readonly ResolvedBackend[];
  /** http-level groups (zones, maps) that the rendered locations refer to. */
  readonly references: readonly string[];
}

export const acmeChallengePrefix = '/.well-known/acme-challenge/';

/** Every claim on one host, each list in the order of the contributions. */
export interface HostClaims {
  readonly passthrough: PassthroughClaim[];
  readonly tls: TlsClaim[];
  readonly routes: RouteClaim[];
  readonly canaries: CanaryClaim[];
  /** Route and TLS claims together, in the order a contribution lists them (its routes, then its TLS). */
  readonly named: (RouteClaim | TlsClaim)[];
}

/** What settling one host gives; the host `''` (rules without host) gives the default server's locations. */
export interface SettledHost {
  readonly virtualHost?: VirtualHost;
  readonly defaultLocations?: readonly Location[];
  readonly passthrough?: PassthroughRoute;
  readonly terminated?: TerminatedHost;
  readonly canaryBackends: readonly ResolvedBackend[];
  readonly references: readonly string[];
}

/** Where settling a host reports to and records what it defines. */
export interface HostScope {
  readonly report: Reporter;
  readonly extensions: HttpExtensionRegistry;
  readonly secrets: SecretFiles;
}

/**
 * Settles what several Ingresses ask of the same host, host by host: nothing one host's claims decide
 * depends on another host's. The oldest claim on a host's TLS decides whether it is passed through or
 * terminated, whichever mode a newer Ingress asks for; for one location or one host's certificate the
 * oldest Ingress wins. Losers, and Ingresses whose host another one takes over or shares across
 * namespaces, are told which Ingress they deal with. Canaries then split the locations of their main
 * Ingresses. With a memo, a host whose claims are the same objects as in the last build is not settled
 * again.
 */
export function mergeHosts(
  contributions: readonly IngressContribution[],
  settings: HostSettings,
  secrets: SecretFiles,
  extensions: HttpExtensionRegistry,
  report: Reporter,
  memo?: HostSettleMemo,
): MergedHosts {
  const scope: HostScope = { report, extensions, secrets };
  const settleOne = memo ? memo.begin(settings, scope) : (host: string, claims: HostClaims) => settleHost(host, claims, settings, scope);
  const virtualHosts: VirtualHost[] = [];
  const passthrough: PassthroughRoute[] = [];
  const terminated: TerminatedHost[] = [];
  const canaryBackends: ResolvedBackend[] = [];
  const references: string[] = [];
  let defaultLocations: readonly Location[] = [];
  const { byHost, hosts } = memo ? memo.claims.of(contributions) : claimsInHostOrder(contributions);
  const reported = report.diagnostics.length;
  for (const host of hosts) {
    const settled = settleOne(host, byHost.get(host)!);
    if (settled.virtualHost) virtualHosts.push(settled.virtualHost);
    if (settled.defaultLocations) defaultLocations = settled.defaultLocations;
    if (settled.passthrough) passthrough.push(settled.passthrough);
    if (settled.terminated) terminated.push(settled.terminated);
    canaryBackends.push(...settled.canaryBackends);
    references.push(...settled.references);
  }
  sayPathConflictsOnce(report, reported);
  return { virtualHosts, terminated, defaultLocations, passthrough: passthrough.sort(byString((r) => r.host)), canaryBackends, references };
}

/** The claims on each host (the host `''` always), and the hosts in name order. */
interface ClaimsInHostOrder {
  readonly byHost: ReadonlyMap<string, HostClaims>;
  readonly hosts: readonly string[];
}

function claimsInHostOrder(contributions: readonly IngressContribution[]): ClaimsInHostOrder {
  const byHost = new Map<string, HostClaims>();
  gatherClaims(contributions, byHost, () => true);
  if (!byHost.has('')) byHost.set('', noClaims());
  return { byHost, hosts: [...byHost.keys()].sort(compareStrings) };
}

function noClaims(): HostClaims {
  return { passthrough: [], tls: [], routes: [], canaries: [], named: [] };
}

/** Adds the claims of `contributions` on the hosts `wanted` to `byHost`, in the order of the contributions. */
function gatherClaims(contributions: readonly IngressContribution[], byHost: Map<string, HostClaims>, wanted: (host: string) => boolean): void {
  const of = (host: string): HostClaims => {
    let claims = byHost.get(host);
    if (!claims) byHost.set(host, (claims = noClaims()));
    return claims;
  };
  for (const contribution of contributions) {
    for (const claim of contribution.passthrough) if (wanted(claim.host)) of(claim.host).passthrough.push(claim);
    for (const claim of contribution.routes) {
      if (!wanted(claim.host)) continue;
      const claims = of(claim.host);
      claims.routes.push(claim);
      claims.named.push(claim);
    }
    for (const claim of contribution.tls) {
      if (!wanted(claim.host)) continue;
      const claims = of(claim.host);
      claims.tls.push(claim);
      claims.named.push(claim);
    }
    for (const claim of contribution.canaries) if (wanted(claim.host)) of(claim.host).canaries.push(claim);
  }
}

function hostsOf(contribution: IngressContribution, into: Set<string>): void {
  for (const claims of [contribution.passthrough, contribution.routes, contribution.tls, contribution.canaries]) for (const claim of claims) into.add(claim.host);
}

/**
 * The claims on each host, kept from build to build: only the hosts that a contribution new to this
 * build or gone since the last one names are gathered again, and the others keep the same `HostClaims`,
 * which the settle memo then knows by identity. Gathering every host's claims anew was 26 ms of a
 * one-Ingress rebuild at 10,000 hosts. The claim memo gives an unchanged Ingress the same contribution,
 * and contributions keep their order (by age), so the claims on a host no changed contribution names are
 * the same claims in the same order.
 */
export class HostClaimsMemo {
  private contributions: ReadonlySet<IngressContribution> = new Set();
  private last: ClaimsInHostOrder = { byHost: new Map(), hosts: [] };
  /** The hosts in name order when some come or go: sorting 10,000 names was 8 ms. */
  private readonly order = new SortedMemo(compareStrings);

  of(contributions: readonly IngressContribution[]): ClaimsInHostOrder {
    const current = new Set(contributions);
    const touched = new Set<string>();
    for (const contribution of contributions) if (!this.contributions.has(contribution)) hostsOf(contribution, touched);
    for (const contribution of this.contributions) if (!current.has(contribution)) hostsOf(contribution, touched);
    const byHost = new Map(this.last.byHost);
    for (const host of touched) byHost.delete(host);
    gatherClaims(contributions, byHost, (host) => touched.has(host));
    if (!byHost.has('')) byHost.set('', noClaims());
    // `''` is always a host: in the first build it comes though no claim names it.
    const comeOrGone = [...touched, ''].some((host) => byHost.has(host) !== this.last.byHost.has(host));
    const hosts = comeOrGone ? this.order.sorted(new Set(byHost.keys())) : this.last.hosts;
    this.contributions = current;
    this.last = { byHost, hosts };
    return this.last;
  }
}

/**
 * A losing path is told once, on the first host in name order where it lost: the claims of an alias
 * share their path's field. Settling host by host tells it on each; the later ones go.
 */
function sayPathConflictsOnce(report: Reporter, from: number): void {
  const told = new Set<string>();
  const diagnostics = report.diagnostics;
  let kept = from;
  for (let i = from; i < diagnostics.length; i++) {
    const diagnostic = diagnostics[i]!;
    if (diagnostic.code === 'path-conflict') {
      const once = `${diagnostic.resource?.kind}/${diagnostic.resource?.namespace}/${diagnostic.resource?.name} ${diagnostic.field ?? ''}`;
      if (told.has(once)) continue;
      told.add(once);
    }
    diagnostics[kept++] = diagnostic;
  }
  diagnostics.length = kept;
}

/** One host's claims settled (see `mergeHosts`). */
function settleHost(host: string, claims: HostClaims, settings: HostSettings, scope: HostScope): SettledHost {
  const { report, extensions, secrets } = scope;
  const weak = claims.named.some((c) => c.weak);
  const yielded =
    weak && (settings.routeHostnames.has(host) || claims.passthrough.length > 0 || claims.named.some((c) => !c.weak));
  if (yielded) reportYieldedWeakClaims(host, claims.named, report);
  const keep = (claim: RouteClaim | TlsClaim) => !yielded || !claim.weak;
  const routeClaims = claims.routes.filter(keep);
  const modes = settleTlsModes(claims.passthrough, claims.tls.filter(keep), report);
  const tls = settleTls(modes.terminated, secrets, settings, report).get(host);
  for (const definition of routeClaims.flatMap((c) => c.definitions ?? [])) extensions.define(definition.reference, definition.blocks);
  const settled = settleRoutes(routeClaims, report);
  const routes = withRequestDispatch(settled.byHost, extensions, report);
  const canaryBackends = attachCanaries(routes, claims.canaries, extensions, report);
  const passthrough = modes.passthrough[0];
  if (passthrough) reportPassthroughTakeovers(passthrough, routeClaims, report);
  reportSharedHosts(routes, modes.terminated, report);
  reportRegexHosts(routes, report);
  const winners = routes.get(host) ?? [];
  if (host === '') {
    const defaultLocations = toLocations(winners, false, false, settings, settled.losers);
    return { defaultLocations, canaryBackends, references: defaultLocations.flatMap(locationReferences) };
  }
  if (!routes.has(host) && !tls && !passthrough) return { canaryBackends, references: [] };
  const settledClaims = { tls, passthrough, winners, routeClaims, terminated: modes.terminated, terminatedLosers: modes.terminatedLosers.get(host) ?? [] };
  const ingresses = new Map(claims.named.filter((c) => c.ingress.kind === 'Ingress').map((c) => [`${c.ingress.metadata.namespace}/${c.ingress.metadata.name}`, c.ingress]));
  const virtualHost = withServerTls(hostOf(host, settledClaims, settings, report, settled.losers), ingresses, report);
  return {
    virtualHost,
    ...(passthrough && { passthrough }),
    ...(virtualHost.tls && terminatedHost(host, routeClaims, modes.terminated)),
    canaryBackends,
    references: virtualHost.locations.flatMap(locationReferences),
  };
}

/** What one host's server is made from, once its claims are settled. */
interface SettledClaims {
  readonly tls: SettledTls | undefined;
  readonly passthrough: PassthroughRoute | undefined;
  readonly winners: readonly RouteClaim[];
  readonly routeClaims: readonly RouteClaim[];
  readonly terminated: readonly TlsClaim[];
  readonly terminatedLosers: readonly PassthroughClaim[];
}

function hostOf(host: string, claims: SettledClaims, settings: HostSettings, report: Reporter, routeLosers: ReadonlyMap<string, RouteClaim[]>): VirtualHost {
  const { tls: settled, passthrough, winners } = claims;
  const hostTls = settled?.files;
  const hsts = settings.hsts && hostTls !== undefined;
  const clientCertificate = passthrough ? undefined : settleClientCertificates(host, winners, report);
  const owner = [...claims.terminated, ...claims.routeClaims].sort((a, b) => compareAge(a.ingress, b.ingress))[0];
  const certificate: CertificateSource = settled?.certificate ?? { kind: 'default', reason: 'no-tls' };
  const tlsLosers = [...(settled?.losers ?? []), ...claims.terminatedLosers];
  return {
    serverName: host,
    ...(!passthrough && { tls: hostTls ?? settings.defaultTls }),
    hsts,
    // Only the host's own spec.tls implies a redirect: a passthrough claim of another Ingress must not
    // send this Ingress's plain-HTTP clients to its backend.
    locations:
      passthrough && winners.length === 0 && passthrough.redirectsPlainHttp
        ? [passthroughRedirect(host)]
        : toLocations(clientCertificate ? clientCertificate.winners : winners, hostTls !== undefined, hsts, settings, routeLosers),
    ...(clientCertificate?.server && { clientCertificate: clientCertificate.server }),
    ...(owner && {
      origin: {
        claim: {
          claimant: provenanceOf(owner.ingress, owner.field),
          losers: losersOf(owner.ingress, tlsLosers.map((l) => ({ object: l.ingress, path: l.field }))),
        },
        ...(!passthrough && { certificate }),
      },
    }),
  };
}

/** A settled host's entry of the last build. */
interface SettledEntry {
  readonly claims: HostClaims;
  readonly routeHostname: boolean;
  readonly value: SettledHost;
  readonly diagnostics: readonly Diagnostic[];
  readonly extensions: HttpExtensionRegistry;
  readonly secrets: SecretEffects;
}

/**
 * Each host settled in the last build, by name: settled again only when a claim on it is not the same
 * object (the claim memo keeps an unchanged Ingress's claims), the host settings changed, a Gateway
 * route began or ceased to claim it, or a Secret it read is not the same. What settling it reported,
 * defined and did with Secrets is done again from the record. The cluster mode keeps one across builds.
 */
export class HostSettleMemo {
  private last = new Map<string, SettledEntry>();
  private settings = '';
  /** The resources the entries of `last` hold for. */
  private resources: Resources | undefined;
  readonly claims = new HostClaimsMemo();

  constructor(private readonly changes: ResourceChangeCache) {}

  /** Starts a build: returns its settler, by host. */
  begin(settings: HostSettings, scope: HostScope): (host: string, claims: HostClaims) => SettledHost {
    const read = JSON.stringify([settings.sslRedirect, settings.trustForwardedProto, settings.hsts, settings.defaultTls]);
    const last = read === this.settings ? this.last : new Map<string, SettledEntry>();
    const changes = this.changes.between(this.resources, scope.secrets.resources);
    const next = new Map<string, SettledEntry>();
    this.settings = read;
    this.last = next;
    this.resources = scope.secrets.resources;
    return (host, claims) => {
      const routeHostname = settings.routeHostnames.has(host);
      const earlier = last.get(host);
      if (earlier && earlier.routeHostname === routeHostname && sameClaims(earlier.claims, claims) && scope.secrets.stillHolds(earlier.secrets, changes)) {
        next.set(host, earlier);
        if (earlier.diagnostics.length > 0) scope.report.diagnostics.push(...earlier.diagnostics);
        scope.extensions.absorb(earlier.extensions);
        scope.secrets.replay(earlier.secrets);
        return earlier.value;
      }
      const own: HostScope = { report: new Reporter(), extensions: new HttpExtensionRegistry(), secrets: scope.secrets };
      const { value, effects } = scope.secrets.recording(() => settleHost(host, claims, settings, own));
      next.set(host, { claims, routeHostname, value, diagnostics: own.report.diagnostics, extensions: own.extensions, secrets: effects });
      scope.report.diagnostics.push(...own.report.diagnostics);
      scope.extensions.absorb(own.extensions);
      return value;
    };
  }
}

function sameClaims(a: HostClaims, b: HostClaims): boolean {
  if (a === b) return true;
  const same = (x: readonly unknown[], y: readonly unknown[]) => x.length === y.length && x.every((item, i) => item === y[i]);
  return same(a.passthrough, b.passthrough) && same(a.named, b.named) && same(a.canaries, b.canaries);
}

/** The http-level groups one rendered location refers to. */
function locationReferences(location: Location): string[] {
  const behaviour = location.behaviour;
  return [
    ...(location.proxy?.canary?.reference !== undefined ? [location.proxy.canary.reference] : []),
    ...(behaviour?.rateLimits.map((limit) => limit.zone) ?? []),
    ...(behaviour?.connectionLimit ? [behaviour.connectionLimit.zone] : []),
    ...(behaviour?.cors ? [behaviour.cors.preflight.slice(1)] : []),
    ...(behaviour?.refusedWhen ?? []),
    ...(behaviour?.stickyCookie?.references ?? []),
    ...(location.authEndpoint?.servedHost !== undefined ? [location.authEndpoint.servedHost] : []),
    ...((behaviour?.responseHeaders ?? []).some((header) => header.value.includes(`\${${literalDollarVariable}}`)) ? [literalDollarVariable] : []),
    ...(location.authEndpoint?.cache !== undefined ? [location.authEndpoint.cache.zone] : []),
    ...(location.dispatch?.references ?? []),
    ...(location.references ?? []),
  ];
}

function reportYieldedWeakClaims(host: string, named: readonly (RouteClaim | TlsClaim)[], report: Reporter): void {
  const told = new Set<string>();
  for (const claim of named) {
    if (!claim.weak || told.has(resourceName(claim.ingress))) continue;
    told.add(resourceName(claim.ingress));
    report.warning(
      'host-alias-taken',
      claim.ingress,
      `${claim.weak} asks for ${host}, which another resource claims; an alias never takes a host, so it is not served here`,
      claim.field,
    );
  }
}

/**
 * Canaries split the winning locations of their main Ingress: same host, path and path type, and the
 * same namespace (a canary never diverts another tenant's traffic). One canary per location: the oldest.
 */
function attachCanaries(
  routes: Map<string, RouteClaim[]>,
  canaries: readonly CanaryClaim[],
  extensions: HttpExtensionRegistry,
  report: Reporter,
): ResolvedBackend[] {
  const backends: ResolvedBackend[] = [];
  const used = new Map<string, CanaryClaim>();
  for (const canary of [...canaries].sort((a, b) => compareAge(a.ingress, b.ingress))) {
    const winners = routes.get(canary.host) ?? [];
    const mains = winners.filter((w) => w.ingress.kind === 'Ingress' && !w.fallback && !w.weak && w.ingressPath === canary.ingressPath && w.pathType === canary.pathType);
    const where = `${canary.host === '' ? 'rules without host' : `host ${canary.host}`} path ${canary.ingressPath} (${canary.pathType})`;
    if (mains.length === 0) {
      report.warning('canary-without-main', canary.ingress, `no Ingress routes ${where}, so this canary serves nothing there; a canary never claims a path by itself`, canary.field);
      continue;
    }
    for (const main of mains) {
      const index = winners.indexOf(main);
      if (main.ingress.metadata.namespace !== canary.ingress.metadata.namespace) {
        report.warning(
          'canary-other-namespace',
          canary.ingress,
          `${where} is routed by Ingress ${resourceName(main.ingress)} in another namespace; a canary only splits traffic of its own namespace, so it serves nothing there`,
          canary.field,
        );
        break;
      }
      const location = `${main.host} ${main.modifier} ${main.path}`;
      const earlier = used.get(location);
      if (earlier && earlier !== canary) {
        report.warning('canary-conflict', canary.ingress, `${where} is already split with canary Ingress ${resourceName(earlier.ingress)} (older, or first by namespace/name); this one is not used there`, canary.field);
        break;
      }
      used.set(location, canary);
      if (!main.proxy || !main.backend) {
        report.warning('canary-main-unavailable', canary.ingress, `the main Ingress ${resourceName(main.ingress)} cannot proxy ${where} (see its diagnostics), so nothing is split there`, canary.field);
        continue;
      }
      const split = splitWithCanary({ ...main, proxy: main.proxy, backend: main.backend }, canary, extensions);
      if (split.proxy === main.proxy) {
        report.warning('canary-takes-nothing', canary.ingress, `canary-weight is 0 and there is no canary-by-header or canary-by-cookie, so no request of ${where} goes to the canary`, canary.field);
        continue;
      }
      backends.push(split.canaryBackend);
      let proxy = split.proxy;
      if (proxy.pass.includes('$') && proxy.tuning?.redirect === 'default') {
        report.warning('proxy-redirect-default-ignored', main.ingress, defaultRedirectProblem, ['metadata', 'annotations', 'nginx.ingress.kubernetes.io/proxy-redirect-from']);
        proxy = withoutDefaultRedirect(proxy);
      }
      winners[index] = withFields(main, { proxy });
    }
  }
  return backends;
}

/** The claim without its proxy and behaviour: its location answers 503. */
function answering503(claim: RouteClaim): RouteClaim {
  const copy: { -readonly [Key in keyof RouteClaim]: RouteClaim[Key] } = { ...claim };
  delete copy.proxy;
  delete copy.behaviour;
  return copy;
}

/**
 * `auth-tls-*` needs the host's TLS server to ask for client certificates. A host has one client CA and
 * depth: the oldest Ingress that asks decides, and the locations of a newer Ingress that asks for a
 * different one answer 503 (they would otherwise accept certificates their CA never issued). The server
 * always asks with `optional_no_ca`, so only the locations that require a certificate check it.
 */
function settleClientCertificates(
  host: string,
  winners: readonly RouteClaim[],
  report: Reporter,
): { server?: ServerClientCertificate; winners: RouteClaim[] } {
  const asking = winners.filter((w) => w.clientCertificate).sort((a, b) => compareAge(a.ingress, b.ingress));
  const first = asking[0];
  if (!first?.clientCertificate) return { winners: [...winners] };
  const chosen = first.clientCertificate;
  const told = new Set<SourceObject>();
  const result = winners.map((winner) => {
    const wanted = winner.clientCertificate;
    if (!wanted || (wanted.caFile === chosen.caFile && wanted.crlFile === chosen.crlFile && wanted.depth === chosen.depth)) return winner;
    if (!told.has(winner.ingress)) {
      told.add(winner.ingress);
      report.error(
        'auth-tls-conflict',
        winner.ingress,
        `host ${host} verifies client certificates with Secret ${chosen.secret} (depth ${chosen.depth}) for Ingress ${resourceName(first.ingress)} (older, or first by namespace/name); this Ingress asks for Secret ${wanted.secret} (depth ${wanted.depth}), so its paths on ${host} answer 503`,
      );
    }
    return answering503(winner);
  });
  return {
    server: { caFile: chosen.caFile, ...(chosen.crlFile !== undefined && { crlFile: chosen.crlFile }), verify: 'optional_no_ca', depth: chosen.depth },
    winners: result,
  };
}

/** Every host this Ingress asks for, for `first-namespace-owns-host`. */
export function claimantsOf(contribution: IngressContribution): HostClaimant[] {
  return [...contribution.passthrough, ...contribution.tls, ...contribution.routes]
    .filter((claim) => claim.host !== '' && !('weak' in claim && claim.weak))
    .map((claim) => ({ host: claim.host, object: claim.ingress }));
}

/** `first-namespace-owns-host`: drops this Ingress's claims on hosts another namespace owns, saying so once per host. */
export function keepOwnedClaims(contribution: IngressContribution, ownership: HostOwnership): IngressContribution {
  const owned = <T extends { readonly host: string; readonly ingress: SourceObject }>(claim: T): boolean =>
    claim.host === '' || ownership.allows(claim.host, claim.ingress, `host ${claim.host}`, 'this Ingress\'s rules for it are not rendered');
  return {
    passthrough: contribution.passthrough.filter(owned),
    tls: contribution.tls.filter(owned),
    routes: contribution.routes.filter(owned),
    canaries: contribution.canaries,
  };
}

type ModeClaim = { readonly mode: 'passthrough'; readonly claim: PassthroughClaim } | { readonly mode: 'tls'; readonly claim: TlsClaim };

/**
 * One mode per host: the oldest Ingress that asks for the host's TLS (ssl-passthrough or spec.tls)
 * decides. A newer passthrough never takes a host an older Ingress terminates, nor the other way round.
 */
function settleTlsModes(
  passthrough: readonly PassthroughClaim[],
  tls: readonly TlsClaim[],
  report: Reporter,
): { passthrough: PassthroughRoute[]; terminated: TlsClaim[]; terminatedLosers: Map<string, PassthroughClaim[]> } {
  const claims: ModeClaim[] = [
    ...passthrough.map((claim) => ({ mode: 'passthrough' as const, claim })),
    ...tls.map((claim) => ({ mode: 'tls' as const, claim })),
  ];
  const routes: PassthroughRoute[] = [];
  const terminated: TlsClaim[] = [];
  const terminatedLosers = new Map<string, PassthroughClaim[]>();
  for (const [host, hostClaims] of groupBy(claims, (c) => c.claim.host)) {
    const sorted = [...hostClaims].sort((a, b) => compareAge(a.claim.ingress, b.claim.ingress));
    const first = sorted[0];
    if (!first) continue;
    if (first.mode === 'tls') {
      for (const loser of sorted) {
        if (loser.mode !== 'passthrough') continue;
        terminatedLosers.set(host, [...(terminatedLosers.get(host) ?? []), loser.claim]);
        report.warning(
          'passthrough-conflict',
          loser.claim.ingress,
          `host ${host} is terminated by Ingress ${resourceName(first.claim.ingress)} with spec.tls (older, or first by namespace/name); this ssl-passthrough claim is ignored`,
          loser.claim.field,
        );
      }
      terminated.push(...sorted.filter((c) => c.mode === 'tls').map((c) => c.claim as TlsClaim));
      continue;
    }
    const winner = first.claim;
    const losers: (PassthroughClaim | TlsClaim)[] = [];
    for (const loser of sorted.slice(1)) {
      if (loser.mode === 'tls') {
        losers.push(loser.claim);
        report.warning(
          'tls-shadowed-by-passthrough',
          loser.claim.ingress,
          `TLS for ${host} is passed through by SNI to ${passthroughTarget(winner)} by Ingress ${resourceName(winner.ingress)} (older, or first by namespace/name), so this certificate is not used`,
          loser.claim.field,
        );
      } else if (loser.claim.backend?.upstream !== winner.backend?.upstream) {
        losers.push(loser.claim);
        report.warning(
          'passthrough-conflict',
          loser.claim.ingress,
          `host ${host} is already passed through to ${passthroughTarget(winner)} by Ingress ${resourceName(winner.ingress)} (older, or first by namespace/name); this claim is ignored`,
          loser.claim.field,
        );
      }
    }
    routes.push({
      host,
      ...(winner.backend && { backend: winner.backend }),
      comment: `Ingress ${resourceName(winner.ingress)}`,
      owner: winner.ingress,
      field: winner.field,
      losers: losersOf(winner.ingress, losers.map((l) => ({ object: l.ingress, path: l.field }))),
      ...(winner.redirectsPlainHttp && { redirectsPlainHttp: true }),
    });
  }
  return { passthrough: routes.sort(byString((r) => r.host)), terminated, terminatedLosers };
}

/** The certificate a terminated host is served with, why, and the claims on it that lost. */
interface SettledTls {
  readonly files: TlsFiles;
  readonly certificate: CertificateSource;
  readonly losers: readonly TlsClaim[];
}

function settleTls(
  claims: readonly TlsClaim[],
  secrets: SecretFiles,
  settings: HostSettings,
  report: Reporter,
): Map<string, SettledTls> {
  const result = new Map<string, SettledTls>();
  for (const [host, hostClaims] of groupBy(claims, (c) => c.host)) {
    const [winner, ...losers] = [...hostClaims].sort((a, b) => compareAge(a.ingress, b.ingress));
    if (!winner) continue;
    const declaredBy = provenanceOf(winner.ingress, winner.field);
    const differing = losers.filter((loser) => !sameSecret(loser, winner));
    for (const loser of differing) {
      report.warning(
        'tls-conflict',
        loser.ingress,
        `the certificate for ${host} comes from Ingress ${resourceName(winner.ingress)} (older, or first by namespace/name); this one is ignored`,
        loser.field,
      );
    }
    if (!winner.secret) {
      result.set(host, { files: settings.defaultTls, certificate: { kind: 'default', reason: 'no-secret', declaredBy }, losers: differing });
      continue;
    }
    const checked = secrets.serverCertificate(winner.secret, host);
    const secret = { kind: 'Secret', namespace: winner.secret.namespace, name: winner.secret.name };
    const expectedFrom = checked.ok ? undefined : secrets.expectedFromCluster(winner.secret, winner.ingress);
    if (checked.ok) {
      result.set(host, { files: checked.value, certificate: { kind: 'secret', secret, declaredBy }, losers: differing });
    } else if (expectedFrom !== undefined) {
      report.warning(
        'tls-secret-from-cluster',
        winner.ingress,
        `${checked.problem}: ${expectedFrom}. nginx -t checks ${host} with a stand-in certificate (--strict: an error)`,
        winner.field,
      );
      const files = secrets.standInCertificate(winner.secret);
      result.set(host, { files, certificate: { kind: 'secret', secret, declaredBy, expectedFrom }, losers: differing });
    } else if (winner.weak) {
      report.warning('alias-certificate', winner.ingress, `${checked.problem}; ${winner.weak} ${host} is served with the default certificate`, winner.field);
      result.set(host, { files: settings.defaultTls, certificate: { kind: 'default', reason: 'secret-invalid', declaredBy }, losers: differing });
    } else {
      report.error('tls-secret-invalid', winner.ingress, `${checked.problem}; ${host} is served with the default certificate`, winner.field);
      result.set(host, { files: settings.defaultTls, certificate: { kind: 'default', reason: 'secret-invalid', declaredBy }, losers: differing });
    }
  }
  return result;
}

/**
 * A passthrough host that other Ingresses also route: their HTTPS now reaches the passthrough backend,
 * which both sides should know (it is how one tenant would take another's TLS).
 */
function reportPassthroughTakeovers(route: PassthroughRoute, routes: readonly RouteClaim[], report: Reporter): void {
  const others = uniqueIngresses(routes.map((r) => r.ingress)).filter((i) => i !== route.owner);
  if (others.length === 0) return;
  for (const other of others) {
    report.warning(
      'host-tls-passed-through',
      other,
      `TLS for ${route.host} is passed through untouched to ${passthroughTarget(route)} by Ingress ${resourceName(route.owner)} (ssl-passthrough), so this Ingress's paths for ${route.host} are served over plain HTTP only`,
    );
  }
  report.warning(
    'host-tls-passed-through',
    route.owner,
    `this ssl-passthrough takes all TLS for ${route.host}, which ${others.map((o) => `Ingress ${resourceName(o)}`).join(', ')} also route${others.length === 1 ? 's' : ''}; their paths for it are served over plain HTTP only`,
  );
}

/**
 * Paths of one host from Ingresses in several namespaces: the namespace that claimed the host first
 * is told who adds to it, and each adding Ingress is told whose host it is. (The ConfigMap key
 * `first-namespace-owns-host` refuses such additions instead.)
 */
function reportSharedHosts(routes: ReadonlyMap<string, readonly RouteClaim[]>, tls: readonly TlsClaim[], report: Reporter): void {
  const tlsByHost = groupBy(tls, (c) => c.host);
  for (const [host, winners] of routes) {
    if (host === '') continue;
    const claimants = [...winners.map((w) => w.ingress), ...(tlsByHost.get(host) ?? []).map((c) => c.ingress)];
    const owner = [...claimants].sort(compareAge)[0];
    if (!owner) continue;
    const guests = groupBy(
      winners.filter((w) => w.ingress.metadata.namespace !== owner.metadata.namespace),
      (w) => resourceName(w.ingress),
    );
    const acme = acmeChallengeRoute(winners);
    for (const guestRoutes of guests.values()) {
      const guest = guestRoutes[0]!.ingress;
      const paths = describePaths(guestRoutes);
      const acmeNote =
        acme?.ingress === guest ? ' It also answers ACME HTTP-01 challenges for the host, so certificates for the host can be issued to it.' : '';
      report.warning(
        'host-shared-across-namespaces',
        guest,
        `host ${host} belongs to namespace ${owner.metadata.namespace} (Ingress ${resourceName(owner)} claimed it first); this Ingress adds ${paths} to it.${acmeNote}`,
      );
      report.warning(
        'host-shared-across-namespaces',
        owner,
        `Ingress ${resourceName(guest)} from namespace ${guest.metadata.namespace} adds ${paths} to host ${host}, which this Ingress claimed first.${acmeNote} Set the ConfigMap key first-namespace-owns-host to refuse that`,
      );
    }
  }
}

function describePaths(routes: readonly RouteClaim[]): string {
  const paths = [...new Set(routes.map((r) => (r.fallback ? 'its defaultBackend' : r.ingressPath)))].sort();
  return `path${paths.length === 1 ? '' : 's'} ${paths.join(', ')}`;
}

/** The route that serves `/.well-known/acme-challenge/…` on a host: nginx's longest prefix location. */
function acmeChallengeRoute(winners: readonly RouteClaim[]): RouteClaim | undefined {
  const probe = `${acmeChallengePrefix}token`;
  return winners
    .filter((w) => w.modifier === '' && probe.startsWith(w.path))
    .sort((a, b) => b.path.length - a.path.length)[0];
}

function passthroughTarget(claim: { readonly backend?: ResolvedBackend }): string {
  return claim.backend?.description ?? 'nowhere (its backend cannot be used, so connections are closed)';
}

function uniqueIngresses(ingresses: readonly SourceObject[]): SourceObject[] {
  return [...new Set(ingresses)].sort(compareAge);
}

/** A terminated host with the Ingress that claimed it first (a rule or spec.tls), for the SNI front. */
function terminatedHost(host: string, routes: readonly RouteClaim[], tls: readonly TlsClaim[]): { terminated?: TerminatedHost } {
  const owner = [...routes.map((r) => r.ingress), ...tls.map((c) => c.ingress)].sort(compareAge)[0];
  return owner ? { terminated: { host, owner, declaresTls: tls.length > 0 } } : {};
}

function sameSecret(a: TlsClaim, b: TlsClaim): boolean {
  return a.secret?.namespace === b.secret?.namespace && a.secret?.name === b.secret?.name;
}

/**
 * Order of claims on one location: explicit paths before defaultBackend, Exact before Prefix, then age
 * (an Ingress and an HTTPRoute alike), then, between an Ingress and an HTTPRoute of the same age and
 * name (manifests without timestamps), the Ingress.
 */
function compareRouteClaims(a: RouteClaim, b: RouteClaim): number {
  return (
    Number(a.fallback) - Number(b.fallback) ||
    Number(b.exact) - Number(a.exact) ||
    compareAge(a.ingress, b.ingress) ||
    Number(a.ingress.kind !== 'Ingress') - Number(b.ingress.kind !== 'Ingress') ||
    a.ordinal - b.ordinal
  );
}

/** A location on a host: canaries and client certificates replace winning claims, never their location. */
function routeKey(claim: RouteClaim): string {
  return `${claim.host} ${claim.modifier} ${claim.path}${claim.requestMatch ? `\n${claim.requestMatch.key}` : ''}`;
}

/** Winning claims per host, and per winning location (`routeKey`) the claims of other Ingresses it beat. */
function settleRoutes(
  claims: readonly RouteClaim[],
  report: Reporter,
): { byHost: Map<string, RouteClaim[]>; losers: Map<string, RouteClaim[]> } {
  const byHost = new Map<string, RouteClaim[]>();
  const beaten = new Map<string, RouteClaim[]>();
  const reported = new Set<string>();
  for (const [host, hostClaims] of groupBy(claims, (c) => c.host)) {
    const winners: RouteClaim[] = [];
    for (const locationClaims of groupBy(hostClaims, routeKey).values()) {
      const [winner, ...losers] = [...locationClaims].sort(compareRouteClaims);
      if (!winner) continue;
      winners.push(winner);
      for (const loser of losers) {
        if (loser.fallback || winner.fallback || loser.exact !== winner.exact) continue;
        if (loser.ingress !== winner.ingress) beaten.set(routeKey(winner), [...(beaten.get(routeKey(winner)) ?? []), loser]);
        const once = `${resourceName(loser.ingress)} ${loser.field.join('.')}`;
        if (reported.has(once)) continue;
        reported.add(once);
        const where = host === '' ? 'rules without host' : `host ${host}`;
        const sameIngress = loser.ingress === winner.ingress;
        report.warning(
          'path-conflict',
          loser.ingress,
          sameIngress
            ? `this path repeats an earlier path of the same ${loser.ingress.kind} on ${where}; the first one is used`
            : `${where} path ${winner.path} is already routed by ${winner.ingress.kind} ${resourceName(winner.ingress)} (older, or first by namespace/name); this path is ignored there`,
          loser.field,
        );
      }
    }
    byHost.set(host, winners);
  }
  return { byHost, losers: beaten };
}

/**
 * Which of `hosts` a Gateway API route or a strong claim (a rule, `spec.tls` or a passthrough) names:
 * one pass over the claims, however many aliases there are.
 */
/**
 * Plain HTTP to a passthrough host whose Ingress asks for the redirect: every path answers 308 to HTTPS,
 * where the backend answers by SNI (ingress-nginx does the same; without the redirect it is 404 here,
 * never the passthrough backend spoken to in plain HTTP).
 */
function passthroughRedirect(host: string): Location {
  // ingress-nginx's redirect drops a trailing `/` here too (the HTTP annotations do not apply to passthrough hosts).
  const plainHttp: PlainHttpAction = { redirect: true, serve: false, trimTrailingSlash: true };
  return { modifier: '', path: '/', comment: `ssl-passthrough host ${host}: plain HTTP is redirected to HTTPS`, plainHttp };
}

function toLocations(
  winners: readonly RouteClaim[],
  hostHasTls: boolean,
  hsts: boolean,
  settings: HostSettings,
  losers: ReadonlyMap<string, readonly RouteClaim[]>,
): Location[] {
  const plainHttp = (redirect: boolean, uri?: RouteClaim['redirectUri']): PlainHttpAction => ({
    redirect,
    serve: !redirect || settings.trustForwardedProto,
    ...(redirect && uri),
  });
  // A regex path never takes a request that a Prefix path of an Ingress in another namespace matches:
  // such prefix locations get `^~`, which stops nginx from trying regexes for them.
  const regexNamespaces = new Set(winners.filter((w) => w.modifier === '~*').map((w) => w.ingress.metadata.namespace));
  const guarded = (claim: RouteClaim) =>
    claim.modifier === '' && [...regexNamespaces].some((namespace) => namespace !== claim.ingress.metadata.namespace);
  const locations: Location[] = winners.map((claim) => {
    // A dispatcher and the 404 of no match route nothing themselves: the named locations carry the claims' origins.
    const bare = { modifier: claim.modifier, path: claim.path, comment: claim.comment, plainHttp: plainHttp(false) };
    if (claim.dispatch) return { ...bare, dispatch: claim.dispatch };
    if (claim.unavailableStatus === 404) return { ...bare, returnStatus: 404 };
    const behaviour = claim.behaviour && withFields(claim.behaviour, { repeatHsts: hsts && addsResponseHeaders(claim.behaviour) });
    return {
      modifier: guarded(claim) ? ('^~' as const) : claim.modifier,
      path: claim.path,
      comment: claim.comment,
      plainHttp: plainHttp(
        !claim.path.startsWith(acmeChallengePrefix.slice(0, -1)) &&
          (claim.forceSslRedirect || (hostHasTls && (claim.sslRedirect ?? settings.sslRedirect))),
        claim.redirectUri,
      ),
      // A redirect answers every request, so the location needs no backend.
      ...(behaviour?.redirect ? {} : claim.proxy ? { proxy: claim.proxy } : { returnStatus: claim.unavailableStatus ?? (503 as const) }),
      ...(behaviour && { behaviour }),
      ...(claim.definitions?.length && { references: claim.definitions.map((d) => d.reference) }),
      origin: {
        claim: {
          claimant: provenanceOf(claim.ingress, claim.field),
          losers: losersOf(claim.ingress, (losers.get(routeKey(claim)) ?? []).map((l) => ({ object: l.ingress, path: l.field }))),
        },
        path: claim.ingressPath,
        pathType: claim.pathType,
      },
    };
  });
  const acme = acmeChallengeLocation(locations, regexNamespaces.size > 0);
  if (acme) locations.push(acme);
  // Without a location for `/`, nginx would serve files from its prefix's html folder.
  if (!locations.some((l) => (l.modifier === '' || l.modifier === '^~') && l.path === '/')) {
    locations.push({ modifier: '', path: '/', comment: 'no Ingress path matches', plainHttp: plainHttp(false), returnStatus: 404 });
  }
  const companions = new Map<string, Location>();
  // Every winner's: a location that answers 503 still sends that to its error pages.
  for (const companion of winners.flatMap((w) => w.companions)) {
    if (!companions.has(companion.path)) companions.set(companion.path, companion);
  }
  const byPath = (a: Location, b: Location) => (a.path < b.path ? -1 : a.path > b.path ? 1 : a.modifier === '=' ? -1 : 1);
  // nginx tries regex locations in the order they appear: the oldest Ingress's first, then the longer path.
  const regexOrder = new Map(
    winners
      .filter((w) => w.modifier === '~*')
      .sort((a, b) => compareAge(a.ingress, b.ingress) || b.path.length - a.path.length || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
      .map((w, index) => [w.path, index]),
  );
  return markShadowedLocations([
    ...locations.filter((l) => l.modifier !== '~*').sort(byPath),
    ...locations.filter((l) => l.modifier === '~*').sort((a, b) => (regexOrder.get(a.path) ?? 0) - (regexOrder.get(b.path) ?? 0)),
    ...[...companions.values()].sort(byPath),
  ]);
}

/**
 * A host with regex paths in several namespaces: the Prefix paths of each keep their requests from the
 * other namespaces' regexes (ingress-nginx would turn them all into regexes and let the longest win).
 */
function reportRegexHosts(routes: ReadonlyMap<string, readonly RouteClaim[]>, report: Reporter): void {
  for (const [host, winners] of routes) {
    const regexIngresses = uniqueIngresses(winners.filter((w) => w.modifier === '~*').map((w) => w.ingress));
    for (const ingress of regexIngresses) {
      const others = uniqueIngresses(
        winners.filter((w) => w.modifier === '' && w.ingress.metadata.namespace !== ingress.metadata.namespace).map((w) => w.ingress),
      );
      if (others.length === 0) continue;
      report.warning(
        'regex-path-yields',
        ingress,
        `on ${host === '' ? 'rules without host' : `host ${host}`}, this Ingress's regex paths do not take requests that Prefix paths of ${others.map((o) => `Ingress ${resourceName(o)}`).join(', ')} (another namespace) match; ingress-nginx would turn those into regexes too`,
      );
    }
  }
}

/**
 * ACME HTTP-01 challenges must reach their backend over plain HTTP. When the location that would serve
 * them redirects, add one for the challenge prefix that serves them instead.
 */
function acmeChallengeLocation(locations: readonly Location[], hostHasRegexes: boolean): Location | undefined {
  const covering = locations
    .filter((l) => (l.modifier === '' || l.modifier === '^~') && acmeChallengePrefix.startsWith(l.path))
    .sort((a, b) => b.path.length - a.path.length)[0];
  if (!covering || !covering.plainHttp.redirect) return undefined;
  return {
    // With regexes on the host, `^~` keeps the challenges where the location serving them says.
    modifier: hostHasRegexes ? '^~' : '',
    path: acmeChallengePrefix,
    comment: `ACME HTTP-01 challenges are never redirected; served as ${covering.comment}`,
    plainHttp: { redirect: false, serve: true },
    plainHttpOnly: true,
    ...(covering.proxy ? { proxy: covering.proxy } : { returnStatus: 503 as const }),
    ...(covering.origin && { origin: covering.origin }),
  };
}
