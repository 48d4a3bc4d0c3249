import type { SourceObject } from '../sources/snapshot.js';
import { compareAge } from './precedence.js';

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
