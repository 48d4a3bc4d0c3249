import tls from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CliRun } from '../support/cli.js';
import { httpGet, parseEcho, startAuthBackend, startHttpBackend, startRecordingBackend, type CountingPeer } from '../support/peers.js';
import { createCa, issueCertificate, tlsSecretManifest } from '../support/pki.js';
import {
  cleanUp,
  configMapManifest,
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
 * The annotations of the migration-breadth work with real traffic through one real nginx: request
 * mirroring, the auth cache, the ConfigMap's global auth, a host's own cipher list, and the redirect
 * from plain HTTP on a passthrough host.
 */

afterAll(cleanUp);

let target: Target;
let rendered: CliRun;
let backends: { main: CountingPeer; mirror: Awaited<ReturnType<typeof startRecordingBackend>>; cachedAuth: CountingPeer; globalAuth: CountingPeer };

/** Global auth is on for every Ingress without its own auth-url; these opt out. */
const noGlobalAuth = { 'enable-global-auth': 'false' };

/** An Ingress in namespace web with one host and path `/` to the main backend. */
function site(name: string, host: string, annotations: Record<string, string>, options: { tls?: boolean } = {}): string {
  return ingressManifest({
    namespace: 'web',
    name,
    annotations,
    ...(options.tls && { tls: [{ hosts: [host], secretName: 'wild-tls' }] }),
    rules: [{ host, paths: [{ path: '/', pathType: 'Prefix', backend: { service: 'main', port: backends.main.port } }] }],
  });
}

const get = (host: string, path = '/', more: Omit<Parameters<typeof httpGet>[0], 'port' | 'host' | 'path'> = {}) => httpGet({ port: target.httpPort, host, path, ...more });

beforeAll(async () => {
  backends = await settle({
    main: startPeer(startHttpBackend('main')),
    mirror: startPeer(startRecordingBackend()),
    cachedAuth: startPeer(startAuthBackend({ setCookie: false })),
    globalAuth: startPeer(startAuthBackend()),
  });
  const ca = await createCa(await temporaryDir(), 'Breadth CA');
  const wildcard = await issueCertificate(ca, { commonName: '*.example.test', sans: ['*.example.test'] });
  const mirrorService = `mirror.web.svc.cluster.local:${backends.mirror.port}`;
  const manifests = documents(
    serviceManifest('web', 'main', backends.main),
    serviceManifest('web', 'mirror', backends.mirror),
    serviceManifest('web', 'cached-auth', backends.cachedAuth),
    // The operator's auth service, in a namespace of its own: global-auth-url needs no ReferenceGrant.
    serviceManifest('sso', 'global-auth', backends.globalAuth),
    configMapManifest('ingress-nginx', 'controller', { 'global-auth-url': `http://global-auth.sso.svc.cluster.local:${backends.globalAuth.port}/check` }),
    site('mirrored', 'mirror.example.test', { ...noGlobalAuth, 'mirror-target': `http://${mirrorService}$request_uri` }),
    site('mirrored-no-body', 'mirror-no-body.example.test', {
      ...noGlobalAuth,
      'mirror-target': `http://${mirrorService}/copy$request_uri`,
      'mirror-request-body': 'off',
      'mirror-host': 'shadow.example.test',
    }),
    site('cached', 'cached.example.test', {
      'auth-url': `http://cached-auth.web.svc.cluster.local:${backends.cachedAuth.port}/check`,
      'auth-cache-key': '$http_x_token',
      'auth-cache-duration': '200 401 5m',
    }),
    site('global', 'global.example.test', {}),
    site('opted-out', 'opted-out.example.test', noGlobalAuth),
    tlsSecretManifest({ name: 'wild-tls', namespace: 'web', certificate: wildcard }),
    site('strict-ciphers', 'strict.example.test', { ...noGlobalAuth, 'ssl-ciphers': 'ECDHE-ECDSA-AES128-GCM-SHA256', 'ssl-prefer-server-ciphers': 'true' }, { tls: true }),
    site('default-ciphers', 'default.example.test', noGlobalAuth, { tls: true }),
    // Passthrough hosts: plain HTTP is redirected when the Ingress asks for it, else 404.
    site('passthrough-forced', 'pt-forced.example.test', { 'ssl-passthrough': 'true', 'force-ssl-redirect': 'true' }),
    ingressManifest({
      namespace: 'web',
      name: 'passthrough-tls',
      annotations: { 'ssl-passthrough': 'true' },
      tls: [{ hosts: ['pt-tls.example.test'] }],
      rules: [{ host: 'pt-tls.example.test', paths: [{ path: '/', pathType: 'Prefix', backend: { service: 'main', port: backends.main.port } }] }],
    }),
    site('passthrough-plain', 'pt-plain.example.test', { 'ssl-passthrough': 'true' }),
  );
  target = await createTarget();
  rendered = await renderInto(target, manifests, ['--configmap', 'ingress-nginx/controller']);
  expect(rendered.exitCode, rendered.stderr).toBe(0);
  await startTarget(target);
});

describe('mirror-target', () => {
  it('sends a copy of the request, body and all, while the client gets the backend\'s answer', async () => {
    const copy = backends.mirror.nextRequest();
    const response = await get('mirror.example.test', '/orders?id=7', { method: 'POST', body: 'order=42', headers: { 'content-type': 'text/plain' } });
    expect(response.status).toBe(200);
    expect(parseEcho(response.body).backend).toBe('main');
    const mirrored = await copy;
    expect(mirrored).toMatchObject({ method: 'POST', path: '/orders?id=7', body: 'order=42' });
    expect(mirrored.headers.host).toBe('mirror.web.svc.cluster.local');
  });

  it('leaves the body out with mirror-request-body off, and sets mirror-host as the Host of the copy', async () => {
    const copy = backends.mirror.nextRequest();
    const response = await get('mirror-no-body.example.test', '/upload', { method: 'POST', body: 'secret-payload', headers: { 'content-type': 'text/plain' } });
    expect(parseEcho(response.body).backend).toBe('main');
    const mirrored = await copy;
    expect(mirrored).toMatchObject({ method: 'POST', path: '/copy/upload', body: '' });
    expect(mirrored.headers.host).toBe('shadow.example.test');
  });
});

describe('auth-cache-key', () => {
  it('asks the auth service once per key within the duration, for grants and refusals alike', async () => {
    const before = backends.cachedAuth.requestCount();
    for (let i = 0; i < 3; i++) {
      const response = await get('cached.example.test', `/page/${i}`, { headers: { 'x-token': 'good' } });
      expect(parseEcho(response.body).backend).toBe('main');
    }
    expect(backends.cachedAuth.requestCount()).toBe(before + 1);
    for (let i = 0; i < 3; i++) expect((await get('cached.example.test', '/', { headers: { 'x-token': 'stolen' } })).status).toBe(401);
    expect(backends.cachedAuth.requestCount()).toBe(before + 2);
    // A cached grant is for its key only: no token is asked about, and refused.
    expect((await get('cached.example.test', '/')).status).toBe(401);
    expect(backends.cachedAuth.requestCount()).toBe(before + 3);
  });
});

describe('global-auth-url', () => {
  it('guards an Ingress without auth-url', async () => {
    const before = backends.globalAuth.requestCount();
    expect((await get('global.example.test', '/')).status).toBe(401);
    const granted = await get('global.example.test', '/', { headers: { 'x-token': 'good' } });
    expect(parseEcho(granted.body).backend).toBe('main');
    expect(backends.globalAuth.requestCount()).toBe(before + 2);
  });

  it('leaves out an Ingress with enable-global-auth "false", and one with its own auth-url', async () => {
    const before = backends.globalAuth.requestCount();
    expect(parseEcho((await get('opted-out.example.test', '/')).body).backend).toBe('main');
    await get('cached.example.test', '/', { headers: { 'x-token': 'good' } });
    expect(backends.globalAuth.requestCount()).toBe(before);
  });
});

/** A TLS 1.2 handshake offering only `cipher`: the cipher agreed, or the error that ended it. */
function handshake(servername: string, cipher: string): Promise<string> {
  return new Promise((resolve) => {
    const socket = tls.connect({ host: '127.0.0.1', port: target.httpsPort, servername, ciphers: cipher, maxVersion: 'TLSv1.2', rejectUnauthorized: false });
    socket.once('secureConnect', () => {
      resolve(socket.getCipher().standardName);
      socket.destroy();
    });
    socket.once('error', (error) => resolve(`error: ${error.message}`));
  });
}

describe('ssl-ciphers on a host', () => {
  it('refuses a client that offers only a cipher outside the host\'s list, which another host accepts', async () => {
    expect(await handshake('strict.example.test', 'ECDHE-ECDSA-AES256-GCM-SHA384')).toMatch(/^error: .*handshake failure/);
    expect(await handshake('strict.example.test', 'ECDHE-ECDSA-AES128-GCM-SHA256')).toBe('TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256');
    expect(await handshake('default.example.test', 'ECDHE-ECDSA-AES256-GCM-SHA384')).toBe('TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384');
  });
});

describe('plain HTTP to a passthrough host', () => {
  it('is redirected to HTTPS with force-ssl-redirect, or ssl-redirect (the default) when spec.tls lists the host', async () => {
    for (const host of ['pt-forced.example.test', 'pt-tls.example.test']) {
      const response = await get(host, '/account?tab=2');
      expect(response.status, host).toBe(308);
      expect(response.headers.location).toBe(`https://${host}:${target.httpsPort}/account?tab=2`);
    }
  });

  it('answers 404 otherwise, never reaching the passthrough backend in plain HTTP', async () => {
    const before = backends.main.requestCount();
    expect((await get('pt-plain.example.test', '/')).status).toBe(404);
    expect(backends.main.requestCount()).toBe(before);
  });
});
