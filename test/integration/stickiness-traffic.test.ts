import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import type { RunningNginx } from '../support/nginx.js';
import { httpGet, httpsGet, ownAddress, parseEcho, startHttpBackend, type CountingPeer, type HttpResponse } from '../support/peers.js';
import { createCa, issueCertificate, tlsSecretManifest } from '../support/pki.js';
import { cleanUp, createTarget, documents, ingressManifest, renderInto, startPeer, startTarget, temporaryDir, type Target } from './harness.js';

/**
 * Stickiness with real traffic: cookie affinity (`affinity: cookie`, `session-cookie-*`) and
 * `upstream-hash-by` over a Service's endpoints from EndpointSlices, four real backends, one real nginx.
 * EndpointSlices never name the loopback (a tenant must not reach the node), so the backends listen on
 * the machine's own address, each behind an EndpointSlice of its own port.
 */

afterAll(cleanUp);

const host = 'shop.example.test';
let target: Target;
let nginx: RunningNginx;
let backends: CountingPeer[];
let canaryBackends: CountingPeer[];
let address: string;
let certificate: Awaited<ReturnType<typeof issueCertificate>>;

function endpointSlice(index: number, backend: CountingPeer, service = 'web'): string {
  return stringify({
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name: `${service}-${index}`, namespace: 'shop', labels: { 'kubernetes.io/service-name': service } },
    addressType: 'IPv4',
    ports: [{ name: 'http', port: backend.port }],
    endpoints: [{ addresses: [address], conditions: { ready: true } }],
  });
}

function site(name: string, path: string, annotations: Record<string, string>, service = 'web'): string {
  return ingressManifest({
    namespace: 'shop',
    name,
    annotations,
    tls: [{ hosts: [host], secretName: 'shop-tls' }],
    rules: [{ host, paths: [{ path, pathType: 'Prefix', backend: { service, port: 80 } }] }],
  });
}

const service = (name: string, clusterIP: string) =>
  stringify({ apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: 'shop' }, spec: { clusterIP, ports: [{ name: 'http', port: 80 }] } });

/** The manifests with the first `count` backends as the Service's endpoints. */
function manifests(count: number): string {
  return documents(
    service('web', '10.96.0.30'),
    service('web-v2', '10.96.0.31'),
    ...backends.slice(0, count).map((backend, index) => endpointSlice(index, backend)),
    ...canaryBackends.map((backend, index) => endpointSlice(index, backend, 'web-v2')),
    tlsSecretManifest({ name: 'shop-tls', namespace: 'shop', certificate }),
    site('sticky', '/sticky', { affinity: 'cookie', 'ssl-redirect': 'false' }),
    site('attributes', '/attributes', {
      affinity: 'cookie',
      'ssl-redirect': 'false',
      'session-cookie-name': 'shop-route',
      'session-cookie-path': '/attributes/app',
      'session-cookie-domain': host,
      'session-cookie-max-age': '3600',
      'session-cookie-samesite': 'None',
      'session-cookie-conditional-samesite-none': 'true',
      'session-cookie-secure': 'true',
    }),
    site('hashed', '/hashed', { 'upstream-hash-by': '$arg_x', 'ssl-redirect': 'false' }),
    site('plain', '/plain', { 'ssl-redirect': 'false' }),
    // A sticky main and its canary (affinity-canary-behavior: sticky by default).
    site('split', '/split', { affinity: 'cookie', 'ssl-redirect': 'false' }),
    site('split-canary', '/split', { canary: 'true', 'canary-weight': '50' }, 'web-v2'),
  );
}

async function render(count: number): Promise<void> {
  const result = await renderInto(target, manifests(count), ['--upstreams', 'endpoints']);
  expect(result.exitCode, result.stderr).toBe(0);
}

const get = (path: string, headers: Record<string, string> = {}) => httpGet({ port: target.httpPort, host, path, headers });
const getTls = (path: string, headers: Record<string, string> = {}) => httpsGet({ port: target.httpsPort, servername: host, path, headers });

function backendOf(response: HttpResponse): string {
  expect(response.status, response.body).toBe(200);
  return parseEcho(response.body).backend;
}

