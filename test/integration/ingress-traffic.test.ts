import { readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CliRun } from '../support/cli.js';
import type { RunningNginx } from '../support/nginx.js';
import {
  httpGet,
  httpsGet,
  parseEcho,
  startH2cBackend,
  startHttpBackend,
  startHttpsBackend,
  startTlsBackend,
  tlsProbe,
  type EchoResponse,
  type Peer,
} from '../support/peers.js';
import { caSecretManifest, createCa, issueCertificate, tlsSecretManifest, type CertificateAuthority, type CertificateFiles } from '../support/pki.js';
import {
  cleanUp,
  configMapManifest,
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
  type BackendRef,
  type IngressRule,
  type Target,
} from './harness.js';

/**
 * Real TLS traffic through a real nginx started from `render` output with default settings: SNI
 * passthrough (exact, wildcard, terminated host under a wildcard), termination with the client
 * address carried over the PROXY-protocol unix hop, path routing, verified HTTPS backends with and
 * without a client certificate, the default certificate, and plain-HTTP redirects. One nginx.
 */

const BUNDLED_DEFAULT_CN = 'ingress2nginx default certificate';

afterAll(cleanUp);

let target: Target;
let rendered: CliRun;
let nginx: RunningNginx;
let ca: CertificateAuthority;
let certs: Awaited<ReturnType<typeof issueCertificates>>;
let backends: Awaited<ReturnType<typeof startBackends>>;

function issueCertificates(ca: CertificateAuthority, otherCa: CertificateAuthority) {
  const leaf = (authority: CertificateAuthority, name: string, more: string[] = []): Promise<CertificateFiles> =>
    issueCertificate(authority, { commonName: name, sans: [name, ...more] });
  return settle({
    vaultBackend: leaf(ca, 'vault.example.test'),
    vaultDecoy: leaf(ca, 'vault.example.test'),
    dbBackend: leaf(ca, '*.db.example.test'),
    wildBackend: leaf(ca, '*.wild.example.test'),
    wwwWild: leaf(ca, 'www.wild.example.test'),
    app: leaf(ca, 'app.example.test', ['paths.example.test', 'noredirect.example.test']),
    secure: leaf(ca, 'secure.example.test'),
    twins: leaf(ca, 'one.twins.example.test', ['two.twins.example.test', 'three.twins.example.test']),
    goodBackend: leaf(ca, 'good.pay.svc.cluster.local'),
    foreignBackend: leaf(otherCa, 'foreign.pay.svc.cluster.local'),
    misnamedBackend: leaf(ca, 'misnamed.internal.example.test'),
    mtlsBackend: leaf(ca, 'mtls.pay.svc.cluster.local'),
    nginxClient: issueCertificate(ca, { commonName: 'ingress2nginx-client', serverAuth: false, clientAuth: true }),
  });
}

function startBackends(ca: CertificateAuthority, c: Awaited<ReturnType<typeof issueCertificates>>) {
  const tlsBackend = (name: string, certificate: CertificateFiles): Promise<Peer> =>
    startPeer(startTlsBackend({ name, cert: certificate.certPem, key: certificate.keyPem }));
  const httpsBackend = (name: string, certificate: CertificateFiles, requestClientCert = false): Promise<Peer> =>
    startPeer(startHttpsBackend({ name, cert: certificate.certPem, key: certificate.keyPem, ca: ca.certPem, requestClientCert }));
  const httpBackend = (name: string): Promise<Peer> => startPeer(startHttpBackend(name));
  return settle({
    vault: tlsBackend('vault', c.vaultBackend),
    db: tlsBackend('db', c.dbBackend),
    wild: tlsBackend('wild', c.wildBackend),
    app: httpBackend('app'),
    foo: httpBackend('foo'),
    deep: httpBackend('deep'),
    exact: httpBackend('exact'),
    impl: httpBackend('impl'),
    fallback: httpBackend('fallback'),
    grpc: startPeer(startH2cBackend('grpc')),
    good: httpsBackend('good', c.goodBackend),
    foreign: httpsBackend('foreign', c.foreignBackend),
    misnamed: httpsBackend('misnamed', c.misnamedBackend),
    mtls: httpsBackend('mtls', c.mtlsBackend, true),
  });
}

