import { mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { execa } from 'execa';
import { parseAllDocuments } from 'yaml';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { requireKubectl } from '../support/kubectl.js';

/**
 * deploy/ as a platform team would apply it, checked offline: every manifest against the Kubernetes
 * schemas (kubernetes-models: types, formats, required fields; and the TypeScript types of the same
 * models, whose excess-property check catches a misspelt field, which the schemas let through), both
 * kustomizations as kubectl builds them, the image build, and the settings a first day in production
 * needs. RBAC is checked against the calls the code makes in test/integration/sidecar-deploy.test.ts.
 */

const root = join(import.meta.dirname, '..', '..');
const deploy = join(root, 'deploy');

type Manifest = Record<string, unknown> & { kind: string; apiVersion: string; metadata: { name: string; namespace?: string; labels?: Record<string, string> } };

interface Container {
  name: string;
  image: string;
  imagePullPolicy?: string;
  args?: string[];
  env?: { name: string; value?: string }[];
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  securityContext?: { allowPrivilegeEscalation?: boolean; readOnlyRootFilesystem?: boolean; capabilities?: { drop?: string[]; add?: string[] } };
  startupProbe?: unknown;
  readinessProbe?: unknown;
}

interface PodSpec {
  serviceAccountName: string;
  securityContext: { runAsNonRoot?: boolean; runAsUser?: number; runAsGroup?: number; seccompProfile?: { type: string } };
  topologySpreadConstraints?: { topologyKey: string; labelSelector: unknown }[];
  containers: Container[];
}

type Deployment = Manifest & { spec: { replicas: number; selector: { matchLabels: Record<string, string> }; template: { spec: PodSpec } } };

/** The model class (kubernetes-models) and its TypeScript interface, for every kind deploy/ holds. */
const models: Record<string, { module: string; name: string }> = {
  Namespace: { module: 'v1/Namespace', name: 'Namespace' },
  ConfigMap: { module: 'v1/ConfigMap', name: 'ConfigMap' },
  ServiceAccount: { module: 'v1/ServiceAccount', name: 'ServiceAccount' },
  Service: { module: 'v1/Service', name: 'Service' },
  Deployment: { module: 'apps/v1/Deployment', name: 'Deployment' },
  PodDisruptionBudget: { module: 'policy/v1/PodDisruptionBudget', name: 'PodDisruptionBudget' },
  NetworkPolicy: { module: 'networking.k8s.io/v1/NetworkPolicy', name: 'NetworkPolicy' },
  IngressClass: { module: 'networking.k8s.io/v1/IngressClass', name: 'IngressClass' },
  ClusterRole: { module: 'rbac.authorization.k8s.io/v1/ClusterRole', name: 'ClusterRole' },
  ClusterRoleBinding: { module: 'rbac.authorization.k8s.io/v1/ClusterRoleBinding', name: 'ClusterRoleBinding' },
  Role: { module: 'rbac.authorization.k8s.io/v1/Role', name: 'Role' },
  RoleBinding: { module: 'rbac.authorization.k8s.io/v1/RoleBinding', name: 'RoleBinding' },
  Secret: { module: 'v1/Secret', name: 'Secret' },
  ValidatingWebhookConfiguration: { module: 'admissionregistration.k8s.io/v1/ValidatingWebhookConfiguration', name: 'ValidatingWebhookConfiguration' },
};

/**
 * cert-manager's kinds (deploy/cert-manager/), which kubernetes-models has no schema for: the fields
 * of cert-manager.io/v1 they must have, checked by hand.
 */
const certManagerKinds: Record<string, (spec: Record<string, unknown>) => boolean> = {
  Issuer: (spec) => spec['selfSigned'] !== undefined || typeof (spec['ca'] as { secretName?: unknown } | undefined)?.secretName === 'string',
  Certificate: (spec) => typeof spec['secretName'] === 'string' && typeof (spec['issuerRef'] as { name?: unknown } | undefined)?.name === 'string' && (spec['isCA'] === true ? typeof spec['commonName'] === 'string' : Array.isArray(spec['dnsNames'])),
};
const isCertManager = (d: Manifest) => d.apiVersion === 'cert-manager.io/v1';

/** The Gateway API's kinds (deploy/gateway/gateway.yaml), which kubernetes-models has no schema for either. */
const gatewayApiKinds: Record<string, (spec: Record<string, unknown>) => boolean> = {
  GatewayClass: (spec) => typeof spec['controllerName'] === 'string',
  Gateway: (spec) =>
    typeof spec['gatewayClassName'] === 'string' &&
    Array.isArray(spec['listeners']) &&
    (spec['listeners'] as Record<string, unknown>[]).every((l) => typeof l['name'] === 'string' && typeof l['port'] === 'number' && typeof l['protocol'] === 'string'),
};
const isGatewayApi = (d: Manifest) => d.apiVersion === 'gateway.networking.k8s.io/v1';

function parse(text: string): Manifest[] {
  return parseAllDocuments(text)
    .map((d) => d.toJS() as Manifest | null)
    .filter((d): d is Manifest => d !== null);
}

/** Every YAML file under deploy/ (kustomizations apart), with its documents. */
async function sourceFiles(dir = deploy): Promise<{ file: string; documents: Manifest[] }[]> {
  const found: { file: string; documents: Manifest[] }[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) found.push(...(await sourceFiles(path)));
    else if (entry.name.endsWith('.yaml') && entry.name !== 'kustomization.yaml') found.push({ file: relative(deploy, path), documents: parse(await readFile(path, 'utf8')) });
  }
  return found;
}

