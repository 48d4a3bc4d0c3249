import { copyFile, mkdtemp, rename, rm } from 'node:fs/promises';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tls from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { admissionReview, refusedSnippet, testIngress } from '../../test/support/admission.js';
import { createCa, issueCertificate, type CertificateAuthority } from '../../test/support/pki.js';
import { testTranslateOptions } from '../../test/support/options.js';
import { runCli } from '../../test/support/cli.js';
import { eventually } from '../../test/support/sidecar.js';
import { AdmissionReviewer, serveAdmission, snapshotWhileUnchanged } from './admission-server.js';
import { Logger } from './log.js';
import { Metrics } from './metrics.js';

let dir: string;
let ca: CertificateAuthority;
let server: { port: number; close: () => Promise<void> };
let metrics: Metrics;
const certificateFile = () => join(dir, 'tls.crt');
const keyFile = () => join(dir, 'tls.key');
const maxBodyBytes = 64 * 1024;

async function installPair(commonName: string): Promise<void> {
  const pair = await issueCertificate(ca, { commonName, sans: ['127.0.0.1'] });
  await copyFile(pair.keyFile, `${keyFile()}.next`);
  await copyFile(pair.certFile, `${certificateFile()}.next`);
  // As a Secret volume does: the new files appear whole.
  await rename(`${keyFile()}.next`, keyFile());
  await rename(`${certificateFile()}.next`, certificateFile());
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'i2n-admission-'));
  ca = await createCa(dir, 'admission-test-ca');
  await installPair('webhook-one');
  metrics = new Metrics({ ingressClass: 'nginx', watchedKinds: [], reviewedKinds: ['Ingress'] });
  const reviewer = new AdmissionReviewer({
    snapshot: () => ({ objects: [] }),
    translate: testTranslateOptions(),
    metrics,
    log: new Logger('json', () => undefined, 'error'),
    budgetMs: 60_000,
    maxWaiting: 8,
  });
  server = await serveAdmission(reviewer, { host: '127.0.0.1', port: 0, certificateFile: certificateFile(), keyFile: keyFile(), maxBodyBytes, certificatePollMs: 50 }, metrics, new Logger('json', () => undefined, 'error'));
});

afterAll(async () => {
  await server?.close();
  await rm(dir, { recursive: true, force: true });
});

function post(path: string, body: string | Buffer, method = 'POST'): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const request = https.request(
      { host: '127.0.0.1', port: server.port, path, method, ca: ca.certPem, agent: false, headers: { 'Content-Type': 'application/json' } },
      (response) => {
        let text = '';
        response.on('data', (chunk: Buffer) => (text += chunk.toString()));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, text }));
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}

function servedCommonName(): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: '127.0.0.1', port: server.port, ca: ca.certPem, servername: undefined }, () => {
      const subject = socket.getPeerCertificate().subject as { CN?: string } | undefined;
      socket.end();
      resolve(String(subject?.CN ?? ''));
    });
    socket.on('error', reject);
  });
}

describe('the admission webhook server', () => {
  it('answers a review over TLS with the build\'s denial', async () => {
    const answered = await post('/networking/v1/ingresses', JSON.stringify(admissionReview(testIngress('team-a', 'snip', 's.example.com', { annotations: refusedSnippet }))));
    expect(answered.status).toBe(200);
    const review = JSON.parse(answered.text) as { response: { allowed: boolean; status: { message: string } } };
    expect(review.response.allowed).toBe(false);
    expect(review.response.status.message).toContain('[snippet-refused]');
  });

  it('refuses a body over the limit with 413, bad JSON with 400, a GET with 405, and keeps answering', async () => {
    const oversize = Buffer.alloc(maxBodyBytes + 1, ' ');
    expect((await post('/networking/v1/ingresses', oversize)).status).toBe(413);
    expect((await post('/networking/v1/ingresses', '{"request": ')).status).toBe(400);
    expect((await post('/networking/v1/ingresses', '', 'GET')).status).toBe(405);
    expect((await post('/nowhere', '{}')).status).toBe(404);
    const answered = await post('/networking/v1/ingresses', JSON.stringify(admissionReview(testIngress('team-a', 'ok', 'ok.example.com'))));
    expect(answered.status).toBe(200);
    expect(await metrics.admissionReviews.get().then((m) => m.values.find((v) => v.labels['kind'] === 'Ingress' && v.labels['result'] === 'malformed')?.value)).toBe(3);
    expect(await metrics.admissionReviews.get().then((m) => m.values.find((v) => v.labels['kind'] === 'Ingress' && v.labels['result'] === 'denied')?.value)).toBe(1);
  });

  it('serves a renewed certificate without a restart', async () => {
    expect(await servedCommonName()).toBe('webhook-one');
    await installPair('webhook-two');
    expect(await eventually(servedCommonName, (name) => name === 'webhook-two')).toBe('webhook-two');
  });
});

describe('the snapshot a review reads', () => {
  it('is assembled again only after the watches changed, and not kept while they have not synced', () => {
    let changes = 0;
    let assembled = 0;
    let synced = false;
    const snapshot = snapshotWhileUnchanged(() => (synced ? { objects: [{ kind: 'Ingress', apiVersion: 'networking.k8s.io/v1', metadata: { name: `v${++assembled}`, namespace: 'a', annotations: {}, labels: {}, creationTimestamp: '' }, raw: {} }] } : undefined), () => changes);
    expect(snapshot()).toBeUndefined();
    synced = true;
    expect(snapshot()?.objects[0]?.metadata.name).toBe('v1');
    expect(snapshot()?.objects[0]?.metadata.name).toBe('v1');
    changes++;
    expect(snapshot()?.objects[0]?.metadata.name).toBe('v2');
    expect(assembled).toBe(2);
  });
});

describe('run --validating-webhook', () => {
  it('needs a certificate (files, or the CA Secret to make one), and the certificate flags need the address', async () => {
    const out = join(dir, 'out');
    const noCertificate = await runCli(['run', '-o', out, '--validating-webhook', ':8443'], { env: {} });
    expect(noCertificate.exitCode).toBe(2);
    expect(noCertificate.stderr).toContain('--validating-webhook needs --validating-webhook-certificate and --validating-webhook-key');
    const noAddress = await runCli(['run', '-o', out, '--validating-webhook-ca-secret', 'ingress2nginx/ca'], { env: {} });
    expect(noAddress.exitCode).toBe(2);
    // With a certificate to make, the flags are whole: it goes on to stop at the missing cluster access.
    const whole = await runCli(['run', '-o', out, '--validating-webhook', ':8443', '--validating-webhook-ca-secret', 'ingress2nginx/ca'], { env: {} });
    expect(whole.stderr).toContain('no cluster access');
    expect(whole.exitCode).toBe(2);
  });
});
