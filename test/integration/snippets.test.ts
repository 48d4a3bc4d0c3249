import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { requireNginx, startNginx } from '../support/nginx.js';
import { httpGet, parseEcho, startHttpBackend } from '../support/peers.js';
import { freePort } from '../support/ports.js';
import { cleanUp, configMapManifest, createTarget, documents, ingressManifest, renderInto, serviceManifest, startPeer, type Target } from './harness.js';

/**
 * Snippets the operator allows for a namespace, against a real nginx (`render --check`): a
 * configuration-snippet acts in its location, a server-snippet in its server, the ConfigMap's
 * http-snippet and stream-snippet in their blocks. A snippet nginx refuses (`more_set_headers` needs a
 * module stock nginx lacks) leaves out its Ingress alone; a namespace outside the scope gets none.
 */

afterAll(cleanUp);

let target: Target;
let streamPort: number;
let stderr: string;

beforeAll(async () => {
  const app = await startPeer(startHttpBackend('app'));
  target = await createTarget();
  streamPort = await freePort();
  const rule = (host: string) => [{ host, paths: [{ path: '/', pathType: 'Prefix' as const, backend: { service: 'app', port: app.port } }] }];
  const manifests = documents(
    configMapManifest('ingress-nginx', 'controller', {
      'worker-processes': '1',
      'allow-snippet-annotations': 'true',
      // ingress-nginx 1.12+'s default, High, refuses snippet annotations.
      'annotations-risk-level': 'Critical',
      'http-snippet': 'map $http_x_probe $i2n_test_probe { default "none"; "1" "seen"; }',
      'stream-snippet': `server { listen ${streamPort}; return "from stream-snippet\\n"; }`,
      'location-snippet': 'add_header X-Every-Location yes always;',
      'server-snippet': 'location = /from-configmap { return 200 "configmap server snippet\\n"; }',
    }),
    stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'platform', labels: { snippets: 'allowed' } } }),
    serviceManifest('platform', 'app', app),
    serviceManifest('tenant', 'app', app),
    ingressManifest({
      namespace: 'platform',
      name: 'good',
      annotations: {
        'configuration-snippet': 'add_header X-From-Snippet $i2n_test_probe always;\nproxy_set_header X-Team platform;',
        'server-snippet': 'location = /from-server-snippet { return 200 "server snippet\\n"; }',
      },
      rules: rule('good.example.test'),
    }),
    ingressManifest({ namespace: 'platform', name: 'broken', annotations: { 'configuration-snippet': 'more_set_headers "X-A: b";' }, rules: rule('broken.example.test') }),
    ingressManifest({ namespace: 'tenant', name: 'outside', annotations: { 'configuration-snippet': 'add_header X-Tenant yes;' }, rules: rule('outside.example.test') }),
    ingressManifest({ namespace: 'tenant', name: 'plain', rules: rule('plain.example.test') }),
  );
  const nginx = requireNginx();
  const rendered = await renderInto(target, manifests, [
    '--configmap', 'ingress-nginx/controller',
    '--snippet-namespace-selector', 'snippets=allowed',
    '--check', '--nginx-bin', nginx.binary,
  ]);
  stderr = rendered.stderr;
  await startNginx({ prefix: target.prefix, conf: target.conf, ports: [target.httpPort, target.httpsPort, streamPort] });
});

describe('snippets allowed for a namespace', () => {
  it('puts a configuration-snippet in its location and the http-snippet in http', async () => {
    const response = await httpGet({ port: target.httpPort, host: 'good.example.test', headers: { 'x-probe': '1' } });
    expect(response.status).toBe(200);
    expect(parseEcho(response.body).backend).toBe('app');
    expect(response.headers['x-from-snippet']).toBe('seen');
  });

  it('keeps the request headers every location sends when a snippet sets one of its own', async () => {
    const echo = parseEcho((await httpGet({ port: target.httpPort, host: 'good.example.test' })).body);
    expect(echo.headers['x-team']).toBe('platform');
    expect(echo.headers['host']).toBe('good.example.test');
    expect(echo.headers['x-forwarded-for']).toBe('127.0.0.1');
  });

  it('puts a server-snippet in its server', async () => {
    const response = await httpGet({ port: target.httpPort, host: 'good.example.test', path: '/from-server-snippet' });
    expect(response.body.toString()).toBe('server snippet\n');
  });

  it("puts the ConfigMap's server-snippet in every server and its location-snippet in every location, whatever the namespace", async () => {
    const response = await httpGet({ port: target.httpPort, host: 'plain.example.test', path: '/from-configmap' });
    expect(response.body.toString()).toBe('configmap server snippet\n');
    expect((await httpGet({ port: target.httpPort, host: 'plain.example.test' })).headers['x-every-location']).toBe('yes');
  });

  it('puts the stream-snippet in stream', async () => {
    const response = await fetchLine(streamPort);
    expect(response).toBe('from stream-snippet\n');
  });

  it('warns at each Ingress that uses one', () => {
    expect(stderr).toMatch(/warning \[snippet-in-use\] Ingress platform\/good /);
  });

  it('leaves out the Ingress whose snippet nginx refuses, and serves the rest', async () => {
    expect(stderr).toMatch(/error \[nginx-rejected\] Ingress platform\/broken/);
    const response = await httpGet({ port: target.httpPort, host: 'broken.example.test' });
    expect(response.status).toBe(404);
    expect((await httpGet({ port: target.httpPort, host: 'plain.example.test' })).status).toBe(200);
  });

  it('refuses snippets in a namespace outside the scope, and serves no text of them', async () => {
    expect(stderr).toMatch(/error \[snippet-refused\] Ingress tenant\/outside .*tenant is not one of them/);
    const response = await httpGet({ port: target.httpPort, host: 'outside.example.test' });
    expect(response.status).toBe(404);
    expect(response.headers['x-tenant']).toBeUndefined();
  });
});

async function fetchLine(port: number): Promise<string> {
  const net = await import('node:net');
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    let received = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (received += chunk));
    socket.once('end', () => resolve(received));
    socket.once('error', reject);
  });
}
