import type { SourceObject } from '../../sources/snapshot.js';
import { compareAge } from './precedence.js';
import { resourceName, type Reporter } from '../report.js';
import type { IngressContribution } from './claims.js';

/** Someone asking for a host name: an Ingress rule, `spec.tls` or passthrough, or a TLSRoute. */
export interface HostClaimant {
  readonly host: string;
  readonly object: SourceObject;
}

/**
 * `first-namespace-owns-host`: each host belongs to the namespace of the oldest resource that asks for
 * it (then namespace/name), across the Ingress and Gateway API front ends. Keyed by exact name: a
 * wildcard is a name of its own.
 */
export function hostOwners(claimants: readonly HostClaimant[]): Map<string, SourceObject> {
  const owners = new Map<string, SourceObject>();
  for (const { host, object } of claimants) {
    const current = owners.get(host);
    if (!current || compareAge(object, current) < 0) owners.set(host, object);
  }
  return owners;
}

/**
 * `first-namespace-owns-host` applied: whether `object` may claim `host`, for every kind of claim. A
 * refused claim is reported once per resource and host, `consequence` saying what it loses.
 */
export class HostOwnership {
  private readonly refused = new Set<string>();

  constructor(
    private readonly owners: ReadonlyMap<string, SourceObject>,
    private readonly report: Reporter,
  ) {}

  allows(host: string, object: SourceObject, subject: string, consequence: string): boolean {
    const owner = this.owners.get(host);
    if (!owner || owner.metadata.namespace === object.metadata.namespace) return true;
    const key = `${object.kind}/${object.metadata.namespace}/${object.metadata.name}\0${host}`;
    if (!this.refused.has(key)) {
      this.refused.add(key);
      this.report.warning(
        'host-owned-by-namespace',
        object,
        `${subject} belongs to namespace ${owner.metadata.namespace} (${owner.kind} ${resourceName(owner)} claimed it first) and first-namespace-owns-host is set; ${consequence}`,
      );
    }
    return false;
  }
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
