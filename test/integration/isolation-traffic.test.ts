import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CliRun } from '../support/cli.js';
import { httpGet, httpsGet, parseEcho, startHttpBackend, startTlsBackend, tlsProbe, type Peer } from '../support/peers.js';
import { createCa, issueCertificate, tlsSecretManifest, type CertificateFiles } from '../support/pki.js';
import {
  cleanUp,
  createTarget,
  documents,
  fingerprint,
  ingressManifest,
  renderInto,
  serviceManifest,
  settle,
  startPeer,
  startTarget,
  temporaryDir,
  type IngressInput,
  type Target,
} from './harness.js';

/**
 * Hostile tenants against a real nginx: team-b asks for team-a's hosts (a passthrough of a host team-a
 * terminates, a wildcard passthrough over team-a's names, including a one-letter one), a tenant names
 * hosts after `map` parameters, and another points an ExternalName at the node's loopback. The config
 * loads, and every TLS connection reaches whoever claimed the name first.
 */

afterAll(cleanUp);

let target: Target;
let rendered: CliRun;
let site: CertificateFiles;
let intruder: CertificateFiles;
let backends: { app: Peer; intruder: Peer; keyword: Peer };

const created = (input: IngressInput, creationTimestamp: string): string => {
  const document = ingressManifest(input).replace('metadata:\n', `metadata:\n  creationTimestamp: "${creationTimestamp}"\n`);
  return document;
};

beforeAll(async () => {
  const dir = await temporaryDir();
  const [ca, otherCa] = await Promise.all([createCa(dir, 'Isolation CA'), createCa(dir, 'Intruder CA')]);
  const certificates = await settle({
    site: issueCertificate(ca, { commonName: 'app.example.test', sans: ['app.example.test', 'a.example.test', '*.n.example.test'] }),
    intruder: issueCertificate(otherCa, { commonName: 'intruder', sans: ['*.example.test', 'app.example.test', 'default'] }),
  });
  site = certificates.site;
  intruder = certificates.intruder;
  backends = await settle({
    app: startPeer(startHttpBackend('app')),
    intruder: startPeer(startTlsBackend({ name: 'intruder', cert: intruder.certPem, key: intruder.keyPem })),
    keyword: startPeer(startTlsBackend({ name: 'keyword', cert: intruder.certPem, key: intruder.keyPem })),
  });
  const to = (service: 'app' | 'intruder' | 'keyword') => ({ service, port: backends[service].port });
  const rootPath = (service: 'app' | 'intruder' | 'keyword') => [{ path: '/', pathType: 'Prefix' as const, backend: to(service) }];

  const manifests = documents(
    serviceManifest('team-a', 'app', backends.app),
    tlsSecretManifest({ name: 'site-tls', namespace: 'team-a', certificate: site }),
    created(
      {
        namespace: 'team-a',
        name: 'site',
        tls: [{ hosts: ['app.example.test', 'a.example.test', '*.n.example.test'], secretName: 'site-tls' }],
        rules: ['app.example.test', 'a.example.test', '*.n.example.test'].map((host) => ({ host, paths: rootPath('app') })),
      },
      '2024-01-01T00:00:00Z',
    ),
    serviceManifest('team-b', 'intruder', backends.intruder),
    created(
      {
        namespace: 'team-b',
        name: 'grab',
        annotations: { 'ssl-passthrough': 'true' },
        rules: [
          { host: 'app.example.test', paths: rootPath('intruder') },
          { host: '*.example.test', paths: rootPath('intruder') },
        ],
      },
      '2025-01-01T00:00:00Z',
    ),
    serviceManifest('team-c', 'keyword', backends.keyword),
    ingressManifest({
      namespace: 'team-c',
      name: 'keywords',
      annotations: { 'ssl-passthrough': 'true' },
      rules: ['default', 'include', 'hostnames', 'volatile'].map((host) => ({ host, paths: rootPath('keyword') })),
    }),
    stringify({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'loopback', namespace: 'team-d' },
      spec: { type: 'ExternalName', externalName: '127.0.0.1', ports: [{ port: backends.app.port }] },
    }),
    ingressManifest({
      namespace: 'team-d',
      name: 'sneaky',
      rules: [{ host: 'sneaky.example.test', paths: [{ path: '/', pathType: 'Prefix', backend: { service: 'loopback', port: backends.app.port } }] }],
    }),
  );
  target = await createTarget();
  // A resolver that answers nothing: the refused ExternalName must not depend on DNS to stay out.
  rendered = await renderInto(target, manifests, ['--resolver', '127.0.0.1:9']);
  await startTarget(target);
});

describe('render', () => {
  it('reports each refused claim and still exits 1 only for the ExternalName error', () => {
    expect(rendered.stderr).toMatch(/warning \[passthrough-conflict\] Ingress team-b\/grab .*app\.example\.test is terminated by Ingress team-a\/site/);
    expect(rendered.stderr).toMatch(/error \[backend-unresolved\] Ingress team-d\/sneaky .*127\.0\.0\.1 is an IP address/);
    expect(rendered.exitCode).toBe(1);
  });
});

describe('TLS goes to whoever claimed the name first', () => {
  it.each(['app.example.test', 'a.example.test', 'x.n.example.test'])('%s is terminated with team-a certificate', async (servername) => {
    const response = await httpsGet({ port: target.httpsPort, servername, path: '/x' });
    expect(response.peerCertificate?.fingerprint256).toBe(fingerprint(site.certPem));
    expect(parseEcho(response.body)).toMatchObject({ backend: 'app', path: '/x' });
  });

  it('a name only the wildcard claims goes to team-b backend', async () => {
    const probe = await tlsProbe({ port: target.httpsPort, servername: 'b.example.test' });
    expect(probe).toMatchObject({ outcome: 'connected', data: 'hello from intruder sni=b.example.test\n' });
  });

  it('plain HTTP for team-a host is redirected by team-a, not handed over', async () => {
    const response = await httpGet({ port: target.httpPort, host: 'app.example.test', path: '/p' });
    expect(response.status).toBe(308);
    expect(response.headers.location).toBe(`https://app.example.test:${target.httpsPort}/p`);
  });
});

describe('host names that are map parameters', () => {
  it.each(['default', 'include', 'hostnames', 'volatile'])('SNI %s reaches its passthrough backend', async (servername) => {
    const probe = await tlsProbe({ port: target.httpsPort, servername });
    expect(probe).toMatchObject({ outcome: 'connected', data: `hello from keyword sni=${servername}\n` });
  });
});

describe('ExternalName to the loopback', () => {
  it('answers 503 and never reaches the loopback service', async () => {
    const response = await httpGet({ port: target.httpPort, host: 'sneaky.example.test', path: '/' });
    expect(response.status).toBe(503);
    expect(response.body).not.toContain('"backend"');
  });
});
