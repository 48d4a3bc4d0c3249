import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import type { CliRun } from '../support/cli.js';
import {
  httpGet,
  httpsGet,
  parseEcho,
  startAuthBackend,
  startHttpBackend,
  startHttpsBackend,
  startStatusBackend,
  type CountingPeer,
  type EchoResponse,
  type HttpResponse,
  type Peer,
} from '../support/peers.js';
import { caSecretManifest, createCa, issueCertificate, tlsSecretManifest, type CertificateAuthority, type CertificateFiles } from '../support/pki.js';
import {
  cleanUp,
  createTarget,
  documents,
  ingressManifest,
  renderInto,
  serviceManifest,
  settle,
  startPeer,
  startTarget,
  temporaryDir,
  type Target,
} from './harness.js';

/**
 * The ingress-nginx annotations with real traffic through one real nginx rendered from manifests:
 * body sizes, regex rewrites, canaries (split, header, cookie), client certificates, source ranges,
 * basic and external auth, rate limits, redirects, CORS, custom error pages, headers to the backend,
 * aliases, and a regex path that must not take another namespace's requests.
 */

afterAll(cleanUp);

/** password "secret", apr1 as htpasswd writes it. */
const aliceHtpasswd = 'alice:$apr1$3Q7c0Hzf$6CSsL8aDfJkYhPYAn4fuq1\n';

let target: Target;
let rendered: CliRun;
let ca: CertificateAuthority;
let certs: { wildcard: CertificateFiles; backend: CertificateFiles; goodClient: CertificateFiles; otherClient: CertificateFiles; rogueClient: CertificateFiles; clientCa: CertificateAuthority };
let backends: {
  main: CountingPeer;
  canary: CountingPeer;
  errors: CountingPeer;
  status: CountingPeer;
  secure: CountingPeer;
  modern: Peer;
  auth: Awaited<ReturnType<typeof startAuthBackend>>;
};

/** An Ingress in namespace web with one host and path to `service`; with `tls`, the wildcard certificate. */
function site(name: string, host: string, service: string, annotations: Record<string, string> = {}, options: { tls?: boolean } = {}): string {
  return ingressManifest({
    namespace: 'web',
    name,
    annotations,
    ...(options.tls && { tls: [{ hosts: [host], secretName: 'wild-tls' }] }),
    rules: [{ host, paths: [{ path: '/', pathType: 'Prefix', backend: { service, port: portOf(service) } }] }],
  });
}

const tls = { tls: true };

function portOf(service: string): number {
  return backends[service as keyof typeof backends].port;
}

function secret(name: string, data: Record<string, string>): string {
  const encoded = Object.fromEntries(Object.entries(data).map(([key, value]) => [key, Buffer.from(value).toString('base64')]));
  return stringify({ apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: 'web' }, type: 'Opaque', data: encoded });
}

function echoOf(response: HttpResponse): EchoResponse {
  expect(response.status, response.body).toBe(200);
  return parseEcho(response.body);
}

const get = (host: string, path = '/', more: Omit<Parameters<typeof httpGet>[0], 'port' | 'host' | 'path'> = {}) =>
  httpGet({ port: target.httpPort, host, path, ...more });
const getTls = (servername: string, path = '/', more: Omit<Parameters<typeof httpsGet>[0], 'port' | 'servername' | 'path'> = {}) =>
  httpsGet({ port: target.httpsPort, servername, path, ...more });

