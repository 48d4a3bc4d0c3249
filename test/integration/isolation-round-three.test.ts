import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CliRun } from '../support/cli.js';
import { startFastCgiResponder, type FastCgiRequest } from '../support/fastcgi.js';
import { httpGet, startHttpBackend, type CountingPeer } from '../support/peers.js';
import { cleanUp, configMapManifest, createTarget, documents, ingressManifest, renderInto, serviceManifest, settle, startPeer, startTarget, type Target } from './harness.js';

/**
 * The third hostile review (issue 37) against a real nginx: a client that writes header lines into an
 * HTTPRoute redirect, a tenant that sets a framing header on its responses, a client that sends
 * `Proxy:` to a FastCGI backend (httpoxy).
 */

afterAll(cleanUp);

const gatewayApi = 'gateway.networking.k8s.io/v1';

let target: Target;
let rendered: CliRun;
let backends: { app: CountingPeer; fastcgi: Awaited<ReturnType<typeof startFastCgiResponder>> };

function httpRoute(name: string, hostname: string, rules: readonly Record<string, unknown>[]): string {
  return stringify({
    apiVersion: gatewayApi,
    kind: 'HTTPRoute',
    metadata: { name, namespace: 'apps' },
    spec: { parentRefs: [{ name: 'edge', namespace: 'infra' }], hostnames: [hostname], rules },
  });
}

const prefix = (value: string) => [{ path: { type: 'PathPrefix', value } }];

beforeAll(async () => {
  backends = await settle({ app: startPeer(startHttpBackend('app')), fastcgi: startPeer(startFastCgiResponder()) });
  target = await createTarget();
  const app = { name: 'app', port: backends.app.port };
  const manifests = documents(
    configMapManifest('ingress-nginx', 'controller', { 'worker-processes': '1' }),
    stringify({ apiVersion: gatewayApi, kind: 'GatewayClass', metadata: { name: 'ingress2nginx' }, spec: { controllerName: 'ingress2nginx.dev/controller' } }),
    stringify({
      apiVersion: gatewayApi,
      kind: 'Gateway',
      metadata: { name: 'edge', namespace: 'infra' },
      spec: { gatewayClassName: 'ingress2nginx', listeners: [{ name: 'http', port: target.httpPort, protocol: 'HTTP', allowedRoutes: { namespaces: { from: 'All' } } }] },
    }),
    serviceManifest('apps', 'app', backends.app),
    httpRoute('moved', 'moved.example.test', [
      { matches: prefix('/old'), filters: [{ type: 'RequestRedirect', requestRedirect: { path: { type: 'ReplacePrefixMatch', replacePrefixMatch: '/new' } } }] },
      { matches: prefix('/strip'), filters: [{ type: 'RequestRedirect', requestRedirect: { path: { type: 'ReplacePrefixMatch', replacePrefixMatch: '/' } } }] },
    ]),
    httpRoute('framing', 'framing.example.test', [
      { matches: prefix('/length'), filters: [{ type: 'ResponseHeaderModifier', responseHeaderModifier: { set: [{ name: 'Content-Length', value: '1' }] } }], backendRefs: [app] },
      { matches: prefix('/chunked'), filters: [{ type: 'ResponseHeaderModifier', responseHeaderModifier: { add: [{ name: 'Transfer-Encoding', value: 'chunked' }] } }], backendRefs: [app] },
      { matches: prefix('/'), backendRefs: [app] },
    ]),
    serviceManifest('web', 'php', backends.fastcgi),
    ingressManifest({
      namespace: 'web',
      name: 'php',
      annotations: { 'backend-protocol': 'FCGI' },
      rules: [{ host: 'php.example.test', paths: [{ path: '/', pathType: 'Prefix', backend: { service: 'php', port: backends.fastcgi.port } }] }],
    }),
  );
  rendered = await renderInto(target, manifests, ['--format', 'json']);
  await startTarget(target);
});

describe('an HTTPRoute redirect that replaces a prefix (defect 1)', () => {
  it('writes the raw request URI into Location, so an encoded CR LF starts no header of its own', async () => {
    const response = await httpGet({ port: target.httpPort, host: 'moved.example.test', path: '/old/a%0d%0aSet-Cookie:%20pwned=1?q=%0a1' });
    expect(response.status).toBe(302);
    expect(response.headers['set-cookie']).toBeUndefined();
    expect(response.headers.location).toBe(`http://moved.example.test:${target.httpPort}/new/a%0d%0aSet-Cookie:%20pwned=1?q=%0a1`);
  });

  it('still replaces the prefix, and removes it, keeping the query', async () => {
    const location = async (path: string) => (await httpGet({ port: target.httpPort, host: 'moved.example.test', path })).headers.location;
    expect(await location('/old')).toBe(`http://moved.example.test:${target.httpPort}/new`);
    expect(await location('/old/x/y?z=1')).toBe(`http://moved.example.test:${target.httpPort}/new/x/y?z=1`);
    expect(await location('/strip/x?z=1')).toBe(`http://moved.example.test:${target.httpPort}/x?z=1`);
  });
});

describe('framing headers a tenant sets on its responses (defect 2)', () => {
  it.each(['/length', '/chunked'])('%s: the response carries nginx framing only, and the filter is refused', async (path) => {
    // Node's parser rejects a response with two Content-Length, or one beside Transfer-Encoding.
    const response = await httpGet({ port: target.httpPort, host: 'framing.example.test', path });
    expect(response.headers['content-length'] === undefined || response.headers['transfer-encoding'] === undefined).toBe(true);
    expect(rendered.stdout).toMatch(/hop-by-hop or framing header/);
  });

  it('the route\'s other rules still serve', async () => {
    expect((await httpGet({ port: target.httpPort, host: 'framing.example.test', path: '/' })).status).toBe(200);
  });
});

describe('FastCGI backends (httpoxy)', () => {
  it('never receive a client\'s Proxy header as HTTP_PROXY', async () => {
    const response = await httpGet({ port: target.httpPort, host: 'php.example.test', path: '/index.php', headers: { proxy: 'http://attacker.example:3128', 'x-trace': 't1' } });
    expect(response.status).toBe(200);
    const seen = JSON.parse(response.body) as FastCgiRequest;
    expect(seen.params.HTTP_X_TRACE).toBe('t1');
    expect(seen.params.HTTP_PROXY ?? '').toBe('');
  });
});
