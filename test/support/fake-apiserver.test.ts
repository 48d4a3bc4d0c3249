import { readFile, writeFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { CoreV1Api, KubeConfig, Watch } from '@kubernetes/client-node';
import { afterEach, describe, expect, it } from 'vitest';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { call, openWatch, WatchClient } from './fake-apiserver-client.js';
import { ApiError, FakeApiServer, type FakeApiServerOptions, type JsonObject } from './fake-apiserver.js';
import { KubectlRunner, requireKubectl } from './kubectl.js';

const running: FakeApiServer[] = [];
const watches: WatchClient[] = [];

afterEach(async () => {
  for (const watch of watches.splice(0)) watch.close();
  await Promise.all(running.splice(0).map((fake) => fake.close()));
});

async function startFake(options: FakeApiServerOptions = {}): Promise<FakeApiServer> {
  const fake = await FakeApiServer.start(options);
  running.push(fake);
  return fake;
}

async function watch(fake: FakeApiServer, target: string): Promise<WatchClient> {
  const client = await openWatch(fake, target);
  watches.push(client);
  return client;
}

const INGRESSES = '/apis/networking.k8s.io/v1/namespaces/default/ingresses';
const GATEWAYS = '/apis/gateway.networking.k8s.io/v1/namespaces/default/gateways';
const LEASES = '/apis/coordination.k8s.io/v1/namespaces/default/leases';
const EVENTS_V1 = '/apis/events.k8s.io/v1/namespaces/default/events';

function ingress(name: string, host = `${name}.example.com`, labels: Record<string, string> = {}): JsonObject {
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: { name, namespace: 'default', labels },
    spec: { rules: [{ host, http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'web', port: { number: 80 } } } }] } }] },
  };
}

function gateway(name: string): JsonObject {
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'Gateway',
    metadata: { name, namespace: 'default' },
    spec: { gatewayClassName: 'nginx', listeners: [{ name: 'tls', port: 443, protocol: 'TLS', tls: { mode: 'Passthrough' } }] },
  };
}

function condition(type: string, status = 'True'): JsonObject {
  return { type, status, reason: type, message: '', observedGeneration: 1, lastTransitionTime: '2026-11-30T12:00:00Z' };
}

function metadataOf(object: JsonObject): JsonObject {
  return object.metadata as JsonObject;
}

function resourceVersionOf(object: JsonObject): number {
  return Number(metadataOf(object).resourceVersion);
}

describe('fake API server: serving', () => {
  it('listens on 127.0.0.1 on a port the kernel picks and answers /version', async () => {
    const fake = await startFake();
    expect(fake.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(fake.port).toBeGreaterThan(0);
    const answer = await call(fake, 'GET', '/version');
    expect(answer.status).toBe(200);
    expect(answer.json).toMatchObject({ major: '1', gitVersion: expect.stringMatching(/^v1\.\d+\.\d+$/) });
  });

  it('answers 401 with an Unauthorized Status without the bearer token, and serves with it', async () => {
    const fake = await startFake({ token: 'secret-token' });
    const without = await call(fake, 'GET', '/api/v1/namespaces');
    expect(without.status).toBe(401);
    expect(without.json).toMatchObject({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Unauthorized', code: 401 });
    expect((await call(fake, 'GET', '/api/v1/namespaces', { token: 'wrong' })).status).toBe(401);
    expect((await call(fake, 'GET', '/api/v1/namespaces', { token: 'secret-token' })).status).toBe(200);
  });

  it('writes a kubeconfig naming its URL and token (and CA with TLS), and serves HTTPS with that CA', async () => {
    const fake = await startFake({ token: 'abc', tls: true });
    const config = parseYaml(await readFile(await fake.writeKubeconfig(), 'utf8')) as JsonObject;
    const cluster = ((config.clusters as JsonObject[])[0]!.cluster ?? {}) as JsonObject;
    expect(cluster.server).toBe(fake.url);
    expect(fake.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    expect(Buffer.from(String(cluster['certificate-authority-data']), 'base64').toString()).toBe(fake.caPem);
    expect((config.users as JsonObject[])[0]!.user).toEqual({ token: 'abc' });
    expect((await call(fake, 'GET', '/api/v1/namespaces/default', { token: 'abc' })).json).toMatchObject({ kind: 'Namespace' });
  });
});

describe('fake API server: discovery', () => {
  it('lists the core version, the groups, and each group version with its resources and status subresources', async () => {
    const fake = await startFake();
    expect((await call(fake, 'GET', '/api')).json).toMatchObject({ kind: 'APIVersions', versions: ['v1'] });
    const core = (await call(fake, 'GET', '/api/v1')).json;
    expect(core).toMatchObject({ kind: 'APIResourceList', groupVersion: 'v1' });
    const coreNames = (core.resources as JsonObject[]).map((resource) => resource.name);
    expect(coreNames).toEqual(expect.arrayContaining(['services', 'services/status', 'secrets', 'configmaps', 'namespaces', 'events']));
    const groups = (await call(fake, 'GET', '/apis')).json;
    expect(groups.kind).toBe('APIGroupList');
    const groupNames = (groups.groups as JsonObject[]).map((group) => group.name);
    expect(groupNames).toEqual(expect.arrayContaining(['networking.k8s.io', 'discovery.k8s.io', 'coordination.k8s.io', 'events.k8s.io', 'gateway.networking.k8s.io']));
    const gatewayGroup = (groups.groups as JsonObject[]).find((group) => group.name === 'gateway.networking.k8s.io')!;
    expect(gatewayGroup.preferredVersion).toEqual({ groupVersion: 'gateway.networking.k8s.io/v1', version: 'v1' });
    const networking = (await call(fake, 'GET', '/apis/networking.k8s.io/v1')).json;
    expect(networking.resources).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ name: 'ingresses', kind: 'Ingress', namespaced: true, verbs: expect.arrayContaining(['list', 'watch', 'patch']) }),
        expect.objectContaining({ name: 'ingresses/status', verbs: ['get', 'patch', 'update'] }),
        expect.objectContaining({ name: 'ingressclasses', namespaced: false }),
      ]),
    );
    const alpha2 = (await call(fake, 'GET', '/apis/gateway.networking.k8s.io/v1alpha2')).json;
    expect((alpha2.resources as JsonObject[]).map((resource) => resource.name)).toEqual(['tlsroutes', 'tlsroutes/status']);
  });

  it('drops the Gateway API group from discovery and from service when it is removed, and serves it (empty) once added', async () => {
    const fake = await startFake();
    fake.create(gateway('gw'));
    fake.removeGroup('gateway.networking.k8s.io');
    const groupNames = ((await call(fake, 'GET', '/apis')).json.groups as JsonObject[]).map((group) => group.name);
    expect(groupNames).not.toContain('gateway.networking.k8s.io');
    expect(groupNames).toContain('networking.k8s.io');
    for (const path of ['/apis/gateway.networking.k8s.io/v1', GATEWAYS]) {
      const answer = await call(fake, 'GET', path);
      expect(answer.status).toBe(404);
      expect(answer.json).toMatchObject({ kind: 'Status', reason: 'NotFound', message: 'the server could not find the requested resource' });
    }
    fake.addGroup('gateway.networking.k8s.io');
    const list = (await call(fake, 'GET', GATEWAYS)).json;
    expect(list.items).toEqual([]);
  });

  it('deletes the objects of a removed group with DELETED events, then ends its watches cleanly', async () => {
    const fake = await startFake({ gatewayApi: true });
    fake.create(gateway('gw'));
    const stream = await watch(fake, `${GATEWAYS}?watch=true&resourceVersion=${fake.resourceVersion}`);
    fake.removeGroup();
    expect(await stream.next()).toMatchObject({ type: 'DELETED', object: { kind: 'Gateway', metadata: { name: 'gw' } } });
    expect(await stream.ended).toBe('clean');
  });

  it('can start without the Gateway API group', async () => {
    const fake = await startFake({ gatewayApi: false });
    expect((await call(fake, 'GET', GATEWAYS)).status).toBe(404);
    expect(() => fake.create(gateway('gw'))).toThrow(ApiError);
  });
});

