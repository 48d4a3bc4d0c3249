import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpGet, httpsGet, parseEcho, startHeaderBackend, type HttpResponse, type Peer } from '../support/peers.js';
import { createCa, issueCertificate, tlsSecretManifest } from '../support/pki.js';
import {
  cleanUp,
  configMapManifest,
  createTarget,
  documents,
  ingressManifest,
  renderInto,
  serviceManifest,
  startPeer,
  startTarget,
  temporaryDir,
  type Target,
} from './harness.js';

/**
 * Headers, compression and the client-header keys with real traffic through a real nginx: ConfigMap
 * `add-headers`, `proxy-set-headers`, `hide-headers`, an Ingress's `custom-headers`, gzip, large
 * client headers, underscores in header names, `proxy-cookie-domain`/`-path`, and the access log
 * (`enable-access-log`, `log-format-upstream`). The same Ingresses rendered without those keys show what
 * each one changes.
 */

afterAll(cleanUp);

const largeCookie = `session=${'x'.repeat(10_000)}`;

/** The Ingresses of both configs: one plain host, one with custom-headers and cookie rewriting, one over TLS. */
function manifests(backend: Peer, controllerData: Record<string, string>, tlsPem: { certPem: string; keyPem: string }): string {
  const site = (name: string, host: string, annotations: Record<string, string> = {}, tls = false) =>
    ingressManifest({
      namespace: 'web',
      name,
      annotations,
      ...(tls && { tls: [{ hosts: [host], secretName: 'site-tls' }] }),
      rules: [{ host, paths: [{ path: '/', pathType: 'Prefix', backend: { service: 'app', port: backend.port } }] }],
    });
  return documents(
    serviceManifest('web', 'app', backend),
    tlsSecretManifest({ name: 'site-tls', namespace: 'web', certificate: tlsPem }),
    configMapManifest('infra', 'controller', controllerData),
    configMapManifest('infra', 'response-headers', { 'X-Frame-Options': 'DENY', 'X-Served-Host': '$host' }),
    configMapManifest('infra', 'request-headers', { 'X-Team': 'payments', 'X-Client-Host': '$host' }),
    configMapManifest('web', 'tenant-headers', { 'X-Frame-Options': 'SAMEORIGIN', 'X-Price': 'costs $5' }),
    site('plain', 'plain.example.test'),
    site('custom', 'custom.example.test', {
      'custom-headers': 'tenant-headers',
      'proxy-cookie-domain': 'backend.internal $host',
      'proxy-cookie-path': '/app/ /',
    }),
    site('secure', 'secure.example.test', {}, true),
  );
}

const tuned = {
  'add-headers': 'infra/response-headers',
  'proxy-set-headers': 'infra/request-headers',
  'hide-headers': 'X-Powered-By',
  'global-allowed-response-headers': 'X-Frame-Options,X-Price',
  'use-gzip': 'true',
  'gzip-min-length': '1000',
  'gzip-types': 'application/json',
  'large-client-header-buffers': '4 16k',
  'enable-underscores-in-headers': 'true',
};

let backend: Peer;
let pem: { certPem: string; keyPem: string };

beforeAll(async () => {
  backend = await startPeer(startHeaderBackend('app'));
  const ca = await createCa(await temporaryDir(), 'Headers CA');
  pem = await issueCertificate(ca, { commonName: 'secure.example.test', sans: ['secure.example.test'] });
});

/** Renders with `controllerData` as the controller ConfigMap and starts nginx; exit code 1 when the input has errors. */
async function started(controllerData: Record<string, string>, exitCode: 0 | 1): Promise<Target> {
  const target = await createTarget();
  const rendered = await renderInto(target, manifests(backend, controllerData, pem), ['--configmap', 'infra/controller']);
  expect(rendered.exitCode, rendered.stderr).toBe(exitCode);
  await startTarget(target);
  return target;
}

describe('with the header, gzip and client-header keys set', () => {
  let target: Target;
  beforeAll(async () => {
    target = await started(tuned, 0);
  });
  const get = (host: string, path = '/', headers: Record<string, string> = {}): Promise<HttpResponse> => httpGet({ port: target.httpPort, host, path, headers });

  it('sends add-headers on every response in place of the backend\'s, hides hide-headers, and sends proxy-set-headers to the backend', async () => {
    const response = await get('plain.example.test');
    expect(response.status).toBe(200);
    expect(response.headers['x-frame-options']).toBe('DENY');
    expect(response.headers['x-served-host']).toBe('plain.example.test');
    expect(response.headers['x-powered-by']).toBeUndefined();
    const echo = parseEcho(response.body);
    expect(echo.headers['x-team']).toBe('payments');
    expect(echo.headers['x-client-host']).toBe('plain.example.test');
    // Every status: nginx's own 404 for a path nothing routes carries them too.
    expect((await get('nowhere.example.test')).headers['x-frame-options']).toBe('DENY');
  });

  it('sends an Ingress\'s custom-headers over add-headers, a "$" literal, and rewrites its cookies\' domain and path', async () => {
    const response = await get('custom.example.test');
    expect(response.status).toBe(200);
    expect(response.headers['x-frame-options']).toBe('SAMEORIGIN');
    expect(response.headers['x-price']).toBe('costs $5');
    expect(response.headers['x-served-host']).toBe('custom.example.test');
    expect(response.headers['set-cookie']).toEqual(['sid=1; Domain=custom.example.test; Path=/']);
    expect((await get('plain.example.test')).headers['set-cookie']).toEqual(['sid=1; Domain=backend.internal; Path=/app/']);
  });

  it('keeps add-headers beside HSTS over TLS', async () => {
    const response = await httpsGet({ port: target.httpsPort, servername: 'secure.example.test' });
    expect(response.status).toBe(200);
    expect(response.headers['strict-transport-security']).toContain('max-age=');
    expect(response.headers['x-frame-options']).toBe('DENY');
  });

  it('compresses a listed type from gzip-min-length, and neither shorter responses nor other types', async () => {
    const gzip = { 'accept-encoding': 'gzip' };
    expect((await get('plain.example.test', '/json/4000', gzip)).headers['content-encoding']).toBe('gzip');
    expect((await get('plain.example.test', '/json/500', gzip)).headers['content-encoding']).toBeUndefined();
    expect((await get('plain.example.test', '/png/4000', gzip)).headers['content-encoding']).toBeUndefined();
  });

  it('accepts a large cookie with large-client-header-buffers raised, and passes headers with underscores', async () => {
    expect((await get('plain.example.test', '/', { cookie: largeCookie })).status).toBe(200);
    expect(parseEcho((await get('plain.example.test', '/', { x_team_id: '7' })).body).headers['x_team_id']).toBe('7');
  });
});

