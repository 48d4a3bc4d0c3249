import { createSocket } from 'node:dgram';
import { once } from 'node:events';
import { connect } from 'node:net';
import os from 'node:os';
import dnsPacket from 'dns-packet';
import { afterEach, describe, expect, it } from 'vitest';
import type { RawObject } from '../sources/cluster/reflector.js';
import { EndpointResolver, resolverAddress } from './endpoint-resolver.js';
import { Logger } from './log.js';

const zone = 'endpoints.ingress2nginx.internal';

const service = (name: string, ports: { name?: string; port: number }[], type?: string): RawObject => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name, namespace: 'shop' },
  spec: { ports, ...(type && { type }) },
});

const slice = (name: string, service: string, port: number, endpoints: unknown[], portName = 'http', addressType = 'IPv4'): RawObject =>
  ({
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name, namespace: 'shop', labels: { 'kubernetes.io/service-name': service } },
    addressType,
    ports: [{ name: portName, port }],
    endpoints,
  }) as unknown as RawObject;

const started: EndpointResolver[] = [];
afterEach(async () => {
  for (const resolver of started.splice(0)) await resolver.close();
});

async function resolverWith(objects: () => { services: RawObject[]; slices: RawObject[] } | undefined, relayTo: string[] = []): Promise<EndpointResolver> {
  const resolver = new EndpointResolver({ host: '127.0.0.1', port: 0, noEndpointsPort: 10054, objects, relayTo, log: new Logger('json', () => {}) });
  await resolver.start();
  started.push(resolver);
  return resolver;
}

/** What the tests read of an answer (dns-packet decodes these; its types leave `rcode` out). */
interface Reply {
  readonly rcode: string;
  readonly flag_aa: boolean;
  readonly flag_tc: boolean;
  readonly answers: readonly { readonly data: unknown }[];
}

let nextId = 1;
async function askUdp(port: number, name: string, type: dnsPacket.RecordType): Promise<Reply> {
  const socket = createSocket('udp4');
  try {
    socket.send(dnsPacket.encode({ id: nextId++, type: 'query', flags: dnsPacket.RECURSION_DESIRED, questions: [{ name, type, class: 'IN' }] }), port, '127.0.0.1');
    const [reply] = (await once(socket, 'message')) as [Buffer];
    return dnsPacket.decode(reply) as unknown as Reply;
  } finally {
    socket.close();
  }
}

async function askTcp(port: number, name: string, type: dnsPacket.RecordType): Promise<Reply> {
  const socket = connect({ host: '127.0.0.1', port });
  await once(socket, 'connect');
  socket.write(dnsPacket.streamEncode({ id: nextId++, type: 'query', questions: [{ name, type, class: 'IN' }] }));
  let buffered = Buffer.alloc(0);
  for await (const chunk of socket) {
    buffered = Buffer.concat([buffered, chunk as Buffer]);
    if (buffered.length >= 2 && buffered.length >= 2 + buffered.readUInt16BE(0)) break;
  }
  socket.destroy();
  return dnsPacket.streamDecode(buffered) as unknown as Reply;
}

const web = [
  service('web', [{ name: 'http', port: 80 }]),
  slice('web-a', 'web', 8080, [
    { addresses: ['10.0.0.2'], conditions: { ready: true } },
    { addresses: ['10.0.0.1'] },
    { addresses: ['10.0.0.3'], conditions: { ready: false, serving: true, terminating: true } },
    { addresses: ['127.0.0.1'] },
  ]),
];

