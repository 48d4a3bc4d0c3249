/**
 * A host's TLS: passthrough or terminated (the oldest claim decides), which certificate it is served
 * with, and the client-certificate settings its server asks for.
 */
import type { TlsFiles } from '../../model/files.js';
import type { ServerClientCertificate } from '../../model/nginx.js';
import type { CertificateSource } from '../../model/provenance.js';
import type { SourceObject } from '../../sources/snapshot.js';
import type { ResolvedBackend } from '../backends.js';
import { Reporter, resourceName } from '../report.js';
import { SecretFiles } from '../secrets/secret-files.js';
import type { RouteClaim, PassthroughClaim, TlsClaim } from './claims.js';
import { byString, compareAge, groupBy, uniqueIngresses } from './precedence.js';
import { losersOf, provenanceOf } from './provenance.js';
import type { PassthroughRoute, HostSettings, TerminatedHost } from './settled.js';

/**
 * `auth-tls-*` needs the host's TLS server to ask for client certificates. A host has one client CA and
 * depth, which every client of the host is asked for, so the host's owner chooses it (`owner`: the
 * oldest claim of the host): the oldest Ingress of the owner's namespace that asks decides. The locations
 * of an Ingress that asks for another CA, or of another namespace's Ingress when the owner's namespace
 * asks none, answer 503 (they would otherwise accept certificates their CA never issued). The server
 * always asks with `optional_no_ca`, so only the locations that require a certificate check it.
 */
export function settleClientCertificates(
  host: string,
  winners: readonly RouteClaim[],
  owner: SourceObject | undefined,
  report: Reporter,
): { server?: ServerClientCertificate; winners: RouteClaim[] } {
  const asking = winners.filter((w) => w.clientCertificate).sort((a, b) => compareAge(a.ingress, b.ingress));
  if (asking.length === 0) return { winners: [...winners] };
  const ownerNamespace = (owner ?? asking[0]!.ingress).metadata.namespace;
  const first = asking.find((w) => w.ingress.metadata.namespace === ownerNamespace);
  const chosen = first?.clientCertificate;
  const told = new Set<SourceObject>();
  const result = winners.map((winner) => {
    const wanted = winner.clientCertificate;
    if (!wanted || (chosen && wanted.caFile === chosen.caFile && wanted.crlFile === chosen.crlFile && wanted.depth === chosen.depth)) return winner;
    if (!told.has(winner.ingress)) {
      told.add(winner.ingress);
      report.error('auth-tls-conflict', winner.ingress, clientCertificateConflict(host, wanted, first, owner));
    }
    return answering503(winner);
  });
  if (!chosen) return { winners: result };
  return {
    server: { caFile: chosen.caFile, ...(chosen.crlFile !== undefined && { crlFile: chosen.crlFile }), verify: 'optional_no_ca', depth: chosen.depth },
    winners: result,
  };
}

function clientCertificateConflict(
  host: string,
  wanted: NonNullable<RouteClaim['clientCertificate']>,
  first: RouteClaim | undefined,
  owner: SourceObject | undefined,
): string {
  const asks = `this Ingress asks for Secret ${wanted.secret} (depth ${wanted.depth}), so its paths on ${host} answer 503`;
  if (first?.clientCertificate) {
    const chosen = first.clientCertificate;
    return `host ${host} verifies client certificates with Secret ${chosen.secret} (depth ${chosen.depth}) for Ingress ${resourceName(first.ingress)} (of the host's namespace; older, or first by namespace/name); ${asks}`;
  }
  const whose = owner ? `namespace ${owner.metadata.namespace} (${owner.kind} ${resourceName(owner)} claimed it first)` : 'another namespace';
  return `host ${host} belongs to ${whose}, which asks no client certificate, and only the host's owner chooses the CA every client of the host is asked for; ${asks}`;
}

/** The claim without its proxy and behaviour: its location answers 503. */
export function answering503(claim: RouteClaim): RouteClaim {
  const copy: { -readonly [Key in keyof RouteClaim]: RouteClaim[Key] } = { ...claim };
  delete copy.proxy;
  delete copy.behaviour;
  return copy;
}

export type ModeClaim = { readonly mode: 'passthrough'; readonly claim: PassthroughClaim } | { readonly mode: 'tls'; readonly claim: TlsClaim };

/**
 * One mode per host: the oldest Ingress that asks for the host's TLS (ssl-passthrough or spec.tls)
 * decides. A newer passthrough never takes a host an older Ingress terminates, nor the other way round.
 */
export function settleTlsModes(
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
export interface SettledTls {
  readonly files: TlsFiles;
  readonly certificate: CertificateSource;
  readonly losers: readonly TlsClaim[];
}

export function settleTls(
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
export function reportPassthroughTakeovers(route: PassthroughRoute, routes: readonly RouteClaim[], report: Reporter): void {
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

export function passthroughTarget(claim: { readonly backend?: ResolvedBackend }): string {
  return claim.backend?.description ?? 'nowhere (its backend cannot be used, so connections are closed)';
}

/** A terminated host with the Ingress that claimed it first (a rule or spec.tls), for the SNI front. */
export function terminatedHost(host: string, routes: readonly RouteClaim[], tls: readonly TlsClaim[]): { terminated?: TerminatedHost } {
  const owner = [...routes.map((r) => r.ingress), ...tls.map((c) => c.ingress)].sort(compareAge)[0];
  return owner ? { terminated: { host, owner, declaresTls: tls.length > 0 } } : {};
}

export function sameSecret(a: TlsClaim, b: TlsClaim): boolean {
  return a.secret?.namespace === b.secret?.namespace && a.secret?.name === b.secret?.name;
}
