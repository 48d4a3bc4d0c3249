import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa, type ResultPromise } from 'execa';
import { parseAllDocuments } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeApiServer, type JsonObject } from '../support/fake-apiserver.js';
import { requireKubectl } from '../support/kubectl.js';
import { requireNginx } from '../support/nginx.js';
import { httpGet, ownAddress, parseEcho, startHttpBackend, type Peer } from '../support/peers.js';
import { createCa, issueCertificate, type CertificateAuthority } from '../support/pki.js';
import { freePorts } from '../support/ports.js';
import { eventually, ingress, namespace, service, tlsSecret } from '../support/sidecar.js';

/**
 * deploy/ against the fake API server, with the arguments and RBAC that kubectl builds from it:
 * - the RBAC rules grant exactly the calls the sidecar makes, every option that adds calls turned on
 *   (nothing missing: a call not granted would fail in a cluster; nothing extra);
 * - deploy/gateway/, a data plane of one Gateway: its RBAC grants what it calls, and it serves and gives
 *   status to that Gateway alone;
 * - the ways to move from ingress-nginx in docs/migrating.md: both controllers at once, Ingresses moving one
 *   at a time to class ingress2nginx; or every Ingress at once, ingress2nginx serving class nginx
 *   (takeover-ingress-nginx/) without touching that IngressClass or the status ingress-nginx writes.
 * The sidecar runs as a process, with the Deployment's arguments and only what a test must change
 * (ports, folders, the API server) added after them.
 */

const binary = join(import.meta.dirname, '..', '..', 'bin', 'ingress2nginx');
const deploy = join(import.meta.dirname, '..', '..', 'deploy');
const controllerNamespace = 'ingress2nginx';
/** What ingress-nginx wrote into the status of the Ingresses it serves. */
const theirAddress = '203.0.113.1';
/** The load-balancer address of deploy/'s Service. */
const ourAddress = '192.0.2.10';

type Manifest = JsonObject & { kind: string; metadata: { name: string } };

interface Rule {
  readonly apiGroups: string[];
  readonly resources: string[];
  readonly verbs: string[];
}

let scratch: string;
let ca: CertificateAuthority;
let peer: Peer;
const processes: ResultPromise[] = [];
const servers: FakeApiServer[] = [];

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'i2n-deploy-'));
  await chmod(scratch, 0o755);
  ca = await createCa(scratch, 'Deploy CA');
  // deploy/ reaches Services at their endpoints, which never name the loopback.
  peer = await startHttpBackend('app', ownAddress());
});

afterAll(async () => {
  for (const child of processes) child.kill('SIGTERM');
  await Promise.all(processes.map((child) => child.catch(() => undefined)));
  await peer.close();
  await Promise.all(servers.map((s) => s.close()));
  await rm(scratch, { recursive: true, force: true });
});

async function kustomized(folder: string): Promise<Manifest[]> {
  const { stdout } = await execa(requireKubectl().binary, ['kustomize', join(deploy, folder)]);
  return parseAllDocuments(stdout).map((d) => d.toJS() as Manifest);
}

/** The sidecar container's arguments, `$(VAR)` expanded from its env as the kubelet does. */
function sidecarArgs(manifests: readonly Manifest[]): string[] {
  const deployment = manifests.find((m) => m.kind === 'Deployment') as unknown as {
    spec: { template: { spec: { containers: { name: string; args: string[]; env: { name: string; value?: string }[] }[] } } };
  };
  const container = deployment.spec.template.spec.containers.find((c) => c.name === 'ingress2nginx')!;
  const env: Record<string, string> = { POD_NAMESPACE: controllerNamespace };
  for (const variable of container.env) if (variable.value !== undefined) env[variable.name] = variable.value;
  return container.args.map((arg) => arg.replace(/\$\((\w+)\)/g, (_, name: string) => env[name]!));
}

/** The kinds of deploy/ a fake cluster holds from the start (the rest is the Deployment, which runs as a process here). */
const heldKinds = ['Namespace', 'Service', 'IngressClass', 'Secret', 'ValidatingWebhookConfiguration'];

/** A fake cluster with deploy/'s own objects in it (its namespace, Services, one with an address, IngressClass, webhook and its CA Secret). */
async function cluster(manifests: readonly Manifest[]): Promise<{ api: FakeApiServer; kubeconfig: string }> {
  const api = await FakeApiServer.start({ tls: true, token: 'deploy', bookmarkIntervalMs: 500 });
  servers.push(api);
  for (const manifest of manifests) {
    if (!heldKinds.includes(manifest.kind)) continue;
    const created = api.create(manifest);
    if (manifest.kind === 'Service' && manifest.metadata.name === 'ingress2nginx') api.updateStatus({ ...created, status: { loadBalancer: { ingress: [{ ip: ourAddress }] } } });
  }
  return { api, kubeconfig: await api.writeKubeconfig() };
}

