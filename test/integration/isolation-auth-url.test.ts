import tls from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CliRun } from '../support/cli.js';
import { startDnsServer, type DnsServer } from '../support/dns.js';
import { httpsGet, parseEcho, startAuthBackend, startHttpBackend, type CountingPeer } from '../support/peers.js';
import { createCa, issueCertificate, tlsSecretManifest } from '../support/pki.js';
import { cleanUp, createTarget, documents, ingressManifest, renderInto, serviceManifest, startPeer, startTarget, temporaryDir, type Target } from './harness.js';

/**
 * The client must never choose where the auth subrequest goes (issue: `auth-url: http://$http_host/…`
 * let the Host header pick the target, loopback included, and the client's headers went with it).
 * `$http_host` is refused, and so is `$host` on a rule without host (the default server, where `$host`
 * is whatever the client sent). oauth2-proxy's own pattern, `$host` as the auth host, keeps working:
 * nginx looks the request's host up in a map of the names the Ingress serves, so a Host header, an SNI
 * that differs from it, or an absolute request URI naming anything else never makes a subrequest or a
 * DNS lookup. Real nginx, real TLS, a real DNS server for `--resolver`.
 */

afterAll(async () => {
  await dns?.close();
  await cleanUp();
});

let target: Target;
let rendered: CliRun;
let dns: DnsServer;
let auth: CountingPeer & { lastHeaders(): Record<string, string | string[] | undefined> | undefined };
let app: CountingPeer;

beforeAll(async () => {
  const dir = await temporaryDir();
  const ca = await createCa(dir, 'Auth CA');
  const site = await issueCertificate(ca, { commonName: 'app.example.test', sans: ['app.example.test'] });
  auth = await startPeer(startAuthBackend());
  app = await startPeer(startHttpBackend('app'));
  // Every name resolves to the loopback, where the auth service listens: only the map decides.
  dns = await startDnsServer({ 'app.example.test': '127.0.0.1', 'internal.example.test': '127.0.0.1' });
  const manifests = documents(
    serviceManifest('team-a', 'app', app),
    tlsSecretManifest({ name: 'app-tls', namespace: 'team-a', certificate: site }),
    ingressManifest({
      namespace: 'team-a',
      name: 'shop',
      annotations: { 'auth-url': `http://$host:${auth.port}/check` },
      tls: [{ hosts: ['app.example.test'], secretName: 'app-tls' }],
      rules: [{ host: 'app.example.test', paths: [{ path: '/', pathType: 'Prefix', backend: { service: 'app', port: app.port } }] }],
    }),
    serviceManifest('team-b', 'app', app),
    ingressManifest({
      namespace: 'team-b',
      name: 'steer',
      annotations: { 'auth-url': `http://$http_host/check` },
      rules: [{ host: 'steer.example.test', paths: [{ path: '/', pathType: 'Prefix', backend: { service: 'app', port: app.port } }] }],
    }),
    serviceManifest('team-c', 'app', app),
    ingressManifest({
      namespace: 'team-c',
      name: 'anyhost',
      annotations: { 'auth-url': `http://$host:${auth.port}/check` },
      rules: [{ paths: [{ path: '/catch', pathType: 'Prefix', backend: { service: 'app', port: app.port } }] }],
    }),
  );
  target = await createTarget();
  rendered = await renderInto(target, manifests, ['--resolver', `127.0.0.1:${dns.port}`]);
  await startTarget(target);
});

describe('auth-url with $host', () => {
  it('refuses $http_host as the auth host, and $host on a rule without host', () => {
    expect(rendered.stderr).toMatch(/error \[annotation-invalid\] Ingress team-b\/steer .*auth-url/);
    expect(rendered.stderr).toMatch(/error \[auth-url-unreachable\] Ingress team-c\/anyhost .*a rule of this Ingress has no host/);
    expect(rendered.exitCode).toBe(1);
  });

  it.each([
    ['steer.example.test', '/', `127.0.0.1:${'AUTH_PORT'}`],
    ['anything.example.test', '/catch', `127.0.0.1:${'AUTH_PORT'}`],
  ])('the refused Ingresses serve nothing, whatever the Host says (%s%s)', async (host, path, steer) => {
    const before = auth.requestCount();
    const head = await rawTlsRequest(
      target.httpsPort,
      host,
      `GET http://${host}${path} HTTP/1.1\r\nHost: ${steer.replace('AUTH_PORT', String(auth.port))}\r\nX-Token: good\r\nConnection: close\r\n\r\n`,
    );
    expect(head).not.toMatch(/^HTTP\/1\.1 200 /);
    expect(auth.requestCount()).toBe(before);
  });

  it('asks the auth service at a name the Ingress serves, and serves the request', async () => {
    const before = auth.requestCount();
    const response = await httpsGet({ port: target.httpsPort, servername: 'app.example.test', path: '/ok', headers: { 'x-token': 'good' } });
    expect(response.status).toBe(200);
    expect(parseEcho(response.body)).toMatchObject({ backend: 'app', path: '/ok' });
    expect(auth.requestCount()).toBe(before + 1);
    expect(auth.lastHeaders()?.['host']).toBe('app.example.test');
  });

  it.each([
    ['the loopback', '127.0.0.1'],
    ['the loopback with the auth port', `127.0.0.1:${'AUTH_PORT'}`],
    ['a name it does not serve', 'internal.example.test'],
    ['the metadata address', '169.254.169.254'],
  ])('a Host header naming %s, under SNI app.example.test, gets no subrequest', async (_, host) => {
    const before = auth.requestCount();
    const response = await httpsGet({
      port: target.httpsPort,
      servername: 'app.example.test',
      path: '/steered',
      headers: { host: host.replace('AUTH_PORT', String(auth.port)), 'x-token': 'good' },
    });
    expect([403, 404]).toContain(response.status);
    expect(auth.requestCount()).toBe(before);
    expect(dns.queries()).not.toContain('internal.example.test');
  });

  it('an absolute request URI naming the loopback gets no subrequest', async () => {
    const before = auth.requestCount();
    const head = await rawTlsRequest(
      target.httpsPort,
      'app.example.test',
      `GET http://127.0.0.1:${auth.port}/check HTTP/1.1\r\nHost: app.example.test\r\nX-Token: good\r\nConnection: close\r\n\r\n`,
    );
    expect(head).toMatch(/^HTTP\/1\.1 40[34] /);
    expect(auth.requestCount()).toBe(before);
  });
});

/** Sends `request` as written over TLS with SNI `servername`; the first line of the answer. */
function rawTlsRequest(port: number, servername: string, request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: '127.0.0.1', port, servername, rejectUnauthorized: false }, () => socket.write(request));
    let data = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => (data += chunk));
    socket.on('end', () => resolve(data.split('\r\n')[0] ?? ''));
    socket.on('error', reject);
  });
}
