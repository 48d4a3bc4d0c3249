import http from 'node:http';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments, stringify } from 'yaml';
import { EndpointResolver } from '../../src/sidecar/endpoint-resolver.js';
import { Logger } from '../../src/sidecar/log.js';
import type { RawObject } from '../../src/sources/cluster/reflector.js';
import { nginxGeneration, type RunningNginx } from '../support/nginx.js';
import { httpGet, ownAddress } from '../support/peers.js';
import { freePorts } from '../support/ports.js';
import { cleanUp, configMapManifest, createTarget, documents, ingressManifest, renderInto, startTarget, type Target } from './harness.js';

/**
 * The upstream blocks' settings with real traffic, the same manifests on both generations: on nginx
 * 1.27.3 or later (pass) the endpoints are resolved at run time from the sidecar's resolver (started here,
 * answering from the manifests), on 1.22 (distro) they are written in. Round-robin skips an endpoint that
 * refuses connections (`max_fails`), `upstream-hash-by` keeps a key on one endpoint, `least_conn`
 * balances, `keepalive` reuses connections, a Service without endpoints answers 503, and a TCP service
 * forwards through a stream upstream.
 */

const resolves = nginxGeneration() === 'pass';
const address = ownAddress();
let target: Target;
let nginx: RunningNginx;
let resolver: EndpointResolver;
const servers: net.Server[] = [];
let web: { name: string; port: number; connections: () => number }[];
let tcpPort: number;

async function listen(server: net.Server): Promise<number> {
  servers.push(server);
  server.listen(0, address);
  await new Promise((resolve) => server.once('listening', resolve));
  return (server.address() as net.AddressInfo).port;
}

async function backend(name: string): Promise<{ name: string; port: number; connections: () => number }> {
  let connections = 0;
  const server = http.createServer((request, response) => {
    request.resume();
    response.writeHead(200, { 'content-type': 'text/plain' }).end(name);
  });
  server.on('connection', () => connections++);
  return { name, port: await listen(server), connections: () => connections };
}

const slice = (service: string, index: number, port: number, portName = 'http') =>
  stringify({
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name: `${service}-${index}`, namespace: 'shop', labels: { 'kubernetes.io/service-name': service } },
    addressType: 'IPv4',
    ports: [{ name: portName, port }],
    endpoints: [{ addresses: [address], conditions: { ready: true } }],
  });

const service = (name: string, clusterIP: string, portName = 'http') =>
  stringify({ apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: 'shop' }, spec: { clusterIP, ports: [{ name: portName, port: 80 }] } });

const site = (name: string, path: string, backendService: string, annotations: Record<string, string> = {}) =>
  ingressManifest({
    namespace: 'shop',
    name,
    annotations: { 'ssl-redirect': 'false', ...annotations },
    rules: [{ host: 'shop.example.test', paths: [{ path, pathType: 'Prefix', backend: { service: backendService, port: 80 } }] }],
  });

beforeAll(async () => {
  target = await createTarget();
  web = await Promise.all(['web-a', 'web-b', 'web-c'].map(backend));
  // An endpoint whose pod refuses connections: a port that was free a moment ago.
  const [refusing] = (await freePorts(1)) as [number];
  const echo = net.createServer((socket) => {
    socket.on('error', () => socket.destroy());
    socket.pipe(socket);
  });
  const echoPort = await listen(echo);
  [tcpPort] = (await freePorts(1)) as [number];
  const manifests = documents(
    service('web', '10.96.0.30'),
    ...web.map((b, i) => slice('web', i, b.port)),
    slice('web', 9, refusing),
    service('idle', '10.96.0.31'),
    service('echo', '10.96.0.32', 'tcp'),
    slice('echo', 0, echoPort, 'tcp'),
    site('plain', '/plain', 'web'),
    site('hash', '/hash', 'web', { 'upstream-hash-by': '$arg_key' }),
    site('least', '/least', 'web', { 'load-balance': 'least_conn' }),
    site('idle', '/idle', 'idle'),
    configMapManifest('shop', 'tcp-services', { [String(tcpPort)]: 'shop/echo:80' }),
  );
  const [resolverPort, unavailablePort] = (await freePorts(2)) as [number, number];
  const objects = parseAllDocuments(manifests).map((d) => d.toJS() as RawObject);
  resolver = new EndpointResolver({
    host: '127.0.0.1',
    port: resolverPort,
    noEndpointsPort: unavailablePort,
    objects: () => ({ services: objects.filter((o) => o.kind === 'Service'), slices: objects.filter((o) => o.kind === 'EndpointSlice') }),
    relayTo: [],
    log: new Logger('json', () => {}),
  });
  await resolver.start();
  await renderInto(target, manifests, [
    '--upstreams', 'endpoints',
    '--endpoint-resolver', String(resolverPort),
    '--unavailable-port', String(unavailablePort),
    '--tcp-services-configmap', 'shop/tcp-services',
  ]);
  nginx = await startTarget(target);
}, 60_000);

