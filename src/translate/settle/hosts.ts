/**
 * Settling host by host: each host's claims (gather.ts) settled for TLS (tls.ts), paths (routes.ts) and
 * canaries (canaries.ts) into its server, with a memo that settles again only the hosts whose claims or
 * Secrets changed.
 */
import { clientUrlReferences } from './client-url.js';
import type { Diagnostic } from '../../model/diagnostics.js';
import type { Location, VirtualHost } from '../../model/nginx.js';
import type { CertificateSource } from '../../model/provenance.js';
import type { ResolvedBackend } from '../backends.js';
import { ResourceChangeCache } from '../memo/resource-changes.js';
import { Reporter } from '../report.js';
import type { Resources } from '../resources.js';
import { SecretFiles, type SecretEffects } from '../secrets/secret-files.js';
import { attachCanaries } from './canaries.js';
import type { IngressContribution, RouteClaim, TlsClaim, PassthroughClaim } from './claims.js';
import { HttpExtensionRegistry, literalDollarVariable } from './extensions.js';
import { HostClaimsMemo, claimsInHostOrder } from './gather.js';
import { byString, compareAge } from './precedence.js';
import { losersOf, provenanceOf } from './provenance.js';
import { withRequestDispatch } from './request-dispatch.js';
import { passthroughRedirect, reportRegexHosts, reportSharedHosts, reportYieldedWeakClaims, settleRoutes, toLocations } from './routes.js';
import { withServerTls } from './server-tls.js';
import type { HostSettings, MergedHosts, HostScope, HostClaims, PassthroughRoute, TerminatedHost, SettledHost } from './settled.js';
import { reportPassthroughTakeovers, settleClientCertificates, settleTls, settleTlsModes, terminatedHost, type SettledTls } from './tls.js';


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
  const asks = new Map(claims.routes.flatMap((c) => (c.serverTls ? [[`${c.ingress.metadata.namespace}/${c.ingress.metadata.name}`, { object: c.ingress, ask: c.serverTls }] as const] : [])));
  const virtualHost = withServerTls(hostOf(host, settledClaims, settings, report, settled.losers), asks, report);
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
  const owner = [...claims.terminated, ...claims.routeClaims].sort((a, b) => compareAge(a.ingress, b.ingress))[0];
  const clientCertificate = passthrough ? undefined : settleClientCertificates(host, winners, owner?.ingress, report);
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
    const read = JSON.stringify([settings.sslRedirect, settings.trustForwardedProto, settings.hsts, settings.defaultTls, settings.fallback]);
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
    ...clientUrlReferences([behaviour?.appRoot, behaviour?.externalAuth?.signin]),
  ];
}

