import http from 'node:http';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CliRun } from '../support/cli.js';
import type { RunningNginx } from '../support/nginx.js';
import {
  collectResponse,
  httpGet,
  httpsGet,
  parseEcho,
  startHttpBackend,
  startTlsBackend,
  tlsProbe,
  type EchoResponse,
  type HttpResponse,
  type Peer,
} from '../support/peers.js';
import { createCa, issueCertificate, tlsSecretManifest, type CertificateAuthority, type CertificateFiles } from '../support/pki.js';
import {
  cleanUp,
  configMapManifest,
  createTarget,
  documents,
  fingerprint,
  httpsGetAfterHeader,
  ingressManifest,
  proxyV1Header,
  renderInto,
  serviceManifest,
  settle,
  startPeer,
  startTarget,
  temporaryDir,
  tlsLineAfterHeader,
  type Target,
} from './harness.js';

/**
 * Real traffic through nginx rendered with non-default settings: `--default-certificate` with missing
 * and bad Secrets, the ConfigMap keys `ssl-reject-handshake`, `use-forwarded-headers` with
 * `proxy-real-ip-cidr` (trusted, then untrusted after a re-render and reload), and `use-proxy-protocol`.
 */

afterAll(cleanUp);

let sharedCa: Promise<CertificateAuthority> | undefined;
/** One CA for the whole file, created on first use. */
function testCa(): Promise<CertificateAuthority> {
  sharedCa ??= temporaryDir().then((dir) => createCa(dir, 'Settings CA'));
  return sharedCa;
}

function leaf(ca: CertificateAuthority, name: string): Promise<CertificateFiles> {
  return issueCertificate(ca, { commonName: name, sans: [name] });
}

/** A plain HTTP/1.1 GET on a connection that first carries `header`. */
function httpGetAfterHeader(port: number, header: string, host: string, path: string): Promise<HttpResponse> {
  return collectResponse(
    http.request({
      path,
      headers: { host, connection: 'close' },
      createConnection: () => {
        const socket = net.connect({ host: '127.0.0.1', port });
        socket.write(header);
        return socket;
      },
    }),
  );
}

function echoOf(response: { status: number; body: string }): EchoResponse {
  expect(response.status, response.body).toBe(200);
  return parseEcho(response.body);
}

/** A terminated host `host` (Secret `<name>-tls` in namespace web) routed to Service web/app. */
function terminatedHost(name: string, host: string, app: Peer, secretName: string = `${name}-tls`): string {
  return ingressManifest({
    namespace: 'web',
    name,
    tls: [{ hosts: [host], secretName }],
    rules: [{ host, paths: [{ path: '/', pathType: 'Prefix', backend: { service: 'app', port: app.port } }] }],
  });
}

describe('--default-certificate, and hosts whose Secret is missing or bad', () => {
  let target: Target;
  let rendered: CliRun;
  let ca: CertificateAuthority;
  let certs: { fallback: CertificateFiles; good: CertificateFiles; mismatch: CertificateFiles; other: CertificateFiles; notCovering: CertificateFiles };

  beforeAll(async () => {
    ca = await testCa();
    certs = await settle({
      fallback: leaf(ca, 'fallback.example.test'),
      good: leaf(ca, 'good.example.test'),
      mismatch: leaf(ca, 'mismatch.example.test'),
      other: leaf(ca, 'unrelated.example.test'),
      notCovering: leaf(ca, 'other.example.test'),
    });
    const app = await startPeer(startHttpBackend('app'));
    const manifests = documents(
      serviceManifest('web', 'app', app),
      tlsSecretManifest({ name: 'fallback-cert', namespace: 'web', certificate: certs.fallback }),
      tlsSecretManifest({ name: 'good-tls', namespace: 'web', certificate: certs.good }),
      // The certificate of mismatch.example.test with somebody else's key.
      tlsSecretManifest({ name: 'mismatch-tls', namespace: 'web', certificate: { certPem: certs.mismatch.certPem, keyPem: certs.other.keyPem } }),
      tlsSecretManifest({ name: 'uncovered-tls', namespace: 'web', certificate: certs.notCovering }),
      terminatedHost('good', 'good.example.test', app),
      terminatedHost('missing', 'missing.example.test', app, 'does-not-exist'),
      terminatedHost('mismatch', 'mismatch.example.test', app),
      terminatedHost('uncovered', 'uncovered.example.test', app),
    );
    target = await createTarget();
    // --strict: a Secret missing from the input is an error here, as in the cluster mode.
    rendered = await renderInto(target, manifests, ['--default-certificate', 'web/fallback-cert', '--strict']);
    expect(rendered.stderr).not.toContain('internal error');
    expect(rendered.exitCode, rendered.stderr).toBe(1);
    await startTarget(target);
  });

  it('reports each bad Secret as an error', () => {
    for (const host of ['missing.example.test', 'mismatch.example.test', 'uncovered.example.test']) {
      expect(rendered.stderr).toMatch(new RegExp(`error \\[tls-secret-invalid\\].*${host.replaceAll('.', '\\.')} is served with the default certificate`));
    }
    expect(rendered.stderr).not.toMatch(/good\.example\.test/);
  });

  it.each(['missing.example.test', 'mismatch.example.test', 'uncovered.example.test'])(
    'still serves %s, with the default certificate',
    async (host) => {
      const response = await httpsGet({ port: target.httpsPort, servername: host, path: '/still-here' });
      expect(response.peerCertificate?.fingerprint256).toBe(fingerprint(certs.fallback.certPem));
      expect(echoOf(response)).toMatchObject({ backend: 'app', path: '/still-here', headers: { host } });
    },
  );

  it('serves a host with a good Secret with its own certificate', async () => {
    const response = await httpsGet({ port: target.httpsPort, servername: 'good.example.test', ca: ca.certPem });
    expect(response.peerCertificate?.fingerprint256).toBe(fingerprint(certs.good.certPem));
    expect(echoOf(response)).toMatchObject({ backend: 'app' });
  });

  it('answers an unknown SNI and no SNI with the --default-certificate', async () => {
    for (const servername of ['nobody.example.test', undefined]) {
      const probe = await tlsProbe({ port: target.httpsPort, ...(servername && { servername }), awaitData: false });
      expect(probe.outcome, servername).toBe('connected');
      expect(probe.peerCertificate?.fingerprint256, servername).toBe(fingerprint(certs.fallback.certPem));
    }
  });
});