beforeAll(async () => {
  const dir = await temporaryDir();
  const [mainCa, otherCa] = await Promise.all([createCa(dir, 'Integration CA'), createCa(dir, 'Unrelated CA')]);
  ca = mainCa;
  certs = await issueCertificates(ca, otherCa);
  backends = await startBackends(ca, certs);

  const to = (service: keyof typeof backends): BackendRef => ({ service, port: backends[service].port });
  const verifiedHttps = (secret: string): Record<string, string> => ({
    'backend-protocol': 'HTTPS',
    'proxy-ssl-secret': `pay/${secret}`,
    'proxy-ssl-verify': 'on',
  });
  const secureRule = (path: string, service: keyof typeof backends): IngressRule => ({
    host: 'secure.example.test',
    paths: [{ path, pathType: 'Prefix', backend: to(service) }],
  });

  const manifests = documents(
    // One worker: whether a request finds a reusable upstream connection or TLS session is then deterministic.
    configMapManifest('ingress-nginx', 'controller', { 'worker-processes': '1' }),
    // --- passthrough: an exact host (with a decoy Secret that must not be used), two wildcards
    serviceManifest('data', 'vault', backends.vault),
    serviceManifest('data', 'db', backends.db),
    serviceManifest('data', 'wild', backends.wild),
    tlsSecretManifest({ name: 'vault-decoy-tls', namespace: 'data', certificate: certs.vaultDecoy }),
    ingressManifest({
      namespace: 'data',
      name: 'vault',
      annotations: { 'ssl-passthrough': 'true' },
      rules: [{ host: 'vault.example.test', paths: [{ path: '/', pathType: 'Prefix', backend: { service: 'vault', port: backends.vault.port } }] }],
    }),
    ingressManifest({
      namespace: 'data',
      name: 'vault-terminating-decoy',
      tls: [{ hosts: ['vault.example.test'], secretName: 'vault-decoy-tls' }],
      rules: [{ host: 'vault.example.test', paths: [{ path: '/', pathType: 'Prefix', backend: { service: 'vault', port: backends.vault.port } }] }],
    }),
    ingressManifest({
      namespace: 'data',
      name: 'db',
      annotations: { 'ssl-passthrough': 'true' },
      rules: [{ host: '*.db.example.test', paths: [{ path: '/', pathType: 'Prefix', backend: { service: 'db', port: backends.db.port } }] }],
    }),
    ingressManifest({
      namespace: 'data',
      name: 'wild',
      annotations: { 'ssl-passthrough': 'true' },
      rules: [{ host: '*.wild.example.test', paths: [{ path: '/', pathType: 'Prefix', backend: { service: 'wild', port: backends.wild.port } }] }],
    }),
    // --- terminated hosts
    serviceManifest('shop', 'app', backends.app),
    serviceManifest('shop', 'foo', backends.foo),
    serviceManifest('shop', 'deep', backends.deep),
    serviceManifest('shop', 'exact', backends.exact),
    serviceManifest('shop', 'impl', backends.impl),
    serviceManifest('shop', 'fallback', backends.fallback),
    serviceManifest('shop', 'grpc', backends.grpc),
    tlsSecretManifest({ name: 'app-tls', namespace: 'shop', certificate: certs.app }),
    tlsSecretManifest({ name: 'www-wild-tls', namespace: 'shop', certificate: certs.wwwWild }),
    ingressManifest({
      namespace: 'shop',
      name: 'www-wild',
      tls: [{ hosts: ['www.wild.example.test'], secretName: 'www-wild-tls' }],
      rules: [{ host: 'www.wild.example.test', paths: [{ path: '/', pathType: 'Prefix', backend: to('app') }] }],
    }),
    ingressManifest({
      namespace: 'shop',
      name: 'app',
      tls: [{ hosts: ['app.example.test'], secretName: 'app-tls' }],
      rules: [{ host: 'app.example.test', paths: [{ path: '/', pathType: 'Prefix', backend: to('app') }] }],
    }),
    ingressManifest({
      namespace: 'shop',
      name: 'grpc',
      annotations: { 'backend-protocol': 'GRPC' },
      tls: [{ hosts: ['app.example.test'], secretName: 'app-tls' }],
      rules: [{ host: 'app.example.test', paths: [{ path: '/grpc', pathType: 'Prefix', backend: to('grpc') }] }],
    }),
    ingressManifest({
      namespace: 'shop',
      name: 'paths',
      tls: [{ hosts: ['paths.example.test'], secretName: 'app-tls' }],
      defaultBackend: to('fallback'),
      rules: [
        {
          host: 'paths.example.test',
          paths: [
            { path: '/foo', pathType: 'Prefix', backend: to('foo') },
            { path: '/foo/bar/baz', pathType: 'Prefix', backend: to('deep') },
            { path: '/foo/bar', pathType: 'Exact', backend: to('exact') },
            { path: '/exact', pathType: 'Exact', backend: to('exact') },
            { path: '/impl', pathType: 'ImplementationSpecific', backend: to('impl') },
            // Handled as the shorter prefix handles them: left out of the config (`servedBy`).
            { path: '/foo/same', pathType: 'Prefix', backend: to('foo') },
            { path: '/foo/bar/baz/same', pathType: 'Prefix', backend: to('deep') },
            { path: '/foo/bar/baz/same/exact', pathType: 'Exact', backend: to('deep') },
            // The same backend as /foo, but /foo/bar/baz would take its requests: kept.
            { path: '/foo/bar/baz/back', pathType: 'Exact', backend: to('foo') },
            // nginx answers /foo/slash with a 301 to /foo/slash/: kept, so that it still does.
            { path: '/foo/slash/', pathType: 'ImplementationSpecific', backend: to('foo') },
            // = /foo/pair (foo) beside /foo/pair/ (exact): kept, or /foo/pair would get that 301.
            { path: '/foo/pair', pathType: 'Exact', backend: to('foo') },
            { path: '/foo/pair', pathType: 'Prefix', backend: to('exact') },
          ],
        },
      ],
    }),
    // --- two hosts whose servers would be the same but for server_name share one; a third, with another backend, does not
    tlsSecretManifest({ name: 'twins-tls', namespace: 'shop', certificate: certs.twins }),
    ingressManifest({
      namespace: 'shop',
      name: 'twins',
      tls: [{ hosts: ['one.twins.example.test', 'two.twins.example.test', 'three.twins.example.test'], secretName: 'twins-tls' }],
      rules: [
        { host: 'one.twins.example.test', paths: [{ path: '/', pathType: 'Prefix', backend: to('app') }] },
        { host: 'two.twins.example.test', paths: [{ path: '/', pathType: 'Prefix', backend: to('app') }] },
        { host: 'three.twins.example.test', paths: [{ path: '/', pathType: 'Prefix', backend: to('foo') }] },
      ],
    }),
    // --- plain HTTP and redirects
    ingressManifest({
      namespace: 'shop',
      name: 'plain',
      rules: [{ host: 'plain.example.test', paths: [{ path: '/', pathType: 'Prefix', backend: to('app') }] }],
    }),
    ingressManifest({
      namespace: 'shop',
      name: 'forced',
      annotations: { 'force-ssl-redirect': 'true' },
      rules: [{ host: 'forced.example.test', paths: [{ path: '/', pathType: 'Prefix', backend: to('app') }] }],
    }),
    ingressManifest({
      namespace: 'shop',
      name: 'noredirect',
      annotations: { 'ssl-redirect': 'false' },
      tls: [{ hosts: ['noredirect.example.test'], secretName: 'app-tls' }],
      rules: [{ host: 'noredirect.example.test', paths: [{ path: '/', pathType: 'Prefix', backend: to('app') }] }],
    }),
    // --- HTTPS backends
    serviceManifest('pay', 'app', backends.app),
    serviceManifest('pay', 'good', backends.good),
    serviceManifest('pay', 'foreign', backends.foreign),
    serviceManifest('pay', 'misnamed', backends.misnamed),
    serviceManifest('pay', 'mtls', backends.mtls),
    tlsSecretManifest({ name: 'secure-tls', namespace: 'pay', certificate: certs.secure }),
    caSecretManifest({ name: 'backend-ca', namespace: 'pay', caPem: ca.certPem }),
    tlsSecretManifest({ name: 'backend-client', namespace: 'pay', certificate: certs.nginxClient, caPem: ca.certPem }),
    ingressManifest({
      namespace: 'pay',
      name: 'secure',
      tls: [{ hosts: ['secure.example.test'], secretName: 'secure-tls' }],
      rules: [{ host: 'secure.example.test', paths: [{ path: '/', pathType: 'Prefix', backend: { service: 'app', port: backends.app.port } }] }],
    }),
    ingressManifest({ namespace: 'pay', name: 'verified', annotations: verifiedHttps('backend-ca'), rules: [secureRule('/verified', 'good')] }),
    ingressManifest({ namespace: 'pay', name: 'other-ca', annotations: verifiedHttps('backend-ca'), rules: [secureRule('/other-ca', 'foreign')] }),
    ingressManifest({ namespace: 'pay', name: 'wrong-name', annotations: verifiedHttps('backend-ca'), rules: [secureRule('/wrong-name', 'misnamed')] }),
    ingressManifest({
      namespace: 'pay',
      name: 'named',
      annotations: { ...verifiedHttps('backend-ca'), 'proxy-ssl-name': 'misnamed.internal.example.test' },
      rules: [secureRule('/named', 'misnamed')],
    }),
    ingressManifest({ namespace: 'pay', name: 'mtls', annotations: verifiedHttps('backend-client'), rules: [secureRule('/mtls', 'mtls')] }),
    ingressManifest({ namespace: 'pay', name: 'mtls-no-client', annotations: verifiedHttps('backend-ca'), rules: [secureRule('/mtls-no-client', 'mtls')] }),
  );

  target = await createTarget();
  rendered = await renderInto(target, manifests, ['--configmap', 'ingress-nginx/controller']);
  expect(rendered.stderr).not.toContain('internal error');
  expect(rendered.exitCode, rendered.stderr).toBe(0);
  // What a distro prefix holds: nginx would serve it wherever no location matches.
  await mkdir(join(target.prefix, 'html'), { recursive: true });
  await writeFile(join(target.prefix, 'html', 'index.html'), 'Welcome to nginx!\n');
  nginx = await startTarget(target);
});