function setCookieOf(response: HttpResponse): string[] {
  return response.headers['set-cookie'] ?? [];
}

/** `name=value` of the affinity cookie a response set. */
function cookieFrom(response: HttpResponse, name = 'INGRESSCOOKIE'): string {
  const [header] = setCookieOf(response);
  const pair = header?.split(';')[0] ?? '';
  expect(pair.startsWith(`${name}=`), header).toBe(true);
  return pair;
}

beforeAll(async () => {
  address = ownAddress();
  const dir = await temporaryDir();
  const ca = await createCa(dir, 'Stickiness CA');
  certificate = await issueCertificate(ca, { commonName: host, sans: [host] });
  backends = await Promise.all(['one', 'two', 'three', 'four'].map((name) => startPeer(startHttpBackend(name, address))));
  canaryBackends = await Promise.all(['canary-one', 'canary-two'].map((name) => startPeer(startHttpBackend(name, address))));
  target = await createTarget();
  await render(3);
  nginx = await startTarget(target);
});

describe('cookie affinity', () => {
  it('a client without the cookie gets one, then stays on one backend; a client that has it gets no new one', async () => {
    const first = await get('/sticky/cart');
    const pinned = backendOf(first);
    const [header] = setCookieOf(first);
    // ingress-nginx's attributes over plain HTTP: the Ingress path, HttpOnly, no Secure.
    expect(header).toMatch(/^INGRESSCOOKIE=[0-9a-f]{32}; Path=\/sticky; HttpOnly$/);
    const cookie = cookieFrom(first);
    for (let i = 0; i < 30; i++) {
      const again = await get('/sticky/cart', { cookie: `theme=dark; ${cookie}; lang=en` });
      expect(backendOf(again)).toBe(pinned);
      expect(setCookieOf(again)).toEqual([]);
    }
  });

  it('different clients spread over the backends, and each keeps its own', async () => {
    const clients = await Promise.all(Array.from({ length: 24 }, async () => {
      const first = await get('/sticky/');
      return { cookie: cookieFrom(first), backend: backendOf(first) };
    }));
    const spread = new Set(clients.map((client) => client.backend));
    expect(spread.size).toBeGreaterThanOrEqual(2);
    for (const client of clients.slice(0, 8)) {
      for (let i = 0; i < 4; i++) expect(backendOf(await get('/sticky/', { cookie: client.cookie }))).toBe(client.backend);
    }
  });

  it('over HTTPS the cookie is Secure, as ingress-nginx sets it, and HSTS is still sent beside it', async () => {
    const response = await getTls('/sticky/');
    const [header] = setCookieOf(response);
    expect(header).toMatch(/^INGRESSCOOKIE=[0-9a-f]{32}; Path=\/sticky; Secure; HttpOnly$/);
    expect(response.headers['strict-transport-security']).toBe('max-age=31536000; includeSubDomains');
  });

  it('session-cookie-* set every attribute; SameSite=None is left out for browsers that reject it', async () => {
    const modern = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36';
    const old = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/55.0.2883.87 Safari/537.36';
    const [forModern] = setCookieOf(await get('/attributes/', { 'user-agent': modern }));
    expect(forModern).toMatch(new RegExp(`^shop-route=[0-9a-f]{32}; Max-Age=3600; Domain=${host}; Path=/attributes/app; Secure; HttpOnly; SameSite=None$`));
    const [forOld] = setCookieOf(await get('/attributes/', { 'user-agent': old }));
    expect(forOld).toMatch(/; Secure; HttpOnly$/);
  });

  it('a cookie value the client makes up only feeds the hash: it is served, on one backend, and gets no new cookie', async () => {
    const hostile = 'INGRESSCOOKIE=x" } server { listen 1; } $request_id \\';
    const backendsSeen = new Set<string>();
    for (let i = 0; i < 5; i++) {
      const response = await get('/sticky/', { cookie: hostile });
      backendsSeen.add(backendOf(response));
      expect(setCookieOf(response)).toEqual([]);
    }
    expect(backendsSeen.size).toBe(1);
  });

  it('with a canary, a client keeps its side of the split and its backend there (affinity-canary-behavior: sticky)', async () => {
    const clients = await Promise.all(Array.from({ length: 30 }, async () => {
      const first = await get('/split/');
      return { cookie: cookieFrom(first), backend: backendOf(first) };
    }));
    const sides = new Set(clients.map((client) => client.backend.startsWith('canary-')));
    expect(sides.size).toBe(2);
    for (const client of clients) {
      for (let i = 0; i < 3; i++) expect(backendOf(await get('/split/', { cookie: client.cookie }))).toBe(client.backend);
    }
  });

  it('an Ingress of the same Service without affinity sets no cookie and is balanced round-robin', async () => {
    const seen = new Set<string>();
    for (let i = 0; i < 12; i++) {
      const response = await get('/plain/', { cookie: 'INGRESSCOOKIE=pinned' });
      expect(setCookieOf(response)).toEqual([]);
      seen.add(backendOf(response));
    }
    expect(seen.size).toBeGreaterThanOrEqual(2);
  });
});

