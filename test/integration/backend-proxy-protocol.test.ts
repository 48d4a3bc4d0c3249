import net from 'node:net';
import { Duplex } from 'node:stream';
import tls from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { nginxGeneration } from '../support/nginx.js';
import { startTlsBackend, type Peer } from '../support/peers.js';
import { createCa, issueCertificate, type CertificateFiles } from '../support/pki.js';
import {
  cleanUp,
  configMapManifest,
  createTarget,
  documents,
  proxyV1Header,
  renderInto,
  serviceManifest,
  startPeer,
  startTarget,
  temporaryDir,
  tlsLineAfterHeader,
  type Target,
} from './harness.js';

/**
 * `ingress2nginx.dev/backend-proxy-protocol: "v1"`: a passthrough backend that reads a PROXY header gets
 * the client's address and port, in both nginx generations (the PROXY/unix front proxies such hosts to
 * the backend itself; with `pass` the front hands them to a loopback server that sends the header), and
 * from an outer load balancer's PROXY header with `use-proxy-protocol`. Hosts without the annotation
 * still get the TLS bytes untouched.
 */

afterAll(cleanUp);

/** The address the test client connects from, so that the header cannot name another socket by chance. */
const clientAddress = '127.0.0.5';

/**
 * A TLS backend behind a PROXY v1 header: reads the header line in the clear, then does TLS on the rest
 * and greets with `hello from <name> proxy=<header without CRLF>`. A connection without a header fails.
 */
function startProxyProtocolTlsBackend(name: string, certificate: CertificateFiles): Promise<Peer> {
  const open = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    open.add(socket);
    socket.once('close', () => open.delete(socket));
    socket.on('error', () => socket.destroy());
    let received = Buffer.alloc(0);
    const onData = (chunk: Buffer): void => {
      received = Buffer.concat([received, chunk]);
      const end = received.indexOf('\r\n');
      if (end === -1) {
        if (received.length > 107 || !'PROXY '.startsWith(received.subarray(0, 6).toString('latin1'))) socket.destroy();
        return;
      }
      socket.off('data', onData);
      const header = received.subarray(0, end).toString('latin1');
      if (!header.startsWith('PROXY ')) {
        socket.destroy();
        return;
      }
      // TLS on the bytes after the header: a TLSSocket on the raw socket would read from its handle and
      // miss what has been read already, so it gets a stream that starts with them.
      const rest = new Duplex({
        read: () => void socket.resume(),
        write: (chunk: Buffer, _encoding, done) => void socket.write(chunk, done),
        final: (done) => {
          socket.end();
          done();
        },
      });
      rest.push(received.subarray(end + 2));
      socket.on('data', (more: Buffer) => {
        if (!rest.push(more)) socket.pause();
      });
      socket.once('end', () => rest.push(null));
      const secure = new tls.TLSSocket(rest, { isServer: true, cert: certificate.certPem, key: certificate.keyPem });
      secure.on('error', () => socket.destroy());
      secure.write(`hello from ${name} proxy=${header}\n`);
    };
    socket.on('data', onData);
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address() as net.AddressInfo;
      resolve({
        port: address.port,
        close: () =>
          new Promise<void>((done) => {
            for (const socket of open) socket.destroy();
            server.close(() => done());
          }),
      });
    });
  });
}

function ingress(name: string, host: string, service: string, port: number, proxyProtocol?: string): string {
  return stringify({
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: {
      name,
      namespace: 'mx',
      annotations: {
        'nginx.ingress.kubernetes.io/ssl-passthrough': 'true',
        ...(proxyProtocol !== undefined && { 'ingress2nginx.dev/backend-proxy-protocol': proxyProtocol }),
      },
    },
    spec: {
      ingressClassName: 'nginx',
      rules: [{ host, http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: service, port: { number: port } } } }] } }],
    },
  });
}

