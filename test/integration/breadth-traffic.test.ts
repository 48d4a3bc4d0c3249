import os from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { specialAddress } from '../../src/translate/checks/addresses.js';
import type { CliRun } from '../support/cli.js';
import { startFastCgiResponder, type FastCgiRequest } from '../support/fastcgi.js';
import { httpGet, parseEcho, startConnectionCountingBackend, startHttpBackend, type CountingPeer } from '../support/peers.js';
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
  type PathSpec,
  type Target,
} from './harness.js';

/**
 * The annotations of the second round of migration breadth, with real traffic through one real nginx:
 * how redirects write their target (preserve-trailing-slash, use-port-in-redirects), the Connection header
 * to the backend (connection-proxy-header), the cluster IP instead of the endpoints (service-upstream),
 * keepalive to the auth service (auth-keepalive*), FastCGI backends (backend-protocol FCGI).
 */

afterAll(cleanUp);

let target: Target;
let rendered: CliRun;
let backends: { fastcgi: Awaited<ReturnType<typeof startFastCgiResponder>>; main: CountingPeer; kept: Awaited<ReturnType<typeof startConnectionCountingBackend>>; auth: Awaited<ReturnType<typeof startConnectionCountingBackend>> };

function site(name: string, host: string, annotations: Record<string, string>, options: { tls?: boolean; paths?: PathSpec[] } = {}): string {
  return ingressManifest({
    namespace: 'web',
    name,
    annotations,
    ...(options.tls && { tls: [{ hosts: [host], secretName: 'wild-tls' }] }),
    rules: [{ host, paths: options.paths ?? [{ path: '/', pathType: 'Prefix', backend: { service: 'main', port: backends.main.port } }] }],
  });
}

const get = (host: string, path = '/', more: Omit<Parameters<typeof httpGet>[0], 'port' | 'host' | 'path'> = {}) => httpGet({ port: target.httpPort, host, path, ...more });

beforeAll(async () => {
  backends = await settle({ fastcgi: startPeer(startFastCgiResponder()), main: startPeer(startHttpBackend('main')), kept: startPeer(startConnectionCountingBackend('kept')), auth: startPeer(startConnectionCountingBackend('auth', { emptyBody: true })) });
  const ca = await createCa(await temporaryDir(), 'Breadth CA');
  const wildcard = await issueCertificate(ca, { commonName: '*.example.test', sans: ['*.example.test'] });
  const directoryPath = (): PathSpec[] => [{ path: '/app/', pathType: 'ImplementationSpecific', backend: { service: 'main', port: backends.main.port } }];
  const manifests = documents(
    serviceManifest('web', 'main', backends.main),
    tlsSecretManifest({ name: 'wild-tls', namespace: 'web', certificate: wildcard }),
    site('trimmed', 'trim.example.test', {}, { tls: true }),
    site('preserved', 'keep.example.test', { 'preserve-trailing-slash': 'true' }, { tls: true }),
    site('forced-preserved', 'forced.example.test', { 'force-ssl-redirect': 'true', 'preserve-trailing-slash': 'true', 'use-port-in-redirects': 'true' }),
    site('directory', 'dir.example.test', {}, { paths: directoryPath() }),
    site('directory-port', 'dir-port.example.test', { 'use-port-in-redirects': 'true' }, { paths: directoryPath() }),
    serviceManifest('web', 'kept', backends.kept),
    site('connection-default', 'conn-default.example.test', {}, { paths: [{ path: '/', pathType: 'Prefix', backend: { service: 'kept', port: backends.kept.port } }] }),
    serviceManifest('web', 'auth', backends.auth),
    site('auth-kept', 'auth-kept.example.test', { 'auth-url': `http://auth.web.svc.cluster.local:${backends.auth.port}/check` }),
    site('auth-short', 'auth-short.example.test', {
      'auth-url': `http://auth.web.svc.cluster.local:${backends.auth.port}/check`,
      'auth-keepalive': '4',
      'auth-keepalive-requests': '2',
    }),
    serviceManifest('web', 'php', backends.fastcgi),
    configMapManifest('web', 'php-params', { SCRIPT_FILENAME: '/srv/app$fastcgi_script_name', APP_ENV: 'production' }),
    site('php', 'php.example.test', { 'backend-protocol': 'FCGI', 'fastcgi-index': 'index.php', 'fastcgi-params-configmap': 'php-params' }, {
      paths: [{ path: '/', pathType: 'Prefix', backend: { service: 'php', port: backends.fastcgi.port } }],
    }),
    site('php-missing', 'php-missing.example.test', { 'backend-protocol': 'FCGI', 'fastcgi-params-configmap': 'nowhere' }, {
      paths: [{ path: '/', pathType: 'Prefix', backend: { service: 'php', port: backends.fastcgi.port } }],
    }),
    site('connection-close', 'conn-close.example.test', { 'connection-proxy-header': 'close' }),
    site('connection-keep-alive', 'conn-keep.example.test', { 'connection-proxy-header': 'keep-alive', 'upstream-vhost': 'vhost.example.test' }),
  );
  target = await createTarget();
  rendered = await renderInto(target, manifests);
  // The one error: the FastCGI Ingress whose parameters ConfigMap is missing, on purpose.
  expect(rendered.stderr.split('\n').filter((line) => line.includes(' error ')).map((line) => /\[([a-z-]+)\] Ingress (\S+)/.exec(line)?.slice(1).join(' '))).toEqual(['fastcgi-params-denied web/php-missing']);
  expect(rendered.exitCode, rendered.stderr).toBe(1);
  await startTarget(target);
});