beforeAll(async () => {
  const dir = await temporaryDir();
  ca = await createCa(dir, 'Annotations CA');
  const clientCa = await createCa(dir, 'Client CA');
  const rogueCa = await createCa(dir, 'Rogue CA');
  certs = {
    clientCa,
    ...(await settle({
      wildcard: issueCertificate(ca, { commonName: '*.example.test', sans: ['*.example.test'] }),
      backend: issueCertificate(ca, { commonName: 'modern.web.svc.cluster.local', sans: ['modern.web.svc.cluster.local'] }),
      goodClient: issueCertificate(clientCa, { commonName: 'good-client', serverAuth: false, clientAuth: true }),
      otherClient: issueCertificate(clientCa, { commonName: 'other-client', serverAuth: false, clientAuth: true }),
      rogueClient: issueCertificate(rogueCa, { commonName: 'good-client', serverAuth: false, clientAuth: true }),
    })),
  };
  backends = await settle({
    main: startPeer(startHttpBackend('main')),
    canary: startPeer(startHttpBackend('canary')),
    errors: startPeer(startHttpBackend('errors')),
    status: startPeer(startStatusBackend('status')),
    secure: startPeer(startHttpBackend('secure')),
    auth: startPeer(startAuthBackend()),
    // An HTTPS backend that speaks TLS 1.3 only.
    modern: startPeer(startHttpsBackend({ name: 'modern', cert: certs.backend.certPem, key: certs.backend.keyPem, minVersion: 'TLSv1.3' })),
  });
  const services = Object.entries(backends).map(([name, peer]) => serviceManifest('web', name, peer));
  const otherNamespace = (manifest: string) => manifest.replace('namespace: web', 'namespace: other');
  const manifests = documents(
    ...services,
    otherNamespace(serviceManifest('web', 'canary', backends.canary)),
    tlsSecretManifest({ name: 'wild-tls', namespace: 'web', certificate: certs.wildcard }),
    caSecretManifest({ name: 'client-ca', namespace: 'web', caPem: certs.clientCa.certPem }),
    secret('users', { auth: aliceHtpasswd }),
    // Body sizes: one host, a path with a bigger limit than the default (1m).
    ingressManifest({
      namespace: 'web',
      name: 'body-big',
      annotations: { 'proxy-body-size': '4m' },
      rules: [{ host: 'body.example.test', paths: [{ path: '/big', pathType: 'Prefix', backend: { service: 'main', port: portOf('main') } }] }],
    }),
    site('body-default', 'body.example.test', 'main'),
    // A regex path with a rewrite.
    ingressManifest({
      namespace: 'web',
      name: 'rewrite',
      annotations: { 'use-regex': 'true', 'rewrite-target': '/$2' },
      rules: [{ host: 'rewrite.example.test', paths: [{ path: '/api(/|$)(.*)', pathType: 'ImplementationSpecific', backend: { service: 'main', port: portOf('main') } }] }],
    }),
    // Canaries: weight, header and cookie; a header value; a header pattern.
    site('shop', 'canary.example.test', 'main'),
    site('shop-canary', 'canary.example.test', 'canary', {
      canary: 'true',
      'canary-weight': '30',
      'canary-by-header': 'X-Canary',
      'canary-by-cookie': 'beta_user',
    }),
    site('env', 'canary-value.example.test', 'main'),
    site('env-canary', 'canary-value.example.test', 'canary', { canary: 'true', 'canary-by-header': 'X-Env', 'canary-by-header-value': 'staging' }),
    site('pattern', 'canary-pattern.example.test', 'main'),
    site('pattern-canary', 'canary-pattern.example.test', 'canary', {
      canary: 'true',
      'canary-by-header': 'X-Track',
      'canary-by-header-pattern': '^(beta|gamma)$',
    }),
    // Client certificates.
    site('mtls', 'mtls.example.test', 'secure', { 'auth-tls-secret': 'web/client-ca', 'auth-tls-pass-certificate-to-upstream': 'true' }, tls),
    site('mtls-cn', 'mtls-cn.example.test', 'secure', { 'auth-tls-secret': 'client-ca', 'auth-tls-match-cn': 'CN=good-client$' }, tls),
    site('mtls-optional', 'mtls-optional.example.test', 'secure', { 'auth-tls-secret': 'client-ca', 'auth-tls-verify-client': 'optional' }, tls),
    // Source ranges.
    site('allow', 'allow.example.test', 'main', { 'whitelist-source-range': '127.0.0.1/32' }, tls),
    site('deny', 'deny.example.test', 'main', { 'denylist-source-range': '127.0.0.2' }),
    // Basic and external authentication.
    site('basic', 'basic.example.test', 'main', { 'auth-type': 'basic', 'auth-secret': 'users', 'auth-realm': 'Restricted' }),
    site('extauth', 'extauth.example.test', 'main', {
      'auth-url': `http://auth.web.svc.cluster.local:${backends.auth.port}/check`,
      'auth-response-headers': 'X-Auth-Request-User',
      'auth-signin': 'https://login.example.test/start',
    }),
    // Rate limits.
    site('limited', 'limit.example.test', 'main', { 'limit-rpm': '1', 'limit-burst-multiplier': '1', 'limit-whitelist': '127.0.0.3' }),
    // Redirects.
    site('moved', 'moved.example.test', 'main', { 'permanent-redirect': 'https://elsewhere.example/landing', 'permanent-redirect-code': '308' }),
    site('temp', 'temp.example.test', 'main', { 'temporal-redirect': 'https://elsewhere.example/soon', 'permanent-redirect': 'https://elsewhere.example/never' }),
    site('approot', 'approot.example.test', 'main', { 'app-root': '/app' }),
    site('www', 'www-src.example.test', 'main', { 'from-to-www-redirect': 'true' }),
    site('aliased', 'alias-src.example.test', 'main', { 'server-alias': 'alias.example.test' }),
    // CORS, over HTTPS (its headers must not drop HSTS).
    site('cors', 'cors.example.test', 'main', { 'enable-cors': 'true', 'cors-allow-origin': 'https://app.example.test' }, tls),
    // Error pages.
    site('errors', 'errors.example.test', 'status', { 'custom-http-errors': '404', 'default-backend': 'errors' }),
    site('errors-own', 'errors-own.example.test', 'status', { 'custom-http-errors': '503' }),
    // HTTPS backends: TLS 1.3 by default; proxy tuning and Location rewriting.
    site('modern', 'modern.example.test', 'modern', { 'backend-protocol': 'HTTPS', 'proxy-ssl-secret': 'web/backend-ca', 'proxy-ssl-verify': 'on' }),
    caSecretManifest({ name: 'backend-ca', namespace: 'web', caPem: ca.certPem }),
    site('tuned', 'tuned.example.test', 'status', {
      'proxy-read-timeout': '1',
      'proxy-http-version': '1.0',
      'proxy-redirect-from': 'http://internal.example/',
      'proxy-redirect-to': 'https://public.example/',
    }),
    site('mtls-page', 'mtls-page.example.test', 'secure', { 'auth-tls-secret': 'client-ca', 'auth-tls-error-page': 'https://help.example.test/certificates' }, tls),
    // Headers to the backend.
    site('headers', 'headers.example.test', 'main', { 'x-forwarded-prefix': '/prefix' }),
    site('vhost', 'vhost.example.test', 'main', { 'upstream-vhost': 'internal.example' }),
    site('plain-headers', 'plain-headers.example.test', 'main', {}),
    // Another namespace's regex on a shared host takes only what this namespace's Prefix paths do not.
    ingressManifest({
      namespace: 'web',
      name: 'keeper',
      rules: [{ host: 'shared.example.test', paths: [{ path: '/keep', pathType: 'Prefix', backend: { service: 'main', port: portOf('main') } }] }],
    }),
    ingressManifest({
      namespace: 'other',
      name: 'grabber',
      annotations: { 'use-regex': 'true' },
      rules: [{ host: 'shared.example.test', paths: [{ path: '/.*', pathType: 'ImplementationSpecific', backend: { service: 'canary', port: portOf('canary') } }] }],
    }),
  );
  target = await createTarget();
  rendered = await renderInto(target, manifests);
  await startTarget(target);
});

