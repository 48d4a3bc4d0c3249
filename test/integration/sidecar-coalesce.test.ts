import { afterAll, describe, expect, it } from 'vitest';
import { FakeApiServer } from '../support/fake-apiserver.js';
import { httpGet, startHttpBackend, type Peer } from '../support/peers.js';
import { eventually, ingress, namespace, service, settled, startSidecar, stopAllSidecars, type RunningSidecar } from '../support/sidecar.js';

/**
 * When the cluster mode builds: a lone change after a quiet period at once, a burst coalesced into a
 * few reloads (sidecar/coalesce.ts). Asserted on what is served and on reload counts, never on time.
 */

const peers: Peer[] = [];
const clusters: FakeApiServer[] = [];

afterAll(async () => {
  await stopAllSidecars();
  await Promise.all(peers.map((p) => p.close()));
  await Promise.all(clusters.map((c) => c.close()));
});

async function cluster(timing: { debounceMs: number; maxDelayMs: number }, publishAddresses: readonly string[] = []): Promise<{ api: FakeApiServer; sidecar: RunningSidecar; web: Peer }> {
  const api = await FakeApiServer.start({ tls: true, token: 'coalesce', bookmarkIntervalMs: 500 });
  clusters.push(api);
  const web = await startHttpBackend('web');
  peers.push(web);
  api.create(namespace('web'));
  api.create(service('web', 'web', web));
  api.create(ingress('web', 'first', 'first.example.test', { service: 'web', port: web.port }));
  const sidecar = await startSidecar({ api, kubeconfig: await api.writeKubeconfig(), timing, run: { publishAddresses: [...publishAddresses] } });
  await eventually(() => sidecar.probe('/readyz'), (s) => s === 200);
  await settled(sidecar);
  return { api, sidecar, web };
}

async function answers(sidecar: RunningSidecar, host: string): Promise<boolean> {
  const response = await httpGet({ port: sidecar.httpPort, host }).catch(() => undefined);
  return response?.status === 200;
}

const reloads = (sidecar: RunningSidecar) => sidecar.metric('ingress2nginx_reloads_total', { result: 'success' });
const rounds = (sidecar: RunningSidecar) => sidecar.metric('ingress2nginx_render_duration_seconds_count');

/** The load-balancer status the sidecar wrote to Ingress `web/name`, once it is there. */
function statusWritten(api: FakeApiServer, name: string): Promise<unknown> {
  return eventually(
    () => api.get({ apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', namespace: 'web', name })?.['status'],
    (status) => JSON.stringify(status ?? {}).includes('192.0.2.10'),
  );
}

describe('coalescing changes', () => {
  it('serves a lone change after a quiet period without waiting for the debounce window', async () => {
    // A window far longer than the test waits: a change that waited for it would never be served here.
    const { api, sidecar, web } = await cluster({ debounceMs: 10 * 60_000, maxDelayMs: 10 * 60_000 });
    const before = await reloads(sidecar);
    api.create(ingress('web', 'lone', 'lone.example.test', { service: 'web', port: web.port }));
    expect(await eventually(() => answers(sidecar, 'lone.example.test'), (ok) => ok, 20_000)).toBe(true);
    await settled(sidecar);
    expect(await reloads(sidecar)).toBe(before + 1);
  });

  it('builds once per change, not again when its own status write comes back through the watch', async () => {
    const { api, sidecar, web } = await cluster({ debounceMs: 50, maxDelayMs: 1000 }, ['192.0.2.10']);
    const before = await rounds(sidecar);
    api.create(ingress('web', 'one', 'one.example.test', { service: 'web', port: web.port }));
    expect(await eventually(() => answers(sidecar, 'one.example.test'), (ok) => ok, 20_000)).toBe(true);
    await statusWritten(api, 'one');
    // The next change comes through the same watch after the first one's status write, so once it is
    // served that write has come back too; so has the second's once its status is there and all is quiet.
    api.create(ingress('web', 'two', 'two.example.test', { service: 'web', port: web.port }));
    expect(await eventually(() => answers(sidecar, 'two.example.test'), (ok) => ok, 20_000)).toBe(true);
    await statusWritten(api, 'two');
    await settled(sidecar);
    expect((await rounds(sidecar)) - before).toBe(2);
  });

  it('coalesces a burst of changes into a few reloads', async () => {
    const { api, sidecar, web } = await cluster({ debounceMs: 2000, maxDelayMs: 4000 });
    const before = await reloads(sidecar);
    const hosts = Array.from({ length: 30 }, (_, i) => `burst-${i}.example.test`);
    for (const [i, host] of hosts.entries()) api.create(ingress('web', `burst-${i}`, host, { service: 'web', port: web.port }));
    for (const host of hosts) expect(await eventually(() => answers(sidecar, host), (ok) => ok, 20_000)).toBe(true);
    await settled(sidecar);
    // The first change at once, the rest of the burst in one more round (at most one more if the
    // watch delivers them slowly).
    const burstReloads = (await reloads(sidecar)) - before;
    expect(burstReloads).toBeGreaterThanOrEqual(1);
    expect(burstReloads).toBeLessThanOrEqual(3);
  });
});
