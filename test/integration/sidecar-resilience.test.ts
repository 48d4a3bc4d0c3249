import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { FakeApiServer } from '../support/fake-apiserver.js';
import { httpGet, parseEcho, startHttpBackend, type Peer } from '../support/peers.js';
import { eventually, ingress, namespace, service, settled, startSidecar, stopAllSidecars, type RunningSidecar } from '../support/sidecar.js';

/**
 * The cluster mode when the API misbehaves: a 410 after compaction, an outage, a watch that stays open
 * and silent, 500s. Whatever happens, nginx keeps serving, and the sidecar converges to the final state
 * with no update lost, deletions made while it was blind included.
 */

let api: FakeApiServer;
let kubeconfig: string;
let peer: Peer;
const servers: FakeApiServer[] = [];

beforeEach(async () => {
  api = await FakeApiServer.start({ tls: true, token: 'resilience', bookmarkIntervalMs: 500 });
  servers.push(api);
  kubeconfig = await api.writeKubeconfig();
  api.create(namespace('web'));
  peer ??= await startHttpBackend('app');
  api.create(service('web', 'app', peer));
  api.create(ingress('web', 'kept', 'kept.example.test', { service: 'app', port: peer.port }));
  api.create(ingress('web', 'doomed', 'doomed.example.test', { service: 'app', port: peer.port }));
});

afterAll(async () => {
  await stopAllSidecars();
  await peer?.close();
  await Promise.all(servers.map((s) => s.close()));
});

async function status(sidecar: RunningSidecar, host: string): Promise<number> {
  const response = await httpGet({ port: sidecar.httpPort, host, path: '/' }).catch(() => undefined);
  if (response?.status === 200) expect(parseEcho(response.body).backend).toBe('app');
  return response?.status ?? 0;
}

async function started(extra: Parameters<typeof startSidecar>[0]['timing'] = {}): Promise<RunningSidecar> {
  const sidecar = await startSidecar({ api, kubeconfig, timing: extra });
  expect(await eventually(() => status(sidecar, 'doomed.example.test'), (s) => s === 200)).toBe(200);
  await settled(sidecar);
  return sidecar;
}

/** While the sidecar cannot see: one Ingress added, one deleted. */
function changeBehindItsBack(): void {
  api.create(ingress('web', 'born', 'born.example.test', { service: 'app', port: peer.port }));
  api.delete({ apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', namespace: 'web', name: 'doomed' });
}

async function expectConverged(sidecar: RunningSidecar): Promise<void> {
  expect(await eventually(() => status(sidecar, 'born.example.test'), (s) => s === 200)).toBe(200);
  expect(await eventually(() => status(sidecar, 'doomed.example.test'), (s) => s === 404)).toBe(404);
  expect(await status(sidecar, 'kept.example.test')).toBe(200);
}

describe('the sidecar converges', () => {
  it('after an outage: watches resume from their resourceVersion and replay what they missed', async () => {
    const sidecar = await started();
    api.refuseConnections();
    changeBehindItsBack();
    // nginx serves on from what it had.
    expect(await status(sidecar, 'doomed.example.test')).toBe(200);
    api.acceptConnections();
    await expectConverged(sidecar);
    expect(await sidecar.metric('ingress2nginx_watch_restarts_total', { kind: 'Ingress' })).toBeGreaterThan(0);
    await sidecar.stop();
  });

  it('after an outage that outlasted the history: the 410 leads to a relist, which notices the deletion', async () => {
    const sidecar = await started();
    api.refuseConnections();
    changeBehindItsBack();
    api.compact();
    api.acceptConnections();
    await expectConverged(sidecar);
    expect(sidecar.logs()).toContain('resourceVersion expired (410)');
    await sidecar.stop();
  });

  it('when a watch stays open and silent: the watchdog cuts it and the new watch catches up', async () => {
    const sidecar = await started();
    const release = api.hangWatches({ existing: true, future: false });
    changeBehindItsBack();
    await expectConverged(sidecar);
    expect(sidecar.logs()).toContain('presumed dead');
    release();
    await sidecar.stop();
  });

  it('when every watch hangs, even new ones: a second silent watch in a row leads to a list, which brings the changes', async () => {
    // The periodic relist is far off (60 s): only the lists after silent watches can bring the changes in time.
    const sidecar = await started();
    const release = api.hangWatches({ existing: true, future: true });
    changeBehindItsBack();
    await expectConverged(sidecar);
    release();
    await sidecar.stop();
  });

  it('through server errors at start: lists are retried with backoff until they succeed', async () => {
    api.failNext({ verb: 'list', count: 6, status: 500 });
    const sidecar = await started();
    expect(await sidecar.probe('/readyz')).toBe(200);
    changeBehindItsBack();
    await expectConverged(sidecar);
    await sidecar.stop();
  });

  it('does not become ready while the API is unreachable at start, and serves once it is back', async () => {
    api.refuseConnections();
    const sidecar = await startSidecar({ api, kubeconfig });
    // A bounded look: it stays unready while it cannot list.
    expect(await eventually(() => sidecar.probe('/readyz'), (s) => s === 200, 1500)).toBe(503);
    api.acceptConnections();
    expect(await eventually(() => sidecar.probe('/readyz'), (s) => s === 200)).toBe(200);
    expect(await status(sidecar, 'doomed.example.test')).toBe(200);
    await sidecar.stop();
  });
});
