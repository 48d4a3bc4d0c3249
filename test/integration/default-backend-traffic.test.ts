import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpGet, httpsGet, parseEcho, startHttpBackend, startStatusBackend, type CountingPeer, type HttpResponse } from '../support/peers.js';
import { cleanUp, configMapManifest, createTarget, documents, ingressManifest, renderInto, serviceManifest, startPeer, startTarget, type Target } from './harness.js';

/**
 * The controller's default backend (`--default-backend-service`, issue 38) through a real nginx: an
 * unknown host and an unmatched path, over HTTP and HTTPS, reach it; a code of the controller ConfigMap's
 * `custom-http-errors` from a backend reaches it with ingress-nginx's headers; an Ingress's own
 * `custom-http-errors` and `default-backend` win on its paths.
 */

afterAll(cleanUp);

let target: Target;
let backends: { fallback: CountingPeer; app: CountingPeer; team: CountingPeer };

beforeAll(async () => {
  backends = {
    fallback: await startPeer(startHttpBackend('fallback')),
    app: await startPeer(startStatusBackend('app')),
    team: await startPeer(startHttpBackend('team')),
  };
  const path = (service: keyof typeof backends, at = '/') => ({ path: at, pathType: 'Prefix' as const, backend: { service, port: backends[service].port } });
  const manifests = documents(
    configMapManifest('ingress-nginx', 'controller', { 'worker-processes': '1', 'custom-http-errors': '503' }),
    serviceManifest('ingress-nginx', 'fallback', backends.fallback),
    serviceManifest('web', 'app', backends.app),
    serviceManifest('web', 'team', backends.team),
    ingressManifest({ namespace: 'web', name: 'app', rules: [{ host: 'app.example.test', paths: [path('app', '/status')] }] }),
    ingressManifest({
      namespace: 'web',
      name: 'own-pages',
      annotations: { 'custom-http-errors': '502', 'default-backend': 'team' },
      rules: [{ host: 'own.example.test', paths: [path('app')] }],
    }),
  );
  target = await createTarget();
  const rendered = await renderInto(target, manifests, ['--configmap', 'ingress-nginx/controller', '--default-backend-service', 'ingress-nginx/fallback']);
  expect(rendered.exitCode, rendered.stderr).toBe(0);
  await startTarget(target);
});

const get = (host: string, path: string, headers: Record<string, string> = {}) => httpGet({ port: target.httpPort, host, path, headers });
const getTls = (host: string, path: string) => httpsGet({ port: target.httpsPort, servername: host, path });

function echoOf(response: HttpResponse) {
  expect(response.status, response.body.toString()).toBe(200);
  return parseEcho(response.body);
}

describe('--default-backend-service', () => {
  it('answers an unknown host, over HTTP and HTTPS', async () => {
    expect(echoOf(await get('nobody.example.test', '/anything')).backend).toBe('fallback');
    expect(echoOf(await getTls('nobody.example.test', '/anything')).backend).toBe('fallback');
  });

  it('answers a path no Ingress of a known host matches, over HTTP and HTTPS', async () => {
    expect(echoOf(await get('app.example.test', '/elsewhere')).backend).toBe('fallback');
    expect(echoOf(await getTls('app.example.test', '/elsewhere')).backend).toBe('fallback');
    expect(echoOf(await get('app.example.test', '/status/200')).backend).toBe('app');
  });

  it('answers the ConfigMap\'s custom-http-errors with ingress-nginx\'s headers; other codes pass', async () => {
    const page = echoOf(await get('app.example.test', '/status/503', { accept: 'application/json', 'x-request-id': 'req-38' }));
    expect(page.backend).toBe('fallback');
    expect(page.headers).toMatchObject({
      'x-code': '503',
      'x-format': 'application/json',
      'x-original-uri': '/status/503',
      'x-namespace': 'web',
      'x-ingress-name': 'app',
      'x-service-name': 'app',
      'x-service-port': String(backends.app.port),
      'x-request-id': 'req-38',
    });
    expect((await get('app.example.test', '/status/500')).status).toBe(500);
  });

  it('leaves an Ingress its own custom-http-errors and default-backend', async () => {
    const own = echoOf(await get('own.example.test', '/status/502'));
    expect([own.backend, own.headers['x-code']]).toEqual(['team', '502']);
    // Its own error pages replace the controller's: a 503 from its backend is the backend's own.
    const passed = await get('own.example.test', '/status/503');
    expect(passed.status).toBe(503);
    expect(parseEcho(passed.body).backend).toBe('app');
  });
});
