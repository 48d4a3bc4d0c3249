import { mkdtemp, rm } from 'node:fs/promises';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FakeApiServer, type JsonObject } from './fake-apiserver.js';
import { KubectlRunner } from './kubectl.js';
import { createCa, issueCertificate, type CertificateAuthority } from './pki.js';
import { freePorts } from './ports.js';

/** The fake API server calls validating webhooks as kube-apiserver does; seen through a real kubectl. */

interface Received {
  readonly path: string;
  readonly review: { request: { uid: string; operation: string; dryRun: boolean; namespace?: string; name: string; object: JsonObject | null; oldObject: JsonObject | null } };
}

let dir: string;
let ca: CertificateAuthority;
let api: FakeApiServer;
let kubectl: KubectlRunner;
let webhook: https.Server;
let webhookPort: number;
let unusedPort: number;
const received: Received[] = [];
/** How the test webhook answers: denies names starting with "bad", warns on names starting with "warn", hangs on "slow". */
function answerOf(review: Received['review']): JsonObject | undefined {
  const name = review.request.name || String((review.request.object?.['metadata'] as JsonObject | undefined)?.['name'] ?? '');
  if (name.startsWith('slow')) return undefined;
  const response: JsonObject = { uid: review.request.uid, allowed: !name.startsWith('bad') };
  if (name.startsWith('bad')) response['status'] = { code: 400, message: `the name ${name} is refused` };
  if (name.startsWith('warn')) response['warnings'] = [`${name} is warned`];
  return { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response };
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'fake-webhooks-'));
  ca = await createCa(dir, 'webhook-ca');
  const pair = await issueCertificate(ca, { commonName: 'webhook', sans: ['127.0.0.1'] });
  webhook = https.createServer({ cert: pair.certPem, key: pair.keyPem }, (request, response) => {
    let text = '';
    request.on('data', (chunk: Buffer) => (text += chunk.toString()));
    request.on('end', () => {
      const review = JSON.parse(text) as Received['review'];
      received.push({ path: request.url ?? '', review });
      const answer = answerOf(review);
      if (answer === undefined) return;
      response.writeHead(200, { 'Content-Type': 'application/json' });
      response.end(JSON.stringify(answer));
    });
  });
  [webhookPort, unusedPort] = (await freePorts(2)) as [number, number];
  await new Promise<void>((resolve) => webhook.listen(webhookPort, '127.0.0.1', () => resolve()));
  api = await FakeApiServer.start();
  kubectl = await KubectlRunner.create(await api.writeKubeconfig());
  for (const name of ['team-a', 'kube-system']) if (!api.get({ apiVersion: 'v1', kind: 'Namespace', name })) api.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
});

afterAll(async () => {
  webhook?.closeAllConnections();
  await new Promise((resolve) => webhook?.close(resolve));
  await api?.close();
  await kubectl?.dispose();
  await rm(dir, { recursive: true, force: true });
});

function configuration(hook: Partial<Record<string, unknown>> = {}): JsonObject {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingWebhookConfiguration',
    metadata: { name: 'test-webhooks' },
    webhooks: [
      {
        name: 'ingresses.test.example',
        admissionReviewVersions: ['v1'],
        sideEffects: 'None',
        failurePolicy: 'Fail',
        timeoutSeconds: 2,
        clientConfig: { url: `https://127.0.0.1:${webhookPort}/networking/v1/ingresses`, caBundle: Buffer.from(ca.certPem).toString('base64') },
        rules: [{ apiGroups: ['networking.k8s.io'], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['ingresses'] }],
        namespaceSelector: { matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: ['kube-system'] }] },
        ...hook,
      },
    ],
  } as JsonObject;
}

function ingressYaml(name: string, namespace = 'team-a'): string {
  return JSON.stringify({
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: { name, namespace },
    spec: { rules: [{ host: `${name}.example.com`, http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'web', port: { number: 80 } } } }] } }] },
  });
}