function echoOf(response: { status: number; body: string }): EchoResponse {
  expect(response.status, response.body).toBe(200);
  return parseEcho(response.body);
}

describe('render', () => {
  it('says why the decoy Secret of a passthrough host is not used', () => {
    expect(rendered.stderr).toMatch(/warning \[tls-shadowed-by-passthrough\].*vault\.example\.test/);
    expect(rendered.stderr).toContain(`wrote ${target.conf}`);
  });
});

describe('SNI passthrough', () => {
  it('hands an exact host to its backend: the client sees the backend certificate and the backend the original SNI', async () => {
    const probe = await tlsProbe({ port: target.httpsPort, servername: 'vault.example.test', ca: ca.certPem });
    expect(probe).toMatchObject({ outcome: 'connected', authorized: true, data: 'hello from vault sni=vault.example.test\n' });
    expect(probe.peerCertificate?.fingerprint256).toBe(fingerprint(certs.vaultBackend.certPem));
    expect(probe.peerCertificate?.fingerprint256).not.toBe(fingerprint(certs.vaultDecoy.certPem));
  });

  it('routes a name under a wildcard host to that backend, but not the bare parent name', async () => {
    const under = await tlsProbe({ port: target.httpsPort, servername: 'a.db.example.test', ca: ca.certPem });
    expect(under).toMatchObject({ outcome: 'connected', authorized: true, data: 'hello from db sni=a.db.example.test\n' });
    expect(under.peerCertificate?.fingerprint256).toBe(fingerprint(certs.dbBackend.certPem));

    const parent = await tlsProbe({ port: target.httpsPort, servername: 'db.example.test', awaitData: false });
    expect(parent.outcome).toBe('connected');
    expect(parent.peerCertificate?.subjectCN).toBe(BUNDLED_DEFAULT_CN);
  });

  it('terminates an exact host under a passthrough wildcard with its own Secret (exact beats wildcard)', async () => {
    const response = await httpsGet({ port: target.httpsPort, servername: 'www.wild.example.test', path: '/w', ca: ca.certPem });
    expect(response.peerCertificate?.fingerprint256).toBe(fingerprint(certs.wwwWild.certPem));
    expect(echoOf(response)).toMatchObject({ backend: 'app', path: '/w', servername: null });

    const sibling = await tlsProbe({ port: target.httpsPort, servername: 'other.wild.example.test', ca: ca.certPem });
    expect(sibling).toMatchObject({ outcome: 'connected', authorized: true, data: 'hello from wild sni=other.wild.example.test\n' });
  });
});

