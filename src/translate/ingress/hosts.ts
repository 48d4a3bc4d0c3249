import type { Location, PlainHttpAction, TlsFiles, VirtualHost } from '../../model/nginx.js';
import type { SourceObject } from '../../sources/snapshot.js';
import type { ResolvedBackend } from '../backends.js';
import type { IngressContribution, PassthroughClaim, RouteClaim, TlsClaim } from './ingress.js';
import { byString, compareAge, groupBy } from '../precedence.js';
import type { Reporter } from '../report.js';
import { resourceName } from '../report.js';
import type { SecretFiles } from '../secrets.js';

export interface HostSettings {
  /** ConfigMap `ssl-redirect`: the default for hosts with TLS. */
  readonly sslRedirect: boolean;
  /** ConfigMap `use-forwarded-headers`: a trusted load balancer may say the client used HTTPS. */
  readonly trustForwardedProto: boolean;
  readonly hsts: boolean;
  readonly defaultTls: TlsFiles;
}

export interface PassthroughRoute {
  readonly host: string;
  readonly backend: ResolvedBackend;
  readonly comment: string;
  /** The Ingress that won the host. */
  readonly owner: SourceObject;
}

export interface MergedHosts {
  readonly virtualHosts: readonly VirtualHost[];
  /** Hosts with a certificate from `spec.tls` (not just the default one), sorted. */
  readonly tlsHosts: readonly string[];
  readonly defaultLocations: readonly Location[];
  readonly passthrough: readonly PassthroughRoute[];
}

const acmeChallengePrefix = '/.well-known/acme-challenge/';

/**
 * Settles what several Ingresses ask of the same host: passthrough wins the host's TLS; for one location
 * or one host's certificate the oldest Ingress wins, and the others are told which one did.
 */
export function mergeHosts(
  contributions: readonly IngressContribution[],
  settings: HostSettings,
  secrets: SecretFiles,
  report: Reporter,
): MergedHosts {
  const passthrough = settlePassthrough(contributions.flatMap((c) => c.passthrough), report);
  const passthroughHosts = new Set(passthrough.map((p) => p.host));
  const tls = settleTls(contributions.flatMap((c) => c.tls), passthroughHosts, secrets, settings, report);
  const routes = settleRoutes(contributions.flatMap((c) => c.routes), report);

  const hostNames = new Set<string>([...routes.keys(), ...tls.keys(), ...passthroughHosts]);
  hostNames.delete('');
  const virtualHosts: VirtualHost[] = [...hostNames].sort().map((host) => {
    const hostTls = tls.get(host);
    const hasTls = hostTls !== undefined || passthroughHosts.has(host);
    return {
      serverName: host,
      ...(!passthroughHosts.has(host) && { tls: hostTls ?? settings.defaultTls }),
      hsts: settings.hsts && hostTls !== undefined,
      locations: toLocations(routes.get(host) ?? [], hasTls, settings),
    };
  });
  return {
    virtualHosts,
    tlsHosts: [...tls.keys()].sort(),
    defaultLocations: toLocations(routes.get('') ?? [], false, settings),
    passthrough,
  };
}

function settlePassthrough(claims: readonly PassthroughClaim[], report: Reporter): PassthroughRoute[] {
  const routes: PassthroughRoute[] = [];
  for (const [host, hostClaims] of groupBy(claims, (c) => c.host)) {
    const [winner, ...losers] = [...hostClaims].sort((a, b) => compareAge(a.ingress, b.ingress));
    if (!winner) continue;
    for (const loser of losers) {
      if (loser.backend.upstream === winner.backend.upstream) continue;
      report.warning(
        'passthrough-conflict',
        loser.ingress,
        `host ${host} is already passed through to ${winner.backend.description} by Ingress ${resourceName(winner.ingress)} (older, or first by namespace/name); this claim is ignored`,
        loser.field,
      );
    }
    routes.push({ host, backend: winner.backend, comment: `Ingress ${resourceName(winner.ingress)}`, owner: winner.ingress });
  }
  return routes.sort(byString((r) => r.host));
}