interface Sidecar {
  readonly httpPort: number;
  served(host: string): Promise<string>;
}

/** `ingress2nginx run` with `args` (the Deployment's), then what only a test changes (the webhook's address where the Deployment has one). */
async function startSidecar(kubeconfig: string, args: readonly string[], options: { webhook?: boolean } = {}): Promise<Sidecar> {
  const [httpPort, httpsPort, metricsPort, webhookPort, resolverPort, unavailablePort] = (await freePorts(6)) as [number, number, number, number, number, number];
  const runDir = await mkdtemp('/tmp/i2n-deploy-run-');
  const child = execa(
    binary,
    [
      ...args,
      ...[`--output=${join(scratch, `out-${httpPort}`)}`, `--run-dir=${runDir}`, `--http-port=${httpPort}`, `--https-port=${httpsPort}`, '--access-log=off'],
      ...[`--kubeconfig=${kubeconfig}`, '--spawn-nginx', `--nginx-bin=${requireNginx().binary}`, `--metrics-address=127.0.0.1:${metricsPort}`],
      // The Pod's loopback ports are the machine's here, shared with the other tests.
      ...[`--endpoint-resolver=${resolverPort}`, `--unavailable-port=${unavailablePort}`],
      ...(options.webhook === false ? [] : [`--validating-webhook=127.0.0.1:${webhookPort}`]),
    ],
    { reject: false, env: { POD_NAME: 'ingress2nginx-0', POD_NAMESPACE: controllerNamespace }, stdout: 'ignore', stderr: 'inherit', forceKillAfterDelay: false },
  );
  processes.push(child);
  const ready = () => fetch(`http://127.0.0.1:${metricsPort}/readyz`).then((r) => r.status, () => 0);
  expect(await eventually(ready, (s) => s === 200, 30_000)).toBe(200);
  return {
    httpPort,
    async served(host) {
      const response = await httpGet({ port: httpPort, host }).catch(() => undefined);
      return response?.status === 200 ? parseEcho(response.body).backend : `status ${response?.status ?? 'none'}`;
    },
  };
}

function ingressOfClass(ns: string, name: string, host: string, className: string | undefined): JsonObject {
  const object = ingress(ns, name, host, { service: 'app', port: peer.port }) as { spec: Record<string, unknown> };
  if (className === undefined) delete object.spec['ingressClassName'];
  else object.spec['ingressClassName'] = className;
  return object as unknown as JsonObject;
}

/** `group resource[/subresource] verb` for every permission the rules grant. */
function grants(rules: readonly Rule[]): string[] {
  return rules.flatMap((r) => r.apiGroups.flatMap((g) => r.resources.flatMap((res) => r.verbs.map((v) => `${g} ${res} ${v}`))));
}

