import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeApiServer, type JsonObject } from '../support/fake-apiserver.js';
import { httpGet, parseEcho, startHttpBackend, type Peer } from '../support/peers.js';
import { eventually, namespace, service, startSidecar, stopAllSidecars, type RunningSidecar } from '../support/sidecar.js';

/**
 * The GatewayClass in the cluster mode: the leader writes the status of the class it serves (the one
 * `--gateway-class` names, when it names our controller) with the generation it read and the Gateway API
 * release its CRDs carry, and a Gateway whose parameters cannot be honoured is refused in its status and
 * takes no traffic.
 */

const gatewayApi = 'gateway.networking.k8s.io/v1';
const controllerName = 'ingress2nginx.dev/controller';
const classRef = { apiVersion: gatewayApi, kind: 'GatewayClass', name: 'ingress2nginx' };

const gatewayApiPlurals = ['backendtlspolicies', 'gatewayclasses', 'gateways', 'httproutes', 'referencegrants', 'tlsroutes'];

/** A Gateway API CRD as far as we read it: its name, group and bundle-version annotation. */
function crd(plural: string, bundleVersion: string): JsonObject {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.gateway.networking.k8s.io`, annotations: { 'gateway.networking.k8s.io/bundle-version': bundleVersion } },
    spec: { group: 'gateway.networking.k8s.io', scope: plural === 'gatewayclasses' ? 'Cluster' : 'Namespaced', names: { plural } },
  };
}

/** A new bundle-version on a CRD, as an upgrade of the Gateway API would write. */
function setBundleVersion(plural: string, bundleVersion: string): void {
  const current = api.get({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', name: `${plural}.gateway.networking.k8s.io` }) as { metadata: JsonObject };
  const next = crd(plural, bundleVersion);
  api.update({ ...next, metadata: { ...current.metadata, annotations: (next['metadata'] as JsonObject)['annotations'] ?? {} } });
}

let api: FakeApiServer;
let kubeconfig: string;
let peer: Peer;
let sidecar: RunningSidecar;

beforeAll(async () => {
  api = await FakeApiServer.start({ tls: true, token: 'gatewayclass-test', bookmarkIntervalMs: 500 });
  kubeconfig = await api.writeKubeconfig();
  api.create(namespace('web'));
  peer = await startHttpBackend('classy');
  api.create(service('web', 'classy', peer));
  for (const plural of gatewayApiPlurals) api.create(crd(plural, 'v1.4.0'));
  api.create({ apiVersion: gatewayApi, kind: 'GatewayClass', metadata: { name: classRef.name }, spec: { controllerName } });
  // Another class of our controller: served by another deployment, if any; this one does not serve its
  // Gateways, but writes its status, which every deployment of the controller computes alike.
  api.create({ apiVersion: gatewayApi, kind: 'GatewayClass', metadata: { name: 'elsewhere' }, spec: { controllerName } });
  sidecar = await startSidecar({ api, kubeconfig });
});

afterAll(async () => {
  await stopAllSidecars();
  await peer.close();
  await api.close();
});

type ApiConditions = { type: string; status: string; reason: string; observedGeneration: number; lastTransitionTime: string }[];

function classState(name = classRef.name): { generation: number; conditions: ApiConditions } {
  const object = api.get({ ...classRef, name }) as unknown as { metadata: { generation: number }; status?: { conditions?: ApiConditions } };
  return { generation: object.metadata.generation, conditions: object.status?.conditions ?? [] };
}

/** Conditions that all name the object's current generation, as `Type=Status/Reason`. */
function current(state: { generation: number; conditions: ApiConditions }): string[] | undefined {
  const fresh = state.conditions.length > 0 && state.conditions.every((c) => c.observedGeneration === state.generation);
  return fresh ? state.conditions.map((c) => `${c.type}=${c.status}/${c.reason}`) : undefined;
}

async function served(host: string): Promise<string> {
  const response = await httpGet({ port: sidecar.httpPort, host, path: '/' }).catch(() => undefined);
  if (!response || response.status !== 200) return `status ${response?.status ?? 'none'}`;
  return parseEcho(response.body).backend;
}

function gatewayConditions(name: string): { generation: number; conditions: ApiConditions } {
  const object = api.get({ apiVersion: gatewayApi, kind: 'Gateway', namespace: 'web', name }) as unknown as { metadata: { generation: number }; status?: { conditions?: ApiConditions } };
  return { generation: object.metadata.generation, conditions: object.status?.conditions ?? [] };
}

function createRoutedGateway(name: string, host: string, infrastructure?: JsonObject): void {
  api.create({
    apiVersion: gatewayApi,
    kind: 'Gateway',
    metadata: { name, namespace: 'web' },
    spec: { gatewayClassName: classRef.name, listeners: [{ name: 'http', port: sidecar.httpPort, protocol: 'HTTP', hostname: host }], ...(infrastructure && { infrastructure }) },
  });
  api.create({
    apiVersion: gatewayApi,
    kind: 'HTTPRoute',
    metadata: { name, namespace: 'web' },
    spec: { parentRefs: [{ name }], hostnames: [host], rules: [{ backendRefs: [{ name: 'classy', port: peer.port }] }] },
  });
}

describe('GatewayClass status', () => {
  it('GatewayClassObservedGenerationBump: Accepted with the generation read, and again after a spec change, the transition time kept', async () => {
    const first = await eventually(() => current(classState()), (c) => c?.length === 2);
    expect(first).toEqual(['Accepted=True/Accepted', 'SupportedVersion=True/SupportedVersion']);
    const before = classState();
    expect(before.generation).toBe(1);

    const object = api.get(classRef) as { metadata: JsonObject; spec: JsonObject };
    api.update({ apiVersion: gatewayApi, kind: 'GatewayClass', metadata: object.metadata, spec: { ...object.spec, description: 'new' } });
    const after = await eventually(() => classState(), (s) => s.generation === 2 && current(s) !== undefined);
    expect(current(after)).toEqual(['Accepted=True/Accepted', 'SupportedVersion=True/SupportedVersion']);
    expect(after.conditions.map((c) => c.lastTransitionTime)).toEqual(before.conditions.map((c) => c.lastTransitionTime));
  });

  it('SupportedVersion follows the CRDs: a release we were not checked against is False/UnsupportedVersion, the class still Accepted', async () => {
    setBundleVersion('gateways', 'v0.0.0-dev');
    const unsupported = await eventually(() => current(classState()), (c) => c?.[1] === 'SupportedVersion=False/UnsupportedVersion');
    expect(unsupported).toEqual(['Accepted=True/Accepted', 'SupportedVersion=False/UnsupportedVersion']);
    const message = (api.get(classRef) as unknown as { status: { conditions: { message: string }[] } }).status.conditions[1]?.message;
    expect(message).toContain('gateways.gateway.networking.k8s.io is v0.0.0-dev');
    setBundleVersion('gateways', 'v1.4.0');
    expect(await eventually(() => current(classState()), (c) => c?.[1] === 'SupportedVersion=True/SupportedVersion')).toEqual(['Accepted=True/Accepted', 'SupportedVersion=True/SupportedVersion']);
  });

  it('GatewayClassObservedGenerationBump on another class of our controller, which --gateway-class does not name: its status follows too', async () => {
    expect(await eventually(() => current(classState('elsewhere')), (c) => c?.length === 2)).toEqual(['Accepted=True/Accepted', 'SupportedVersion=True/SupportedVersion']);
    const before = api.get({ ...classRef, name: 'elsewhere' }) as { spec: Record<string, unknown> };
    api.update({ ...before, spec: { ...before.spec, description: 'bumped' } } as never);
    expect(await eventually(() => current(classState('elsewhere')), (c) => c?.length === 2)).toEqual(['Accepted=True/Accepted', 'SupportedVersion=True/SupportedVersion']);
    expect(classState('elsewhere').generation).toBe(2);
  });
});

describe('parameters ingress2nginx cannot honour', () => {
  it('GatewayInvalidParametersRef: a Gateway with spec.infrastructure.parametersRef is Accepted=False/InvalidParameters and takes no traffic', async () => {
    createRoutedGateway('plain', 'plain.example.test');
    createRoutedGateway('parametrized', 'parametrized.example.test', { parametersRef: { group: 'invalid.io', kind: 'InvalidParameters', name: 'invalid' } });
    expect(await eventually(() => served('plain.example.test'), (b) => b === 'classy')).toBe('classy');
    const refused = await eventually(() => current(gatewayConditions('parametrized')), (c) => c !== undefined);
    expect(refused).toEqual(['Accepted=False/InvalidParameters', 'Programmed=False/Invalid']);
    expect(await served('parametrized.example.test')).toBe('status 404');
  });

  it('a parametersRef on the class refuses it and every Gateway of it; taking it away serves them again', async () => {
    const object = api.get(classRef) as { metadata: JsonObject; spec: JsonObject };
    api.update({ apiVersion: gatewayApi, kind: 'GatewayClass', metadata: object.metadata, spec: { ...object.spec, parametersRef: { group: '', kind: 'ConfigMap', name: 'settings', namespace: 'web' } } });
    const refusedClass = await eventually(() => classState(), (s) => current(s)?.[0] === 'Accepted=False/InvalidParameters');
    expect(current(refusedClass)).toEqual(['Accepted=False/InvalidParameters', 'SupportedVersion=True/SupportedVersion']);
    expect(await eventually(() => served('plain.example.test'), (b) => b === 'status 404')).toBe('status 404');
    expect(current(gatewayConditions('plain'))?.[0]).toBe('Accepted=False/InvalidParameters');

    const refusedObject = api.get(classRef) as { metadata: JsonObject; spec: JsonObject };
    const { parametersRef: _dropped, ...spec } = refusedObject.spec;
    api.update({ apiVersion: gatewayApi, kind: 'GatewayClass', metadata: refusedObject.metadata, spec });
    expect(await eventually(() => served('plain.example.test'), (b) => b === 'classy')).toBe('classy');
    const acceptedAgain = await eventually(() => classState(), (s) => current(s)?.[0] === 'Accepted=True/Accepted');
    expect(acceptedAgain.conditions[0]?.observedGeneration).toBe(acceptedAgain.generation);
    expect(await eventually(() => current(gatewayConditions('plain')), (c) => c?.[0] === 'Accepted=True/Accepted')).toEqual(['Accepted=True/Accepted', 'Programmed=True/Programmed']);
  });
});

describe('a cluster that does not let us read CRDs', () => {
  it('is served and its class accepted, with SupportedVersion left out', async () => {
    const denying = await FakeApiServer.start({ tls: true, token: 'gatewayclass-denied', bookmarkIntervalMs: 500 });
    try {
      denying.failNext({ path: /customresourcedefinitions/, status: 403, message: 'customresourcedefinitions is forbidden', count: 1_000_000 });
      for (const plural of gatewayApiPlurals) denying.create(crd(plural, 'v1.4.0'));
      denying.create({ apiVersion: gatewayApi, kind: 'GatewayClass', metadata: { name: classRef.name }, spec: { controllerName } });
      const denied = await startSidecar({ api: denying, kubeconfig: await denying.writeKubeconfig() });
      expect(await eventually(() => denied.probe('/readyz'), (s) => s === 200)).toBe(200);
      const conditions = await eventually(
        () => (denying.get(classRef) as unknown as { status?: { conditions?: ApiConditions } }).status?.conditions ?? [],
        (list) => list.some((c) => c.type === 'Accepted' && c.status === 'True'),
      );
      expect(conditions.map((c) => `${c.type}=${c.status}/${c.reason}`)).toEqual(['Accepted=True/Accepted']);
      expect(denying.requests((r) => r.resource === 'customresourcedefinitions').length).toBeGreaterThan(0);
      await denied.stop();
    } finally {
      await denying.close();
    }
  });
});
