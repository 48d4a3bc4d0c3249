import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { afterAll, describe, expect, it } from 'vitest';
import { FakeApiServer, type ObservedRequest } from '../support/fake-apiserver.js';
import { startHttpBackend, type Peer } from '../support/peers.js';
import { eventually, ingress, namespace, service, settled, startSidecar, stopAllSidecars, type RunningSidecar } from '../support/sidecar.js';

/**
 * Two replicas against one API: both render and serve; only the one holding the Lease writes status
 * and Events, and when it stops the other takes over within the lease duration. Every request they
 * made is one the RBAC rules in deploy/ allow.
 */

let api: FakeApiServer | undefined;
const peers: Peer[] = [];

afterAll(async () => {
  await stopAllSidecars();
  await Promise.all(peers.map((p) => p.close()));
  await api?.close();
});

const statusWrites = (requests: readonly ObservedRequest[], name: string) =>
  requests.filter((r) => r.resource === 'ingresses' && r.subresource === 'status' && r.name === name && (r.verb === 'patch' || r.verb === 'update'));

describe('two replicas', () => {
  it('share the serving, not the status writing; the follower takes over when the leader stops', async () => {
    api = await FakeApiServer.start({ tls: true, token: 'replicas', bookmarkIntervalMs: 500 });
    const kubeconfig = await api.writeKubeconfig();
    const peer = await startHttpBackend('app');
    peers.push(peer);
    api.create(namespace('web'));
    api.create(service('web', 'app', peer));
    const run = { publishAddresses: ['192.0.2.20'] };
    const replicas = await Promise.all([startSidecar({ api, kubeconfig, run }), startSidecar({ api, kubeconfig, run })]);
    const leaders = async () => Promise.all(replicas.map((r) => r.metric('ingress2nginx_leader')));
    expect((await eventually(leaders, (l) => l.reduce((a, b) => a + b, 0) === 1)).sort()).toEqual([0, 1]);
    const leader = replicas[(await leaders()).indexOf(1)] as RunningSidecar;
    const follower = replicas.find((r) => r !== leader) as RunningSidecar;

    api.create(ingress('web', 'first', 'first.example.test', { service: 'app', port: peer.port }));
    for (const replica of replicas) await settled(replica);
    await eventually(() => statusWrites(api!.requests(), 'first').length, (n) => n >= 1);
    await settled(leader);
    await settled(follower);
    expect(statusWrites(api.requests(), 'first')).toHaveLength(1);

    expect(await leader.stop()).toBe(0);
    expect(await eventually(() => follower.metric('ingress2nginx_leader'), (n) => n === 1, 5000)).toBe(1);
    const lease = api.get({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', namespace: 'default', name: 'ingress2nginx' });
    expect((lease?.['spec'] as { holderIdentity: string }).holderIdentity).not.toBe('');
    api.create(ingress('web', 'second', 'second.example.test', { service: 'app', port: peer.port }));
    const status = await eventually(
      () => api!.get({ apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', namespace: 'web', name: 'second' })?.['status'],
      (s) => JSON.stringify(s ?? {}).includes('192.0.2.20'),
    );
    expect(status).toEqual({ loadBalancer: { ingress: [{ ip: '192.0.2.20' }] } });
    await follower.stop();
    expectAllowedByRbac(api.requests());
  });
});

interface Rule {
  readonly apiGroups: string[];
  readonly resources: string[];
  readonly verbs: string[];
}

/** Every request the replicas made is allowed by deploy/base/rbac.yaml (discovery is open to everyone). */
function expectAllowedByRbac(requests: readonly ObservedRequest[]): void {
  const rbac = parseAllDocuments(readFileSync(join(import.meta.dirname, '..', '..', 'deploy', 'base', 'rbac.yaml'), 'utf8')).map(
    (d) => d.toJS() as { kind: string; rules?: Rule[] },
  );
  const rules = rbac.flatMap((d) => d.rules ?? []);
  const allowed = (group: string, resource: string, verb: string) =>
    rules.some((r) => r.apiGroups.includes(group) && r.resources.includes(resource) && r.verbs.includes(verb));
  const denied = requests
    .filter((r) => r.verb !== 'discovery')
    .map((r) => ({ group: r.group ?? '', resource: r.subresource ? `${r.resource}/${r.subresource}` : (r.resource ?? ''), verb: r.verb }))
    .filter(({ group, resource, verb }) => !allowed(group, resource, verb))
    .map(({ group, resource, verb }) => `${verb} ${group}/${resource}`);
  expect([...new Set(denied)]).toEqual([]);
}