describe('upstream-hash-by $arg_x', () => {
  const keys = Array.from({ length: 200 }, (_, i) => `key-${i}`);

  async function placement(): Promise<Map<string, string>> {
    const placed = new Map<string, string>();
    for (const key of keys) placed.set(key, backendOf(await get(`/hashed/?x=${key}`)));
    return placed;
  }

  it('pins by the argument, and different arguments spread', async () => {
    for (const key of keys.slice(0, 5)) {
      const seen = new Set<string>();
      for (let i = 0; i < 6; i++) seen.add(backendOf(await get(`/hashed/?x=${key}`)));
      expect(seen.size).toBe(1);
    }
    const placed = await placement();
    expect(new Set(placed.values()).size).toBe(3);
  });

  it('consistent hashing keeps most keys on their backend when an endpoint is added, and all but the removed one\'s when one is removed', async () => {
    const withThree = await placement();
    await render(4);
    await nginx.reload();
    const withFour = await placement();
    const movedOnAdd = keys.filter((key) => withThree.get(key) !== withFour.get(key));
    // Every key that moved went to the new endpoint; a modulo hash would move about 3/4 of them, anywhere.
    expect(movedOnAdd.every((key) => withFour.get(key) === 'four')).toBe(true);
    const addedShare = movedOnAdd.length / keys.length;
    expect(addedShare).toBeGreaterThan(0);
    expect(addedShare).toBeLessThan(0.45);

    await render(3);
    await nginx.reload();
    const afterRemoval = await placement();
    const movedOnRemove = keys.filter((key) => withFour.get(key) !== afterRemoval.get(key));
    // Only the removed endpoint's keys move; they land where they were before it came.
    expect(movedOnRemove.every((key) => withFour.get(key) === 'four')).toBe(true);
    expect(afterRemoval).toEqual(withThree);
    console.log(
      `upstream-hash-by over ${keys.length} keys: ${(addedShare * 100).toFixed(1)}% moved when a 4th endpoint was added (ideal 25%, a modulo hash about 75%), ` +
        `${((movedOnRemove.length / keys.length) * 100).toFixed(1)}% when it was removed again (only its own keys)`,
    );
  });

  it('the affinity cookie keeps most clients on their backend when an endpoint is added', async () => {
    const clients = await Promise.all(Array.from({ length: 200 }, async () => {
      const first = await get('/sticky/');
      return { cookie: cookieFrom(first), backend: backendOf(first) };
    }));
    await render(4);
    await nginx.reload();
    let moved = 0;
    for (const client of clients) {
      const now = backendOf(await get('/sticky/', { cookie: client.cookie }));
      if (now !== client.backend) {
        expect(now).toBe('four');
        moved++;
      }
    }
    // The new endpoint takes about a quarter; a modulo hash would move three quarters.
    expect(moved / clients.length).toBeLessThan(0.5);
    console.log(`affinity cookie over ${clients.length} clients: ${((moved / clients.length) * 100).toFixed(1)}% moved when a 4th endpoint was added`);
    await render(3);
    await nginx.reload();
  });
});
