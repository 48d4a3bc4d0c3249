import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { admissionReview, refusedSnippet, testIngress, testService, unknownAnnotation } from '../support/admission.js';
import { runCli } from '../support/cli.js';
import { FakeApiServer, type JsonObject } from '../support/fake-apiserver.js';
import { KubectlRunner } from '../support/kubectl.js';
import { createCa, issueCertificate, type CertificateAuthority } from '../support/pki.js';
import { freePorts } from '../support/ports.js';
import { eventually, namespace, startSidecar, stopAllSidecars, type RunningSidecar } from '../support/sidecar.js';

/**
 * The admission webhook end to end: a sidecar with `--validating-webhook` over 1,000 Ingresses in a
 * fake API server that calls it as kube-apiserver does, and a real kubectl applying Ingresses: what a
 * tenant sees at `kubectl apply`.
 */

const ingressCount = 1000;
const namespaces = Array.from({ length: 10 }, (_, i) => `team-${i}`);

let dir: string;
let api: FakeApiServer;
let kubectl: KubectlRunner;
let sidecar: RunningSidecar;
let ca: CertificateAuthority;
let webhookPort: number;
let pair: { certFile: string; keyFile: string };

function webhookConfiguration(): JsonObject {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingWebhookConfiguration',
    metadata: { name: 'ingress2nginx' },
    webhooks: [
      {
        name: 'ingresses.ingress2nginx.dev',
        admissionReviewVersions: ['v1'],
        sideEffects: 'None',
        failurePolicy: 'Fail',
        timeoutSeconds: 10,
        clientConfig: { url: `https://127.0.0.1:${webhookPort}/networking/v1/ingresses`, caBundle: Buffer.from(ca.certPem).toString('base64') },
        rules: [{ apiGroups: ['networking.k8s.io'], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['ingresses'] }],
      },
    ],
  } as JsonObject;
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'i2n-admission-e2e-'));
  ca = await createCa(dir, 'webhook-ca');
  pair = await issueCertificate(ca, { commonName: 'ingress2nginx-webhook', sans: ['127.0.0.1'] });
  [webhookPort] = (await freePorts(1)) as [number];
  api = await FakeApiServer.start({ tls: true, token: 'admission' });
  for (const ns of [...namespaces, 'team-a', 'team-b']) {
    api.create(namespace(ns));
    api.create(testService(ns));
  }
  for (let i = 0; i < ingressCount; i++) api.create(testIngress(namespaces[i % namespaces.length]!, `ing-${i}`, `h${i}.example.com`));
  const kubeconfig = await api.writeKubeconfig();
  kubectl = await KubectlRunner.create(kubeconfig);
  sidecar = await startSidecar({
    api,
    kubeconfig,
    translate: { firstNamespaceOwnsHost: true },
    run: { admission: { host: '127.0.0.1', port: webhookPort, certificateFile: pair.certFile, keyFile: pair.keyFile, nginxCheck: false } },
  });
  expect(await eventually(() => sidecar.probe('/readyz'), (status) => status === 200, 120_000)).toBe(200);
  api.create(webhookConfiguration());
}, 180_000);

afterAll(async () => {
  await stopAllSidecars();
  await api?.close();
  await kubectl?.dispose();
  await rm(dir, { recursive: true, force: true });
});

async function apply(object: JsonObject, ...flags: string[]): Promise<{ exitCode: number; stdout: string; stderr: string }> {
  return kubectl.outcome(['apply', '--validate=false', ...flags, '-f', '-'], JSON.stringify(object));
}

/** `validate`'s lines of one severity for the object alone in a file, without the file location. */
async function validateLines(object: JsonObject, severity: 'error' | 'warning'): Promise<string[]> {
  const file = join(dir, 'candidate.yaml');
  await writeFile(file, [testService(String((object['metadata'] as JsonObject)['namespace'])), object].map((o) => JSON.stringify(o)).join('\n---\n'));
  const validated = await runCli(['validate', '-f', file, '--ingress-class', 'nginx']);
  return validated.stderr
    .split('\n')
    .filter((line) => line.includes(` ${severity} [`))
    .map((line) => line.slice(line.indexOf(`${severity} [`)));
}