it('renders without errors', () => {
  expect(rendered.stderr).not.toMatch(/error \[/);
  expect(rendered.exitCode, rendered.stderr).toBe(0);
});

describe('proxy-body-size', () => {
  const twoMegabytes = Buffer.alloc(2 * 1024 * 1024, 'x');

  it('takes a 2 MB body on the path that allows 4m, and refuses it with 413 where the default 1m applies', async () => {
    const big = await get('body.example.test', '/big', { method: 'POST', body: twoMegabytes });
    expect(echoOf(big).method).toBe('POST');
    const refused = await get('body.example.test', '/other', { method: 'POST', body: twoMegabytes }).catch((error: Error) => error);
    expect(refused instanceof Error ? refused.message : refused.status).toSatisfy((outcome: string | number) => outcome === 413 || /EPIPE|ECONNRESET/.test(String(outcome)));
  });
});

describe('use-regex and rewrite-target', () => {
  it('matches case-insensitively and sends the rewritten path, query kept', async () => {
    expect(echoOf(await get('rewrite.example.test', '/API/users/7?x=1')).path).toBe('/users/7?x=1');
    expect(echoOf(await get('rewrite.example.test', '/api')).path).toBe('/');
    expect((await get('rewrite.example.test', '/apix')).status).toBe(404);
  });
});

describe('canaries', () => {
  it('sends about canary-weight of the requests to the canary, chosen per request', async () => {
    let canary = 0;
    const total = 400;
    for (let i = 0; i < total; i++) {
      if (echoOf(await get('canary.example.test', `/r${i}`)).backend === 'canary') canary++;
    }
    // 30% of 400: a binomial with a standard deviation of about 9; four of them either side.
    expect(canary).toBeGreaterThan(84);
    expect(canary).toBeLessThan(156);
  });

  it('by header: always and never decide, anything else falls through; then the cookie', async () => {
    for (let i = 0; i < 10; i++) {
      expect(echoOf(await get('canary.example.test', '/', { headers: { 'x-canary': 'always' } })).backend).toBe('canary');
      expect(echoOf(await get('canary.example.test', '/', { headers: { 'x-canary': 'never', cookie: 'beta_user=always' } })).backend).toBe('main');
      expect(echoOf(await get('canary.example.test', '/', { headers: { cookie: 'a=1; beta_user=always' } })).backend).toBe('canary');
      expect(echoOf(await get('canary.example.test', '/', { headers: { 'x-canary': 'maybe', cookie: 'beta_user=never' } })).backend).toBe('main');
    }
  });

  it('by header value and by header pattern', async () => {
    expect(echoOf(await get('canary-value.example.test', '/', { headers: { 'x-env': 'staging' } })).backend).toBe('canary');
    expect(echoOf(await get('canary-value.example.test', '/', { headers: { 'x-env': 'Staging' } })).backend).toBe('main');
    expect(echoOf(await get('canary-value.example.test', '/')).backend).toBe('main');
    expect(echoOf(await get('canary-pattern.example.test', '/', { headers: { 'x-track': 'gamma' } })).backend).toBe('canary');
    expect(echoOf(await get('canary-pattern.example.test', '/', { headers: { 'x-track': 'delta' } })).backend).toBe('main');
  });
});

describe('client certificates (auth-tls-*)', () => {
  it('accepts a certificate of the CA and passes its details on', async () => {
    const echo = echoOf(await getTls('mtls.example.test', '/in', { clientCertificate: certs.goodClient }));
    expect(echo.headers['ssl-client-verify']).toBe('SUCCESS');
    expect(echo.headers['ssl-client-subject-dn']).toContain('CN=good-client');
    expect(decodeURIComponent(String(echo.headers['ssl-client-cert']))).toContain('BEGIN CERTIFICATE');
  });

  it('refuses a certificate of another CA, and no certificate, with 400 and never reaches the backend', async () => {
    const before = backends.secure.requestCount();
    expect((await getTls('mtls.example.test', '/', { clientCertificate: certs.rogueClient })).status).toBe(400);
    expect((await getTls('mtls.example.test', '/')).status).toBe(400);
    expect(backends.secure.requestCount()).toBe(before);
  });

  it('auth-tls-match-cn: another subject of the same CA gets 403', async () => {
    expect(echoOf(await getTls('mtls-cn.example.test', '/', { clientCertificate: certs.goodClient })).backend).toBe('secure');
    expect((await getTls('mtls-cn.example.test', '/', { clientCertificate: certs.otherClient })).status).toBe(403);
  });

  it('optional: no certificate passes, a bad one does not', async () => {
    expect(echoOf(await getTls('mtls-optional.example.test', '/')).headers['ssl-client-verify']).toBe('NONE');
    expect((await getTls('mtls-optional.example.test', '/', { clientCertificate: certs.rogueClient })).status).toBe(400);
  });

  it('asks for no certificate on a host that does not use auth-tls', async () => {
    expect(echoOf(await getTls('cors.example.test', '/', { clientCertificate: certs.rogueClient })).backend).toBe('main');
  });
});

describe('source ranges, on the real client address', () => {
  it('whitelist-source-range: 200 inside, 403 outside (HTTPS: the address comes over the PROXY hop)', async () => {
    expect(echoOf(await getTls('allow.example.test', '/', { localAddress: '127.0.0.1' })).backend).toBe('main');
    const before = backends.main.requestCount();
    expect((await getTls('allow.example.test', '/', { localAddress: '127.0.0.2' })).status).toBe(403);
    expect(backends.main.requestCount()).toBe(before);
  });

  it('denylist-source-range: 403 for the listed address only', async () => {
    expect((await get('deny.example.test', '/', { localAddress: '127.0.0.2' })).status).toBe(403);
    expect(echoOf(await get('deny.example.test', '/', { localAddress: '127.0.0.1' })).backend).toBe('main');
  });
});

describe('basic authentication', () => {
  const basic = (credentials: string) => ({ authorization: `Basic ${Buffer.from(credentials).toString('base64')}` });

  it('401 without or with wrong credentials, 200 with the right ones, which the backend never sees', async () => {
    const anonymous = await get('basic.example.test');
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers['www-authenticate']).toBe('Basic realm="Restricted"');
    expect((await get('basic.example.test', '/', { headers: basic('alice:wrong') })).status).toBe(401);
    const echo = echoOf(await get('basic.example.test', '/', { headers: basic('alice:secret') }));
    expect(echo.headers.authorization).toBeUndefined();
  });
});