describe('RBAC of deploy/', () => {
  it('grants exactly the calls the sidecar makes, with every option that adds calls', async () => {
    const manifests = await kustomized('.');
    const { api, kubeconfig } = await cluster(manifests);
    const cert = await issueCertificate(ca, { commonName: 'app.example.test', sans: ['app.example.test', 'gw.example.test'] });
    api.create(namespace('apps'));
    api.create(service('apps', 'app', peer));
    api.create({ apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', metadata: { name: 'app-1', namespace: 'apps', labels: { 'kubernetes.io/service-name': 'app' } }, addressType: 'IPv4', endpoints: [{ addresses: ['127.0.0.1'], conditions: { ready: true } }], ports: [{ port: peer.port }] });
    api.create(tlsSecret('apps', 'app-tls', cert));
    api.create({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'users', namespace: 'apps' }, type: 'Opaque', stringData: { auth: 'alice:{PLAIN}secret\n' } });
    api.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'controller', namespace: controllerNamespace }, data: { 'ssl-redirect': 'true' } });
    api.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'ca', namespace: 'apps' }, data: { 'ca.crt': ca.certPem } });
    // Served (status written), with basic auth (a Secret followed by name), and one with an error (an Event).
    const app = ingress('apps', 'app', 'app.example.test', { service: 'app', port: peer.port }, { tlsSecret: 'app-tls', annotations: { 'nginx.ingress.kubernetes.io/auth-type': 'basic', 'nginx.ingress.kubernetes.io/auth-secret': 'users' } });
    api.create(ingressOfClassOf(app, 'ingress2nginx'));
    api.create(ingressOfClassOf(ingress('apps', 'bad', 'bad.example.test', { service: 'app', port: peer.port }, { annotations: { 'nginx.ingress.kubernetes.io/server-snippet': 'return 200;' } }), 'ingress2nginx'));
    // The Gateway API, with status written for a Gateway (patch), a TLSRoute, an HTTPRoute, a GRPCRoute and a BackendTLSPolicy (update).
    const gatewayApi = 'gateway.networking.k8s.io/v1';
    api.create({ apiVersion: gatewayApi, kind: 'GatewayClass', metadata: { name: 'ingress2nginx' }, spec: { controllerName: 'ingress2nginx.dev/controller' } });
    api.create({
      apiVersion: gatewayApi,
      kind: 'Gateway',
      metadata: { name: 'gw', namespace: 'apps' },
      spec: { gatewayClassName: 'ingress2nginx', listeners: [{ name: 'tls', port: 9443, protocol: 'TLS', tls: { mode: 'Terminate', certificateRefs: [{ name: 'app-tls' }] } }] },
    });
    api.create({ apiVersion: gatewayApi, kind: 'TLSRoute', metadata: { name: 'route', namespace: 'apps' }, spec: { parentRefs: [{ name: 'gw' }], hostnames: ['gw.example.test'], rules: [{ backendRefs: [{ name: 'app', port: peer.port }] }] } });
    // An HTTPRoute and a GRPCRoute (update): the TLS listener admits neither, which is status to write all the same.
    api.create({ apiVersion: gatewayApi, kind: 'HTTPRoute', metadata: { name: 'web', namespace: 'apps' }, spec: { parentRefs: [{ name: 'gw' }], rules: [{ backendRefs: [{ name: 'app', port: peer.port }] }] } });
    api.create({ apiVersion: gatewayApi, kind: 'GRPCRoute', metadata: { name: 'grpc', namespace: 'apps' }, spec: { parentRefs: [{ name: 'gw' }], rules: [{ backendRefs: [{ name: 'app', port: peer.port }] }] } });
    api.create({ apiVersion: gatewayApi, kind: 'BackendTLSPolicy', metadata: { name: 'app', namespace: 'apps' }, spec: { targetRefs: [{ group: '', kind: 'Service', name: 'app' }], validation: { caCertificateRefs: [{ group: '', kind: 'ConfigMap', name: 'ca' }], hostname: 'app.apps.svc' } } });
    api.create({ apiVersion: gatewayApi, kind: 'ReferenceGrant', metadata: { name: 'grant', namespace: 'apps' }, spec: { from: [{ group: gatewayApi.split('/')[0]!, kind: 'TLSRoute', namespace: 'other' }], to: [{ group: '', kind: 'Service' }] } });

    await startSidecar(kubeconfig, [...sidecarArgs(manifests), `--configmap=${controllerNamespace}/controller`, '--upstreams=endpoints']);
    const rules = (kind: string) => manifests.filter((m) => m.kind === kind).flatMap((m) => (m as unknown as { rules: Rule[] }).rules);
    const granted = new Set([...grants(rules('ClusterRole')), ...grants(rules('Role'))]);
    const calls = () => {
      const made = new Set<string>();
      for (const request of api.requests((r) => r.verb !== 'discovery' && r.resource !== undefined)) {
        made.add(`${request.group ?? ''} ${request.resource}${request.subresource ? `/${request.subresource}` : ''} ${request.verb}`);
      }
      return made;
    };
    // Every call made is granted, and every grant is used once the sidecar has done all it does (the Lease renewed).
    const made = await eventually(calls, (set) => [...granted].every((grant) => set.has(grant)), 30_000);
    expect([...made].sort()).toEqual([...granted].sort());
    // The Role's calls stay in the controller's namespace.
    for (const request of api.requests((r) => r.resource === 'leases')) expect(request.namespace).toBe(controllerNamespace);
    // The webhook's CA: made into the shipped Secret, and set as the caBundle of the one configuration.
    for (const request of api.requests((r) => r.resource === 'secrets' && r.verb !== 'list' && r.verb !== 'watch')) expect([request.namespace, request.name]).toEqual([controllerNamespace, 'ingress2nginx-webhook-ca']);
    for (const request of api.requests((r) => r.resource === 'validatingwebhookconfigurations')) expect(request.name).toBe('ingress2nginx');
    const caSecret = api.get({ apiVersion: 'v1', kind: 'Secret', namespace: controllerNamespace, name: 'ingress2nginx-webhook-ca' }) as { data?: Record<string, string> };
    const configuration = api.get({ apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration', name: 'ingress2nginx' }) as { webhooks: { clientConfig: { caBundle?: string } }[] };
    expect(configuration.webhooks.map((h) => h.clientConfig.caBundle)).toEqual(configuration.webhooks.map(() => caSecret.data?.['ca.crt']));
  });
});

