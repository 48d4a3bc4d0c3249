import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CliRun } from '../support/cli.js';
import { httpGet, startHttpBackend, startHttpsBackend, type Peer } from '../support/peers.js';
import { createCa, issueCertificate } from '../support/pki.js';
import { cleanUp, createTarget, documents, ingressManifest, renderInto, serviceManifest, startPeer, startTarget, temporaryDir, type Target } from './harness.js';

/**
 * An https `auth-url` decides who gets in, so nginx verifies the auth service's certificate (against
 * `--system-ca-bundle`) where nginx's default, and so ingress-nginx, verifies none: whoever could answer
 * for the address would approve every request (issue 37). Real nginx, real TLS.
 */

afterAll(cleanUp);

let target: Target;
let rendered: CliRun;

beforeAll(async () => {
  const dir = await temporaryDir();
  const [trusted, rogue] = await Promise.all([createCa(dir, 'Trusted CA'), createCa(dir, 'Rogue CA')]);
  const [good, forged] = await Promise.all([
    issueCertificate(trusted, { commonName: 'auth.web.svc.cluster.local', sans: ['auth.web.svc.cluster.local'] }),
    issueCertificate(rogue, { commonName: 'impostor.web.svc.cluster.local', sans: ['impostor.web.svc.cluster.local'] }),
  ]);
  const auth: Peer = await startPeer(startHttpsBackend({ name: 'auth', cert: good.certPem, key: good.keyPem }));
  const impostor: Peer = await startPeer(startHttpsBackend({ name: 'impostor', cert: forged.certPem, key: forged.keyPem }));
  const app = await startPeer(startHttpBackend('app'));
  const site = (name: string, service: string, port: number) =>
    ingressManifest({
      namespace: 'web',
      name,
      annotations: { 'auth-url': `https://${service}.web.svc.cluster.local:${port}/check` },
      rules: [{ host: `${name}.example.test`, paths: [{ path: '/', pathType: 'Prefix', backend: { service: 'app', port: app.port } }] }],
    });
  const manifests = documents(
    serviceManifest('web', 'app', app),
    serviceManifest('web', 'auth', auth),
    serviceManifest('web', 'impostor', impostor),
    site('verified', 'auth', auth.port),
    site('forged', 'impostor', impostor.port),
  );
  target = await createTarget();
  rendered = await renderInto(target, manifests, ['--system-ca-bundle', trusted.certFile]);
  await startTarget(target);
});

describe('an https auth-url', () => {
  it('renders without errors', () => {
    expect(rendered.exitCode, rendered.stderr).toBe(0);
  });

  it('lets a request in when the auth service proves its name with a trusted certificate', async () => {
    expect((await httpGet({ port: target.httpPort, host: 'verified.example.test' })).status).toBe(200);
  });

  it('lets nothing in when the certificate is not from a trusted CA: the subrequest fails, 500', async () => {
    expect((await httpGet({ port: target.httpPort, host: 'forged.example.test' })).status).toBe(500);
  });
});