/** `kubectl kustomize` of a folder under deploy/: what `kubectl apply -k` sends. */
async function kustomized(folder: string): Promise<Manifest[]> {
  return parse((await execa(requireKubectl().binary, ['kustomize', join(deploy, folder)])).stdout);
}

const deploymentOf = (manifests: readonly Manifest[]) => manifests.find((m) => m.kind === 'Deployment') as Deployment;
const containerOf = (deployment: Deployment, name: string) => deployment.spec.template.spec.containers.find((c) => c.name === name)!;

/** The sidecar's arguments with the `$(VAR)` references the kubelet expands, from its env. */
function expandedArgs(container: Container, extra: Record<string, string> = {}): string[] {
  const env = { ...Object.fromEntries((container.env ?? []).filter((e) => e.value !== undefined).map((e) => [e.name, e.value!])), ...extra };
  return (container.args ?? []).map((arg) => arg.replace(/\$\((\w+)\)/g, (_, name: string) => env[name] ?? `$(${name})`));
}

let files: { file: string; documents: Manifest[] }[];
let base: Manifest[];
let takeover: Manifest[];
let dashboards: Manifest[];
let certManager: Manifest[];
let dedicated: Manifest[];
beforeAll(async () => {
  files = await sourceFiles();
  [base, takeover, dashboards, certManager, dedicated] = await Promise.all([
    kustomized('.'),
    kustomized('takeover-ingress-nginx'),
    kustomized('grafana'),
    kustomized('cert-manager'),
    kustomized('gateway'),
  ]);
});