describe('external authentication', () => {
  it('denies (302 to the sign-in page with the original URL) and allows, passing the auth response on', async () => {
    const denied = await get('extauth.example.test', '/x?y=1');
    expect(denied.status).toBe(302);
    expect(denied.headers.location).toBe('https://login.example.test/start?rd=http://extauth.example.test/x?y=1');
    const allowed = await get('extauth.example.test', '/x', { headers: { 'x-token': 'good' } });
    expect(echoOf(allowed).headers['x-auth-request-user']).toBe('alice');
    expect(allowed.headers['set-cookie']).toEqual(['session=granted']);
    expect(backends.auth.lastHeaders()).toMatchObject({ 'x-original-url': 'http://extauth.example.test/x', 'x-original-method': 'GET' });
  });

  it('gives the sign-in page one rd: a client cannot add its own (issue 37), nor a host of its own', async () => {
    const smuggled = await get('extauth.example.test', '/x?y=1&rd=https://evil.example/&z=2');
    expect(smuggled.status).toBe(302);
    const location = new URL(smuggled.headers.location!);
    expect(location.searchParams.getAll('rd')).toEqual(['http://extauth.example.test/x?y=1&rd=https://evil.example/&z=2']);
    const hostile = await get('extauth.example.test:@evil.example', '/x');
    expect(hostile.headers.location).toBe('https://login.example.test/start?rd=http://extauth.example.test/x');
    const ported = await get('extauth.example.test:8080', '/x#frag');
    expect(ported.headers.location).toBe('https://login.example.test/start?rd=http://extauth.example.test:8080/x');
  });
});

