import dgram from 'node:dgram';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { startNginx } from '../support/nginx.js';
import type { Peer } from '../support/peers.js';
import { freePorts } from '../support/ports.js';
import { cleanUp, configMapManifest, createTarget, documents, proxyV1Header, renderInto, startPeer, type Target } from './harness.js';

/**
 * TCP and UDP services (`--tcp-services-configmap`, `--udp-services-configmap`) against a real nginx:
 * bytes over TCP and a datagram over UDP reach the Service port and come back, a backend behind
 * `::PROXY` gets a PROXY header naming the client, and one behind `:PROXY:PROXY` gets the client that an
 * outer load balancer's header names. A bad entry leaves the others served.
 */

afterAll(cleanUp);

/** Echoes every byte back; with `readsProxyHeader`, first answers `header=<the PROXY line>\n`. */
function startTcpEcho(readsProxyHeader: boolean): Promise<Peer> {
  const open = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    open.add(socket);
    socket.once('close', () => open.delete(socket));
    socket.on('error', () => socket.destroy());
    if (!readsProxyHeader) {
      socket.pipe(socket);
      return;
    }
    let received = Buffer.alloc(0);
    const onData = (chunk: Buffer): void => {
      received = Buffer.concat([received, chunk]);
      const end = received.indexOf('\r\n');
      if (end === -1) return;
      socket.off('data', onData);
      socket.write(`header=${received.subarray(0, end).toString('latin1')}\n`);
      socket.write(received.subarray(end + 2));
      socket.pipe(socket);
    };
    socket.on('data', onData);
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      resolve({
        port,
        close: () =>
          new Promise<void>((done) => {
            for (const socket of open) socket.destroy();
            server.close(() => done());
          }),
      });
    });
  });
}

/** Answers each datagram with `echo:<datagram>`. */
function startUdpEcho(): Promise<Peer> {
  const socket = dgram.createSocket('udp4');
  socket.on('message', (message, from) => socket.send(Buffer.concat([Buffer.from('echo:'), message]), from.port, from.address));
  return new Promise((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(0, '127.0.0.1', () => {
      resolve({ port: socket.address().port, close: () => new Promise<void>((done) => socket.close(() => done())) });
    });
  });
}

function service(namespace: string, name: string, port: number, protocol: 'TCP' | 'UDP'): string {
  return stringify({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace },
    spec: { clusterIP: '127.0.0.1', ports: [{ name: protocol.toLowerCase(), port, protocol }] },
  });
}

/** Connects, writes `send`, and resolves with everything received once it ends with `last`. */
function tcpExchange(port: number, send: string, last: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: '127.0.0.1', port }, () => socket.write(send));
    let received = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      received += chunk;
      if (received.endsWith(last)) {
        socket.destroy();
        resolve(received);
      }
    });
    socket.once('error', reject);
    socket.once('close', () => reject(new Error(`closed after ${JSON.stringify(received)}`)));
  });
}

/** Sends one datagram and resolves with the first answer; sends again while none comes (UDP may drop). */
function udpExchange(port: number, message: string): Promise<string> {
  const socket = dgram.createSocket('udp4');
  return new Promise<string>((resolve, reject) => {
    const send = () => socket.send(message, port, '127.0.0.1');
    const again = setInterval(send, 200);
    socket.once('message', (answer) => {
      clearInterval(again);
      resolve(answer.toString('latin1'));
    });
    socket.once('error', (error) => {
      clearInterval(again);
      reject(error);
    });
    send();
  }).finally(() => socket.close());
}

let target: Target;
let renderedStderr = '';
let ports: { tcp: number; udp: number; sendProxy: number; bothProxy: number; clash: number };

