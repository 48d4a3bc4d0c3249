import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeApiServer, type JsonObject } from '../support/fake-apiserver.js';
import { httpGet, parseEcho, startHttpBackend, type Peer } from '../support/peers.js';
import { freePorts } from '../support/ports.js';
import { eventually, ingress, namespace, service, startSidecar, stopAllSidecars, type RunningSidecar } from '../support/sidecar.js';

/**
 * One data plane per Gateway (`run --gateway NS/NAME`): two sidecars against one API server, each for
 * one Gateway, serve that Gateway's listeners and routes only, on its own ports, and no Ingress; each
 * writes the status of its own Gateway and its own entry in a route both Gateways carry, and leaves the
 * other's alone, so the two never undo each other's writes.
 */

const gatewayApi = 'gateway.networking.k8s.io/v1';
let api: FakeApiServer;
let kubeconfig: string;
let peers: Record<'first' | 'second' | 'shared' | 'ingress', Peer>;
let ports: { first: number; second: number };
const closers: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  api = await FakeApiServer.start({ tls: true, token: 'data-planes-test', bookmarkIntervalMs: 500 });
  closers.push(() => api.close());
  kubeconfig = await api.writeKubeconfig();
  api.create(namespace('tenant'));
  api.create({ apiVersion: gatewayApi, kind: 'GatewayClass', metadata: { name: 'ingress2nginx' }, spec: { controllerName: 'ingress2nginx.dev/controller' } });
  peers = {
    first: await startHttpBackend('first'),
    second: await startHttpBackend('second'),
    shared: await startHttpBackend('shared'),
    ingress: await startHttpBackend('ingress'),
  };
  for (const [name, peer] of Object.entries(peers)) {
    closers.push(() => peer.close());
    api.create(service('tenant', name, peer));
  }
  const [first, second] = (await freePorts(2)) as [number, number];
  ports = { first, second };
  for (const [name, port] of Object.entries(ports)) {
    api.create({
      apiVersion: gatewayApi,
      kind: 'Gateway',
      metadata: { name, namespace: 'tenant' },
      spec: { gatewayClassName: 'ingress2nginx', listeners: [{ name: 'http', port, protocol: 'HTTP' }] },
    });
    api.create(httpRoute(`${name}-only`, [name], name as keyof typeof peers));
  }
  api.create(httpRoute('shared', ['first', 'second'], 'shared', '/shared'));
  api.create(ingress('tenant', 'web', 'app.example.test', { service: 'ingress', port: peers.ingress.port }));
});

afterAll(async () => {
  await stopAllSidecars();
  await Promise.all(closers.map((close) => close()));
});

function httpRoute(name: string, gateways: readonly string[], backend: keyof typeof peers, path = '/'): JsonObject {
  return {
    apiVersion: gatewayApi,
    kind: 'HTTPRoute',
    metadata: { name, namespace: 'tenant' },
    spec: {
      parentRefs: gateways.map((gateway) => ({ name: gateway })),
      hostnames: ['app.example.test'],
      rules: [{ matches: [{ path: { type: 'PathPrefix', value: path } }], backendRefs: [{ name: backend, port: peers[backend].port }] }],
    },
  };
}

async function backendAt(port: number, path = '/'): Promise<string> {
  const response = await httpGet({ port, host: 'app.example.test', path }).catch(() => undefined);
  return response?.status === 200 ? parseEcho(response.body).backend : `status ${response?.status ?? 'none'}`;
}

type Parents = { parentRef: { name: string }; conditions: { type: string; status: string }[] }[];
const parentsOf = (name: string) =>
  ((api.get({ apiVersion: gatewayApi, kind: 'HTTPRoute', namespace: 'tenant', name })?.['status'] as { parents?: Parents } | undefined)?.parents ?? []).map((p) => p.parentRef.name).sort();
const gatewayStatus = (name: string) => api.get({ apiVersion: gatewayApi, kind: 'Gateway', namespace: 'tenant', name })?.['status'] as { listeners?: unknown[] } | undefined;

describe('run --gateway: a data plane per Gateway', () => {
  let planes: Record<'first' | 'second', RunningSidecar>;

  beforeAll(async () => {
    planes = {
      first: await startSidecar({ api, kubeconfig, translate: { gateways: ['tenant/first'] }, run: { electionId: 'gateway-first' } }),
      second: await startSidecar({ api, kubeconfig, translate: { gateways: ['tenant/second'] }, run: { electionId: 'gateway-second' } }),
    };
  }, 60_000);

  it("serves its Gateway's listeners and routes on their ports, and neither the other Gateway nor the Ingress", async () => {
    expect(await eventually(() => backendAt(ports.first), (b) => b === 'first', 40_000)).toBe('first');
    expect(await eventually(() => backendAt(ports.second), (b) => b === 'second', 40_000)).toBe('second');
    expect(await backendAt(ports.first, '/shared')).toBe('shared');
    expect(await backendAt(ports.second, '/shared')).toBe('shared');
    // No Ingress: the Ingress port answers 404 for its host.
    expect(await backendAt(planes.first.httpPort)).toBe('status 404');
    expect(await backendAt(planes.second.httpPort)).toBe('status 404');
  }, 90_000);

  it('each writes its own Gateway and its own parent entry of the shared route, and keeps the other', async () => {
    await eventually(() => parentsOf('shared'), (names) => names.length === 2, 40_000);
    expect(parentsOf('shared')).toEqual(['first', 'second']);
    expect(parentsOf('first-only')).toEqual(['first']);
    expect(parentsOf('second-only')).toEqual(['second']);
    expect(gatewayStatus('first')?.listeners).toHaveLength(1);
    expect(gatewayStatus('second')?.listeners).toHaveLength(1);
    // A change that only the first data plane builds again: the second's entry stays.
    api.update({ ...httpRoute('shared', ['first', 'second'], 'shared', '/shared'), metadata: { name: 'shared', namespace: 'tenant', labels: { touched: 'yes' } } });
    await eventually(() => parentsOf('shared'), (names) => names.length === 2, 20_000);
    expect(parentsOf('shared')).toEqual(['first', 'second']);
    const ingressStatus = api.get({ apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', namespace: 'tenant', name: 'web' })?.['status'] as { loadBalancer?: { ingress?: unknown[] } } | undefined;
    expect(ingressStatus?.loadBalancer?.ingress ?? []).toEqual([]);
  }, 90_000);
});