describe('deploy/ against the Kubernetes schemas', () => {
  it('every document, as written and as kubectl builds both kustomizations, passes its kind\'s schema', async () => {
    const documents = [...files.flatMap((f) => f.documents.map((d) => ({ where: f.file, d }))), ...[...base, ...takeover, ...dashboards, ...certManager, ...dedicated].map((d) => ({ where: 'kustomize', d }))];
    expect(documents.length).toBeGreaterThan(10);
    for (const { where, d } of documents) {
      if (isCertManager(d) || isGatewayApi(d)) {
        const check = isCertManager(d) ? certManagerKinds[d.kind] : gatewayApiKinds[d.kind];
        expect(check?.((d['spec'] ?? {}) as Record<string, unknown>), `${where}: ${d.kind} ${d.metadata.name}`).toBe(true);
        continue;
      }
      const model = models[d.kind];
      expect(model, `${where}: no schema for ${d.kind}`).toBeDefined();
      const module = (await import(`kubernetes-models/${model!.module}`)) as Record<string, new (data: unknown) => { validate(): void }>;
      expect(() => new module[model!.name]!(d).validate(), `${where}: ${d.kind} ${d.metadata.name}`).not.toThrow();
    }
  });

  it("builds deploy/grafana/ into ConfigMaps the Grafana chart's dashboard sidecar loads, each holding a dashboard file as it is", async () => {
    const jsonFiles = (await readdir(join(deploy, 'grafana'))).filter((name) => name.endsWith('.json')).sort();
    expect(jsonFiles.length).toBe(2);
    expect(dashboards.map((d) => d.kind)).toEqual(jsonFiles.map(() => 'ConfigMap'));
    const held = new Map<string, string>();
    for (const map of dashboards as (Manifest & { data?: Record<string, string> })[]) {
      expect(map.metadata.labels, map.metadata.name).toMatchObject({ grafana_dashboard: '1' });
      for (const [name, text] of Object.entries(map.data ?? {})) held.set(name, text);
    }
    expect([...held.keys()].sort()).toEqual(jsonFiles);
    for (const name of jsonFiles) {
      expect(held.get(name), name).toBe(await readFile(join(deploy, 'grafana', name), 'utf8'));
      expect((JSON.parse(held.get(name)!) as { uid?: string }).uid, name).toBeTruthy();
    }
  });

  it('has no field the Kubernetes types do not know (a misspelt field passes the schemas)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'i2n-deploy-types-'));
    try {
      await symlink(join(root, 'node_modules'), join(dir, 'node_modules'));
      const documents = [...files.flatMap((f) => f.documents), ...base, ...takeover, ...dashboards, ...certManager, ...dedicated].filter((d) => !isCertManager(d) && !isGatewayApi(d));
      const kinds = [...new Set(documents.map((d) => d.kind))];
      const source = [
        ...kinds.map((kind) => `import type { I${models[kind]!.name} } from 'kubernetes-models/${models[kind]!.module}';`),
        ...documents.map((d, index) => `export const document${index}: I${models[d.kind]!.name} = ${JSON.stringify(d)};`),
      ].join('\n');
      await writeFile(join(dir, 'manifests.ts'), source);
      const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
      const result = await execa(process.execPath, [tsc, '--noEmit', '--strict', '--skipLibCheck', '--module', 'nodenext', '--moduleResolution', 'nodenext', join(dir, 'manifests.ts')], { reject: false });
      expect(result.stdout).toBe('');
      expect(result.exitCode).toBe(0);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 60_000);
});

describe('deploy/ for a first day in production', () => {
  it('runs the image the Dockerfile builds, by the pinned tag of this release, and the nginx it was built with', async () => {
    const pkg = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as { version: string };
    const dockerfile = await readFile(join(root, 'Dockerfile'), 'utf8');
    const deployment = deploymentOf(base);
    expect(containerOf(deployment, 'ingress2nginx').image).toBe(`ingress2nginx:${pkg.version}`);
    expect(containerOf(deployment, 'nginx').image).toBe(/^FROM (nginx:\S+)\s*$/m.exec(dockerfile)?.[1]);
    for (const container of deployment.spec.template.spec.containers) {
      expect(container.image).toMatch(/:\d+\.\d+\.\d+$/);
      expect(container.imagePullPolicy).toBe('IfNotPresent');
    }
  });

  it('builds the image reproducibly: exact base releases, npm ci from the lock file, no bench or tests, a non-root user', async () => {
    const dockerfile = await readFile(join(root, 'Dockerfile'), 'utf8');
    const bases = [...dockerfile.matchAll(/^FROM (\S+)/gm)].map((m) => m[1]!);
    expect(bases.length).toBeGreaterThan(1);
    for (const image of bases) expect(image).toMatch(/^[a-z]+:\d+\.\d+\.\d+(-[a-z0-9-]+)?$/);
    expect(dockerfile).toMatch(/^RUN npm ci\b/m);
    expect(dockerfile).not.toMatch(/npm install/);
    expect(dockerfile).not.toMatch(/\b(bench|test|fixtures)\b/);
    const user = /^USER (\d+):(\d+)\s*$/m.exec(dockerfile);
    expect(user).not.toBeNull();
    const pod = deploymentOf(base).spec.template.spec.securityContext;
    expect([Number(user![1]), Number(user![2])]).toEqual([pod.runAsUser, pod.runAsGroup]);
    expect(pod.runAsUser).not.toBe(0);
    const ignored = (await readFile(join(root, '.dockerignore'), 'utf8')).split('\n');
    expect(ignored).toEqual(expect.arrayContaining(['node_modules', 'dist', 'bench', 'test']));
  });

  it('gives both containers requests, a memory limit, a startup probe and a locked-down securityContext; the Pod runs as non-root', () => {
    const spec = deploymentOf(base).spec.template.spec;
    expect(spec.securityContext).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
    expect(spec.containers.map((c) => c.name).sort()).toEqual(['ingress2nginx', 'nginx']);
    for (const container of spec.containers) {
      expect(container.resources?.requests, container.name).toMatchObject({ cpu: expect.any(String), memory: expect.any(String) });
      expect(container.resources?.limits?.['memory'], container.name).toBe(container.resources?.requests?.['memory']);
      expect(container.startupProbe, container.name).toBeDefined();
      expect(container.readinessProbe, container.name).toBeDefined();
      expect(container.securityContext, container.name).toEqual({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } });
    }
  });

  it('spreads its replicas over nodes and keeps one through voluntary disruptions', () => {
    const deployment = deploymentOf(base);
    expect(deployment.spec.replicas).toBeGreaterThan(1);
    const labels = deployment.spec.selector.matchLabels;
    expect(deployment.spec.template.spec.topologySpreadConstraints).toContainEqual(
      expect.objectContaining({ topologyKey: 'kubernetes.io/hostname', whenUnsatisfiable: 'DoNotSchedule', labelSelector: { matchLabels: labels } }),
    );
    const budget = base.find((m) => m.kind === 'PodDisruptionBudget') as Manifest & { spec: { minAvailable: number; selector: unknown } };
    expect(budget.spec.selector).toEqual({ matchLabels: labels });
    expect(budget.spec.minAvailable).toBeGreaterThan(0);
    expect(budget.spec.minAvailable).toBeLessThan(deployment.spec.replicas);
  });

  it('makes an IngressClass of its own, never nginx, and serves it; the takeover overlay makes none and serves nginx without writing Ingress status', () => {
    const classes = (manifests: readonly Manifest[]) => manifests.filter((m) => m.kind === 'IngressClass');
    expect(classes(base)).toEqual([expect.objectContaining({ metadata: { name: 'ingress2nginx' }, spec: { controller: 'ingress2nginx.dev/controller' } })]);
    expect(files.flatMap((f) => f.documents).filter((d) => d.kind === 'IngressClass' && d.metadata.name === 'nginx')).toEqual([]);
    expect(expandedArgs(containerOf(deploymentOf(base), 'ingress2nginx'))).toEqual(expect.arrayContaining(['--ingress-class=ingress2nginx', '--update-status=true']));
    expect(classes(takeover)).toEqual([]);
    expect(expandedArgs(containerOf(deploymentOf(takeover), 'ingress2nginx'))).toEqual(expect.arrayContaining(['--ingress-class=nginx', '--update-status=false']));
  });

  it("keeps /metrics (every tenant's hosts and rates) to the monitoring namespace and every other port open, in both kustomizations", () => {
    for (const manifests of [base, takeover]) {
      const deployment = deploymentOf(manifests);
      const policy = manifests.find((m) => m.kind === 'NetworkPolicy') as Manifest & {
        spec: { podSelector: unknown; policyTypes: string[]; ingress: { from?: unknown[]; ports: { protocol: string; port: number | string; endPort?: number }[] }[] };
      };
      expect(policy, 'a NetworkPolicy').toBeDefined();
      expect(policy.spec.podSelector).toEqual({ matchLabels: deployment.spec.selector.matchLabels });
      expect(policy.spec.policyTypes).toEqual(['Ingress']);
      const sidecar = containerOf(deployment, 'ingress2nginx') as Container & { ports: { name: string; containerPort: number }[] };
      const metrics = sidecar.ports.find((p) => p.name === 'metrics')!.containerPort;
      const address = expandedArgs(sidecar).find((arg) => arg.startsWith('--metrics-address'));
      expect(address === undefined ? 10254 : Number(address.split(':').pop())).toBe(metrics);
      const opens = (rule: (typeof policy.spec.ingress)[number], protocol: string, port: number) =>
        rule.ports.some((p) => p.protocol === protocol && (p.port === port || (p.port === 'metrics' && port === metrics) || (typeof p.port === 'number' && p.port <= port && port <= (p.endPort ?? p.port))));
      const fromAnywhere = policy.spec.ingress.filter((rule) => rule.from === undefined);
      const fromMonitoring = policy.spec.ingress.filter((rule) => rule.from !== undefined);
      for (const port of [1, 80, 443, 5432, metrics - 1, metrics + 1, 65535]) expect(fromAnywhere.some((rule) => opens(rule, 'TCP', port)), `TCP ${port}`).toBe(true);
      expect(fromAnywhere.some((rule) => opens(rule, 'UDP', 53))).toBe(true);
      expect(fromAnywhere.some((rule) => opens(rule, 'TCP', metrics)), 'metrics open to all').toBe(false);
      expect(fromMonitoring).toEqual([{ from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } }], ports: [{ protocol: 'TCP', port: 'metrics' }] }]);
    }
  });

  it('binds its RBAC to the ServiceAccount the Deployment runs as', () => {
    const account = base.find((m) => m.kind === 'ServiceAccount')!;
    expect(deploymentOf(base).spec.template.spec.serviceAccountName).toBe(account.metadata.name);
    for (const binding of base.filter((m) => m.kind.endsWith('Binding'))) {
      expect(binding['subjects']).toEqual([{ kind: 'ServiceAccount', name: account.metadata.name, namespace: account.metadata.namespace }]);
    }
  });

  it('gives the sidecar arguments that `run` accepts, in every kustomization (it then stops at the missing cluster access)', async () => {
    for (const manifests of [base, takeover, certManager, dedicated]) {
      const args = expandedArgs(containerOf(deploymentOf(manifests), 'ingress2nginx'), { POD_NAMESPACE: 'ingress2nginx' });
      const result = await runCli(args, { env: {} });
      expect(result.stderr).toContain('no cluster access');
      expect(result.exitCode).toBe(2);
    }
  });
});