describe('preserve-trailing-slash', () => {
  it('drops one trailing slash from the HTTPS redirect by default, as ingress-nginx does', async () => {
    const base = `https://trim.example.test:${target.httpsPort}`;
    const cases = { '/docs/': `${base}/docs`, '/': base, '/a//': `${base}/a/`, '/docs/?page=2': `${base}/docs/?page=2`, '/docs': `${base}/docs` };
    for (const [path, location] of Object.entries(cases)) {
      const response = await get('trim.example.test', path);
      expect([response.status, response.headers.location], path).toEqual([308, location]);
    }
  });

  it('keeps the request URI as sent with "true", for ssl-redirect and force-ssl-redirect', async () => {
    for (const host of ['keep.example.test', 'forced.example.test']) {
      const response = await get(host, '/docs/');
      expect([response.status, response.headers.location], host).toEqual([308, `https://${host}:${target.httpsPort}/docs/`]);
    }
  });
});

describe('use-port-in-redirects', () => {
  it('names the port in nginx\'s own redirect of a directory path only with "true"', async () => {
    const plain = await get('dir.example.test', '/app');
    expect([plain.status, plain.headers.location]).toEqual([301, 'http://dir.example.test/app/']);
    const withPort = await get('dir-port.example.test', '/app');
    expect([withPort.status, withPort.headers.location]).toEqual([301, `http://dir-port.example.test:${target.httpPort}/app/`]);
  });
});

describe('connection-proxy-header', () => {
  it('sends the Connection header the annotation names, with the other request headers', async () => {
    const closed = parseEcho((await get('conn-close.example.test', '/x', { headers: { 'x-request-id': 'abc' } })).body);
    expect([closed.headers.connection, closed.headers['x-request-id']]).toEqual(['close', 'abc']);
    const kept = parseEcho((await get('conn-keep.example.test', '/x')).body);
    expect([kept.headers.connection, kept.headers.host]).toEqual(['keep-alive', 'vhost.example.test']);
  });

  it('without it, sends none, and one kept-alive backend connection serves many requests', async () => {
    const before = backends.kept.connectionCount();
    for (let i = 0; i < 5; i++) {
      const echo = parseEcho((await get('conn-default.example.test', `/r${i}`)).body);
      expect([echo.backend, echo.headers.connection]).toEqual(['kept', undefined]);
    }
    // nginx has a worker per core: at most one new connection each.
    expect(backends.kept.connectionCount() - before).toBeLessThanOrEqual(2);
  });
});

