/**
 * Gathering: every claim of every contribution sorted onto its host, in contribution order, and kept from
 * build to build for the hosts no changed contribution names.
 */
import { compareStrings } from '../../model/order.js';
import { SortedMemo } from '../memo/sorted-memo.js';
import type { IngressContribution } from './claims.js';
import type { HostClaims } from './settled.js';

/** The claims on each host (the host `''` always), and the hosts in name order. */
export interface ClaimsInHostOrder {
  readonly byHost: ReadonlyMap<string, HostClaims>;
  readonly hosts: readonly string[];
}

export function claimsInHostOrder(contributions: readonly IngressContribution[]): ClaimsInHostOrder {
  const byHost = new Map<string, HostClaims>();
  gatherClaims(contributions, byHost, () => true);
  if (!byHost.has('')) byHost.set('', noClaims());
  return { byHost, hosts: [...byHost.keys()].sort(compareStrings) };
}

export function noClaims(): HostClaims {
  return { passthrough: [], tls: [], routes: [], canaries: [], named: [] };
}

/** Adds the claims of `contributions` on the hosts `wanted` to `byHost`, in the order of the contributions. */
export function gatherClaims(contributions: readonly IngressContribution[], byHost: Map<string, HostClaims>, wanted: (host: string) => boolean): void {
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

export function hostsOf(contribution: IngressContribution, into: Set<string>): void {
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