describe('TLS termination', () => {
  it("presents the Secret's certificate and forwards the client address carried over the PROXY-protocol hop", async () => {
    const response = await httpsGet({ port: target.httpsPort, servername: 'app.example.test', path: '/hello?x=1', ca: ca.certPem });
    expect(response.peerCertificate?.fingerprint256).toBe(fingerprint(certs.app.certPem));
    const echo = echoOf(response);
    expect(echo).toMatchObject({ backend: 'app', method: 'GET', path: '/hello?x=1', servername: null });
    expect(echo.headers).toMatchObject({
      host: 'app.example.test',
      'x-forwarded-for': '127.0.0.1',
      'x-real-ip': '127.0.0.1',
      'x-forwarded-proto': 'https',
      'x-forwarded-port': String(target.httpsPort),
    });
    expect(response.headers['strict-transport-security']).toBe('max-age=31536000; includeSubDomains');
  });
});

describe('hosts whose servers would be the same', () => {
  it('share one server block, and so one SSL context, that serves each name as its own would', async () => {
    const conf = readFileSync(target.conf, 'utf8');
    expect(conf).toContain('server_name one.twins.example.test two.twins.example.test;');
    expect(conf).toContain('server_name three.twins.example.test;');
    for (const [name, backend] of [
      ['one.twins.example.test', 'app'],
      ['two.twins.example.test', 'app'],
      ['three.twins.example.test', 'foo'],
    ] as const) {
      const response = await httpsGet({ port: target.httpsPort, servername: name, path: '/twin', ca: ca.certPem });
      expect(response.peerCertificate?.fingerprint256).toBe(fingerprint(certs.twins.certPem));
      const echo = echoOf(response);
      expect(echo).toMatchObject({ backend, path: '/twin' });
      expect(echo.headers).toMatchObject({ host: name, 'x-forwarded-host': name });
    }
  });

  it('picks the block by Host after the handshake, as with a block each', async () => {
    for (const [host, backend] of [
      ['two.twins.example.test', 'app'],
      ['three.twins.example.test', 'foo'],
    ] as const) {
      const response = await httpsGet({ port: target.httpsPort, servername: 'one.twins.example.test', headers: { host }, path: '/twin', ca: ca.certPem });
      expect(echoOf(response)).toMatchObject({ backend, headers: { host } });
    }
  });
});

