import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeApiServer, type JsonObject } from '../support/fake-apiserver.js';
import { httpGet, parseEcho, startHttpBackend, type Peer } from '../support/peers.js';
import { freePorts } from '../support/ports.js';
import { eventually, ingress, namespace, service, startSidecar, stopAllSidecars, type RunningSidecar } from '../support/sidecar.js';

/**
 * Ports the Pod already uses (issue 37, defect 4). nginx -t never binds, so a listener on a port another
 * process holds passes every check and fails only at the reload, and nginx then refuses every reload
 * after it. The sidecar's own ports are refused up front; any other port in use is found when a reload
 * fails though nginx -t passed, and what asks for it is left out, so the other tenants' changes are served.
 */

const gatewayApi = 'gateway.networking.k8s.io/v1';
let api: FakeApiServer;
let kubeconfig: string;
let peer: Peer;
const closers: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  api = await FakeApiServer.start({ tls: true, token: 'ports-test', bookmarkIntervalMs: 500 });
  closers.push(() => api.close());
  kubeconfig = await api.writeKubeconfig();
  for (const ns of ['web', 'tenant']) api.create(namespace(ns));
  api.create({ apiVersion: gatewayApi, kind: 'GatewayClass', metadata: { name: 'ingress2nginx' }, spec: { controllerName: 'ingress2nginx.dev/controller' } });
  peer = await startHttpBackend('app');
  closers.push(() => peer.close());
  api.create(service('web', 'app', peer));
});

afterAll(async () => {
  await stopAllSidecars();
  await Promise.all(closers.map((close) => close()));
});

function gatewayOn(name: string, port: number): JsonObject {
  return {
    apiVersion: gatewayApi,
    kind: 'Gateway',
    metadata: { name, namespace: 'tenant' },
    spec: { gatewayClassName: 'ingress2nginx', listeners: [{ name: 'tls', port, protocol: 'TLS', tls: { mode: 'Passthrough' } }] },
  };
}

async function served(sidecar: RunningSidecar, host: string): Promise<string> {
  const response = await httpGet({ port: sidecar.httpPort, host, path: '/' }).catch(() => undefined);
  return response?.status === 200 ? parseEcho(response.body).backend : `status ${response?.status ?? 'none'}`;
}

/** A new Ingress of another tenant, served after the listener: nginx still takes reloads. */
async function anotherTenantIsServed(sidecar: RunningSidecar, name: string): Promise<string> {
  api.create(ingress('web', name, `${name}.example.test`, { service: 'app', port: peer.port }));
  return eventually(() => served(sidecar, `${name}.example.test`), (b) => b === 'app', 40_000);
}

describe("ports the Pod's processes hold", () => {
  it("refuses a Gateway listener on the sidecar's metrics port (PortUnavailable), and later changes are served", async () => {
    const [metricsPort] = (await freePorts(1)) as [number];
    const sidecar = await startSidecar({ api, kubeconfig, run: { metricsPort } });
    expect(await anotherTenantIsServed(sidecar, 'before')).toBe('app');
    api.create(gatewayOn('metrics', metricsPort));
    const status = await eventually(
      () => api.get({ apiVersion: gatewayApi, kind: 'Gateway', namespace: 'tenant', name: 'metrics' })?.['status'] as { listeners?: { conditions: { type: string; status: string; reason: string }[] }[] } | undefined,
      (s) => (s?.listeners ?? []).length > 0,
    );
    expect(status?.listeners?.[0]?.conditions).toContainEqual(expect.objectContaining({ type: 'Accepted', status: 'False', reason: 'PortUnavailable' }));
    expect(await anotherTenantIsServed(sidecar, 'after-metrics')).toBe('app');
    expect(await sidecar.probe('/healthz')).toBe(200);
    api.delete({ apiVersion: gatewayApi, kind: 'Gateway', namespace: 'tenant', name: 'metrics' });
    await sidecar.stop();
  }, 90_000);

  it('leaves out a listener on a port another process holds once the reload fails on it, and serves the rest', async () => {
    const holder = net.createServer();
    await new Promise<void>((resolve) => holder.listen({ port: 0, host: '127.0.0.1' }, resolve));
    closers.push(() => new Promise((resolve) => holder.close(resolve)));
    const held = (holder.address() as net.AddressInfo).port;
    const sidecar = await startSidecar({ api, kubeconfig });
    expect(await anotherTenantIsServed(sidecar, 'first')).toBe('app');
    api.create(gatewayOn('held', held));
    // The Gateway kinds are found by discovery, after the Ingresses: wait until a reload has failed on it.
    await eventually(() => /nginx did not take the reload|did not serve generation/.test(sidecar.logs()), Boolean, 40_000);
    expect(await anotherTenantIsServed(sidecar, 'second')).toBe('app');
    const quarantined = sidecar
      .logs()
      .split('\n')
      .filter((line) => line.includes('quarantined'))
      .map((line) => JSON.parse(line) as { resource: string; message: string });
    expect(quarantined).toContainEqual(expect.objectContaining({ resource: 'Gateway tenant/held', message: expect.stringContaining(`port ${held} (tcp) is in use`) }));
    await sidecar.stop();
  }, 90_000);
});