describe('ConfigMap: ssl-reject-handshake, use-forwarded-headers with proxy-real-ip-cidr', () => {
  let target: Target;
  let nginx: RunningNginx;
  let ca: CertificateAuthority;
  let appCert: CertificateFiles;
  let manifestsWith: (cidr: string) => string;

  const forwarded = { 'x-forwarded-proto': 'https', 'x-forwarded-for': '203.0.113.7' };

  beforeAll(async () => {
    ca = await testCa();
    appCert = await leaf(ca, 'app.example.test');
    const app = await startPeer(startHttpBackend('app'));
    manifestsWith = (cidr) =>
      documents(
        configMapManifest('ingress-nginx', 'controller', {
          'ssl-reject-handshake': 'true',
          'use-forwarded-headers': 'true',
          'proxy-real-ip-cidr': cidr,
          // The chain a trusted proxy sent, plus the proxy: what these tests read back.
          'compute-full-forwarded-for': 'true',
        }),
        serviceManifest('web', 'app', app),
        tlsSecretManifest({ name: 'app-tls', namespace: 'web', certificate: appCert }),
        terminatedHost('app', 'app.example.test', app),
        ingressManifest({
          namespace: 'web',
          name: 'plain',
          rules: [{ host: 'plain.example.test', paths: [{ path: '/', pathType: 'Prefix', backend: { service: 'app', port: app.port } }] }],
        }),
      );
    target = await createTarget();
    const rendered = await renderInto(target, manifestsWith('127.0.0.1/32'), ['--configmap', 'ingress-nginx/controller']);
    expect(rendered.exitCode, rendered.stderr).toBe(0);
    nginx = await startTarget(target);
  });

  it('rejects the handshake for an unknown SNI and for no SNI', async () => {
    const unknown = await tlsProbe({ port: target.httpsPort, servername: 'nobody.example.test' });
    expect(unknown.outcome).toBe('tls-error');
    const withoutSni = await tlsProbe({ port: target.httpsPort });
    expect(withoutSni.outcome).toBe('tls-error');
  });

  it('still terminates a known host', async () => {
    const response = await httpsGet({ port: target.httpsPort, servername: 'app.example.test', path: '/k', ca: ca.certPem });
    expect(response.peerCertificate?.fingerprint256).toBe(fingerprint(appCert.certPem));
    expect(echoOf(response)).toMatchObject({ backend: 'app', path: '/k', headers: { 'x-forwarded-proto': 'https' } });
  });

  it('from a trusted proxy: does not redirect a request the proxy received over HTTPS, and keeps its X-Forwarded-For', async () => {
    const response = await httpGet({ port: target.httpPort, host: 'app.example.test', path: '/behind-lb', headers: forwarded });
    const echo = echoOf(response);
    expect(echo.path).toBe('/behind-lb');
    expect(echo.headers['x-forwarded-for']).toMatch(/^203\.0\.113\.7(,|$)/);
    expect(echo.headers).toMatchObject({ 'x-forwarded-for': '203.0.113.7, 127.0.0.1', 'x-real-ip': '203.0.113.7', 'x-forwarded-proto': 'https' });
  });

  it('from a trusted proxy: still redirects a request the proxy received over plain HTTP', async () => {
    const response = await httpGet({ port: target.httpPort, host: 'app.example.test', path: '/x', headers: { 'x-forwarded-proto': 'http' } });
    expect(response.status).toBe(308);
    expect(response.headers.location).toBe(`https://app.example.test:${target.httpsPort}/x`);
  });

  it('from a trusted proxy: passes its X-Forwarded-* on for a host without TLS', async () => {
    const echo = echoOf(await httpGet({ port: target.httpPort, host: 'plain.example.test', path: '/p', headers: forwarded }));
    expect(echo.headers).toMatchObject({ 'x-forwarded-for': '203.0.113.7, 127.0.0.1', 'x-real-ip': '203.0.113.7', 'x-forwarded-proto': 'https' });
  });

  describe('after re-rendering with proxy-real-ip-cidr 10.0.0.0/8 and reloading (127.0.0.1 no longer trusted)', () => {
    beforeAll(async () => {
      const rendered = await renderInto(target, manifestsWith('10.0.0.0/8'), ['--configmap', 'ingress-nginx/controller']);
      expect(rendered.exitCode, rendered.stderr).toBe(0);
      await nginx.reload();
    });

    it('redirects the same request, ignoring the spoofed X-Forwarded-Proto', async () => {
      const response = await httpGet({ port: target.httpPort, host: 'app.example.test', path: '/behind-lb', headers: forwarded });
      expect(response.status, response.body).toBe(308);
      expect(response.headers.location).toBe(`https://app.example.test:${target.httpsPort}/behind-lb`);
    });

    it('replaces the spoofed X-Forwarded-For with the real client address', async () => {
      const echo = echoOf(await httpGet({ port: target.httpPort, host: 'plain.example.test', path: '/p', headers: forwarded }));
      expect(echo.headers).toMatchObject({ 'x-forwarded-for': '127.0.0.1', 'x-real-ip': '127.0.0.1', 'x-forwarded-proto': 'http' });
    });
  });

  describe('after re-rendering with proxy-real-ip-cidr 0.0.0.0/0 (every address trusted over plain HTTP)', () => {
    beforeAll(async () => {
      const rendered = await renderInto(target, manifestsWith('0.0.0.0/0'), ['--configmap', 'ingress-nginx/controller']);
      expect(rendered.exitCode, rendered.stderr).toBe(0);
      await nginx.reload();
    });

    it('never trusts X-Forwarded-* that a client sends over HTTPS: the client is who sent the TLS', async () => {
      const headers = { 'x-forwarded-for': '1.2.3.4', 'x-forwarded-proto': 'http', 'x-forwarded-port': '1' };
      const response = await httpsGet({ port: target.httpsPort, servername: 'app.example.test', path: '/tls', ca: ca.certPem, headers });
      expect(echoOf(response).headers).toMatchObject({
        'x-forwarded-for': '127.0.0.1',
        'x-real-ip': '127.0.0.1',
        'x-forwarded-proto': 'https',
        'x-forwarded-port': String(target.httpsPort),
      });
    });
  });
});