describe('deploy/gateway/: a data plane of one Gateway', () => {
  type Service = Manifest & { spec: { selector: Record<string, string>; ports: { name: string; port: number; targetPort: string }[] } };
  type Listener = { name: string; port: number; protocol: string };
  const example = () => files.find((f) => f.file === join('gateway', 'gateway.yaml'))!.documents;
  const gatewayOf = () => example().find((d) => d.kind === 'Gateway') as Manifest & { spec: { gatewayClassName: string; listeners: Listener[] } };
  const serviceOf = (manifests: readonly Manifest[], name: string) => manifests.find((m) => m.kind === 'Service' && m.metadata.name === name) as Service;

  it('serves the one Gateway, of a class the main data plane does not serve, and no Ingress; writes its status under a Lease of its own', () => {
    const gateway = gatewayOf();
    const args = expandedArgs(containerOf(deploymentOf(dedicated), 'ingress2nginx'), { POD_NAMESPACE: 'ingress2nginx' });
    expect(args).toContain(`--gateway=${gateway.metadata.namespace}/${gateway.metadata.name}`);
    expect(args).toContain(`--gateway-class=${gateway.spec.gatewayClassName}`);
    const mainArgs = expandedArgs(containerOf(deploymentOf(base), 'ingress2nginx'));
    const mainClass = mainArgs.find((a) => a.startsWith('--gateway-class='))?.split('=')[1] ?? 'ingress2nginx';
    expect(gateway.spec.gatewayClassName).not.toBe(mainClass);
    expect(example().find((d) => d.kind === 'GatewayClass')).toMatchObject({ metadata: { name: gateway.spec.gatewayClassName }, spec: { controllerName: 'ingress2nginx.dev/controller' } });
    const election = (list: readonly string[]) => list.find((a) => a.startsWith('--election-id='))?.split('=')[1] ?? 'ingress2nginx';
    expect(election(args)).not.toBe(election(mainArgs));
    const service = dedicated.find((m) => m.kind === 'Service')!;
    expect(args).toContain(`--publish-service=${service.metadata.namespace}/${service.metadata.name}`);
    expect(args.filter((a) => a.startsWith('--validating-webhook'))).toEqual([]);
    expect(dedicated.filter((m) => ['Namespace', 'IngressClass', 'ValidatingWebhookConfiguration'].includes(m.kind))).toEqual([]);
  });

  it("opens the Gateway's listener ports on nginx and its Service, none the sidecar's, and the main Service never selects its Pods", () => {
    const deployment = deploymentOf(dedicated);
    const nginx = containerOf(deployment, 'nginx') as Container & { ports: { name: string; containerPort: number }[] };
    const sidecar = containerOf(deployment, 'ingress2nginx') as Container & { ports: { name: string; containerPort: number }[] };
    const service = dedicated.find((m) => m.kind === 'Service') as Service;
    const listenerPorts = gatewayOf().spec.listeners.map((l) => l.port).sort((a, b) => a - b);
    expect(service.spec.ports.map((p) => p.port).sort((a, b) => a - b)).toEqual(listenerPorts);
    for (const port of service.spec.ports) expect(nginx.ports.find((p) => p.name === port.targetPort)?.containerPort, port.name).toBe(port.port);
    for (const port of listenerPorts) expect(sidecar.ports.map((p) => p.containerPort)).not.toContain(port);
    const podLabels = (deployment.spec.template as unknown as { metadata: { labels: Record<string, string> } }).metadata.labels;
    const selects = (selector: Record<string, string>) => Object.entries(selector).every(([key, value]) => podLabels[key] === value);
    expect(selects(service.spec.selector)).toBe(true);
    expect(selects(serviceOf(base, 'ingress2nginx').spec.selector)).toBe(false);
    const names = (manifests: readonly Manifest[]) => new Set(manifests.map((m) => `${m.kind}/${m.metadata.namespace ?? ''}/${m.metadata.name}`));
    const shared = [...names(dedicated)].filter((name) => names(base).has(name));
    expect(shared, 'objects both kustomizations would write').toEqual([]);
  });
});