describe('deploy/gateway/: a data plane of one Gateway', () => {
  it("serves the Gateway on its listeners' ports with only the calls its RBAC grants, and writes the status of that Gateway alone, with its Service's address", async () => {
    const manifests = await kustomized('gateway');
    const { api, kubeconfig } = await cluster([...(await kustomized('.')).filter((m) => m.kind === 'Namespace'), ...manifests]);
    const dedicatedAddress = '192.0.2.20';
    const ownService = manifests.find((m) => m.kind === 'Service')!;
    api.updateStatus({ ...api.get({ apiVersion: 'v1', kind: 'Service', namespace: controllerNamespace, name: ownService.metadata.name })!, status: { loadBalancer: { ingress: [{ ip: dedicatedAddress }] } } });
    // gateway.yaml as the teams apply it, its listeners moved to ports free on this machine.
    const example = parseAllDocuments(await readFile(join(deploy, 'gateway', 'gateway.yaml'), 'utf8')).map((d) => d.toJS() as Manifest & { spec: Record<string, unknown> });
    const [httpPort, httpsPort] = (await freePorts(2)) as [number, number];
    const gateway = example.find((m) => m.kind === 'Gateway')! as Manifest & { spec: { gatewayClassName: string; listeners: { name: string; port: number }[] } };
    gateway.spec.listeners = gateway.spec.listeners.map((l) => ({ ...l, port: l.name === 'http' ? httpPort : httpsPort }));
    const apps = (gateway.metadata as { namespace?: string }).namespace ?? 'apps';
    api.create(namespace(apps));
    for (const manifest of example) api.create(manifest);
    const cert = await issueCertificate(ca, { commonName: 'app.example.com', sans: ['app.example.com'] });
    api.create(tlsSecret(apps, 'app-example-com-tls', cert));
    api.create(service(apps, 'app', peer));
    api.create(endpointSlice(apps, 'app', peer));
    const gatewayApi = 'gateway.networking.k8s.io/v1';
    api.create({ apiVersion: gatewayApi, kind: 'HTTPRoute', metadata: { name: 'web', namespace: apps }, spec: { parentRefs: [{ name: gateway.metadata.name }], hostnames: ['app.example.com'], rules: [{ backendRefs: [{ name: 'app', port: peer.port }] }] } });
    // A Gateway of the main data plane's class, which this one leaves alone.
    api.create({ apiVersion: gatewayApi, kind: 'GatewayClass', metadata: { name: 'ingress2nginx' }, spec: { controllerName: 'ingress2nginx.dev/controller' } });
    api.create({ apiVersion: gatewayApi, kind: 'Gateway', metadata: { name: 'main', namespace: apps }, spec: { gatewayClassName: 'ingress2nginx', listeners: [{ name: 'http', port: httpPort, protocol: 'HTTP' }] } });

    await startSidecar(kubeconfig, sidecarArgs(manifests), { webhook: false });
    const response = () => httpGet({ port: httpPort, host: 'app.example.com' }).then((r) => (r.status === 200 ? parseEcho(r.body).backend : String(r.status)), () => 'none');
    expect(await eventually(response, (b) => b === 'app', 30_000)).toBe('app');
    const statusOf = (name: string) => api.get({ apiVersion: gatewayApi, kind: 'Gateway', namespace: apps, name })?.['status'] as { addresses?: { value: string }[] } | undefined;
    expect(await eventually(() => statusOf(gateway.metadata.name)?.addresses?.map((a) => a.value), (a) => a?.[0] === dedicatedAddress, 30_000)).toEqual([dedicatedAddress]);
    expect(statusOf('main')).toBeUndefined();
    const rules = (kind: string) => manifests.filter((m) => m.kind === kind).flatMap((m) => (m as unknown as { rules: Rule[] }).rules);
    const granted = new Set([...grants(rules('ClusterRole')), ...grants(rules('Role'))]);
    for (const request of api.requests((r) => r.verb !== 'discovery' && r.resource !== undefined)) {
      expect(granted, `${request.verb} ${request.resource}`).toContain(`${request.group ?? ''} ${request.resource}${request.subresource ? `/${request.subresource}` : ''} ${request.verb}`);
    }
    for (const request of api.requests((r) => r.resource === 'leases' && r.name !== undefined)) expect([request.namespace, request.name]).toEqual([controllerNamespace, 'ingress2nginx-example']);
  });
});