describe('rate limits', () => {
  it('limit-rpm with a burst of one: two requests pass, the next is refused with 503; limit-whitelist is not limited', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await get('limit.example.test')).status);
    expect(statuses).toEqual([200, 200, 503, 503]);
    for (let i = 0; i < 4; i++) expect((await get('limit.example.test', '/', { localAddress: '127.0.0.3' })).status).toBe(200);
  });
});

describe('redirects', () => {
  it('permanent-redirect with its code, temporal-redirect winning over it, app-root for / only', async () => {
    const moved = await get('moved.example.test', '/anything');
    expect([moved.status, moved.headers.location]).toEqual([308, 'https://elsewhere.example/landing']);
    const temp = await get('temp.example.test');
    expect([temp.status, temp.headers.location]).toEqual([302, 'https://elsewhere.example/soon']);
    const root = await get('approot.example.test', '/');
    expect([root.status, root.headers.location]).toEqual([302, 'http://approot.example.test/app']);
    expect(echoOf(await get('approot.example.test', '/app')).path).toBe('/app');
    // The redirect names the host nginx matched, not what the client's Host header says after it (issue 37).
    const hostile = await get('approot.example.test:@evil.example', '/');
    expect([hostile.status, hostile.headers.location]).toEqual([302, 'http://approot.example.test/app']);
    const ported = await get('approot.example.test:8080', '/');
    expect(ported.headers.location).toBe('http://approot.example.test:8080/app');
  });

  it('from-to-www-redirect sends the www twin to the host; server-alias serves the alias', async () => {
    const twin = await get('www.www-src.example.test', '/p?q=1');
    expect([twin.status, twin.headers.location]).toEqual([308, 'http://www-src.example.test/p?q=1']);
    expect(echoOf(await get('alias.example.test', '/a')).headers.host).toBe('alias.example.test');
  });
});