afterAll(async () => {
  await nginx?.stop();
  await resolver?.close();
  for (const server of servers) server.close();
  await cleanUp();
});

const get = (path: string) => httpGet({ port: target.httpPort, host: 'shop.example.test', path });

/** nginx resolves in the background after it starts: until every live endpoint has answered. */
async function eachAnswered(path: string): Promise<Map<string, number>> {
  const seen = new Map<string, number>();
  for (let i = 0; i < 300 && seen.size < web.length; i++) {
    const response = await get(path);
    expect(response.status).toBe(200);
    seen.set(response.body, (seen.get(response.body) ?? 0) + 1);
  }
  return seen;
}

describe(`upstream settings with endpoints ${resolves ? 'resolved by nginx from the sidecar' : 'written into the config'}`, () => {
  it('renders what the generation can do', async () => {
    const { readFile } = await import('node:fs/promises');
    const conf = await readFile(target.conf, 'utf8');
    expect(conf.includes(' resolve;')).toBe(resolves);
  });

  it('round-robin reaches every live endpoint and never fails on the one that refuses connections', async () => {
    const seen = await eachAnswered('/plain');
    expect([...seen.keys()].sort()).toEqual(['web-a', 'web-b', 'web-c']);
    for (let i = 0; i < 30; i++) expect((await get('/plain')).status).toBe(200);
  });

  it('upstream-hash-by keeps a key on one endpoint, and spreads keys', async () => {
    await eachAnswered('/plain');
    const byKey = new Map<string, Set<string>>();
    for (let round = 0; round < 3; round++) {
      for (let key = 0; key < 30; key++) {
        const response = await get(`/hash?key=${key}`);
        expect(response.status).toBe(200);
        byKey.set(String(key), (byKey.get(String(key)) ?? new Set()).add(response.body));
      }
    }
    expect([...byKey.values()].every((backends) => backends.size === 1)).toBe(true);
    expect(new Set([...byKey.values()].map((b) => [...b][0])).size).toBeGreaterThan(1);
  });

  it('least_conn balances over the endpoints', async () => {
    expect([...(await eachAnswered('/least')).keys()].sort()).toEqual(['web-a', 'web-b', 'web-c']);
  });

  it('keeps connections to the endpoints open (keepalive)', async () => {
    await eachAnswered('/plain');
    const before = web.reduce((sum, b) => sum + b.connections(), 0);
    for (let i = 0; i < 60; i++) await get('/plain');
    const opened = web.reduce((sum, b) => sum + b.connections(), 0) - before;
    expect(opened).toBeLessThan(10);
  });

  it('answers 503 for a Service without endpoints', async () => {
    const response = await get('/idle');
    expect(response.status).toBe(503);
  });

  it('forwards a TCP service through a stream upstream', async () => {
    const echoed = await new Promise<string>((resolve, reject) => {
      const socket = net.connect({ host: '127.0.0.1', port: tcpPort }, () => socket.write('ping'));
      socket.setEncoding('utf8');
      socket.once('data', (data: string) => {
        resolve(data);
        socket.destroy();
      });
      socket.on('error', reject);
    });
    expect(echoed).toBe('ping');
  });
});