describe('ConfigMap: use-proxy-protocol (PROXY v1 header from an outer load balancer)', () => {
  let target: Target;
  let nginx: RunningNginx;
  let certs: { app: CertificateFiles; vault: CertificateFiles };
  const header = proxyV1Header('198.51.100.9', '127.0.0.1', 5555, 443);

  beforeAll(async () => {
    const ca = await testCa();
    certs = await settle({ app: leaf(ca, 'app.example.test'), vault: leaf(ca, 'vault.example.test') });
    const [app, vault] = await Promise.all([
      startPeer(startHttpBackend('app')),
      startPeer(startTlsBackend({ name: 'vault', cert: certs.vault.certPem, key: certs.vault.keyPem })),
    ]);
    const manifests = documents(
      configMapManifest('ingress-nginx', 'controller', { 'use-proxy-protocol': 'true' }),
      serviceManifest('web', 'app', app),
      serviceManifest('web', 'vault', vault),
      tlsSecretManifest({ name: 'app-tls', namespace: 'web', certificate: certs.app }),
      terminatedHost('app', 'app.example.test', app),
      ingressManifest({
        namespace: 'web',
        name: 'vault',
        annotations: { 'ssl-passthrough': 'true' },
        rules: [{ host: 'vault.example.test', paths: [{ path: '/', pathType: 'Prefix', backend: { service: 'vault', port: vault.port } }] }],
      }),
    );
    target = await createTarget();
    const rendered = await renderInto(target, manifests, ['--configmap', 'ingress-nginx/controller']);
    expect(rendered.exitCode, rendered.stderr).toBe(0);
    nginx = await startTarget(target);
  });

  it('gives a terminated host the client address from the PROXY header', async () => {
    const response = await httpsGetAfterHeader({ port: target.httpsPort, header, servername: 'app.example.test', path: '/pp' });
    expect(response.peerCertificate?.fingerprint256).toBe(fingerprint(certs.app.certPem));
    const echo = echoOf(response);
    expect(echo).toMatchObject({ backend: 'app', path: '/pp' });
    expect(echo.headers).toMatchObject({
      host: 'app.example.test',
      'x-forwarded-for': '198.51.100.9',
      'x-real-ip': '198.51.100.9',
      'x-forwarded-proto': 'https',
      'x-forwarded-port': String(target.httpsPort),
    });
  });

  it('still passes a passthrough host through after the header', async () => {
    const result = await tlsLineAfterHeader({ port: target.httpsPort, header, servername: 'vault.example.test' });
    expect(result.line).toBe('hello from vault sni=vault.example.test\n');
    expect(result.peerCertificate?.fingerprint256).toBe(fingerprint(certs.vault.certPem));
  });

  it('takes the PROXY header on the plain HTTP port too, and never redirects ACME challenges', async () => {
    const httpHeader = proxyV1Header('198.51.100.10', '127.0.0.1', 5556, 80);
    const response = await httpGetAfterHeader(target.httpPort, httpHeader, 'app.example.test', '/.well-known/acme-challenge/token');
    expect(echoOf(response).headers).toMatchObject({ 'x-forwarded-for': '198.51.100.10', 'x-forwarded-proto': 'http' });
  });

  it('refuses a TLS connection that does not start with a PROXY header', async () => {
    const probe = await tlsProbe({ port: target.httpsPort, servername: 'app.example.test', awaitData: false });
    expect(probe.outcome).not.toBe('connected');
    await nginx.waitForStderr(/broken header/);
  });
});