describe('gRPC backends (backend-protocol GRPC)', () => {
  it('reach the backend over HTTP/2 with the request headers ingress-nginx sends, which the location inherits', async () => {
    const response = await httpsGet({ port: target.httpsPort, servername: 'app.example.test', path: '/grpc/hello', ca: ca.certPem });
    const echo = echoOf(response);
    expect(echo).toMatchObject({ backend: 'grpc', path: '/grpc/hello', httpVersion: '2.0' });
    expect(echo.headers).toMatchObject({
      host: 'app.example.test',
      'x-forwarded-for': '127.0.0.1',
      'x-real-ip': '127.0.0.1',
      'x-forwarded-host': 'app.example.test',
      'x-forwarded-proto': 'https',
      'x-forwarded-port': String(target.httpsPort),
      'x-scheme': 'https',
    });
    expect(echo.headers['x-request-id']).toMatch(/^[0-9a-f]{32}$/);
    const location = /location \/grpc\/ \{[^}]*\}/.exec(readFileSync(target.conf, 'utf8'))?.[0];
    expect(location).toContain('grpc_pass');
    expect(location).not.toContain('grpc_set_header');
  });
});

describe('path routing', () => {
  const cases: [string, string][] = [
    ['/foo', 'foo'],
    ['/foo/', 'foo'],
    ['/foo/bar/', 'foo'],
    ['/foo/x?q=1', 'foo'],
    ['/foobar', 'fallback'],
    ['/foo/bar', 'exact'], // Exact beats the Prefix /foo
    ['/foo/bar/baz', 'deep'], // longest Prefix wins
    ['/foo/bar/baz/qux', 'deep'],
    ['/foo/bar/bazz', 'foo'], // element-wise: /foo/bar/baz does not cover /foo/bar/bazz
    ['/exact', 'exact'],
    ['/exact/', 'fallback'],
    ['/exactly', 'fallback'],
    ['/impl', 'impl'],
    ['/implementation', 'impl'], // ImplementationSpecific is a plain prefix
    ['/', 'fallback'],
    ['/anything/else', 'fallback'],
    ['/foo/same', 'foo'],
    ['/foo/same/x', 'foo'],
    ['/foo/bar/baz/same/x', 'deep'],
    ['/foo/bar/baz/same/exact', 'deep'],
    ['/foo/bar/baz/back', 'foo'],
    ['/foo/bar/baz/back/x', 'deep'],
    ['/foo/slash/x', 'foo'],
    ['/foo/pair', 'foo'],
    ['/foo/pair/x', 'exact'],
  ];
  it('leaves out the locations that a shorter prefix handles the same way', () => {
    const config = readFileSync(target.conf, 'utf8');
    expect(config).toContain('location = /foo/bar/baz/back {');
    for (const path of ['/foo/same', '/foo/bar/baz/same', '/foo/bar/baz/same/exact']) {
      expect(config).toMatch(new RegExp(`location (= )?${path}/? is left out`));
      expect(config).not.toMatch(new RegExp(`location (= )?${path}/? \\{`));
    }
  });
  it('answers a path with a 301 to the path with a slash where nginx did before leaving locations out', async () => {
    const response = await httpsGet({ port: target.httpsPort, servername: 'paths.example.test', path: '/foo/slash', ca: ca.certPem });
    expect(response.status).toBe(301);
    expect(response.headers['location']).toMatch(/\/foo\/slash\/$/);
  });
  it.each(cases)('%s reaches %s', async (path, backend) => {
    const response = await httpsGet({ port: target.httpsPort, servername: 'paths.example.test', path, ca: ca.certPem });
    expect(echoOf(response)).toMatchObject({ backend, path });
  });
});