describe('fake API server: objects', () => {
  it('fills uid, creationTimestamp (RFC 3339, seconds), a decimal resourceVersion from one counter, and generation', async () => {
    const fake = await startFake();
    const created = await call(fake, 'POST', INGRESSES, { body: ingress('a') });
    expect(created.status).toBe(201);
    const metadata = metadataOf(created.json);
    expect(metadata.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(metadata.creationTimestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(metadata.resourceVersion).toMatch(/^[1-9]\d*$/);
    expect(metadata.generation).toBe(1);
    const secret = await call(fake, 'POST', '/api/v1/namespaces/default/secrets', { body: { metadata: { name: 's' }, stringData: { key: 'value' } } });
    // One counter across kinds; a Secret has no generation and folds stringData into data.
    expect(resourceVersionOf(secret.json)).toBe(resourceVersionOf(created.json) + 1);
    expect(metadataOf(secret.json).generation).toBeUndefined();
    expect(secret.json).toMatchObject({ kind: 'Secret', apiVersion: 'v1', type: 'Opaque', data: { key: Buffer.from('value').toString('base64') } });
  });

  it('answers POST of an existing name with 409 AlreadyExists and GET of a missing one with 404 NotFound', async () => {
    const fake = await startFake();
    await call(fake, 'POST', INGRESSES, { body: ingress('a') });
    const again = await call(fake, 'POST', INGRESSES, { body: ingress('a') });
    expect(again.status).toBe(409);
    expect(again.json).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'ingresses.networking.k8s.io "a" already exists',
      reason: 'AlreadyExists',
      details: { name: 'a', group: 'networking.k8s.io', kind: 'ingresses' },
      code: 409,
    });
    const missing = await call(fake, 'GET', `${INGRESSES}/nope`);
    expect(missing.status).toBe(404);
    expect(missing.json).toMatchObject({ reason: 'NotFound', message: 'ingresses.networking.k8s.io "nope" not found', details: { kind: 'ingresses' } });
    const coreMissing = await call(fake, 'GET', '/api/v1/namespaces/default/services/nope');
    expect(coreMissing.json.message).toBe('services "nope" not found');
  });

  it('refuses to create in a namespace that does not exist', async () => {
    const fake = await startFake();
    const body = ingress('a');
    delete metadataOf(body).namespace;
    const answer = await call(fake, 'POST', '/apis/networking.k8s.io/v1/namespaces/elsewhere/ingresses', { body });
    expect(answer.status).toBe(404);
    expect(answer.json.message).toBe('namespaces "elsewhere" not found');
    // A body naming another namespace than the URL is a bad request.
    const mismatch = await call(fake, 'POST', '/apis/networking.k8s.io/v1/namespaces/kube-system/ingresses', { body: ingress('a') });
    expect(mismatch.status).toBe(400);
    expect(mismatch.json.message).toBe('the namespace of the provided object does not match the namespace sent on the request');
  });

  it('answers PUT with a stale resourceVersion with 409 Conflict, and bumps generation only on spec changes', async () => {
    const fake = await startFake();
    const created = (await call(fake, 'POST', INGRESSES, { body: ingress('a') })).json;
    const relabelled = structuredClone(created);
    metadataOf(relabelled).labels = { team: 'x' };
    const afterLabels = await call(fake, 'PUT', `${INGRESSES}/a`, { body: relabelled });
    expect(afterLabels.status).toBe(200);
    expect(metadataOf(afterLabels.json).generation).toBe(1);
    expect(resourceVersionOf(afterLabels.json)).toBeGreaterThan(resourceVersionOf(created));

    const stale = await call(fake, 'PUT', `${INGRESSES}/a`, { body: created });
    expect(stale.status).toBe(409);
    expect(stale.json).toMatchObject({
      reason: 'Conflict',
      message: 'Operation cannot be fulfilled on ingresses.networking.k8s.io "a": the object has been modified; please apply your changes to the latest version and try again',
    });

    const respec = structuredClone(afterLabels.json);
    (respec.spec as JsonObject).ingressClassName = 'nginx';
    const afterSpec = await call(fake, 'PUT', `${INGRESSES}/a`, { body: respec });
    expect(metadataOf(afterSpec.json).generation).toBe(2);
  });

  it('lists one namespace or all namespaces, in namespace/name order', async () => {
    const fake = await startFake();
    fake.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-b' } });
    fake.create({ ...ingress('z'), metadata: { name: 'z', namespace: 'team-b' } });
    fake.create(ingress('b'));
    fake.create(ingress('a'));
    const names = (list: JsonObject) => (list.items as JsonObject[]).map((item) => `${metadataOf(item).namespace}/${metadataOf(item).name}`);
    expect(names((await call(fake, 'GET', INGRESSES)).json)).toEqual(['default/a', 'default/b']);
    expect(names((await call(fake, 'GET', '/apis/networking.k8s.io/v1/ingresses')).json)).toEqual(['default/a', 'default/b', 'team-b/z']);
  });

  it('deletes with a Success Status for most kinds, and the object for Services', async () => {
    const fake = await startFake();
    fake.create(ingress('a'));
    const deleted = await call(fake, 'DELETE', `${INGRESSES}/a`);
    expect(deleted.json).toMatchObject({ kind: 'Status', status: 'Success', details: { name: 'a', group: 'networking.k8s.io', kind: 'ingresses' } });
    expect((await call(fake, 'GET', `${INGRESSES}/a`)).status).toBe(404);
    fake.create({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: 'default' }, spec: { ports: [{ port: 80 }] } });
    expect((await call(fake, 'DELETE', '/api/v1/namespaces/default/services/web')).json).toMatchObject({ kind: 'Service', metadata: { name: 'web' } });
  });

  it.each([
    ['/api/v1/namespaces/default/services', { metadata: { name: 'o' }, spec: { ports: [{ port: 80 }] } }, 'ServiceList'],
    ['/api/v1/namespaces/default/secrets', { metadata: { name: 'o' }, data: {} }, 'SecretList'],
    ['/api/v1/namespaces/default/configmaps', { metadata: { name: 'o' }, data: { a: 'b' } }, 'ConfigMapList'],
    ['/api/v1/namespaces/default/events', { metadata: { name: 'o' }, involvedObject: { kind: 'Pod', namespace: 'default', name: 'p' }, reason: 'Started' }, 'EventList'],
    ['/api/v1/namespaces', { metadata: { name: 'o' } }, 'NamespaceList'],
    ['/apis/networking.k8s.io/v1/ingressclasses', { metadata: { name: 'o' }, spec: { controller: 'example.com/nginx' } }, 'IngressClassList'],
    ['/apis/discovery.k8s.io/v1/namespaces/default/endpointslices', { metadata: { name: 'o' }, addressType: 'IPv4', endpoints: [] }, 'EndpointSliceList'],
    ['/apis/gateway.networking.k8s.io/v1/gatewayclasses', { metadata: { name: 'o' }, spec: { controllerName: 'example.com/nginx' } }, 'GatewayClassList'],
    ['/apis/gateway.networking.k8s.io/v1/namespaces/default/backendtlspolicies', { metadata: { name: 'o' }, spec: {} }, 'BackendTLSPolicyList'],
    ['/apis/gateway.networking.k8s.io/v1/namespaces/default/referencegrants', { metadata: { name: 'o' }, spec: {} }, 'ReferenceGrantList'],
  ] as const)('serves %s', async (collection, body, listKind) => {
    const fake = await startFake();
    const created = await call(fake, 'POST', collection, { body });
    expect(created.status).toBe(201);
    expect(metadataOf(created.json).namespace).toBe(collection.includes('/namespaces/default/') ? 'default' : undefined);
    const list = (await call(fake, 'GET', collection)).json;
    expect(list.kind).toBe(listKind);
    expect((list.items as JsonObject[]).map((item) => metadataOf(item).name)).toContain('o');
    expect((await call(fake, 'GET', `${collection}/o`)).json).toMatchObject({ metadata: { name: 'o' } });
  });

  it('serves no cluster-scoped kind under a namespace, and no /status where the kind has none', async () => {
    const fake = await startFake();
    fake.create({ apiVersion: 'gateway.networking.k8s.io/v1', kind: 'ReferenceGrant', metadata: { name: 'g', namespace: 'default' }, spec: {} });
    expect((await call(fake, 'GET', '/apis/networking.k8s.io/v1/namespaces/default/ingressclasses')).status).toBe(404);
    expect((await call(fake, 'GET', '/apis/gateway.networking.k8s.io/v1/namespaces/default/referencegrants/g/status')).status).toBe(404);
    expect((await call(fake, 'GET', '/api/v1/namespaces/default/configmaps/x/status')).status).toBe(404);
  });

  it('deletes a namespace: Terminating first, then its contents, then itself; the built-in ones stay', async () => {
    const fake = await startFake();
    fake.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team' } });
    fake.create({ ...ingress('a'), metadata: { name: 'a', namespace: 'team' } });
    const namespaces = await watch(fake, `/api/v1/namespaces?watch=true&resourceVersion=${fake.resourceVersion}`);
    const ingresses = await watch(fake, `/apis/networking.k8s.io/v1/ingresses?watch=true&resourceVersion=${fake.resourceVersion}`);
    const answer = await call(fake, 'DELETE', '/api/v1/namespaces/team');
    expect(answer.json).toMatchObject({ kind: 'Namespace', status: { phase: 'Terminating' }, metadata: { deletionTimestamp: expect.any(String) } });
    expect(await namespaces.next()).toMatchObject({ type: 'MODIFIED', object: { status: { phase: 'Terminating' } } });
    expect(await ingresses.next()).toMatchObject({ type: 'DELETED', object: { metadata: { name: 'a', namespace: 'team' } } });
    expect(await namespaces.next()).toMatchObject({ type: 'DELETED', object: { metadata: { name: 'team' } } });
    const forbidden = await call(fake, 'DELETE', '/api/v1/namespaces/default');
    expect(forbidden.status).toBe(403);
    expect(forbidden.json).toMatchObject({ reason: 'Forbidden', message: 'namespaces "default" is forbidden: this namespace may not be deleted' });
  });

  it('checks the name of a PUT body against the URL', async () => {
    const fake = await startFake();
    fake.create(ingress('a'));
    const answer = await call(fake, 'PUT', `${INGRESSES}/a`, { body: ingress('b') });
    expect(answer.status).toBe(400);
    expect(answer.json.message).toBe('the name of the object (b) does not match the name on the URL (a)');
  });

  it('lets test-side helpers create, update and delete with the same watch events as the API', async () => {
    const fake = await startFake();
    const stream = await watch(fake, `${INGRESSES}?watch=true&resourceVersion=${fake.resourceVersion}`);
    fake.create(ingress('a'));
    fake.update(ingress('a', 'changed.example.com'));
    fake.delete({ apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', namespace: 'default', name: 'a' });
    expect((await stream.next()).type).toBe('ADDED');
    expect(await stream.next()).toMatchObject({ type: 'MODIFIED', object: { spec: { rules: [{ host: 'changed.example.com' }] } } });
    expect((await stream.next()).type).toBe('DELETED');
    expect(fake.get({ apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', name: 'a' })).toBeUndefined();
  });
});

describe('fake API server: LIST', () => {
  async function seeded(): Promise<FakeApiServer> {
    const fake = await startFake();
    fake.create(ingress('a', 'a.example.com', { app: 'web', tier: 'front' }));
    fake.create(ingress('b', 'b.example.com', { app: 'api' }));
    fake.create(ingress('c', 'c.example.com', { app: 'web' }));
    fake.create({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'tls', namespace: 'default' }, type: 'kubernetes.io/tls', data: { 'tls.crt': '', 'tls.key': '' } });
    fake.create({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'opaque', namespace: 'default' }, data: {} });
    return fake;
  }

  const names = (list: JsonObject) => (list.items as JsonObject[]).map((item) => metadataOf(item).name);

  it('answers a typed list whose items carry no kind/apiVersion; CRD list items do carry them', async () => {
    const fake = await seeded();
    fake.create(gateway('gw'));
    const list = (await call(fake, 'GET', INGRESSES)).json;
    expect(list).toMatchObject({ kind: 'IngressList', apiVersion: 'networking.k8s.io/v1', metadata: { resourceVersion: String(fake.resourceVersion) } });
    for (const item of list.items as JsonObject[]) {
      expect(item.kind).toBeUndefined();
      expect(item.apiVersion).toBeUndefined();
    }
    const gateways = (await call(fake, 'GET', GATEWAYS)).json;
    expect(gateways).toMatchObject({ kind: 'GatewayList', items: [{ kind: 'Gateway', apiVersion: 'gateway.networking.k8s.io/v1' }] });
  });

  it('filters by label selector: equality, inequality, set membership and existence', async () => {
    const fake = await seeded();
    const select = async (selector: string) => names((await call(fake, 'GET', `${INGRESSES}?labelSelector=${encodeURIComponent(selector)}`)).json);
    expect(await select('app=web')).toEqual(['a', 'c']);
    expect(await select('app==web,tier=front')).toEqual(['a']);
    expect(await select('app!=web')).toEqual(['b']);
    expect(await select('app in (api, web)')).toEqual(['a', 'b', 'c']);
    expect(await select('app notin (web)')).toEqual(['b']);
    expect(await select('tier')).toEqual(['a']);
    expect(await select('!tier')).toEqual(['b', 'c']);
  });

  it('filters by field selector (metadata.name, metadata.namespace, and type for Secrets) and refuses unknown fields', async () => {
    const fake = await seeded();
    expect(names((await call(fake, 'GET', `${INGRESSES}?fieldSelector=metadata.name%3Db`)).json)).toEqual(['b']);
    expect(names((await call(fake, 'GET', `/apis/networking.k8s.io/v1/ingresses?fieldSelector=metadata.namespace%3Ddefault,metadata.name!%3Db`)).json)).toEqual(['a', 'c']);
    expect(names((await call(fake, 'GET', `/api/v1/secrets?fieldSelector=type%3Dkubernetes.io/tls`)).json)).toEqual(['tls']);
    const unknown = await call(fake, 'GET', `${INGRESSES}?fieldSelector=spec.ingressClassName%3Dx`);
    expect(unknown.status).toBe(400);
    expect(unknown.json).toMatchObject({ reason: 'BadRequest', message: '"spec.ingressClassName" is not a known field selector: only "metadata.name", "metadata.namespace"' });
  });

  it('pages with limit and continue from one snapshot, with remainingItemCount', async () => {
    const fake = await seeded();
    const first = (await call(fake, 'GET', `${INGRESSES}?limit=2`)).json;
    expect(names(first)).toEqual(['a', 'b']);
    expect(metadataOf(first).remainingItemCount).toBe(1);
    const token = String(metadataOf(first).continue);
    // Changes after the first page do not show in the next one: it comes from the same snapshot.
    fake.create(ingress('d'));
    const second = (await call(fake, 'GET', `${INGRESSES}?limit=2&continue=${encodeURIComponent(token)}`)).json;
    expect(names(second)).toEqual(['c']);
    expect(metadataOf(second).continue).toBeUndefined();
    expect(metadataOf(second).resourceVersion).toBe(metadataOf(first).resourceVersion);
  });

  it('answers 410 Expired with an inconsistent continue token once the snapshot of a continue token is compacted', async () => {
    const fake = await seeded();
    const first = (await call(fake, 'GET', `${INGRESSES}?limit=1`)).json;
    fake.create(ingress('d'));
    fake.compact();
    const answer = await call(fake, 'GET', `${INGRESSES}?limit=1&continue=${encodeURIComponent(String(metadataOf(first).continue))}`);
    expect(answer.status).toBe(410);
    expect(answer.json).toMatchObject({ kind: 'Status', reason: 'Expired', code: 410, message: expect.stringMatching(/^The provided continue parameter is too old/) });
    const inconsistent = String(metadataOf(answer.json).continue);
    expect(names((await call(fake, 'GET', `${INGRESSES}?continue=${encodeURIComponent(inconsistent)}`)).json)).toEqual(['b', 'c', 'd']);
  });

  it('serves resourceVersionMatch=Exact from history, 410 once compacted; NotOlderThan serves the latest', async () => {
    const fake = await seeded();
    const before = fake.resourceVersion;
    fake.delete({ apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', name: 'a' });
    const exact = (await call(fake, 'GET', `${INGRESSES}?resourceVersion=${before}&resourceVersionMatch=Exact`)).json;
    expect(names(exact)).toEqual(['a', 'b', 'c']);
    expect(metadataOf(exact).resourceVersion).toBe(String(before));
    const notOlder = (await call(fake, 'GET', `${INGRESSES}?resourceVersion=${before}&resourceVersionMatch=NotOlderThan`)).json;
    expect(names(notOlder)).toEqual(['b', 'c']);
    expect((await call(fake, 'GET', `${INGRESSES}?resourceVersion=0`)).json.items).toHaveLength(2);
    fake.compact();
    const tooOld = await call(fake, 'GET', `${INGRESSES}?resourceVersion=${before}&resourceVersionMatch=Exact`);
    expect(tooOld.status).toBe(410);
    expect(tooOld.json).toMatchObject({ reason: 'Expired', message: 'The resourceVersion for the provided list is too old.' });
    const invalidMatch = await call(fake, 'GET', `${INGRESSES}?resourceVersionMatch=Exact`);
    expect(invalidMatch.status).toBe(422);
  });

  it('answers a resourceVersion it has not reached with 504 Timeout (Too large resource version) after a short wait', async () => {
    const fake = await seeded();
    const answer = await call(fake, 'GET', `${INGRESSES}?resourceVersion=${fake.resourceVersion + 100}&resourceVersionMatch=NotOlderThan`);
    expect(answer.status).toBe(504);
    expect(answer.json).toMatchObject({ reason: 'Timeout', details: { causes: [{ reason: 'ResourceVersionTooLarge' }] } });
  });
});

describe('fake API server: WATCH', () => {
  it('streams chunked newline-delimited events, with kind/apiVersion, after the given resourceVersion', async () => {
    const fake = await startFake();
    fake.create(ingress('old'));
    const since = fake.resourceVersion;
    const stream = await watch(fake, `${INGRESSES}?watch=true&resourceVersion=${since}`);
    const response = await stream.response;
    expect(response.statusCode).toBe(200);
    expect(response.headers['transfer-encoding']).toBe('chunked');
    expect(response.headers['content-type']).toBe('application/json');
    const created = fake.create(ingress('a'));
    fake.update({ ...ingress('a', 'other.example.com') });
    fake.delete({ apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', name: 'a' });
    const added = await stream.next();
    expect(added).toMatchObject({ type: 'ADDED', object: { kind: 'Ingress', apiVersion: 'networking.k8s.io/v1', metadata: { name: 'a' } } });
    expect(resourceVersionOf(added.object)).toBe(resourceVersionOf(created));
    const modified = await stream.next();
    expect(modified.type).toBe('MODIFIED');
    const deleted = await stream.next();
    expect(deleted).toMatchObject({ type: 'DELETED', object: { metadata: { name: 'a' } } });
    // A deletion has a resourceVersion of its own.
    expect(resourceVersionOf(deleted.object)).toBeGreaterThan(resourceVersionOf(modified.object));
    expect(stream.events.map((event) => metadataOf(event.object).name)).not.toContain('old');
  });

  it('replays history from an older resourceVersion, and starts with ADDED for every object when none is given', async () => {
    const fake = await startFake();
    const start = fake.resourceVersion;
    fake.create(ingress('a'));
    fake.create(ingress('b'));
    fake.delete({ apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', name: 'a' });
    const replay = await watch(fake, `${INGRESSES}?watch=1&resourceVersion=${start}`);
    expect([(await replay.next()).type, (await replay.next()).type, (await replay.next()).type]).toEqual(['ADDED', 'ADDED', 'DELETED']);
    const fresh = await watch(fake, `${INGRESSES}?watch=true`);
    expect(await fresh.next()).toMatchObject({ type: 'ADDED', object: { metadata: { name: 'b' } } });
    const legacy = await watch(fake, '/apis/networking.k8s.io/v1/watch/namespaces/default/ingresses/b');
    expect(await legacy.next()).toMatchObject({ type: 'ADDED', object: { metadata: { name: 'b' } } });
  });

  it('sends BOOKMARK events with only kind, apiVersion and resourceVersion when asked for them', async () => {
    const fake = await startFake({ bookmarkIntervalMs: 50 });
    fake.create(ingress('a'));
    const stream = await watch(fake, `${INGRESSES}?watch=true&allowWatchBookmarks=true&resourceVersion=${fake.resourceVersion}`);
    const bookmark = await stream.next();
    expect(bookmark).toEqual({ type: 'BOOKMARK', object: { kind: 'Ingress', apiVersion: 'networking.k8s.io/v1', metadata: { resourceVersion: String(fake.resourceVersion) } } });
    const without = await watch(fake, `${INGRESSES}?watch=true&resourceVersion=${fake.resourceVersion}`);
    fake.create(ingress('b'));
    expect((await without.next()).type).toBe('ADDED');
  });

  it('streams a list (sendInitialEvents): the current objects as ADDED, then a BOOKMARK marking their end', async () => {
    const fake = await startFake();
    fake.create(ingress('a'));
    const refused = await call(fake, 'GET', `${INGRESSES}?watch=true&sendInitialEvents=true`);
    expect(refused.status).toBe(422);
    const stream = await watch(fake, `${INGRESSES}?watch=true&sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&resourceVersion=${fake.resourceVersion}`);
    expect(await stream.next()).toMatchObject({ type: 'ADDED', object: { metadata: { name: 'a' } } });
    expect(await stream.next()).toEqual({
      type: 'BOOKMARK',
      object: { kind: 'Ingress', apiVersion: 'networking.k8s.io/v1', metadata: { resourceVersion: String(fake.resourceVersion), annotations: { 'k8s.io/initial-events-end': 'true' } } },
    });
  });

  it('ends the stream cleanly after timeoutSeconds', async () => {
    const fake = await startFake();
    const stream = await watch(fake, `${INGRESSES}?watch=true&timeoutSeconds=1&resourceVersion=${fake.resourceVersion}`);
    expect(await stream.ended).toBe('clean');
    expect(stream.events).toEqual([]);
  });

  it('answers a compacted resourceVersion with HTTP 200 and one ERROR event carrying a 410 Expired Status, then closes', async () => {
    const fake = await startFake();
    const old = fake.resourceVersion;
    fake.create(ingress('a'));
    fake.create(ingress('b'));
    fake.compact();
    const stream = await watch(fake, `${INGRESSES}?watch=true&resourceVersion=${old}`);
    expect((await stream.response).statusCode).toBe(200);
    const error = await stream.next();
    expect(error).toEqual({
      type: 'ERROR',
      object: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: `too old resource version: ${old} (${fake.resourceVersion})`, reason: 'Expired', code: 410 },
    });
    expect(await stream.ended).toBe('clean');
    expect(stream.events).toHaveLength(1);
  });

  it('applies label selectors as the watch cache does: leaving the selection is DELETED, entering it is ADDED', async () => {
    const fake = await startFake();
    fake.create(ingress('a', 'a.example.com', { app: 'web' }));
    const stream = await watch(fake, `${INGRESSES}?watch=true&labelSelector=app%3Dweb&resourceVersion=${fake.resourceVersion}`);
    const relabelled = fake.update(ingress('a', 'a.example.com', { app: 'other' }));
    fake.create(ingress('unrelated', 'u.example.com', { app: 'other' }));
    fake.update(ingress('a', 'a.example.com', { app: 'web' }));
    const left = await stream.next();
    // The previous state of the object, at the resourceVersion of the change that moved it out.
    expect(left).toMatchObject({ type: 'DELETED', object: { metadata: { name: 'a', labels: { app: 'web' } } } });
    expect(resourceVersionOf(left.object)).toBe(resourceVersionOf(relabelled));
    expect(await stream.next()).toMatchObject({ type: 'ADDED', object: { metadata: { name: 'a', labels: { app: 'web' } } } });
    expect(stream.events).toHaveLength(2);
  });

  it('applies field selectors to watches', async () => {
    const fake = await startFake();
    const stream = await watch(fake, `${INGRESSES}?watch=true&fieldSelector=metadata.name%3Db&resourceVersion=${fake.resourceVersion}`);
    fake.create(ingress('a'));
    fake.create(ingress('b'));
    expect(await stream.next()).toMatchObject({ type: 'ADDED', object: { metadata: { name: 'b' } } });
    expect(stream.events).toHaveLength(1);
  });

  it('serves one object set in every version of a multi-version CRD', async () => {
    const fake = await startFake();
    const stream = await watch(fake, `/apis/gateway.networking.k8s.io/v1alpha2/namespaces/default/tlsroutes?watch=true&resourceVersion=${fake.resourceVersion}`);
    fake.create({ apiVersion: 'gateway.networking.k8s.io/v1', kind: 'TLSRoute', metadata: { name: 'r', namespace: 'default' }, spec: { hostnames: ['r.example.com'] } });
    expect(await stream.next()).toMatchObject({ type: 'ADDED', object: { apiVersion: 'gateway.networking.k8s.io/v1alpha2', kind: 'TLSRoute' } });
    expect((await call(fake, 'GET', '/apis/gateway.networking.k8s.io/v1alpha3/namespaces/default/tlsroutes/r')).json.apiVersion).toBe('gateway.networking.k8s.io/v1alpha3');
  });
});

describe('fake API server: status subresources', () => {
  it('PUT /status changes only the status and the resourceVersion, not the spec nor the generation', async () => {
    const fake = await startFake();
    const created = fake.create(gateway('gw'));
    const body = structuredClone(created);
    (body.spec as JsonObject).gatewayClassName = 'sneaky';
    body.status = { conditions: [condition('Accepted')] };
    const answer = await call(fake, 'PUT', `${GATEWAYS}/gw/status`, { body });
    expect(answer.status).toBe(200);
    expect(answer.json).toMatchObject({ spec: { gatewayClassName: 'nginx' }, status: { conditions: [{ type: 'Accepted' }] }, metadata: { generation: 1 } });
    expect(resourceVersionOf(answer.json)).toBeGreaterThan(resourceVersionOf(created));
  });

  it('the main resource ignores .status where there is a status subresource', async () => {
    const fake = await startFake();
    const created = (await call(fake, 'POST', GATEWAYS, { body: { ...gateway('gw'), status: { conditions: [condition('Accepted')] } } })).json;
    expect(created.status).toBeUndefined();
    const body: JsonObject = { ...structuredClone(created), status: { conditions: [condition('Programmed')] } };
    (body.spec as JsonObject).gatewayClassName = 'other';
    const updated = (await call(fake, 'PUT', `${GATEWAYS}/gw`, { body })).json;
    expect(updated.status).toBeUndefined();
    expect(metadataOf(updated).generation).toBe(2);
  });

  it('PATCHes status with merge patches and JSON patches (add, replace, remove, test)', async () => {
    const fake = await startFake();
    fake.create(gateway('gw'));
    const merge = await call(fake, 'PATCH', `${GATEWAYS}/gw/status`, { contentType: 'application/merge-patch+json', body: { status: { conditions: [condition('Accepted')] } } });
    expect(merge.json).toMatchObject({ status: { conditions: [{ type: 'Accepted', status: 'True' }] } });
    const json = await call(fake, 'PATCH', `${GATEWAYS}/gw/status`, {
      contentType: 'application/json-patch+json',
      body: [
        { op: 'test', path: '/status/conditions/0/type', value: 'Accepted' },
        { op: 'add', path: '/status/conditions/-', value: condition('Programmed') },
        { op: 'replace', path: '/status/conditions/0/status', value: 'False' },
        { op: 'add', path: '/status/addresses', value: [{ type: 'IPAddress', value: '10.0.0.1' }] },
        { op: 'remove', path: '/status/addresses' },
      ],
    });
    expect(json.status).toBe(200);
    expect(json.json.status).toEqual({ conditions: [{ ...condition('Accepted'), status: 'False' }, condition('Programmed')] });
    const failedTest = await call(fake, 'PATCH', `${GATEWAYS}/gw/status`, { contentType: 'application/json-patch+json', body: [{ op: 'test', path: '/status/conditions/0/type', value: 'Nope' }] });
    expect(failedTest.status).toBe(422);
    expect(failedTest.json).toMatchObject({ reason: 'Invalid' });
  });

  it('accepts strategic merge patches for built-in kinds and answers 415 for Gateway API (CRD) kinds', async () => {
    const fake = await startFake();
    fake.create(ingress('a'));
    fake.create(gateway('gw'));
    const builtIn = await call(fake, 'PATCH', `${INGRESSES}/a/status`, {
      contentType: 'application/strategic-merge-patch+json',
      body: { status: { loadBalancer: { ingress: [{ ip: '192.0.2.1' }] } } },
    });
    expect(builtIn.status).toBe(200);
    expect(builtIn.json.status).toEqual({ loadBalancer: { ingress: [{ ip: '192.0.2.1' }] } });
    const crd = await call(fake, 'PATCH', `${GATEWAYS}/gw/status`, { contentType: 'application/strategic-merge-patch+json', body: { status: {} } });
    expect(crd.status).toBe(415);
    expect(crd.json).toMatchObject({
      reason: 'UnsupportedMediaType',
      code: 415,
      message: 'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml',
    });
  });

  it('merges lists by their merge key under a strategic merge patch (Service ports by port)', async () => {
    const fake = await startFake();
    fake.create({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: 'default' }, spec: { ports: [{ port: 80, name: 'http' }, { port: 443, name: 'https' }] } });
    const patched = await call(fake, 'PATCH', '/api/v1/namespaces/default/services/web', {
      contentType: 'application/strategic-merge-patch+json',
      body: { spec: { ports: [{ port: 443, name: 'tls' }, { port: 8080, name: 'alt' }] } },
    });
    expect((patched.json.spec as JsonObject).ports).toEqual([{ port: 80, name: 'http' }, { port: 443, name: 'tls' }, { port: 8080, name: 'alt' }]);
  });

  it('a status write that changes nothing keeps the resourceVersion and sends no watch event', async () => {
    const fake = await startFake();
    fake.create(gateway('gw'));
    const first = (await call(fake, 'PATCH', `${GATEWAYS}/gw/status`, { contentType: 'application/merge-patch+json', body: { status: { conditions: [condition('Accepted')] } } })).json;
    const stream = await watch(fake, `${GATEWAYS}?watch=true&resourceVersion=${fake.resourceVersion}`);
    const again = (await call(fake, 'PATCH', `${GATEWAYS}/gw/status`, { contentType: 'application/merge-patch+json', body: { status: { conditions: [condition('Accepted')] } } })).json;
    expect(metadataOf(again).resourceVersion).toBe(metadataOf(first).resourceVersion);
    fake.create(gateway('marker'));
    expect(await stream.next()).toMatchObject({ type: 'ADDED', object: { metadata: { name: 'marker' } } });
  });

  it('validates Gateway API conditions against the metav1.Condition schema', async () => {
    const fake = await startFake();
    fake.create(gateway('gw'));
    const answer = await call(fake, 'PATCH', `${GATEWAYS}/gw/status`, {
      contentType: 'application/merge-patch+json',
      body: { status: { conditions: [{ type: 'Accepted', status: 'Maybe', reason: 'Fine' }] } },
    });
    expect(answer.status).toBe(422);
    expect(answer.json).toMatchObject({ reason: 'Invalid', details: { kind: 'Gateway', group: 'gateway.networking.k8s.io', name: 'gw' } });
    const fields = ((answer.json.details as JsonObject).causes as JsonObject[]).map((cause) => `${cause.field} ${cause.reason}`);
    expect(fields).toEqual(['status.conditions[0].lastTransitionTime FieldValueRequired', 'status.conditions[0].message FieldValueRequired', 'status.conditions[0].status FieldValueNotSupported']);
  });

  it('requires metadata.resourceVersion on a PUT to a CRD kind, as CRDs allow no unconditional update', async () => {
    const fake = await startFake();
    fake.create(gateway('gw'));
    const answer = await call(fake, 'PUT', `${GATEWAYS}/gw/status`, { body: { ...gateway('gw'), status: { conditions: [condition('Accepted')] } } });
    expect(answer.status).toBe(422);
    expect(answer.json.message).toBe('Gateway.gateway.networking.k8s.io "gw" is invalid: metadata.resourceVersion: Invalid value: 0x0: must be specified for an update');
  });

  it('refuses server-side apply (application/apply-patch+yaml) loudly: the fake does not track field managers', async () => {
    const fake = await startFake();
    fake.create(ingress('a'));
    const answer = await call(fake, 'PATCH', `${INGRESSES}/a/status?fieldManager=test`, { contentType: 'application/apply-patch+yaml', body: 'status: {}' });
    expect(answer.status).toBe(415);
  });
});

describe('fake API server: Leases', () => {
  function lease(renewTime: string, resourceVersion?: string): JsonObject {
    return {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: 'leader', namespace: 'default', ...(resourceVersion ? { resourceVersion } : {}) },
      spec: { holderIdentity: 'pod-a', leaseDurationSeconds: 15, acquireTime: '2026-11-30T12:00:00.000000Z', renewTime, leaseTransitions: 0 },
    };
  }

  it('takes MicroTime with exactly six fractional digits and answers 400 for any other, in the decoder words', async () => {
    const fake = await startFake();
    const created = await call(fake, 'POST', LEASES, { body: lease('2026-11-30T12:00:00.123456Z') });
    expect(created.status).toBe(201);
    expect((created.json.spec as JsonObject).renewTime).toBe('2026-11-30T12:00:00.123456Z');
    for (const [renewTime, why] of [
      ['2026-11-30T12:00:01.123Z', 'cannot parse ".123Z" as ".000000"'],
      ['2026-11-30T12:00:01.123456789Z', 'cannot parse "789Z" as "Z07:00"'],
      ['2026-11-30T12:00:01Z', 'cannot parse "Z" as ".000000"'],
    ] as const) {
      const answer = await call(fake, 'PUT', `${LEASES}/leader`, { body: lease(renewTime, String(metadataOf(created.json).resourceVersion)) });
      expect(answer.status).toBe(400);
      expect(answer.json).toMatchObject({
        reason: 'BadRequest',
        message: `Lease in version "v1" cannot be handled as a Lease: parsing time "${renewTime}" as "2006-01-02T15:04:05.000000Z07:00": ${why}`,
      });
    }
  });

  it('answers a PATCH that leaves a malformed MicroTime with 422 on the patched object', async () => {
    const fake = await startFake();
    await call(fake, 'POST', LEASES, { body: lease('2026-11-30T12:00:00.123456Z') });
    const answer = await call(fake, 'PATCH', `${LEASES}/leader`, { contentType: 'application/merge-patch+json', body: { spec: { renewTime: '2026-11-30T12:00:02.5Z' } } });
    expect(answer.status).toBe(422);
    expect(answer.json).toMatchObject({ reason: 'Invalid', details: { causes: [{ field: 'patch', reason: 'FieldValueInvalid' }] } });
  });

  it('uses optimistic concurrency: a stale resourceVersion is 409 Conflict; a PUT without one is refused; a PUT may create', async () => {
    const fake = await startFake();
    const created = await call(fake, 'PUT', `${LEASES}/leader`, { body: lease('2026-11-30T12:00:00.123456Z') });
    expect(created.status).toBe(201);
    const version = String(metadataOf(created.json).resourceVersion);
    const renewed = await call(fake, 'PUT', `${LEASES}/leader`, { body: lease('2026-11-30T12:00:05.000000Z', version) });
    expect(renewed.status).toBe(200);
    const stale = await call(fake, 'PUT', `${LEASES}/leader`, { body: lease('2026-11-30T12:00:06.000000Z', version) });
    expect(stale.status).toBe(409);
    expect(stale.json.message).toBe('Operation cannot be fulfilled on leases.coordination.k8s.io "leader": the object has been modified; please apply your changes to the latest version and try again');
    expect((await call(fake, 'PUT', `${LEASES}/leader`, { body: lease('2026-11-30T12:00:06.000000Z') })).status).toBe(422);
  });
});

describe('fake API server: Events', () => {
  function event(overrides: JsonObject = {}): JsonObject {
    return {
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      metadata: { name: 'ing-a.1', namespace: 'default' },
      eventTime: '2026-11-30T12:00:00.000001Z',
      reportingController: 'ingress2nginx.example.com/sidecar',
      reportingInstance: 'pod-a',
      action: 'Render',
      reason: 'Rendered',
      type: 'Normal',
      note: 'rendered 3 servers',
      regarding: { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', namespace: 'default', name: 'a' },
      ...overrides,
    };
  }

  it('creates a valid events.k8s.io/v1 Event, visible as a core v1 Event too', async () => {
    const fake = await startFake();
    const created = await call(fake, 'POST', EVENTS_V1, { body: event() });
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({ kind: 'Event', apiVersion: 'events.k8s.io/v1', note: 'rendered 3 servers', regarding: { name: 'a' } });
    const core = (await call(fake, 'GET', '/api/v1/namespaces/default/events/ing-a.1')).json;
    expect(core).toMatchObject({ apiVersion: 'v1', message: 'rendered 3 servers', involvedObject: { name: 'a' }, reportingComponent: 'ingress2nginx.example.com/sidecar' });
  });

  it('answers 422 Invalid with causes for a missing eventTime, controller, instance, action, reason or a bad type', async () => {
    const fake = await startFake();
    fake.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team' } });
    const invalid = await call(fake, 'POST', '/apis/events.k8s.io/v1/namespaces/team/events', {
      body: event({ reportingController: '', reportingInstance: '', action: '', reason: '', type: 'Info', regarding: { kind: 'Ingress', name: 'a' }, metadata: { name: 'e', namespace: 'team' } }),
    });
    expect(invalid.status).toBe(422);
    expect(invalid.json).toMatchObject({ kind: 'Status', status: 'Failure', reason: 'Invalid', code: 422, details: { name: 'e', group: 'events.k8s.io', kind: 'Event' } });
    expect(String(invalid.json.message)).toMatch(/^Event\.events\.k8s\.io "e" is invalid: \[/);
    const causes = ((invalid.json.details as JsonObject).causes as JsonObject[]).map((cause) => `${cause.field}: ${cause.reason}`);
    expect(causes).toEqual(
      expect.arrayContaining([
        'involvedObject.namespace: FieldValueInvalid',
        'reportingController: FieldValueRequired',
        'reportingInstance: FieldValueRequired',
        'action: FieldValueRequired',
        'reason: FieldValueRequired',
        'type: FieldValueInvalid',
      ]),
    );
    const noTime = await call(fake, 'POST', EVENTS_V1, { body: event({ eventTime: null }) });
    expect(((noTime.json.details as JsonObject).causes as JsonObject[]).map((cause) => cause.field)).toContain('eventTime');
    const shortTime = await call(fake, 'POST', EVENTS_V1, { body: event({ eventTime: '2026-11-30T12:00:00.1Z' }) });
    expect(shortTime.status).toBe(400);
  });

  it('accepts a PATCH of series for a repeated event and refuses changes to other fields', async () => {
    const fake = await startFake();
    await call(fake, 'POST', EVENTS_V1, { body: event() });
    const series = await call(fake, 'PATCH', `${EVENTS_V1}/ing-a.1`, {
      contentType: 'application/merge-patch+json',
      body: { series: { count: 2, lastObservedTime: '2026-11-30T12:01:00.000000Z' } },
    });
    expect(series.status).toBe(200);
    expect(series.json).toMatchObject({ series: { count: 2 } });
    const badSeries = await call(fake, 'PATCH', `${EVENTS_V1}/ing-a.1`, { contentType: 'application/merge-patch+json', body: { series: { count: 1, lastObservedTime: '2026-11-30T12:01:00.000000Z' } } });
    expect(badSeries.status).toBe(422);
    const note = await call(fake, 'PATCH', `${EVENTS_V1}/ing-a.1`, { contentType: 'application/merge-patch+json', body: { note: 'changed' } });
    expect(note.status).toBe(422);
    expect(String(note.json.message)).toContain('field is immutable');
  });
});

describe('fake API server: faults on demand', () => {
  it('fails the next N matching requests with the given status, then serves again', async () => {
    const fake = await startFake();
    fake.create(ingress('a'));
    fake.failNext({ method: 'PATCH', path: /\/status$/, count: 2 });
    const patch = () => call(fake, 'PATCH', `${INGRESSES}/a/status`, { contentType: 'application/merge-patch+json', body: { status: {} } });
    expect((await call(fake, 'GET', `${INGRESSES}/a`)).status).toBe(200);
    const first = await patch();
    expect(first.status).toBe(500);
    expect(first.json).toMatchObject({ kind: 'Status', reason: 'InternalError', code: 500 });
    expect((await patch()).status).toBe(500);
    expect((await patch()).status).toBe(200);
    fake.failNext({ verb: 'list', status: 429 });
    const throttled = await call(fake, 'GET', INGRESSES);
    expect(throttled.json).toMatchObject({ reason: 'TooManyRequests', code: 429 });
  });

  it('refuses connections, then listens again on the same port', async () => {
    const fake = await startFake();
    const port = fake.port;
    const stream = await watch(fake, `${INGRESSES}?watch=true&resourceVersion=${fake.resourceVersion}`);
    await fake.refuseConnections();
    expect(await stream.ended).toBe('cut');
    await expect(call(fake, 'GET', '/version')).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    await fake.acceptConnections();
    expect(fake.port).toBe(port);
    expect((await call(fake, 'GET', '/version')).status).toBe(200);
  });

  it('hangs open watch streams silent until released, then sends what they missed in order', async () => {
    const fake = await startFake({ bookmarkIntervalMs: 20 });
    const stream = await watch(fake, `${INGRESSES}?watch=true&allowWatchBookmarks=true&resourceVersion=${fake.resourceVersion}`);
    await stream.next();
    const release = fake.hangWatches();
    const seen = stream.events.length;
    fake.create(ingress('a'));
    fake.create(ingress('b'));
    // Bounded pause: long enough for several bookmark ticks and for the events to arrive if sent.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(stream.events).toHaveLength(seen);
    expect(fake.openWatches()).toEqual([expect.objectContaining({ resource: 'ingresses', hung: true })]);
    release();
    const after = [];
    while (after.length < 2) {
      const next = await stream.next();
      if (next.type !== 'BOOKMARK') after.push(metadataOf(next.object).name);
    }
    expect(after).toEqual(['a', 'b']);
  });

  it('hangs future watches without even response headers until released', async () => {
    const fake = await startFake();
    const release = fake.hangWatches({ existing: false, future: true, resource: 'ingresses' });
    const stream = new WatchClient(fake, `${INGRESSES}?watch=true&resourceVersion=${fake.resourceVersion}`);
    watches.push(stream);
    let answered = false;
    void stream.response.then(() => (answered = true));
    await fake.waitFor(() => fake.openWatches().find((open) => open.hung));
    fake.create(ingress('a'));
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(answered).toBe(false);
    // Other resources are not affected.
    const services = await watch(fake, `/api/v1/namespaces/default/services?watch=true&resourceVersion=${fake.resourceVersion}`);
    expect((await services.response).statusCode).toBe(200);
    release();
    expect((await stream.response).statusCode).toBe(200);
    expect(await stream.next()).toMatchObject({ type: 'ADDED', object: { metadata: { name: 'a' } } });
  });

  it('drops open watch streams mid-stream (no terminating chunk)', async () => {
    const fake = await startFake();
    const stream = await watch(fake, `${INGRESSES}?watch=true&resourceVersion=${fake.resourceVersion}`);
    const other = await watch(fake, `/api/v1/namespaces/default/services?watch=true&resourceVersion=${fake.resourceVersion}`);
    expect(fake.dropWatches('ingresses')).toBe(1);
    expect(await stream.ended).toBe('cut');
    await fake.waitFor(() => fake.openWatches().length === 1);
    expect(fake.openWatches()).toEqual([expect.objectContaining({ resource: 'services' })]);
    other.close();
  });
});

describe('fake API server: observation', () => {
  it('logs requests with method, path, query, content type, parsed body and verb', async () => {
    const fake = await startFake();
    fake.create(ingress('a'));
    await call(fake, 'GET', `${INGRESSES}?labelSelector=app%3Dweb`);
    await call(fake, 'PATCH', `${INGRESSES}/a/status`, { contentType: 'application/merge-patch+json', body: { status: { loadBalancer: {} } } });
    await call(fake, 'PATCH', `${INGRESSES}/a/status`, { contentType: 'application/merge-patch+json', body: { status: { loadBalancer: {} } } });
    const statusPatches = fake.requests((request) => request.verb === 'patch' && request.resource === 'ingresses' && request.subresource === 'status');
    expect(statusPatches).toHaveLength(2);
    expect(statusPatches[0]).toMatchObject({ method: 'PATCH', contentType: 'application/merge-patch+json', body: { status: { loadBalancer: {} } }, namespace: 'default', name: 'a', status: 200 });
    expect(fake.requests((request) => request.verb === 'list')).toEqual([expect.objectContaining({ query: { labelSelector: 'app=web' }, resource: 'ingresses' })]);
    fake.clearRequests();
    expect(fake.requests()).toEqual([]);
  });

  it('waits for a condition on the store', async () => {
    const fake = await startFake();
    const seen = fake.waitFor(() => fake.get({ apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', name: 'late' }));
    await call(fake, 'POST', INGRESSES, { body: ingress('late') });
    expect(await seen).toMatchObject({ metadata: { name: 'late' } });
    await expect(fake.waitFor(() => false, 50)).rejects.toThrow(/condition not met/);
  });
});

describe('fake API server: connections', () => {
  it('closes every connection on close()', async () => {
    const fake = await FakeApiServer.start();
    const stream = await openWatch(fake, `${INGRESSES}?watch=true`);
    await fake.close();
    expect(await stream.ended).toBe('cut');
    const refused = await new Promise<string>((resolve) => {
      const socket = net.connect(fake.port, '127.0.0.1');
      socket.on('connect', () => resolve('connected'));
      socket.on('error', (error: NodeJS.ErrnoException) => resolve(String(error.code)));
    });
    expect(refused).toBe('ECONNREFUSED');
  });
});

/** Splits kubectl's stream of pretty-printed JSON documents into objects as they complete. */
class JsonDocumentStream {
  readonly documents: JsonObject[] = [];
  #text = '';

  push(chunk: string): void {
    this.#text += chunk;
    let depth = 0;
    let inString = false;
    let start = -1;
    let consumed = 0;
    for (let index = 0; index < this.#text.length; index++) {
      const char = this.#text[index];
      if (inString) {
        if (char === '\\') index++;
        else if (char === '"') inString = false;
      } else if (char === '"') inString = true;
      else if (char === '{') {
        if (depth === 0) start = index;
        depth++;
      } else if (char === '}') {
        depth--;
        if (depth === 0) {
          this.documents.push(JSON.parse(this.#text.slice(start, index + 1)) as JsonObject);
          consumed = index + 1;
        }
      }
    }
    this.#text = this.#text.slice(consumed);
  }
}

describe('fake API server: kubectl', () => {
  const runners: KubectlRunner[] = [];

  afterEach(async () => {
    await Promise.all(runners.splice(0).map((runner) => runner.dispose()));
  });

  /** A fake with TLS and a token (client-go sends a kubeconfig token only over TLS) and a kubectl for it. */
  async function withKubectl(options: FakeApiServerOptions = { tls: true, token: 'kubectl-token' }): Promise<{ fake: FakeApiServer; kubectl: KubectlRunner }> {
    requireKubectl();
    const fake = await startFake(options);
    const kubectl = await KubectlRunner.create(await fake.writeKubeconfig());
    runners.push(kubectl);
    return { fake, kubectl };
  }

  it('finds a kubectl (a missing one fails the suite, never skips it)', () => {
    expect(requireKubectl().minorVersion).toBeGreaterThanOrEqual(20);
  });

  it('kubectl get: a list, one object, -o json, all namespaces, and a Gateway API kind', async () => {
    const { fake, kubectl } = await withKubectl();
    fake.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-b' } });
    fake.create(ingress('a'));
    fake.create({ ...ingress('z'), metadata: { name: 'z', namespace: 'team-b' } });
    fake.create({ apiVersion: 'gateway.networking.k8s.io/v1', kind: 'TLSRoute', metadata: { name: 'route', namespace: 'default' }, spec: { hostnames: ['r.example.com'] } });

    const table = await kubectl.run('get', 'ingresses');
    expect(table.split('\n')[0]).toMatch(/^NAME\s/);
    expect(table).toMatch(/^a\s/m);
    expect(table).not.toMatch(/^z\s/m);

    const one = JSON.parse(await kubectl.run('get', 'ingress', 'a', '-o', 'json')) as JsonObject;
    expect(one).toMatchObject({ kind: 'Ingress', apiVersion: 'networking.k8s.io/v1', metadata: { name: 'a', namespace: 'default' } });

    const all = JSON.parse(await kubectl.run('get', 'ingresses', '--all-namespaces', '-o', 'json')) as JsonObject;
    expect((all.items as JsonObject[]).map((item) => `${metadataOf(item).namespace}/${metadataOf(item).name}`)).toEqual(['default/a', 'team-b/z']);

    expect(await kubectl.run('get', 'tlsroutes', '-o', 'name')).toBe('tlsroute.gateway.networking.k8s.io/route');
    // With its discovery cache still warm kubectl asks for the resource and gets the 404 of a missing CRD;
    // with fresh discovery it knows the resource type is gone.
    fake.removeGroup();
    await expect(kubectl.run('get', 'tlsroutes')).rejects.toThrow(/NotFound.*the server could not find the requested resource/);
    await kubectl.forgetDiscovery();
    await expect(kubectl.run('get', 'tlsroutes')).rejects.toThrow(/doesn't have a resource type "tlsroutes"/);
  });

  it('kubectl get over plain HTTP without a token', async () => {
    const { fake, kubectl } = await withKubectl({});
    fake.create(ingress('plain'));
    expect(await kubectl.run('get', 'ingresses', '-o', 'name')).toBe('ingress.networking.k8s.io/plain');
  });

  it('kubectl get --watch sees an ADDED then a MODIFIED event made by the test', async () => {
    const { fake, kubectl } = await withKubectl();
    fake.create(ingress('existing'));
    const output = new JsonDocumentStream();
    const watcher = kubectl.spawn('get', 'ingresses', '--watch', '--output-watch-events', '-o', 'json');
    watcher.stdout!.setEncoding('utf8');
    watcher.stdout!.on('data', (chunk: string) => output.push(chunk));
    try {
      // kubectl lists first (existing objects print as ADDED), then watches from the list's resourceVersion.
      await fake.waitFor(() => fake.openWatches().some((open) => open.resource === 'ingresses'), 30_000);
      await fake.waitFor(() => output.documents.length >= 1, 30_000);
      fake.create(ingress('b'));
      fake.update(ingress('b', 'changed.example.com'));
      await fake.waitFor(() => output.documents.length >= 3, 30_000);
    } finally {
      watcher.kill();
      await watcher;
    }
    const events = output.documents.map((event) => `${event.type} ${metadataOf(event.object as JsonObject).name}`);
    expect(events).toEqual(['ADDED existing', 'ADDED b', 'MODIFIED b']);
    expect(((output.documents[2]!.object as JsonObject).spec as JsonObject).rules).toEqual([expect.objectContaining({ host: 'changed.example.com' })]);
    const watchRequest = fake.requests((request) => request.verb === 'watch' && request.resource === 'ingresses')[0]!;
    const listRequest = fake.requests((request) => request.verb === 'list' && request.resource === 'ingresses')[0]!;
    expect(watchRequest.query.resourceVersion).toBeDefined();
    expect(listRequest.status).toBe(200);
  });

  it('kubectl patch --type merge on the main resource changes the spec and leaves the status alone', async () => {
    const { fake, kubectl } = await withKubectl();
    fake.create(ingress('a'));
    fake.updateStatus({ ...ingress('a'), status: { loadBalancer: { ingress: [{ ip: '192.0.2.1' }] } } });
    await kubectl.run('patch', 'ingress', 'a', '--type', 'merge', '-p', JSON.stringify({ spec: { ingressClassName: 'nginx' }, status: { loadBalancer: {} } }));
    const patched = fake.get({ apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', name: 'a' })!;
    expect(patched).toMatchObject({ spec: { ingressClassName: 'nginx' }, status: { loadBalancer: { ingress: [{ ip: '192.0.2.1' }] } }, metadata: { generation: 2 } });
    // kubectl's default patch type for a CRD kind is a strategic merge patch, which the server refuses.
    fake.create(gateway('gw'));
    await expect(kubectl.run('patch', 'gateway', 'gw', '-p', '{"spec":{"gatewayClassName":"other"}}')).rejects.toThrow(/UnsupportedMediaType|unknown format/);
  });

  it('kubectl writes status through /status: replace --raw, and patch --subresource where this kubectl has it', async () => {
    const { fake, kubectl } = await withKubectl();
    fake.create(ingress('a'));
    const current = JSON.parse(await kubectl.run('get', 'ingress', 'a', '-o', 'json')) as JsonObject;
    current.status = { loadBalancer: { ingress: [{ ip: '192.0.2.9' }] } };
    (current.spec as JsonObject).ingressClassName = 'ignored-by-status';
    const file = `${path.dirname(await fake.writeKubeconfig())}/status.json`;
    await writeFile(file, JSON.stringify(current));
    await kubectl.run('replace', '--validate=false', '--raw', `${INGRESSES}/a/status`, '-f', file);
    const written = fake.get({ apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', name: 'a' })!;
    expect(written.status).toEqual({ loadBalancer: { ingress: [{ ip: '192.0.2.9' }] } });
    expect((written.spec as JsonObject).ingressClassName).toBeUndefined();
    expect(fake.requests((request) => request.method === 'PUT' && request.subresource === 'status')).toHaveLength(1);

    if (requireKubectl().patchesSubresources) {
      fake.create(gateway('gw'));
      await kubectl.run('patch', 'gateway', 'gw', '--subresource=status', '--type=merge', '-p', JSON.stringify({ status: { conditions: [condition('Accepted')] } }));
      expect(fake.get({ apiVersion: 'gateway.networking.k8s.io/v1', kind: 'Gateway', name: 'gw' })).toMatchObject({ status: { conditions: [{ type: 'Accepted' }] } });
      expect(fake.requests((request) => request.method === 'PATCH' && request.resource === 'gateways' && request.subresource === 'status')).toEqual([
        expect.objectContaining({ contentType: 'application/merge-patch+json', status: 200 }),
      ]);
    }
  });

  it('kubectl apply and create -f of an Ingress and a TLSRoute (validation off: the fake serves no OpenAPI document)', async () => {
    const { fake, kubectl } = await withKubectl();
    const dir = path.dirname(await fake.writeKubeconfig());
    const ingressFile = path.join(dir, 'ingress.yaml');
    const routeFile = path.join(dir, 'route.yaml');
    const writeIngress = (host: string) => writeFile(ingressFile, stringifyYaml({ ...ingress('applied', host), metadata: { name: 'applied' } }));
    const writeRoute = (host: string) =>
      writeFile(routeFile, stringifyYaml({ apiVersion: 'gateway.networking.k8s.io/v1alpha2', kind: 'TLSRoute', metadata: { name: 'route' }, spec: { parentRefs: [{ name: 'gw' }], hostnames: [host] } }));

    await writeIngress('one.example.com');
    expect(await kubectl.run('apply', '--validate=false', '-f', ingressFile)).toMatch(/ingress\.networking\.k8s\.io\/applied created/);
    await writeIngress('two.example.com');
    expect(await kubectl.run('apply', '--validate=false', '-f', ingressFile)).toMatch(/configured/);
    const applied = fake.get({ apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', name: 'applied' })!;
    expect(applied).toMatchObject({ spec: { rules: [{ host: 'two.example.com' }] }, metadata: { generation: 2 } });
    expect(fake.requests((request) => request.verb === 'patch' && request.resource === 'ingresses')[0]?.contentType).toBe('application/strategic-merge-patch+json');

    await writeRoute('route-one.example.com');
    expect(await kubectl.run('create', '--validate=false', '-f', routeFile)).toMatch(/tlsroute\.gateway\.networking\.k8s\.io\/route created/);
    await writeRoute('route-two.example.com');
    await kubectl.run('apply', '--validate=false', '-f', routeFile);
    expect(fake.get({ apiVersion: 'gateway.networking.k8s.io/v1', kind: 'TLSRoute', name: 'route' })).toMatchObject({
      apiVersion: 'gateway.networking.k8s.io/v1',
      spec: { hostnames: ['route-two.example.com'] },
    });
    expect(fake.requests((request) => request.verb === 'patch' && request.resource === 'tlsroutes')[0]?.contentType).toBe('application/merge-patch+json');
  });
});

describe('fake API server: @kubernetes/client-node', () => {
  it('lists Services and watches Ingresses through KubeConfig.loadFromFile, CoreV1Api and Watch', async () => {
    const fake = await startFake({ tls: true, token: 'node-token' });
    fake.create({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: 'default' }, spec: { ports: [{ port: 80 }] } });
    const config = new KubeConfig();
    config.loadFromFile(await fake.writeKubeconfig());
    const services = await config.makeApiClient(CoreV1Api).listNamespacedService({ namespace: 'default' });
    expect(services.items.map((service) => service.metadata?.name)).toEqual(['web']);
    expect(services.metadata?.resourceVersion).toBe(String(fake.resourceVersion));

    const seen: string[] = [];
    const controller = await new Watch(config).watch(
      INGRESSES,
      { resourceVersion: String(fake.resourceVersion), allowWatchBookmarks: true },
      (phase, object: { metadata?: { name?: string } }) => seen.push(`${phase} ${object.metadata?.name}`),
      () => {},
    );
    try {
      fake.create(ingress('a'));
      fake.update(ingress('a', 'changed.example.com'));
      await fake.waitFor(() => seen.length >= 2);
    } finally {
      controller.abort();
    }
    expect(seen).toEqual(['ADDED a', 'MODIFIED a']);
    expect(fake.requests((request) => request.verb === 'watch')).toEqual([expect.objectContaining({ query: expect.objectContaining({ watch: 'true' }) })]);
  });
});