function settleTls(
  claims: readonly TlsClaim[],
  passthroughHosts: ReadonlySet<string>,
  secrets: SecretFiles,
  settings: HostSettings,
  report: Reporter,
): Map<string, TlsFiles> {
  const result = new Map<string, TlsFiles>();
  for (const [host, hostClaims] of groupBy(claims, (c) => c.host)) {
    const [winner, ...losers] = [...hostClaims].sort((a, b) => compareAge(a.ingress, b.ingress));
    if (!winner) continue;
    if (passthroughHosts.has(host)) {
      for (const claim of hostClaims) {
        report.warning(
          'tls-shadowed-by-passthrough',
          claim.ingress,
          `TLS for ${host} is passed through by SNI (another Ingress sets ssl-passthrough for it), so this certificate is not used`,
          claim.field,
        );
      }
      continue;
    }
    for (const loser of losers) {
      if (sameSecret(loser, winner)) continue;
      report.warning(
        'tls-conflict',
        loser.ingress,
        `the certificate for ${host} comes from Ingress ${resourceName(winner.ingress)} (older, or first by namespace/name); this one is ignored`,
        loser.field,
      );
    }
    if (!winner.secret) {
      result.set(host, settings.defaultTls);
      continue;
    }
    const checked = secrets.serverCertificate(winner.secret, host);
    if (checked.ok) {
      result.set(host, checked.value);
    } else {
      report.error('tls-secret-invalid', winner.ingress, `${checked.problem}; ${host} is served with the default certificate`, winner.field);
      result.set(host, settings.defaultTls);
    }
  }
  return result;
}

function sameSecret(a: TlsClaim, b: TlsClaim): boolean {
  return a.secret?.namespace === b.secret?.namespace && a.secret?.name === b.secret?.name;
}

/** Order of claims on one location: explicit paths before defaultBackend, Exact before Prefix, then age. */
function compareRouteClaims(a: RouteClaim, b: RouteClaim): number {
  return (
    Number(a.fallback) - Number(b.fallback) ||
    Number(b.exact) - Number(a.exact) ||
    compareAge(a.ingress, b.ingress) ||
    a.ordinal - b.ordinal
  );
}

function settleRoutes(claims: readonly RouteClaim[], report: Reporter): Map<string, RouteClaim[]> {
  const byHost = new Map<string, RouteClaim[]>();
  const reported = new Set<string>();
  for (const [host, hostClaims] of groupBy(claims, (c) => c.host)) {
    const winners: RouteClaim[] = [];
    for (const locationClaims of groupBy(hostClaims, (c) => `${c.modifier} ${c.path}`).values()) {
      const [winner, ...losers] = [...locationClaims].sort(compareRouteClaims);
      if (!winner) continue;
      winners.push(winner);
      for (const loser of losers) {
        if (loser.fallback || winner.fallback || loser.exact !== winner.exact) continue;
        const once = `${resourceName(loser.ingress)} ${loser.field.join('.')}`;
        if (reported.has(once)) continue;
        reported.add(once);
        const where = host === '' ? 'rules without host' : `host ${host}`;
        const sameIngress = loser.ingress === winner.ingress;
        report.warning(
          'path-conflict',
          loser.ingress,
          sameIngress
            ? `this path repeats an earlier path of the same Ingress on ${where}; the first one is used`
            : `${where} path ${winner.path} is already routed by Ingress ${resourceName(winner.ingress)} (older, or first by namespace/name); this path is ignored there`,
          loser.field,
        );
      }
    }
    byHost.set(host, winners);
  }
  return byHost;
}

function toLocations(winners: readonly RouteClaim[], hostHasTls: boolean, settings: HostSettings): Location[] {
  const plainHttp = (redirect: boolean): PlainHttpAction => ({ redirect, serve: !redirect || settings.trustForwardedProto });
  const locations: Location[] = winners.map((claim) => ({
    modifier: claim.modifier,
    path: claim.path,
    comment: claim.comment,
    plainHttp: plainHttp(
      !claim.path.startsWith(acmeChallengePrefix.slice(0, -1)) &&
        (claim.forceSslRedirect || (hostHasTls && (claim.sslRedirect ?? settings.sslRedirect))),
    ),
    ...(claim.proxy ? { proxy: claim.proxy } : { returnStatus: 503 as const }),
  }));
  const acme = acmeChallengeLocation(locations);
  if (acme) locations.push(acme);
  // Without a location for `/`, nginx would serve files from its prefix's html folder.
  if (!locations.some((l) => l.modifier === '' && l.path === '/')) {
    locations.push({ modifier: '', path: '/', comment: 'no Ingress path matches', plainHttp: plainHttp(false), returnStatus: 404 });
  }
  return locations.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : a.modifier === '=' ? -1 : 1));
}

/**
 * ACME HTTP-01 challenges must reach their backend over plain HTTP. When the location that would serve
 * them redirects, add one for the challenge prefix that serves them instead.
 */
function acmeChallengeLocation(locations: readonly Location[]): Location | undefined {
  const covering = locations
    .filter((l) => l.modifier === '' && acmeChallengePrefix.startsWith(l.path))
    .sort((a, b) => b.path.length - a.path.length)[0];
  if (!covering || !covering.plainHttp.redirect) return undefined;
  return {
    modifier: '',
    path: acmeChallengePrefix,
    comment: `ACME HTTP-01 challenges are never redirected; served as ${covering.comment}`,
    plainHttp: { redirect: false, serve: true },
    ...(covering.proxy ? { proxy: covering.proxy } : { returnStatus: 503 as const }),
  };
}