const stored = (ns: string, name: string) => api.get({ apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', namespace: ns, name });

describe(`kubectl apply against ${ingressCount} Ingresses with the webhook`, () => {
  it('denies an Ingress with a refused snippet with the message validate gives', async () => {
    const candidate = testIngress('team-a', 'snippet', 'snippet.example.com', { annotations: refusedSnippet });
    const expected = await validateLines(candidate, 'error');
    expect(expected.some((line) => line.startsWith('error [snippet-refused] Ingress team-a/snippet'))).toBe(true);
    const outcome = await apply(candidate);
    expect(outcome.exitCode).not.toBe(0);
    expect(outcome.stderr).toContain('admission webhook "ingresses.ingress2nginx.dev" denied the request: ');
    for (const line of expected) expect(outcome.stderr).toContain(line);
    expect(stored('team-a', 'snippet')).toBeUndefined();
  });

  it('allows a valid Ingress and kubectl prints its warnings', async () => {
    const candidate = testIngress('team-a', 'warned', 'warned.example.com', { annotations: unknownAnnotation });
    const expected = await validateLines(candidate, 'warning');
    expect(expected.length).toBeGreaterThan(0);
    const outcome = await apply(candidate);
    expect(outcome.exitCode).toBe(0);
    for (const line of expected) expect(outcome.stderr).toContain(`Warning: ${line}`);
    expect(stored('team-a', 'warned')).toBeDefined();
  });

  it('denies a host another namespace owns (first-namespace-owns-host), naming the owner', async () => {
    const outcome = await apply(testIngress('team-b', 'takeover', 'h7.example.com'));
    expect(outcome.exitCode).not.toBe(0);
    expect(outcome.stderr).toContain('host h7.example.com belongs to namespace team-7 (Ingress team-7/ing-7 claimed it first)');
    expect(stored('team-b', 'takeover')).toBeUndefined();
  });

  it('answers a server-side dry run the same way and stores nothing', async () => {
    const denied = await apply(testIngress('team-a', 'dry-snippet', 'dry.example.com', { annotations: refusedSnippet }), '--dry-run=server');
    expect(denied.exitCode).not.toBe(0);
    expect(denied.stderr).toContain('[snippet-refused]');
    const allowed = await apply(testIngress('team-a', 'dry-ok', 'dry-ok.example.com'), '--dry-run=server');
    expect(allowed.exitCode).toBe(0);
    expect(stored('team-a', 'dry-ok')).toBeUndefined();
    expect(await sidecar.metric('ingress2nginx_admission_reviews_total', { kind: 'Ingress', result: 'denied' })).toBeGreaterThanOrEqual(3);
  });
});

describe('every replica answers', () => {
  it('a replica that does not lead answers reviews too', async () => {
    const [followerPort] = (await freePorts(1)) as [number];
    const second = await startSidecar({
      api,
      kubeconfig: await api.writeKubeconfig(),
      translate: { firstNamespaceOwnsHost: true },
      run: { admission: { host: '127.0.0.1', port: followerPort, certificateFile: pair.certFile, keyFile: pair.keyFile, nginxCheck: false } },
    });
    expect(await eventually(() => second.probe('/readyz'), (status) => status === 200, 120_000)).toBe(200);
    const leaders = await eventually(() => Promise.all([sidecar, second].map((s) => s.metric('ingress2nginx_leader'))), ([a, b]) => a! + b! === 1);
    expect(leaders[0]! + leaders[1]!).toBe(1);
    const follower = leaders[0] === 0 ? webhookPort : followerPort;
    const body = JSON.stringify(admissionReview(testIngress('team-a', 'asked-directly', 'asked.example.com', { annotations: refusedSnippet })));
    const answer = await new Promise<string>((resolve, reject) => {
      const request = https.request({ host: '127.0.0.1', port: follower, path: '/networking/v1/ingresses', method: 'POST', ca: ca.certPem, headers: { 'Content-Type': 'application/json' } }, (response) => {
        let text = '';
        response.on('data', (chunk: Buffer) => (text += chunk.toString()));
        response.on('end', () => resolve(text));
      });
      request.on('error', reject);
      request.end(body);
    });
    const review = JSON.parse(answer) as { response: { allowed: boolean; status: { message: string } } };
    expect(review.response.allowed).toBe(false);
    expect(review.response.status.message).toContain('[snippet-refused]');
  }, 180_000);
});