describe('HTTPS backends (backend-protocol HTTPS, proxy-ssl-secret, proxy-ssl-verify on)', () => {
  // Several Ingresses reach the same Services with different proxy-ssl settings. Each test first makes
  // the request that could leave a reusable upstream connection or TLS session behind (nginx runs one
  // worker here, so that reuse is deterministic), then checks that the other location still applies
  // its own settings.
  const get = (path: string) => httpsGet({ port: target.httpsPort, servername: 'secure.example.test', path, ca: ca.certPem });

  it('verifies the backend against the Service DNS name and sends it as SNI', async () => {
    const echo = echoOf(await get('/verified/x'));
    expect(echo).toMatchObject({ backend: 'good', path: '/verified/x', servername: 'good.pay.svc.cluster.local', clientCertSubject: null });
    expect(echo.headers).toMatchObject({ host: 'secure.example.test', 'x-forwarded-proto': 'https' });
  });

  it('answers 502 when the backend certificate is from another CA', async () => {
    expect((await get('/other-ca')).status).toBe(502);
    expect(await nginx.waitForStderr(/upstream SSL certificate verify error: .*"GET \/other-ca /)).toMatch(
      /unable to verify the first certificate|unable to get local issuer certificate/,
    );
  });

  it('answers 502 when the certificate is from the right CA but for another name, even after another location reached that backend', async () => {
    expect(echoOf(await get('/named'))).toMatchObject({ backend: 'misnamed' });
    const response = await get('/wrong-name');
    expect(response.status, `GET /wrong-name reached the backend: ${response.body}`).toBe(502);
    await nginx.waitForStderr(/upstream SSL certificate does not match "misnamed\.pay\.svc\.cluster\.local"/);
  });

  it('accepts that certificate when proxy-ssl-name names it, and sends that name as SNI, even after a failed handshake elsewhere', async () => {
    const failed = await get('/wrong-name');
    expect(failed.status, `GET /wrong-name reached the backend: ${failed.body}`).toBe(502);
    expect(echoOf(await get('/named'))).toMatchObject({ backend: 'misnamed', servername: 'misnamed.internal.example.test' });
  });

  it('presents the client certificate from the proxy-ssl-secret to a backend that requires one', async () => {
    expect(echoOf(await get('/mtls'))).toMatchObject({
      backend: 'mtls',
      servername: 'mtls.pay.svc.cluster.local',
      clientCertSubject: 'ingress2nginx-client',
    });
  });

  it('answers 502 towards that backend when the Secret holds no client certificate, even after another location sent one', async () => {
    expect(echoOf(await get('/mtls'))).toMatchObject({ clientCertSubject: 'ingress2nginx-client' });
    const response = await get('/mtls-no-client');
    expect(response.status, `GET /mtls-no-client reached the backend: ${response.body}`).toBe(502);
  });
});

describe('default server', () => {
  it('answers an unknown SNI with the bundled default certificate', async () => {
    const probe = await tlsProbe({ port: target.httpsPort, servername: 'nobody.example.test', awaitData: false });
    expect(probe.outcome).toBe('connected');
    expect(probe.peerCertificate?.subjectCN).toBe(BUNDLED_DEFAULT_CN);
  });

  it('answers a client without SNI with the bundled default certificate', async () => {
    const probe = await tlsProbe({ port: target.httpsPort, awaitData: false });
    expect(probe.outcome).toBe('connected');
    expect(probe.peerCertificate?.subjectCN).toBe(BUNDLED_DEFAULT_CN);
  });
});

describe('paths nothing routes', () => {
  it("answers 404 for a passthrough host over plain HTTP, never the prefix's html", async () => {
    const response = await httpGet({ port: target.httpPort, host: 'a.db.example.test', path: '/' });
    expect(response.status, response.body).toBe(404);
    expect(response.body).not.toContain('Welcome');
  });
});

describe('plain HTTP', () => {
  it('redirects a TLS host with 308 to the HTTPS port, keeping path and query', async () => {
    const response = await httpGet({ port: target.httpPort, host: 'app.example.test', path: '/some/path?q=1&r=2' });
    expect(response.status).toBe(308);
    expect(response.headers.location).toBe(`https://app.example.test:${target.httpsPort}/some/path?q=1&r=2`);
  });

  it('does not redirect ACME HTTP-01 challenges of a TLS host', async () => {
    const response = await httpGet({ port: target.httpPort, host: 'app.example.test', path: '/.well-known/acme-challenge/x' });
    expect(echoOf(response)).toMatchObject({ backend: 'app', path: '/.well-known/acme-challenge/x' });
  });

  it('serves a host without TLS over plain HTTP', async () => {
    const echo = echoOf(await httpGet({ port: target.httpPort, host: 'plain.example.test', path: '/p' }));
    expect(echo).toMatchObject({ backend: 'app', path: '/p' });
    expect(echo.headers).toMatchObject({
      host: 'plain.example.test',
      'x-forwarded-for': '127.0.0.1',
      'x-forwarded-proto': 'http',
      'x-forwarded-port': String(target.httpPort),
    });
  });

  it('redirects a host without TLS when force-ssl-redirect is true', async () => {
    const response = await httpGet({ port: target.httpPort, host: 'forced.example.test', path: '/f?z=1' });
    expect(response.status).toBe(308);
    expect(response.headers.location).toBe(`https://forced.example.test:${target.httpsPort}/f?z=1`);
  });

  it('serves a TLS host over plain HTTP when ssl-redirect is false', async () => {
    expect(echoOf(await httpGet({ port: target.httpPort, host: 'noredirect.example.test', path: '/n' }))).toMatchObject({
      backend: 'app',
      path: '/n',
    });
  });
});
