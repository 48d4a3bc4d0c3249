import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CliRun } from '../support/cli.js';
import { httpGet, parseEcho, startHttpBackend, startRecordingBackend, type CountingPeer } from '../support/peers.js';
import { cleanUp, createTarget, documents, ingressManifest, renderInto, serviceManifest, settle, startPeer, startTarget, type Target } from './harness.js';

/**
 * The annotations of the migration-breadth work with real traffic through one real nginx: request
 * mirroring.
 */

afterAll(cleanUp);

let target: Target;
let rendered: CliRun;
let backends: { main: CountingPeer; mirror: Awaited<ReturnType<typeof startRecordingBackend>> };

/** An Ingress in namespace web with one host and path `/` to the main backend. */
function site(name: string, host: string, annotations: Record<string, string>): string {
  return ingressManifest({
    namespace: 'web',
    name,
    annotations,
    rules: [{ host, paths: [{ path: '/', pathType: 'Prefix', backend: { service: 'main', port: backends.main.port } }] }],
  });
}

const get = (host: string, path = '/', more: Omit<Parameters<typeof httpGet>[0], 'port' | 'host' | 'path'> = {}) => httpGet({ port: target.httpPort, host, path, ...more });

beforeAll(async () => {
  backends = await settle({ main: startPeer(startHttpBackend('main')), mirror: startPeer(startRecordingBackend()) });
  const mirrorService = `mirror.web.svc.cluster.local:${backends.mirror.port}`;
  const manifests = documents(
    serviceManifest('web', 'main', backends.main),
    serviceManifest('web', 'mirror', backends.mirror),
    site('mirrored', 'mirror.example.test', { 'mirror-target': `http://${mirrorService}$request_uri` }),
    site('mirrored-no-body', 'mirror-no-body.example.test', {
      'mirror-target': `http://${mirrorService}/copy$request_uri`,
      'mirror-request-body': 'off',
      'mirror-host': 'shadow.example.test',
    }),
  );
  target = await createTarget();
  rendered = await renderInto(target, manifests);
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