async function install(hook: Partial<Record<string, unknown>> = {}): Promise<void> {
  if (api.get({ apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration', name: 'test-webhooks' })) {
    api.delete({ apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration', name: 'test-webhooks' });
  }
  api.create(configuration(hook));
}

const stored = (name: string, namespace = 'team-a') => api.get({ apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', namespace, name });

beforeEach(() => {
  received.length = 0;
});

describe('validating webhooks in the fake API server', () => {
  it('sends a matching create to the webhook and fails it with the webhook\'s message', async () => {
    await install();
    const outcome = await kubectl.outcome(['apply', '--validate=false', '-f', '-'], ingressYaml('bad-one'));
    expect(outcome.exitCode).not.toBe(0);
    expect(outcome.stderr).toContain('admission webhook "ingresses.test.example" denied the request: the name bad-one is refused');
    expect(stored('bad-one')).toBeUndefined();
    expect(received.map((r) => [r.path.split('?')[0], r.review.request.operation])).toEqual([['/networking/v1/ingresses', 'CREATE']]);
    expect(received[0]!.path).toContain('timeout=2s');
  });

  it('passes the webhook\'s warnings to kubectl and stores an allowed object', async () => {
    await install();
    const outcome = await kubectl.outcome(['apply', '--validate=false', '-f', '-'], ingressYaml('warn-one'));
    expect(outcome.exitCode).toBe(0);
    expect(outcome.stderr).toContain('Warning: warn-one is warned');
    expect(stored('warn-one')).toBeDefined();
  });

  it('sends an update with the old object, and leaves out what the rules and the namespaceSelector do not match', async () => {
    await install();
    await kubectl.run('label', 'ingress', '-n', 'team-a', 'warn-one', 'x=y');
    expect(received.map((r) => r.review.request.operation)).toEqual(['UPDATE']);
    expect(received[0]!.review.request.oldObject).not.toBeNull();
    received.length = 0;
    await kubectl.run('create', 'configmap', 'cm', '-n', 'team-a');
    expect((await kubectl.outcome(['apply', '--validate=false', '-f', '-'], ingressYaml('bad-but-system', 'kube-system'))).exitCode).toBe(0);
    expect(received).toEqual([]);
  });

  it('dry run: the webhook is told, nothing is stored; a webhook with side effects refuses it', async () => {
    await install();
    expect((await kubectl.outcome(['apply', '--validate=false', '--dry-run=server', '-f', '-'], ingressYaml('dry-one'))).exitCode).toBe(0);
    expect(received.map((r) => r.review.request.dryRun)).toEqual([true]);
    expect(stored('dry-one')).toBeUndefined();
    await install({ sideEffects: 'Some' });
    const refused = await kubectl.outcome(['apply', '--validate=false', '--dry-run=server', '-f', '-'], ingressYaml('dry-two'));
    expect(refused.stderr).toContain('does not support dry run');
  });

  it('failurePolicy: Fail refuses while the webhook cannot be called or is too slow; Ignore lets the write through', async () => {
    await install({ clientConfig: { url: `https://127.0.0.1:${unusedPort}/networking/v1/ingresses`, caBundle: Buffer.from(ca.certPem).toString('base64') } });
    const down = await kubectl.outcome(['apply', '--validate=false', '-f', '-'], ingressYaml('down-one'));
    expect(down.stderr).toContain('failed calling webhook "ingresses.test.example"');
    expect(stored('down-one')).toBeUndefined();
    await install({ timeoutSeconds: 1 });
    const slow = await kubectl.outcome(['apply', '--validate=false', '-f', '-'], ingressYaml('slow-one'));
    expect(slow.stderr).toContain('context deadline exceeded');
    await install({ failurePolicy: 'Ignore', clientConfig: { url: `https://127.0.0.1:${unusedPort}/x`, caBundle: Buffer.from(ca.certPem).toString('base64') } });
    expect((await kubectl.outcome(['apply', '--validate=false', '-f', '-'], ingressYaml('down-two'))).exitCode).toBe(0);
    expect(stored('down-two')).toBeDefined();
  });
});