describe('without them', () => {
  let target: Target;
  beforeAll(async () => {
    // custom-headers is an error without global-allowed-response-headers.
    target = await started({}, 1);
  });
  const get = (host: string, path = '/', headers: Record<string, string> = {}): Promise<HttpResponse> => httpGet({ port: target.httpPort, host, path, headers });

  it('passes the backend\'s headers and adds none; custom-headers without global-allowed-response-headers answers 503', async () => {
    const response = await get('plain.example.test');
    expect(response.headers['x-frame-options']).toBe('BACKEND');
    expect(response.headers['x-powered-by']).toBe('backend');
    expect(parseEcho(response.body).headers['x-team']).toBeUndefined();
    expect((await get('custom.example.test')).status).toBe(503);
  });

  it('does not compress, refuses a large cookie with 400, and drops headers with underscores', async () => {
    expect((await get('plain.example.test', '/json/4000', { 'accept-encoding': 'gzip' })).headers['content-encoding']).toBeUndefined();
    expect((await get('plain.example.test', '/', { cookie: largeCookie })).status).toBe(400);
    expect(parseEcho((await get('plain.example.test', '/', { x_team_id: '7' })).body).headers['x_team_id']).toBeUndefined();
  });
});

describe('the access log', () => {
  let target: Target;
  let accessLog: string;
  beforeAll(async () => {
    target = await createTarget();
    accessLog = path.join(await temporaryDir(), 'access.log');
    const site = (name: string, annotations: Record<string, string>) =>
      ingressManifest({ namespace: 'web', name, annotations, rules: [{ host: `${name}.example.test`, paths: [{ path: '/', pathType: 'Prefix', backend: { service: 'app', port: backend.port } }] }] });
    const input = documents(
      serviceManifest('web', 'app', backend),
      configMapManifest('infra', 'controller', { 'log-format-upstream': 'custom $host $status "$request" $req_id' }),
      site('quiet', { 'enable-access-log': 'false' }),
      site('loud', {}),
    );
    const rendered = await renderInto(target, input, ['--configmap', 'infra/controller', '--access-log', accessLog]);
    expect(rendered.exitCode, rendered.stderr).toBe(0);
    await startTarget(target);
  });

  it('logs in log-format-upstream, and nothing for a location with enable-access-log: "false"', async () => {
    for (const host of ['quiet.example.test', 'loud.example.test', 'quiet.example.test']) {
      expect((await httpGet({ port: target.httpPort, host, path: '/seen', headers: { 'x-request-id': `id-${host}` } })).status).toBe(200);
    }
    const lines = (await readFile(accessLog, 'utf8')).split('\n').filter((line) => line !== '');
    expect(lines).toEqual(['custom loud.example.test 200 "GET /seen HTTP/1.1" id-loud.example.test']);
  });
});

describe('the access log without query strings (issue 37)', () => {
  let target: Target;
  let accessLog: string;
  beforeAll(async () => {
    const backend = await startPeer(startHeaderBackend('app'));
    target = await createTarget();
    accessLog = path.join(await temporaryDir(), 'access.log');
    const input = documents(
      serviceManifest('web', 'app', backend),
      // ingress-nginx's way: a log-format-upstream that writes the path ($uri) where its default writes the request line.
      configMapManifest('infra', 'controller', { 'log-format-upstream': '$host "$request_method $uri $server_protocol" $status' }),
      ingressManifest({ namespace: 'web', name: 'login', rules: [{ host: 'login.example.test', paths: [{ path: '/', pathType: 'Prefix', backend: { service: 'app', port: backend.port } }] }] }),
    );
    const rendered = await renderInto(target, input, ['--configmap', 'infra/controller', '--access-log', accessLog]);
    expect(rendered.exitCode, rendered.stderr).toBe(0);
    await startTarget(target);
  });

  it('keeps tokens in the query string out of the log', async () => {
    expect((await httpGet({ port: target.httpPort, host: 'login.example.test', path: '/callback?code=s3cret&state=x' })).status).toBe(200);
    const lines = (await readFile(accessLog, 'utf8')).split('\n').filter((line) => line !== '');
    expect(lines).toEqual(['login.example.test "GET /callback HTTP/1.1" 200']);
  });
});