describe('ConfigMap: use-proxy-protocol with use-forwarded-headers (an HTTP proxy behind a TCP load balancer)', () => {
  let target: Target;

  beforeAll(async () => {
    const app = await startPeer(startHttpBackend('app'));
    const plain = (name: string, host: string, annotations?: Record<string, string>) =>
      ingressManifest({
        namespace: 'web',
        name,
        ...(annotations && { annotations }),
        rules: [{ host, paths: [{ path: '/', pathType: 'Prefix', backend: { service: 'app', port: app.port } }] }],
      });
    const manifests = documents(
      configMapManifest('ingress-nginx', 'controller', {
        'use-proxy-protocol': 'true',
        'use-forwarded-headers': 'true',
        // The TCP load balancer (the peer) and the HTTP proxies in front of it (PROXY header sources).
        'proxy-real-ip-cidr': '127.0.0.1/32, 198.51.100.0/24',
      }),
      serviceManifest('web', 'app', app),
      plain('app', 'app.example.test'),
      plain('guarded', 'guarded.example.test', { 'whitelist-source-range': '203.0.113.7/32' }),
    );
    target = await createTarget();
    const rendered = await renderInto(target, manifests, ['--configmap', 'ingress-nginx/controller']);
    expect(rendered.exitCode, rendered.stderr).toBe(0);
    await startTarget(target);
  });

  const viaProxy = (source: string, host: string) =>
    httpGetAfterHeader(target.httpPort, proxyV1Header(source, '127.0.0.1', 5557, 80), host, '/');

  it('takes the client from X-Forwarded-For when the PROXY source is trusted, for headers and access checks', async () => {
    const forwarded = (source: string, host: string) =>
      collectResponse(
        http.request({
          path: '/',
          headers: { host, connection: 'close', 'x-forwarded-for': '10.9.9.9, 203.0.113.7' },
          createConnection: () => {
            const socket = net.connect({ host: '127.0.0.1', port: target.httpPort });
            socket.write(proxyV1Header(source, '127.0.0.1', 5558, 80));
            return socket;
          },
        }),
      );
    expect(echoOf(await forwarded('198.51.100.9', 'app.example.test')).headers).toMatchObject({
      'x-real-ip': '203.0.113.7',
      'x-forwarded-for': '203.0.113.7',
    });
    expect(echoOf(await forwarded('198.51.100.9', 'guarded.example.test')).backend).toBe('app');
    // An untrusted PROXY source: its X-Forwarded-For is not believed, the source is the client.
    expect(echoOf(await forwarded('192.0.2.50', 'app.example.test')).headers).toMatchObject({ 'x-real-ip': '192.0.2.50' });
    expect((await forwarded('192.0.2.50', 'guarded.example.test')).status).toBe(403);
  });

  it('without X-Forwarded-For, the PROXY source is the client', async () => {
    expect(echoOf(await viaProxy('198.51.100.9', 'app.example.test')).headers).toMatchObject({ 'x-real-ip': '198.51.100.9' });
  });
});