describe('service-upstream', () => {
  let endpointsTarget: Target;
  let peers: { cluster: CountingPeer; endpoint: CountingPeer };

  beforeAll(async () => {
    // EndpointSlices never name the loopback: the endpoint listens on the machine's own address.
    const address = Object.values(os.networkInterfaces())
      .flat()
      .find((entry) => entry !== undefined && entry.family === 'IPv4' && !entry.internal && specialAddress(entry.address) === undefined)?.address;
    if (address === undefined) throw new Error('this machine has no non-loopback IPv4 address for EndpointSlice backends');
    peers = await settle({ cluster: startPeer(startHttpBackend('cluster-ip')), endpoint: startPeer(startHttpBackend('endpoint', address)) });
    const service = stringify({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'api', namespace: 'web' }, spec: { clusterIP: '127.0.0.1', ports: [{ name: 'http', port: peers.cluster.port }] } });
    const slice = stringify({
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name: 'api-1', namespace: 'web', labels: { 'kubernetes.io/service-name': 'api' } },
      addressType: 'IPv4',
      ports: [{ name: 'http', port: peers.endpoint.port }],
      endpoints: [{ addresses: [address], conditions: { ready: true } }],
    });
    const toApi = (name: string, host: string, annotations: Record<string, string>) =>
      ingressManifest({ namespace: 'web', name, annotations, rules: [{ host, paths: [{ path: '/', pathType: 'Prefix', backend: { service: 'api', port: peers.cluster.port } }] }] });
    endpointsTarget = await createTarget();
    const result = await renderInto(
      endpointsTarget,
      documents(service, slice, toApi('by-endpoints', 'endpoints.example.test', {}), toApi('by-service', 'service.example.test', { 'service-upstream': 'true' })),
      ['--upstreams', 'endpoints'],
    );
    expect(result.exitCode, result.stderr).toBe(0);
    await startTarget(endpointsTarget);
  });

  it('sends that Ingress\'s traffic to the cluster IP, while another Ingress of the same Service reaches its endpoints', async () => {
    const via = async (host: string) => parseEcho((await httpGet({ port: endpointsTarget.httpPort, host, path: '/' })).body).backend;
    expect(await via('service.example.test')).toBe('cluster-ip');
    expect(await via('endpoints.example.test')).toBe('endpoint');
  });
});

describe('auth-keepalive', () => {
  /** New connections to the auth service over six requests that it grants. */
  async function connectionsFor(host: string): Promise<number> {
    const before = { connections: backends.auth.connectionCount(), requests: backends.auth.requestCount() };
    for (let i = 0; i < 6; i++) expect(parseEcho((await get(host, `/a${i}`)).body).backend).toBe('main');
    expect(backends.auth.requestCount() - before.requests).toBe(6);
    return backends.auth.connectionCount() - before.connections;
  }

  it('keeps connections to an auth Service alive: one connection serves several subrequests', async () => {
    // nginx has a worker per core: at most one new connection each.
    expect(await connectionsFor('auth-kept.example.test')).toBeLessThanOrEqual(2);
  });

  it('gives the auth service a block of its own with auth-keepalive, whose auth-keepalive-requests closes a connection after two', async () => {
    expect(await connectionsFor('auth-short.example.test')).toBeGreaterThanOrEqual(3);
  });
});

describe('backend-protocol FCGI', () => {
  it('speaks FastCGI to the backend, with nginx\'s standard parameters, fastcgi-index and the ConfigMap\'s', async () => {
    const response = await get('php.example.test', '/blog/?page=2', { method: 'POST', body: 'title=hi', headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-trace': 't1' } });
    expect(response.status).toBe(200);
    const seen = JSON.parse(response.body) as FastCgiRequest;
    expect(seen.body).toBe('title=hi');
    expect(seen.params).toMatchObject({
      REQUEST_METHOD: 'POST',
      REQUEST_URI: '/blog/?page=2',
      QUERY_STRING: 'page=2',
      SCRIPT_NAME: '/blog/index.php',
      SCRIPT_FILENAME: '/srv/app/blog/index.php',
      CONTENT_TYPE: 'application/x-www-form-urlencoded',
      CONTENT_LENGTH: '8',
      SERVER_NAME: 'php.example.test',
      APP_ENV: 'production',
      HTTP_X_TRACE: 't1',
    });
  });

  it('answers 503 when the parameters ConfigMap is missing, as ingress-nginx denies the location', async () => {
    const before = backends.fastcgi.requestCount();
    expect((await get('php-missing.example.test', '/')).status).toBe(503);
    expect(backends.fastcgi.requestCount()).toBe(before);
  });
});