describe('moving from ingress-nginx', () => {
  /** A cluster where ingress-nginx serves class nginx (the default class) and has written its address into status. */
  async function servedByIngressNginx(manifests: readonly Manifest[]) {
    const { api, kubeconfig } = await cluster(manifests);
    api.create({
      apiVersion: 'networking.k8s.io/v1',
      kind: 'IngressClass',
      metadata: { name: 'nginx', annotations: { 'ingressclass.kubernetes.io/is-default-class': 'true' } },
      spec: { controller: 'k8s.io/ingress-nginx' },
    });
    api.create(namespace('shop'));
    api.create(service('shop', 'app', peer));
    api.create(endpointSlice('shop', 'app', peer));
    for (const [name, className] of [['front', 'nginx'], ['cart', 'nginx'], ['legacy', undefined]] as const) {
      const created = api.create(ingressOfClass('shop', name, `${name}.example.test`, className));
      api.updateStatus({ ...created, status: { loadBalancer: { ingress: [{ ip: theirAddress }] } } });
    }
    const statusOf = (name: string) =>
      (api.get({ apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', namespace: 'shop', name })?.['status'] as { loadBalancer?: { ingress?: { ip?: string }[] } }).loadBalancer?.ingress?.map((e) => e.ip);
    const nginxClass = () => api.get({ apiVersion: 'networking.k8s.io/v1', kind: 'IngressClass', name: 'nginx' });
    return { api, kubeconfig, statusOf, nginxClass };
  }

  it('one at a time: deploy/ serves only what moves to class ingress2nginx, and writes status only for that', async () => {
    const manifests = await kustomized('.');
    const { api, kubeconfig, statusOf } = await servedByIngressNginx(manifests);
    const sidecar = await startSidecar(kubeconfig, sidecarArgs(manifests));
    for (const host of ['front', 'cart', 'legacy']) expect(await sidecar.served(`${host}.example.test`)).toBe('status 404');

    const front = api.get({ apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', namespace: 'shop', name: 'front' })!;
    api.update({ ...front, spec: { ...(front['spec'] as JsonObject), ingressClassName: 'ingress2nginx' } });
    expect(await eventually(() => sidecar.served('front.example.test'), (b) => b === 'app')).toBe('app');
    expect(await eventually(() => statusOf('front'), (ips) => ips?.[0] === ourAddress)).toEqual([ourAddress]);
    expect(await sidecar.served('cart.example.test')).toBe('status 404');
    expect(statusOf('cart')).toEqual([theirAddress]);
    expect(statusOf('legacy')).toEqual([theirAddress]);
  });

  it('all at once: takeover-ingress-nginx/ serves class nginx (the default class too) beside ingress-nginx, and changes neither its IngressClass nor the status it writes', async () => {
    const manifests = await kustomized('takeover-ingress-nginx');
    expect(manifests.filter((m) => m.kind === 'IngressClass')).toEqual([]);
    const { api, kubeconfig, statusOf, nginxClass } = await servedByIngressNginx(manifests);
    const before = nginxClass();
    const sidecar = await startSidecar(kubeconfig, sidecarArgs(manifests));
    for (const host of ['front', 'cart', 'legacy']) expect(await eventually(() => sidecar.served(`${host}.example.test`), (b) => b === 'app')).toBe('app');
    api.create(ingressOfClass('shop', 'new', 'new.example.test', 'nginx'));
    expect(await eventually(() => sidecar.served('new.example.test'), (b) => b === 'app')).toBe('app');
    for (const name of ['front', 'cart', 'legacy']) expect(statusOf(name)).toEqual([theirAddress]);
    expect(nginxClass()).toEqual(before);
    expect(api.requests((r) => r.resource === 'ingresses' && r.subresource === 'status')).toEqual([]);
  });
});

function endpointSlice(ns: string, service: string, backend: Peer): JsonObject {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name: `${service}-a`, namespace: ns, labels: { 'kubernetes.io/service-name': service } },
    addressType: 'IPv4',
    ports: [{ port: backend.port }],
    endpoints: [{ addresses: [ownAddress()], conditions: { ready: true } }],
  };
}

function ingressOfClassOf(object: JsonObject, className: string): JsonObject {
  return { ...object, spec: { ...(object['spec'] as JsonObject), ingressClassName: className } };
}