describe('EndpointResolver', () => {
  it('answers SRV with every ready endpoint, each its own target with its port, and A for each target', async () => {
    const resolver = await resolverWith(() => ({ services: [web[0] as RawObject], slices: [web[1] as RawObject] }));
    const srv = await askUdp(resolver.port, `_http-80._tcp.web.shop.${zone}`, 'SRV');
    expect(srv.rcode).toBe('NOERROR');
    expect(srv.flag_aa).toBe(true);
    const records = srv.answers.map((a) => a.data);
    expect(records).toEqual([
      { priority: 0, weight: 1, port: 8080, target: `v4-10-0-0-1-p8080.web.shop.${zone}` },
      { priority: 0, weight: 1, port: 8080, target: `v4-10-0-0-2-p8080.web.shop.${zone}` },
    ]);
    const a = await askUdp(resolver.port, `v4-10-0-0-2-p8080.web.shop.${zone}`, 'A');
    expect(a.answers?.map((x) => x.data)).toEqual(['10.0.0.2']);
    const aaaa = await askUdp(resolver.port, `v4-10-0-0-2-p8080.web.shop.${zone}`, 'AAAA');
    expect([aaaa.rcode, aaaa.answers]).toEqual(['NOERROR', []]);
    // The loopback is never an endpoint, nor a name for one.
    expect((await askUdp(resolver.port, `v4-127-0-0-1-p8080.web.shop.${zone}`, 'A')).rcode).toBe('NXDOMAIN');
    expect((await askUdp(resolver.port, `v4-10-0-0-3-p8080.web.shop.${zone}`, 'A')).rcode).toBe('NXDOMAIN');
  });

  it('gives an http upstream without endpoints the loopback 503 server, a stream one nothing; unknown names NXDOMAIN', async () => {
    const objects = { services: [service('idle', [{ port: 80 }])], slices: [] };
    const resolver = await resolverWith(() => objects);
    const http = await askUdp(resolver.port, `_http-80._tcp.idle.shop.${zone}`, 'SRV');
    expect(http.answers?.map((a) => a.data)).toEqual([{ priority: 0, weight: 1, port: 10054, target: `no-endpoints.${zone}` }]);
    expect((await askUdp(resolver.port, `no-endpoints.${zone}`, 'A')).answers?.map((a) => a.data)).toEqual(['127.0.0.1']);
    const stream = await askUdp(resolver.port, `_stream-80._tcp.idle.shop.${zone}`, 'SRV');
    expect([stream.rcode, stream.answers]).toEqual(['NOERROR', []]);
    expect((await askUdp(resolver.port, `_http-81._tcp.idle.shop.${zone}`, 'SRV')).rcode).toBe('NXDOMAIN');
    expect((await askUdp(resolver.port, `_http-80._tcp.gone.shop.${zone}`, 'SRV')).rcode).toBe('NXDOMAIN');
    expect((await askUdp(resolver.port, 'example.com', 'A')).rcode).toBe('REFUSED');
  });

  it('answers SERVFAIL until the watches have listed (nginx then keeps what it had), and follows changes', async () => {
    let objects: { services: RawObject[]; slices: RawObject[] } | undefined;
    const resolver = await resolverWith(() => objects);
    const name = `_http-80._tcp.web.shop.${zone}`;
    expect((await askUdp(resolver.port, name, 'SRV')).rcode).toBe('SERVFAIL');
    objects = { services: [web[0] as RawObject], slices: [web[1] as RawObject] };
    expect((await askUdp(resolver.port, name, 'SRV')).answers).toHaveLength(2);
    objects = { services: [web[0] as RawObject], slices: [slice('web-a', 'web', 8080, [{ addresses: ['10.0.0.9'] }])] };
    expect((await askUdp(resolver.port, name, 'SRV')).answers).toHaveLength(2);
    resolver.changed();
    expect((await askUdp(resolver.port, name, 'SRV')).answers?.map((a) => (a.data as { target: string }).target)).toEqual([`v4-10-0-0-9-p8080.web.shop.${zone}`]);
  });

  it('after a change, answers anew for the Service that changed and keeps the others\' answers right', async () => {
    const api = service('api', [{ name: 'http', port: 80 }]);
    let objects = { services: [web[0] as RawObject, api], slices: [web[1] as RawObject, slice('api-a', 'api', 9000, [{ addresses: ['10.0.2.1'] }])] };
    const resolver = await resolverWith(() => objects);
    const targets = async (name: string) => (await askUdp(resolver.port, `_http-80._tcp.${name}.shop.${zone}`, 'SRV')).answers.map((a) => (a.data as { target: string }).target);
    expect(await targets('api')).toEqual([`v4-10-0-2-1-p9000.api.shop.${zone}`]);
    expect(await targets('web')).toHaveLength(2);
    objects = { ...objects, slices: [web[1] as RawObject, slice('api-a', 'api', 9000, [{ addresses: ['10.0.2.2'] }])] };
    resolver.changed();
    expect(await targets('api')).toEqual([`v4-10-0-2-2-p9000.api.shop.${zone}`]);
    expect((await askUdp(resolver.port, `v4-10-0-2-1-p9000.api.shop.${zone}`, 'A')).rcode).toBe('NXDOMAIN');
    expect(await targets('web')).toHaveLength(2);
    objects = { ...objects, slices: [slice('web-a', 'web', 8080, [{ addresses: ['10.0.0.7'] }]), objects.slices[1] as RawObject] };
    resolver.changed();
    expect(await targets('web')).toEqual([`v4-10-0-0-7-p8080.web.shop.${zone}`]);
    expect(await targets('api')).toEqual([`v4-10-0-2-2-p9000.api.shop.${zone}`]);
  });

  it('answers SERVFAIL for a question an unreadable object fails, and goes on answering the rest', async () => {
    const broken = { ...(slice('api-a', 'api', 9000, []) as object), ports: 'not a list' } as unknown as RawObject;
    const objects = { services: [web[0] as RawObject, service('api', [{ name: 'http', port: 80 }])], slices: [web[1] as RawObject, broken] };
    const resolver = await resolverWith(() => objects);
    const failed = await askUdp(resolver.port, `_http-80._tcp.api.shop.${zone}`, 'SRV');
    expect([failed.rcode, failed.answers]).toEqual(['SERVFAIL', []]);
    expect((await askUdp(resolver.port, `_http-80._tcp.web.shop.${zone}`, 'SRV')).answers).toHaveLength(2);
  });

  it('truncates an answer over 512 bytes on UDP, and gives it whole over TCP', async () => {
    const many = Array.from({ length: 40 }, (_, i) => ({ addresses: [`10.0.1.${i + 1}`] }));
    const objects = { services: [web[0] as RawObject], slices: [slice('web-a', 'web', 8080, many)] };
    const resolver = await resolverWith(() => objects);
    const name = `_http-80._tcp.web.shop.${zone}`;
    const udp = await askUdp(resolver.port, name, 'SRV');
    expect([udp.flag_tc, udp.answers]).toEqual([true, []]);
    const tcp = await askTcp(resolver.port, name, 'SRV');
    expect([tcp.flag_tc, tcp.answers?.length]).toEqual([false, 40]);
  });

  it('relays names outside its zone to --resolver, over the transport they came by', async () => {
    const upstream = await resolverWith(() => ({ services: [web[0] as RawObject], slices: [web[1] as RawObject] }));
    // The relaying resolver has no table of its own for this name's zone... it relays only outside it,
    // so the upstream is asked for a name outside the zone and refuses: the relay hands that answer on.
    const relaying = await resolverWith(() => ({ services: [], slices: [] }), [`127.0.0.1:${upstream.port}`]);
    const relayed = await askUdp(relaying.port, 'db.example.com', 'A');
    expect(relayed.rcode).toBe('REFUSED');
    const echo = createSocket('udp4');
    echo.on('message', (query, peer) => {
      const asked = dnsPacket.decode(query);
      echo.send(dnsPacket.encode({ id: asked.id ?? 0, type: 'response', questions: asked.questions ?? [], answers: [{ type: 'A', name: 'db.example.com', data: '192.0.2.7' }] }), peer.port, peer.address);
    });
    echo.bind(0, '127.0.0.1');
    await once(echo, 'listening');
    try {
      const viaEcho = await resolverWith(() => ({ services: [], slices: [] }), [`127.0.0.1:${echo.address().port}`]);
      expect((await askUdp(viaEcho.port, 'db.example.com', 'A')).answers?.map((a) => a.data)).toEqual(['192.0.2.7']);
      expect((await askUdp(viaEcho.port, `_http-80._tcp.web.shop.${zone}`, 'SRV')).rcode).toBe('NXDOMAIN');
    } finally {
      echo.close();
    }
  });

  it('answers on loopback only: the machine\'s own address is refused', async () => {
    const resolver = await resolverWith(() => ({ services: [], slices: [] }));
    const own = Object.values(os.networkInterfaces())
      .flat()
      .find((entry) => entry !== undefined && entry.family === 'IPv4' && !entry.internal)?.address;
    if (own === undefined) throw new Error('this machine has no non-loopback IPv4 address');
    const refused = await new Promise<string>((resolve) => {
      const socket = connect({ host: own, port: resolver.port });
      socket.on('connect', () => {
        socket.destroy();
        resolve('connected');
      });
      socket.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'error'));
    });
    expect(refused).toBe('ECONNREFUSED');
  });

  it('reads --resolver spellings', () => {
    expect(resolverAddress('10.96.0.10')).toEqual({ host: '10.96.0.10', port: 53 });
    expect(resolverAddress('10.96.0.10:5353')).toEqual({ host: '10.96.0.10', port: 5353 });
    expect(resolverAddress('[fd00::a]:54')).toEqual({ host: 'fd00::a', port: 54 });
    expect(resolverAddress('fd00::a')).toEqual({ host: 'fd00::a', port: 53 });
  });
});