/** TLS from `clientAddress` with SNI `servername`; resolves with the client's port and the first line the backend sends. */
function greeting(port: number, servername: string): Promise<{ clientPort: number; line: string }> {
  return new Promise((resolve, reject) => {
    const raw = net.connect({ host: '127.0.0.1', port, localAddress: clientAddress });
    let clientPort = 0;
    raw.once('connect', () => (clientPort = raw.localPort ?? 0));
    const socket = tls.connect({ socket: raw, servername, rejectUnauthorized: false });
    let received = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      received += chunk;
      const newline = received.indexOf('\n');
      if (newline >= 0) {
        socket.destroy();
        resolve({ clientPort, line: received.slice(0, newline) });
      }
    });
    socket.once('error', reject);
    socket.once('close', () => reject(new Error(`closed before a line; received ${JSON.stringify(received)}`)));
  });
}

let direct: Target;
let behindLoadBalancer: Target;

beforeAll(async () => {
  const dir = await temporaryDir();
  const ca = await createCa(dir, 'PROXY protocol CA');
  const [mailCert, plainCert] = await Promise.all([
    issueCertificate(ca, { commonName: 'imap.example.test', sans: ['imap.example.test'] }),
    issueCertificate(ca, { commonName: 'plain.example.test', sans: ['plain.example.test'] }),
  ]);
  const mail = await startPeer(startProxyProtocolTlsBackend('mail', mailCert));
  const plain = await startPeer(startTlsBackend({ name: 'plain', cert: plainCert.certPem, key: plainCert.keyPem }));
  const manifests = (extra: string[] = []) =>
    documents(
      configMapManifest('ingress-nginx', 'controller', { 'worker-processes': '1' }),
      ...extra,
      serviceManifest('mx', 'mail', mail),
      serviceManifest('mx', 'plain', plain),
      ingress('mail', 'imap.example.test', 'mail', mail.port, 'v1'),
      ingress('plain', 'plain.example.test', 'plain', plain.port),
    );

  direct = await createTarget();
  const rendered = await renderInto(direct, manifests(), ['--configmap', 'ingress-nginx/controller']);
  expect(rendered.stderr).not.toMatch(/: (error|warning) \[/);
  await startTarget(direct);

  behindLoadBalancer = await createTarget();
  const renderedBehind = await renderInto(
    behindLoadBalancer,
    manifests([configMapManifest('ingress-nginx', 'outer', { 'worker-processes': '1', 'use-proxy-protocol': 'true', 'proxy-real-ip-cidr': '127.0.0.1/32' })]),
    ['--configmap', 'ingress-nginx/outer'],
  );
  expect(renderedBehind.stderr).not.toMatch(/: (error|warning) \[/);
  await startTarget(behindLoadBalancer);
});

describe('PROXY protocol to passthrough backends', () => {
  // With the PROXY/unix hand-off the front proxies to the backend itself and names its own address; with
  // `pass` the header names the loopback address the front passed the connection to.
  const destination = nginxGeneration() === 'pass' ? '127.0.0.2' : '127.0.0.1';

  it("sends a v1 header with the client's address and port, then the TLS untouched", async () => {
    const { clientPort, line } = await greeting(direct.httpsPort, 'imap.example.test');
    expect(line).toBe(`hello from mail proxy=PROXY TCP4 ${clientAddress} ${destination} ${clientPort} ${direct.httpsPort}`);
  });

  it('sends nothing to a passthrough backend without the annotation', async () => {
    const { line } = await greeting(direct.httpsPort, 'plain.example.test');
    expect(line).toBe('hello from plain sni=plain.example.test');
  });

  it("passes on the address from an outer load balancer's PROXY header (use-proxy-protocol)", async () => {
    const header = proxyV1Header('203.0.113.7', '198.51.100.1', 4242, 443);
    const { line } = await tlsLineAfterHeader({ port: behindLoadBalancer.httpsPort, header, servername: 'imap.example.test' });
    expect(line).toMatch(new RegExp(`^hello from mail proxy=PROXY TCP4 203\\.0\\.113\\.7 \\S+ 4242 \\d+\\n$`));
  });
});