beforeAll(async () => {
  const [tcpEcho, proxyEcho, udpEcho] = await Promise.all([startPeer(startTcpEcho(false)), startPeer(startTcpEcho(true)), startPeer(startUdpEcho())]);
  target = await createTarget();
  const [tcp = 0, udp = 0, sendProxy = 0, bothProxy = 0] = await freePorts(4);
  ports = { tcp, udp, sendProxy, bothProxy, clash: target.httpPort };
  const manifests = documents(
    configMapManifest('ingress-nginx', 'controller', { 'worker-processes': '1' }),
    configMapManifest('ingress-nginx', 'tcp-services', {
      [String(tcp)]: `apps/echo:${tcpEcho.port}`,
      [String(sendProxy)]: `mail/proxied:${proxyEcho.port}::PROXY`,
      [String(bothProxy)]: `mail/proxied:tcp:PROXY:PROXY`,
      [String(target.httpPort)]: `apps/echo:${tcpEcho.port}`,
    }),
    configMapManifest('ingress-nginx', 'udp-services', { [String(udp)]: `dns/echo:${udpEcho.port}` }),
    service('apps', 'echo', tcpEcho.port, 'TCP'),
    service('mail', 'proxied', proxyEcho.port, 'TCP'),
    service('dns', 'echo', udpEcho.port, 'UDP'),
    // A tenant's TLS listener on the operator's TCP port: operator configuration outranks it (issue 37).
    stringify({ apiVersion: 'gateway.networking.k8s.io/v1', kind: 'GatewayClass', metadata: { name: 'ingress2nginx' }, spec: { controllerName: 'ingress2nginx.dev/controller' } }),
    stringify({
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'Gateway',
      metadata: { name: 'takes-tcp', namespace: 'tenant' },
      spec: { gatewayClassName: 'ingress2nginx', listeners: [{ name: 'tls', port: tcp, protocol: 'TLS', tls: { mode: 'Passthrough' } }] },
    }),
  );
  const rendered = await renderInto(target, manifests, [
    '--configmap', 'ingress-nginx/controller',
    '--tcp-services-configmap', 'ingress-nginx/tcp-services',
    '--udp-services-configmap', 'ingress-nginx/udp-services',
  ]);
  renderedStderr = rendered.stderr;
  expect(rendered.stderr).toMatch(`error [stream-service-port-clash]`);
  expect(rendered.stderr.match(/: (error|warning) \[/g)).toHaveLength(3);
  await startNginx({ prefix: target.prefix, conf: target.conf, ports: [target.httpPort, tcp, sendProxy, bothProxy] });
});

describe('TCP and UDP services', () => {
  it('forwards a TCP port to the Service port, both ways', async () => {
    expect(await tcpExchange(ports.tcp, 'ping over tcp', 'ping over tcp')).toBe('ping over tcp');
  });

  it('forwards a UDP datagram to the Service port and the answer back', async () => {
    expect(await udpExchange(ports.udp, 'ping over udp')).toBe('echo:ping over udp');
  });

  it('sends a PROXY header naming the client to a backend behind "::PROXY"', async () => {
    const answer = await tcpExchange(ports.sendProxy, 'after header', 'after header');
    expect(answer).toMatch(new RegExp(`^header=PROXY TCP4 127\\.0\\.0\\.1 127\\.0\\.0\\.1 \\d+ ${ports.sendProxy}\\nafter header$`));
  });

  it('reads the PROXY header of a load balancer and passes its client on behind ":PROXY:PROXY"', async () => {
    const header = proxyV1Header('203.0.113.7', '198.51.100.1', 4242, 5000);
    const answer = await tcpExchange(ports.bothProxy, `${header}after header`, 'after header');
    expect(answer).toMatch(/^header=PROXY TCP4 203\.0\.113\.7 \S+ 4242 \d+\nafter header$/);
  });

  it("keeps its port from a tenant's Gateway listener, which is not accepted (PortUnavailable)", async () => {
    expect(renderedStderr).toMatch(new RegExp(`warning \\[port-unavailable\\] Gateway tenant/takes-tcp .*port ${ports.tcp} is a TCP service port`));
    expect(await tcpExchange(ports.tcp, 'still the operator\'s\n', '\n')).toBe('still the operator\'s\n');
  });

  it('leaves out an entry on the HTTP port, and nginx keeps that port for HTTP', async () => {
    const response = await fetch(`http://127.0.0.1:${ports.clash}/`);
    expect(response.status).toBe(404);
  });
});
