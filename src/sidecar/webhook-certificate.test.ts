import { X509Certificate } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeApiServer, type JsonObject } from '../../test/support/fake-apiserver.js';
import { eventually } from '../../test/support/sidecar.js';
import { loadClusterAccess } from '../sources/cluster/access.js';
import { ApiClient } from '../sources/cluster/client.js';
import { Logger } from './log.js';
import { keepWebhookCertificate, type WebhookCertificateOptions } from './webhook-certificate.js';

let api: FakeApiServer;
let client: ApiClient;
let dir: string;
const log = new Logger('json', () => undefined, 'error');
const stops: (() => void)[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'i2n-webhook-cert-'));
  api = await FakeApiServer.start({ tls: true, token: 'webhook-cert' });
  client = new ApiClient(loadClusterAccess({ kubeconfig: await api.writeKubeconfig(), env: {} }).config);
  api.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'ingress2nginx' } });
  api.create({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'ingress2nginx-webhook-ca', namespace: 'ingress2nginx' }, type: 'Opaque' });
  const hook = (name: string) => ({ name, admissionReviewVersions: ['v1'], sideEffects: 'None', clientConfig: { url: `https://127.0.0.1:1/${name}` }, rules: [] });
  api.create({ apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration', metadata: { name: 'ingress2nginx' }, webhooks: [hook('a.example'), hook('b.example')] } as JsonObject);
});

afterAll(async () => {
  for (const stop of stops) stop();
  await api?.close();
  await rm(dir, { recursive: true, force: true });
});

function options(replica: string): WebhookCertificateOptions {
  return {
    caSecret: { namespace: 'ingress2nginx', name: 'ingress2nginx-webhook-ca' },
    configuration: 'ingress2nginx',
    service: 'ingress2nginx-webhook',
    clusterDomain: 'cluster.local',
    certificateFile: join(dir, replica, 'tls.crt'),
    keyFile: join(dir, replica, 'tls.key'),
  };
}

const secretCa = () => {
  const secret = api.get({ apiVersion: 'v1', kind: 'Secret', namespace: 'ingress2nginx', name: 'ingress2nginx-webhook-ca' }) as { data?: Record<string, string> };
  return secret.data?.['ca.crt'];
};

describe('the webhook certificate without cert-manager', () => {
  it('fills the empty CA Secret, issues a leaf for the Service from it, sets every caBundle; a second replica reuses the CA', async () => {
    stops.push(await keepWebhookCertificate(client, options('one'), log));
    const caBase64 = secretCa();
    expect(caBase64).toBeDefined();
    const ca = new X509Certificate(Buffer.from(caBase64!, 'base64'));
    const leaf = new X509Certificate(await readFile(options('one').certificateFile));
    expect(leaf.checkIssued(ca)).toBe(true);
    expect(leaf.subjectAltName).toContain('DNS:ingress2nginx-webhook.ingress2nginx.svc');
    expect(leaf.subjectAltName).toContain('DNS:ingress2nginx-webhook.ingress2nginx.svc.cluster.local');
    const configuration = api.get({ apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration', name: 'ingress2nginx' }) as { webhooks: { clientConfig: { caBundle?: string } }[] };
    expect(configuration.webhooks.map((h) => h.clientConfig.caBundle)).toEqual([caBase64, caBase64]);

    stops.push(await keepWebhookCertificate(client, options('two'), log));
    expect(secretCa()).toBe(caBase64);
    expect(new X509Certificate(await readFile(options('two').certificateFile)).checkIssued(ca)).toBe(true);
  });

  it('issues the leaf again on its schedule', async () => {
    stops.push(await keepWebhookCertificate(client, options('three'), log, 200));
    const serial = () => readFile(options('three').certificateFile).then((pem) => new X509Certificate(pem).serialNumber);
    const first = await serial();
    expect(await eventually(serial, (now) => now !== first)).not.toBe(first);
  });
});
