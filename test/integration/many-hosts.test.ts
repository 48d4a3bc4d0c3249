import { chmod, readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningNginx } from '../support/nginx.js';
import { httpGet, httpsGet, parseEcho, startHttpBackend, startTlsBackend, tlsProbe, type Peer } from '../support/peers.js';
import { createCa, issueCertificate, tlsSecretManifest, type CertificateAuthority, type CertificateFiles } from '../support/pki.js';
import { cleanUp, createTarget, documents, fingerprint, ingressManifest, renderInto, serviceManifest, startPeer, startTarget, temporaryDir, type Target } from './harness.js';

/**
 * The shapes that keep a large config cheap to load, with real traffic over a thousand hosts:
 * certificates chosen per handshake by SNI in one SSL context (`--certificates-per-handshake`), every
 * host's plain HTTP answered by the shared redirect server (ACME challenges to the host's own
 * upstream), and passthrough hosts sharing one listener and one 404 server.
 */

afterAll(cleanUp);

const perCertificate = 501;
const hostA = (i: number) => `h${i}.a.example.test`;
const hostB = (i: number) => `h${i}.b.example.test`;

let target: Target;
let nginx: RunningNginx;
let ca: CertificateAuthority;
let certs: { a: CertificateFiles; b: CertificateFiles; vault: CertificateFiles };
let backends: { a: Peer; b: Peer; vault: Peer };

beforeAll(async () => {
  ca = await createCa(await temporaryDir(), 'many-hosts CA');
  const [a, b, vault] = await Promise.all([
    issueCertificate(ca, { commonName: '*.a.example.test', sans: ['*.a.example.test'] }),
    issueCertificate(ca, { commonName: '*.b.example.test', sans: ['*.b.example.test'] }),
    issueCertificate(ca, { commonName: 'vault.example.test', sans: ['vault.example.test'] }),
  ]);
  certs = { a, b, vault };
  backends = {
    a: await startPeer(startHttpBackend('a')),
    b: await startPeer(startHttpBackend('b')),
    vault: await startPeer(startTlsBackend({ name: 'vault', cert: vault.certPem, key: vault.keyPem })),
  };
  const terminated = (host: string, name: string, service: string, secretName: string) =>
    ingressManifest({
      namespace: 'web',
      name,
      tls: [{ hosts: [host], secretName }],
      rules: [{ host, paths: [{ path: '/', pathType: 'Prefix', backend: { service, port: service === 'a' ? backends.a.port : backends.b.port } }] }],
    });
  const manifests = documents(
    serviceManifest('web', 'a', backends.a),
    serviceManifest('web', 'b', backends.b),
    serviceManifest('web', 'vault', backends.vault),
    tlsSecretManifest({ name: 'a-tls', namespace: 'web', certificate: certs.a }),
    tlsSecretManifest({ name: 'b-tls', namespace: 'web', certificate: certs.b }),
    ...Array.from({ length: perCertificate }, (_, i) => terminated(hostA(i), `a-${i}`, 'a', 'a-tls')),
    ...Array.from({ length: perCertificate }, (_, i) => terminated(hostB(i), `b-${i}`, 'b', 'b-tls')),
    ingressManifest({
      namespace: 'web',
      name: 'vault',
      annotations: { 'ssl-passthrough': 'true' },
      rules: [{ host: 'vault.example.test', paths: [{ path: '/', pathType: 'Prefix', backend: { service: 'vault', port: backends.vault.port } }] }],
    }),
  );
  target = await createTarget();
  const rendered = await renderInto(target, manifests, ['--certificates-per-handshake']);
  expect(rendered.exitCode, rendered.stderr).toBe(0);
  // The workers read key files per handshake; here they run as nobody (the tests run as root), so they
  // are let read them, as an operator does by running the workers as the user that writes them.
  const tlsDir = path.join(target.outDir, 'tls');
  for (const file of await readdir(tlsDir)) await chmod(path.join(tlsDir, file), 0o644);
  nginx = await startTarget(target);
});

describe('a thousand hosts, certificates per handshake', () => {
  it('serves each host the certificate of its Secret, chosen per handshake, and routes it to its backend', async () => {
    for (const [host, certificate, backend] of [
      [hostA(0), certs.a, 'a'],
      [hostA(perCertificate - 1), certs.a, 'a'],
      [hostB(7), certs.b, 'b'],
    ] as const) {
      const response = await httpsGet({ port: target.httpsPort, servername: host, path: '/x', ca: ca.certPem });
      expect(response.peerCertificate?.fingerprint256, host).toBe(fingerprint(certificate.certPem));
      expect(parseEcho(response.body)).toMatchObject({ backend, path: '/x' });
    }
  });

  it('serves the default certificate for an unknown name or no SNI', async () => {
    const unknown = await tlsProbe({ port: target.httpsPort, servername: 'h1.c.example.test', awaitData: false });
    expect(unknown.peerCertificate?.subjectCN).toBe('ingress2nginx default certificate');
    const none = await tlsProbe({ port: target.httpsPort, awaitData: false });
    expect(none.peerCertificate?.subjectCN).toBe('ingress2nginx default certificate');
  });

  it("redirects every plain-HTTP path to HTTPS, but sends ACME challenges to the host's own backend", async () => {
    const redirect = await httpGet({ port: target.httpPort, host: hostB(3), path: '/any/path?q=1' });
    expect(redirect.status).toBe(308);
    expect(redirect.headers.location).toBe(`https://${hostB(3)}:${target.httpsPort}/any/path?q=1`);
    const challenge = await httpGet({ port: target.httpPort, host: hostB(3), path: '/.well-known/acme-challenge/token' });
    expect(parseEcho(challenge.body)).toMatchObject({ backend: 'b', path: '/.well-known/acme-challenge/token' });
    const other = await httpGet({ port: target.httpPort, host: hostA(5), path: '/.well-known/acme-challenge/token' });
    expect(parseEcho(other.body)).toMatchObject({ backend: 'a' });
  });

  it('passes a passthrough host through its shared listener, and answers its plain HTTP with 404', async () => {
    const probe = await tlsProbe({ port: target.httpsPort, servername: 'vault.example.test', ca: ca.certPem });
    expect(probe).toMatchObject({ outcome: 'connected', authorized: true, data: 'hello from vault sni=vault.example.test\n' });
    expect((await httpGet({ port: target.httpPort, host: 'vault.example.test' })).status).toBe(404);
  });

  it('renders the large-config shapes this test is about', async () => {
    const conf = await readFile(target.conf, 'utf8');
    expect(conf).toContain('map $ssl_server_name $i2n_certificate {');
    expect(conf).toContain('map $host $i2n_acme_upstream {');
    expect(conf.match(/ssl_certificate /g)).toHaveLength(1);
    expect(nginx.stderr()).not.toMatch(/\[(warn|emerg)\]/);
  });
});