describe('deploy/ admission webhook', () => {
  type Webhook = {
    name: string;
    sideEffects: string;
    admissionReviewVersions: string[];
    failurePolicy: string;
    timeoutSeconds: number;
    clientConfig: { service: { name: string; namespace: string; path: string; port: number }; caBundle?: string };
    rules: { apiGroups: string[]; resources: string[]; operations: string[] }[];
    namespaceSelector: { matchExpressions: { key: string; operator: string; values: string[] }[] };
  };
  const configurationOf = (manifests: readonly Manifest[]) => manifests.find((m) => m.kind === 'ValidatingWebhookConfiguration') as Manifest & { webhooks: Webhook[] };

  it('reviews Ingresses at ingress-nginx\'s path and the Gateway API kinds, without side effects, v1 only, within a timeout, never in the system namespaces', () => {
    for (const manifests of [base, takeover, certManager]) {
      const hooks = configurationOf(manifests).webhooks;
      expect(hooks.map((h) => [h.rules.flatMap((r) => r.resources), h.clientConfig.service.path])).toEqual([
        [['ingresses'], '/networking/v1/ingresses'],
        [['gateways'], '/gateway.networking.k8s.io/gateways'],
        [['httproutes'], '/gateway.networking.k8s.io/httproutes'],
        [['grpcroutes'], '/gateway.networking.k8s.io/grpcroutes'],
        [['tlsroutes'], '/gateway.networking.k8s.io/tlsroutes'],
      ]);
      const deployment = deploymentOf(manifests);
      const webhookService = manifests.find((m) => m.kind === 'Service' && m.metadata.name === hooks[0]!.clientConfig.service.name) as Manifest & { spec: { selector: unknown; ports: { port: number; targetPort: string }[] } };
      expect(webhookService.spec.selector).toEqual(deployment.spec.selector.matchLabels);
      const sidecar = containerOf(deployment, 'ingress2nginx') as Container & { ports: { name: string; containerPort: number }[] };
      const listen = expandedArgs(sidecar).find((a) => a.startsWith('--validating-webhook='));
      for (const hook of hooks) {
        expect(hook).toMatchObject({ sideEffects: 'None', admissionReviewVersions: ['v1'], failurePolicy: 'Fail' });
        expect(hook.timeoutSeconds).toBeLessThanOrEqual(10);
        expect(hook.rules.flatMap((r) => r.operations)).toEqual(['CREATE', 'UPDATE']);
        expect(hook.clientConfig.service).toMatchObject({ name: webhookService.metadata.name, namespace: webhookService.metadata.namespace });
        const port = webhookService.spec.ports.find((p) => p.port === hook.clientConfig.service.port)!;
        expect(Number(listen?.split(':').pop())).toBe(sidecar.ports.find((p) => p.name === port.targetPort)?.containerPort);
        expect(hook.namespaceSelector.matchExpressions).toContainEqual({ key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: expect.arrayContaining(['kube-system', 'kube-public', 'kube-node-lease', deployment.metadata.namespace]) });
      }
    }
  });

  it('without cert-manager, may read and fill only its CA Secret and patch only its own webhook configuration', () => {
    const args = expandedArgs(containerOf(deploymentOf(base), 'ingress2nginx'), { POD_NAMESPACE: 'ingress2nginx' });
    const secret = base.find((m) => m.kind === 'Secret')!;
    expect(args).toContain(`--validating-webhook-ca-secret=${secret.metadata.namespace}/${secret.metadata.name}`);
    const rules = base.filter((m) => m.kind === 'Role' || m.kind === 'ClusterRole').flatMap((m) => (m as unknown as { rules: { resources: string[]; resourceNames?: string[]; verbs: string[] }[] }).rules);
    expect(rules.filter((r) => r.verbs.some((v) => ['update', 'patch'].includes(v)) && r.resources.some((x) => ['secrets', 'validatingwebhookconfigurations'].includes(x)))).toEqual([
      { apiGroups: [''], resources: ['secrets'], resourceNames: [secret.metadata.name], verbs: ['get', 'update'] },
      { apiGroups: ['admissionregistration.k8s.io'], resources: ['validatingwebhookconfigurations'], resourceNames: [configurationOf(base).metadata.name], verbs: ['get', 'patch'] },
    ]);
  });

  it('with cert-manager, mounts the Secret of the Certificate for the webhook Service and has the CA injected', () => {
    const configuration = configurationOf(certManager);
    const annotations = (configuration.metadata as { annotations?: Record<string, string> }).annotations;
    const certificate = certManager.find((m) => m.kind === 'Certificate' && !(m['spec'] as { isCA?: boolean }).isCA) as Manifest & { spec: { secretName: string; dnsNames: string[] } };
    expect(annotations?.['cert-manager.io/inject-ca-from']).toBe(`${certificate.metadata.namespace}/${certificate.metadata.name}`);
    const service = configuration.webhooks[0]!.clientConfig.service;
    expect(certificate.spec.dnsNames).toContain(`${service.name}.${service.namespace}.svc`);
    const pod = deploymentOf(certManager).spec.template.spec as PodSpec & { volumes: { name: string; secret?: { secretName: string } }[] };
    const args = expandedArgs(containerOf(deploymentOf(certManager), 'ingress2nginx'));
    expect(args.some((a) => a.startsWith('--validating-webhook-ca-secret'))).toBe(false);
    const mount = (containerOf(deploymentOf(certManager), 'ingress2nginx') as Container & { volumeMounts: { name: string; mountPath: string }[] }).volumeMounts.find((m) => pod.volumes.find((v) => v.name === m.name)?.secret?.secretName === certificate.spec.secretName);
    expect(args).toEqual(expect.arrayContaining([`--validating-webhook-certificate=${mount?.mountPath}/tls.crt`, `--validating-webhook-key=${mount?.mountPath}/tls.key`]));
    expect(certManager.filter((m) => m.kind === 'Secret')).toEqual([]);
  });
});
