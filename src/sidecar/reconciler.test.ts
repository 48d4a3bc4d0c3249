import { describe, expect, it } from 'vitest';
import type { Snapshot, SourceObject } from '../sources/snapshot.js';
import { servedVersions, unchangedSinceServed } from './reconciler.js';

function ingress(name: string, resourceVersion: string): SourceObject {
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: { name, namespace: 'web', annotations: {}, labels: {}, creationTimestamp: '', resourceVersion },
    raw: {},
  };
}

const snapshotOf = (...objects: SourceObject[]): Snapshot => ({ objects });

describe('what the quarantine search may not blame in the cluster mode', () => {
  it('is what nginx serves at the version it serves: not a changed resource, a new one or a quarantined one', () => {
    const served = servedVersions(snapshotOf(ingress('kept', '10'), ingress('edited', '11'), ingress('rejected', '12')), new Map([['Ingress/web/rejected', 'nginx: …']]));
    expect(served).toEqual(new Map([['Ingress/web/kept', '10'], ['Ingress/web/edited', '11']]));
    const now = snapshotOf(ingress('kept', '10'), ingress('edited', '15'), ingress('rejected', '12'), ingress('new', '16'));
    expect([...unchangedSinceServed(served, now)]).toEqual(['Ingress/web/kept']);
  });
});