describe('CORS', () => {
  it('answers the preflight of an allowed origin with 204 and its headers, HSTS kept', async () => {
    const preflight = await getTls('cors.example.test', '/', { method: 'OPTIONS', headers: { origin: 'https://app.example.test' } });
    expect(preflight.status).toBe(204);
    expect(preflight.headers).toMatchObject({
      'access-control-allow-origin': 'https://app.example.test',
      'access-control-allow-credentials': 'true',
      'access-control-allow-methods': 'GET, PUT, POST, DELETE, PATCH, OPTIONS',
      'access-control-max-age': '1728000',
      'strict-transport-security': 'max-age=31536000; includeSubDomains',
    });
  });

  it('sends no CORS header to another origin', async () => {
    const response = await getTls('cors.example.test', '/', { headers: { origin: 'https://evil.example' } });
    expect(echoOf(response).backend).toBe('main');
    expect(response.headers['access-control-allow-origin']).toBeUndefined();
    expect(response.headers['strict-transport-security']).toBe('max-age=31536000; includeSubDomains');
  });
});

describe('custom-http-errors', () => {
  it('answers an intercepted code from the default-backend with X-Code and friends; other codes pass', async () => {
    const page = await get('errors.example.test', '/status/404');
    expect(page.status).toBe(200);
    const echo = parseEcho(page.body);
    expect(echo.backend).toBe('errors');
    expect(echo.headers).toMatchObject({ 'x-code': '404', 'x-original-uri': '/status/404', 'x-namespace': 'web', 'x-service-name': 'status' });
    expect((await get('errors.example.test', '/status/500')).status).toBe(500);
  });

  it('without default-backend, nginx answers with its own page', async () => {
    const own = await get('errors-own.example.test', '/status/503');
    expect(own.status).toBe(503);
    expect(own.body).toContain('<title>503 Service Temporarily Unavailable</title>');
  });
});

describe('proxy settings', () => {
  it('reaches a backend that speaks TLS 1.3 only, verified', async () => {
    expect(echoOf(await get('modern.example.test', '/m'))).toMatchObject({ backend: 'modern', tlsVersion: 'TLSv1.3', servername: 'modern.web.svc.cluster.local' });
  });

  it('proxy-http-version, proxy-redirect-from/-to, and proxy-read-timeout (504 from a backend that never answers)', async () => {
    expect(echoOf(await get('tuned.example.test', '/v')).httpVersion).toBe('1.0');
    const moved = await get('tuned.example.test', '/moved');
    expect([moved.status, moved.headers.location]).toEqual([302, 'https://public.example/landing']);
    expect((await get('tuned.example.test', '/slow')).status).toBe(504);
  });

  it('auth-tls-error-page: a client without a valid certificate is sent there', async () => {
    const page = await getTls('mtls-page.example.test', '/');
    expect([page.status, page.headers.location]).toEqual([302, 'https://help.example.test/certificates']);
  });
});

describe('headers to the backend, as ingress-nginx sends them', () => {
  it('Host with the port, X-Forwarded-*, X-Scheme, a generated or passed X-Request-ID, x-forwarded-prefix', async () => {
    // The Host header as the client sent it, port and all.
    const echo = echoOf(await get('headers.example.test', '/h', { headers: { host: 'headers.example.test:8080' } }));
    expect(echo.headers).toMatchObject({
      host: 'headers.example.test:8080',
      'x-forwarded-host': 'headers.example.test:8080',
      'x-forwarded-for': '127.0.0.1',
      'x-real-ip': '127.0.0.1',
      'x-forwarded-proto': 'http',
      'x-forwarded-scheme': 'http',
      'x-scheme': 'http',
      'x-forwarded-port': String(target.httpPort),
      'x-forwarded-prefix': '/prefix',
    });
    expect(echo.headers['x-request-id']).toMatch(/^[0-9a-f]{32}$/);
    expect(echoOf(await get('headers.example.test', '/h', { headers: { 'x-request-id': 'abc-123' } })).headers['x-request-id']).toBe('abc-123');
  });

  it('upstream-vhost replaces Host, and the other headers stay', async () => {
    const echo = echoOf(await get('vhost.example.test'));
    expect(echo.headers).toMatchObject({ host: 'internal.example', 'x-forwarded-host': 'vhost.example.test', 'x-forwarded-for': '127.0.0.1', 'x-scheme': 'http' });
    expect(echo.headers['x-request-id']).toMatch(/^[0-9a-f]{32}$/);
  });

  it('a location that sets no headers of its own sends the same ones (inherited from the http block)', async () => {
    // nginx inherits proxy_set_header all or nothing: one location with its own header must not change another's.
    const plain = echoOf(await get('plain-headers.example.test', '/h', { headers: { 'x-request-id': 'abc-123' } })).headers;
    const prefixed = echoOf(await get('headers.example.test', '/h', { headers: { 'x-request-id': 'abc-123' } })).headers;
    const sent = (headers: Record<string, unknown>) =>
      Object.fromEntries(Object.entries(headers).filter(([name]) => /^(x-|connection$|upgrade$|proxy$)/.test(name) && name !== 'x-forwarded-prefix' && name !== 'x-forwarded-host'));
    expect(sent(plain)).toEqual(sent(prefixed));
    expect(plain).toMatchObject({ host: 'plain-headers.example.test', 'x-forwarded-host': 'plain-headers.example.test', 'x-forwarded-for': '127.0.0.1', 'x-forwarded-port': String(target.httpPort), 'x-request-id': 'abc-123' });
    expect(plain['x-forwarded-prefix']).toBeUndefined();
  });
});

describe('a regex path of another namespace', () => {
  it('does not take what a Prefix path matches, and takes the rest', async () => {
    expect(echoOf(await get('shared.example.test', '/keep/this')).backend).toBe('main');
    expect(echoOf(await get('shared.example.test', '/keep')).backend).toBe('main');
    expect(echoOf(await get('shared.example.test', '/elsewhere')).backend).toBe('canary');
  });
});
