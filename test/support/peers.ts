import http from 'node:http';
import http2 from 'node:http2';
import https from 'node:https';
import net from 'node:net';
import os from 'node:os';
import tls from 'node:tls';
import { specialAddress } from '../../src/translate/checks/addresses.js';

/**
 * Real peers for nginx under test: backends on 127.0.0.1 (port chosen by the kernel) and clients
 * that report what they saw on the wire.
 */

/**
 * A non-loopback IPv4 address of this machine that an EndpointSlice may carry: EndpointSlices never name
 * the loopback (a tenant must not reach the node), so backends behind endpoints listen here.
 */
export function ownAddress(): string {
  const found = Object.values(os.networkInterfaces())
    .flat()
    .find((entry) => entry !== undefined && entry.family === 'IPv4' && !entry.internal && specialAddress(entry.address) === undefined);
  if (found === undefined) throw new Error('this machine has no non-loopback IPv4 address for EndpointSlice backends');
  return found.address;
}

export interface Peer {
  readonly port: number;
  /** Stops listening and destroys open connections. */
  close(): Promise<void>;
}

/** What `startHttpBackend`/`startHttpsBackend` answer with (status 200, JSON). */
export interface EchoResponse {
  readonly backend: string;
  readonly method: string;
  /** Request target as received, query included. */
  readonly path: string;
  /** SNI the backend saw; null over plain HTTP or without SNI. */
  readonly servername: string | null;
  readonly headers: http.IncomingHttpHeaders;
  /** Subject CN of the client certificate the backend verified; null when none was sent. */
  readonly clientCertSubject: string | null;
  /** HTTP version of the request, e.g. `1.1`. */
  readonly httpVersion: string;
  /** TLS version the backend negotiated; null over plain HTTP. */
  readonly tlsVersion: string | null;
}

export interface PeerCertificateSummary {
  readonly subjectCN: string | undefined;
  readonly issuerCN: string | undefined;
  /** As Node reports them: `DNS:a.example.com`, `IP Address:127.0.0.1`. */
  readonly subjectAltNames: readonly string[];
  readonly fingerprint256: string;
  readonly validTo: string;
}

export interface ClientCertificate {
  readonly certPem: string;
  readonly keyPem: string;
}

/** The SNI a server-side TLS socket received; Node sets it at runtime but does not type it. */
function receivedServername(socket: tls.TLSSocket): string | null {
  const { servername } = socket as tls.TLSSocket & { servername?: string | false | null };
  return typeof servername === 'string' && servername !== '' ? servername : null;
}

export function summarizePeerCertificate(certificate: tls.PeerCertificate): PeerCertificateSummary | undefined {
  // Node returns an empty object when the peer sent no certificate.
  if (!certificate.fingerprint256) return undefined;
  return {
    subjectCN: certificate.subject?.CN,
    issuerCN: certificate.issuer?.CN,
    subjectAltNames: certificate.subjectaltname ? certificate.subjectaltname.split(', ') : [],
    fingerprint256: certificate.fingerprint256,
    validTo: certificate.valid_to,
  };
}

async function listenOnLoopback(server: net.Server, host = '127.0.0.1'): Promise<Peer> {
  const sockets = new Set<net.Socket>();
  server.on('connection', (socket: net.Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as net.AddressInfo;
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      }),
  };
}

/** A backend that counts the requests it answered, to show which never reached it. */
export interface CountingPeer extends Peer {
  requestCount(): number;
}

function echoHandler(backend: string, counted: () => void = () => undefined): http.RequestListener {
  return (request, response) => {
    counted();
    const socket = request.socket;
    const isTls = socket instanceof tls.TLSSocket;
    const echo: EchoResponse = {
      backend,
      method: request.method ?? '',
      path: request.url ?? '',
      servername: isTls ? receivedServername(socket) : null,
      headers: request.headers,
      clientCertSubject: isTls ? (summarizePeerCertificate(socket.getPeerCertificate())?.subjectCN ?? null) : null,
      httpVersion: request.httpVersion,
      tlsVersion: isTls ? socket.getProtocol() : null,
    };
    request.resume();
    request.once('end', () => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify(echo));
    });
  };
}

/** Plain HTTP backend answering every request with an `EchoResponse`; on loopback unless `host` says otherwise. */
export async function startHttpBackend(name: string, host?: string): Promise<CountingPeer> {
  let count = 0;
  const peer = await listenOnLoopback(http.createServer(echoHandler(name, () => count++)), host);
  return { ...peer, requestCount: () => count };
}

/**
 * `startHttpBackend` that also counts the TCP connections it accepted (kept-alive ones serve many
 * requests). `emptyBody`: answers 200 with no body instead, as an auth service grants a request.
 */
export async function startConnectionCountingBackend(name: string, options: { emptyBody?: boolean } = {}): Promise<CountingPeer & { connectionCount(): number }> {
  let count = 0;
  let connections = 0;
  const echo = echoHandler(name, () => count++);
  const server = http.createServer(
    options.emptyBody
      ? (request, response) => {
          count++;
          request.resume();
          request.once('end', () => response.writeHead(200, { 'content-length': '0' }).end());
        }
      : echo,
  );
  server.on('connection', () => connections++);
  const peer = await listenOnLoopback(server);
  return { ...peer, requestCount: () => count, connectionCount: () => connections };
}

/**
 * An HTTP/2 backend without TLS (h2c), as `grpc_pass grpc://` reaches a gRPC server, answering every
 * request with an `EchoResponse` (`httpVersion` 2.0).
 */
export async function startH2cBackend(name: string): Promise<CountingPeer> {
  let count = 0;
  const echo = echoHandler(name, () => count++);
  // The compatibility API has all that the echo reads and writes.
  const peer = await listenOnLoopback(
    http2.createServer((request, response) => echo(request as unknown as http.IncomingMessage, response as unknown as http.ServerResponse)),
  );
  return { ...peer, requestCount: () => count };
}

/**
 * Plain HTTP backend like `startHttpBackend`, except that `/status/<code>` answers with that status
 * (and the echo as body): a backend whose errors nginx may intercept. `/slow` never answers, `/moved`
 * redirects to `http://internal.example/landing`.
 */
export async function startStatusBackend(name: string): Promise<CountingPeer> {
  let count = 0;
  const echo = echoHandler(name, () => count++);
  const peer = await listenOnLoopback(
    http.createServer((request, response) => {
      // `/slow` never answers (a backend that hangs); `/moved` redirects to an internal name.
      if (request.url === '/slow') return;
      if (request.url === '/moved') {
        response.writeHead(302, { location: 'http://internal.example/landing' });
        response.end();
        return;
      }
      const status = /^\/status\/([1-5][0-9]{2})/.exec(request.url ?? '')?.[1];
      if (status !== undefined) {
        const writeHead = response.writeHead.bind(response);
        response.writeHead = ((_code: number, ...rest: unknown[]) => writeHead(Number(status), ...(rest as []))) as typeof response.writeHead;
      }
      echo(request, response);
    }),
  );
  return { ...peer, requestCount: () => count };
}

/**
 * An external auth service for `auth-url`: 200 with `X-Auth-Request-User: alice` and a session cookie
 * (unless `setCookie` is false: nginx caches no answer that sets one) when the request carries
 * `X-Token: good`, 401 otherwise. It records the headers of the last request.
 */
export async function startAuthBackend(options: { setCookie?: boolean } = {}): Promise<CountingPeer & { lastHeaders(): http.IncomingHttpHeaders | undefined }> {
  let count = 0;
  let last: http.IncomingHttpHeaders | undefined;
  const peer = await listenOnLoopback(
    http.createServer((request, response) => {
      count++;
      last = request.headers;
      request.resume();
      if (request.headers['x-token'] === 'good') {
        response.writeHead(200, { 'x-auth-request-user': 'alice', ...(options.setCookie !== false && { 'set-cookie': 'session=granted' }) });
      } else {
        response.writeHead(401);
      }
      response.end();
    }),
  );
  return { ...peer, requestCount: () => count, lastHeaders: () => last };
}

/** A request as a recording backend received it, body and all. */
export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: string;
}

/**
 * A backend that answers 200 `recorded` and keeps every request it received, for a copy nginx sends on
 * its own (`mirror`): `nextRequest` waits for the next one, so a test never guesses how long it takes.
 */
export async function startRecordingBackend(): Promise<Peer & { requests(): readonly RecordedRequest[]; nextRequest(): Promise<RecordedRequest> }> {
  const received: RecordedRequest[] = [];
  let waiting: ((request: RecordedRequest) => void)[] = [];
  let delivered = 0;
  const peer = await listenOnLoopback(
    http.createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.once('end', () => {
        const recorded = { method: request.method ?? '', path: request.url ?? '', headers: request.headers, body: Buffer.concat(chunks).toString('utf8') };
        received.push(recorded);
        response.writeHead(200, { 'content-type': 'text/plain' });
        response.end('recorded');
        const wake = waiting;
        waiting = [];
        for (const resolve of wake) resolve(recorded);
      });
    }),
  );
  return {
    ...peer,
    requests: () => received,
    // The requests in order, each once: the next one not yet handed out, waiting for it when needed.
    nextRequest: () =>
      new Promise<RecordedRequest>((resolve) => {
        const index = delivered++;
        const take = () => (received[index] !== undefined ? resolve(received[index]) : waiting.push(take));
        take();
      }),
  };
}

/**
 * HTTPS backend answering with an `EchoResponse`. With `requestClientCert` it demands a client
 * certificate issued by `ca` and refuses the handshake otherwise, like a backend that requires mTLS.
 */
export function startHttpsBackend(options: {
  name: string;
  cert: string;
  key: string;
  ca?: string;
  requestClientCert?: boolean;
  /** E.g. `TLSv1.3`: a backend that speaks nothing older. */
  minVersion?: tls.SecureVersion;
  /** Where to listen; loopback unless given. */
  host?: string;
}): Promise<Peer> {
  const requestClientCert = options.requestClientCert ?? false;
  if (requestClientCert && options.ca === undefined) {
    throw new Error('startHttpsBackend: requestClientCert needs `ca` to verify client certificates against');
  }
  const server = https.createServer(
    {
      cert: options.cert,
      key: options.key,
      ca: options.ca,
      requestCert: requestClientCert,
      rejectUnauthorized: requestClientCert,
      ...(options.minVersion && { minVersion: options.minVersion }),
    },
    echoHandler(options.name),
  );
  return listenOnLoopback(server, options.host);
}

/** Raw TLS backend: greets with `hello from <name> sni=<servername>\n`, then echoes. */
export function startTlsBackend(options: { name: string; cert: string; key: string }): Promise<Peer> {
  const server = tls.createServer({ cert: options.cert, key: options.key }, (socket) => {
    socket.on('error', () => socket.destroy()); // a client going away is not the backend's failure
    socket.write(`hello from ${options.name} sni=${receivedServername(socket) ?? ''}\n`);
    socket.pipe(socket);
  });
  return listenOnLoopback(server);
}

/** Plain TCP echo. */
export function startTcpEcho(): Promise<Peer> {
  const server = net.createServer((socket) => {
    socket.on('error', () => socket.destroy());
    socket.pipe(socket);
  });
  return listenOnLoopback(server);
}

/**
 * - `connected`: handshake done (whether the certificate verifies is in `authorized`).
 * - `closed`: the server closed or reset the connection before the handshake finished, without a
 *   TLS alert — how nginx rejects a connection it has nowhere to send.
 * - `tls-error`: the handshake failed with a TLS alert or protocol error (`errorCode` says which).
 * - `error`: anything else, e.g. `ECONNREFUSED`, or no answer within the probe's bound.
 */
export type TlsProbeOutcome = 'connected' | 'closed' | 'tls-error' | 'error';

export interface TlsProbeResult {
  readonly outcome: TlsProbeOutcome;
  readonly errorCode?: string;
  readonly errorMessage?: string;
  readonly peerCertificate?: PeerCertificateSummary;
  /** Verification against `ca` (chain and servername), when a `ca` was given. */
  readonly authorized?: boolean;
  readonly authorizationError?: string;
  readonly alpnProtocol?: string | false | null;
  readonly tlsVersion?: string | null;
  /** What the server sent first: up to and including the first newline, or all until it closed. */
  readonly data: string;
}

export interface TlsProbeOptions {
  readonly port: number;
  readonly host?: string;
  /** SNI to send; none when omitted. */
  readonly servername?: string;
  /** Trust anchor to verify the server with; the outcome reports verification, it never aborts on it. */
  readonly ca?: string;
  readonly alpnProtocols?: readonly string[];
  readonly clientCertificate?: ClientCertificate;
  /** Written right after the handshake, e.g. a line for an echo backend. */
  readonly send?: string;
  /** Wait for the server to speak first (default true); false returns right after the handshake. */
  readonly awaitData?: boolean;
}

/** Bounds on how long a probe waits; they end the probe, they are not assertions. */
const HANDSHAKE_WAIT_MS = 10_000;
const DATA_WAIT_MS = 3_000;

function classifyHandshakeFailure(error: NodeJS.ErrnoException): TlsProbeOutcome {
  if (error.code === 'ECONNRESET' || error.code === 'EPIPE') return 'closed';
  if (error.code?.startsWith('ERR_SSL_')) return 'tls-error';
  return 'error';
}

/** One TLS connection with Node's client; reports what happened instead of throwing. */
export function tlsProbe(options: TlsProbeOptions): Promise<TlsProbeResult> {
  return new Promise((resolve) => {
    const socket = tls.connect({
      host: options.host ?? '127.0.0.1',
      port: options.port,
      servername: options.servername,
      ca: options.ca,
      rejectUnauthorized: false,
      ALPNProtocols: options.alpnProtocols ? [...options.alpnProtocols] : undefined,
      cert: options.clientCertificate?.certPem,
      key: options.clientCertificate?.keyPem,
    });
    socket.setEncoding('utf8');
    let handshake: Omit<TlsProbeResult, 'data'> | undefined;
    let received = '';
    let settled = false;
    const finish = (result: TlsProbeResult): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(result);
    };
    let timer = setTimeout(
      () => finish({ outcome: 'error', errorCode: 'ETIMEDOUT', errorMessage: 'no TLS handshake within the probe bound', data: '' }),
      HANDSHAKE_WAIT_MS,
    );

    socket.once('secureConnect', () => {
      const authorizationError = socket.authorizationError as Error | string | null;
      const connected: Omit<TlsProbeResult, 'data'> = {
        outcome: 'connected',
        peerCertificate: summarizePeerCertificate(socket.getPeerCertificate()),
        authorized: socket.authorized,
        authorizationError:
          authorizationError === null ? undefined : typeof authorizationError === 'string' ? authorizationError : authorizationError.message,
        alpnProtocol: socket.alpnProtocol,
        tlsVersion: socket.getProtocol(),
      };
      handshake = connected;
      if (options.send !== undefined) socket.write(options.send);
      if (options.awaitData === false) {
        finish({ ...connected, data: '' });
        return;
      }
      clearTimeout(timer);
      timer = setTimeout(() => finish({ ...connected, data: received }), DATA_WAIT_MS);
    });
    socket.on('data', (chunk: string) => {
      received += chunk;
      const newline = received.indexOf('\n');
      if (handshake && newline >= 0) finish({ ...handshake, data: received.slice(0, newline + 1) });
    });
    socket.once('close', () => {
      if (handshake) finish({ ...handshake, data: received });
      else finish({ outcome: 'closed', errorCode: 'EOF', errorMessage: 'connection closed before the TLS handshake finished', data: '' });
    });
    socket.once('error', (error: NodeJS.ErrnoException) => {
      const errorCode = error.code ?? 'UNKNOWN';
      if (handshake) finish({ ...handshake, errorCode, errorMessage: error.message, data: received });
      else finish({ outcome: classifyHandshakeFailure(error), errorCode, errorMessage: error.message, data: '' });
    });
  });
}

export interface HttpResponse {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: string;
  /** HTTPS only. */
  readonly peerCertificate?: PeerCertificateSummary;
}

/** Sends `request` and reads the whole response; the peer certificate when it ran over TLS. */
export function collectResponse(request: http.ClientRequest, body?: Buffer | string): Promise<HttpResponse> {
  return new Promise((resolve, reject) => {
    request.once('error', reject);
    request.once('response', (response) => {
      const socket = response.socket;
      const peerCertificate = socket instanceof tls.TLSSocket ? summarizePeerCertificate(socket.getPeerCertificate()) : undefined;
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.once('error', reject);
      response.once('end', () =>
        resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks).toString('utf8'), peerCertificate }),
      );
    });
    request.end(body);
  });
}

/**
 * GET over HTTPS to 127.0.0.1:`port` with SNI and Host set to `servername`. Without `ca` the server
 * certificate is not verified; with it, verification (chain and name) failing rejects the promise.
 */
export function httpsGet(options: {
  port: number;
  servername: string;
  path?: string;
  ca?: string;
  headers?: http.OutgoingHttpHeaders;
  clientCertificate?: ClientCertificate;
  /** Source address (any 127.x works on Linux loopback): a client from elsewhere. */
  localAddress?: string;
  method?: string;
  body?: Buffer | string;
}): Promise<HttpResponse> {
  return collectResponse(
    https.request({
      host: '127.0.0.1',
      port: options.port,
      servername: options.servername,
      path: options.path ?? '/',
      method: options.method ?? 'GET',
      headers: { host: options.servername, ...options.headers },
      ca: options.ca,
      rejectUnauthorized: options.ca !== undefined,
      cert: options.clientCertificate?.certPem,
      key: options.clientCertificate?.keyPem,
      localAddress: options.localAddress,
      agent: false,
    }),
    options.body,
  );
}

/** GET over plain HTTP to 127.0.0.1:`port` with the Host header `host`. */
export function httpGet(options: {
  port: number;
  host: string;
  path?: string;
  headers?: http.OutgoingHttpHeaders;
  localAddress?: string;
  method?: string;
  body?: Buffer | string;
}): Promise<HttpResponse> {
  return collectResponse(
    http.request({
      host: '127.0.0.1',
      port: options.port,
      path: options.path ?? '/',
      method: options.method ?? 'GET',
      headers: { host: options.host, ...options.headers },
      localAddress: options.localAddress,
      agent: false,
    }),
    options.body,
  );
}

/** The `EchoResponse` in a response body from `startHttpBackend`/`startHttpsBackend`. */
export function parseEcho(body: string): EchoResponse {
  return JSON.parse(body) as EchoResponse;
}

/** Which echo backend answered, or the status when none did. */
export function echoBackendOf(response: HttpResponse): string {
  if (response.status !== 200 || response.body === '') return String(response.status);
  return parseEcho(response.body).backend;
}

/**
 * A backend for header and compression tests: every response carries `X-Powered-By: backend`,
 * `X-Frame-Options: BACKEND` and a cookie for `Domain=backend.internal; Path=/app/`. `/json/<n>` and
 * `/png/<n>` answer n bytes of that type; anything else the `EchoResponse` (request headers included).
 */
export async function startHeaderBackend(name: string): Promise<CountingPeer> {
  let count = 0;
  const echo = echoHandler(name, () => count++);
  const peer = await listenOnLoopback(
    http.createServer((request, response) => {
      response.setHeader('x-powered-by', 'backend');
      response.setHeader('x-frame-options', 'BACKEND');
      response.setHeader('set-cookie', 'sid=1; Domain=backend.internal; Path=/app/');
      const sized = /^\/(json|png)\/([0-9]{1,6})$/.exec(request.url ?? '');
      if (!sized) return echo(request, response);
      count++;
      request.resume();
      // With a length: nginx compares gzip_min_length with it.
      response.writeHead(200, { 'content-type': sized[1] === 'json' ? 'application/json' : 'image/png', 'content-length': sized[2] });
      response.end('a'.repeat(Number(sized[2])));
    }),
  );
  return { ...peer, requestCount: () => count };
}

/**
 * An echo backend that waits `?delay=<milliseconds>` before it answers (the HTTPRoute timeout
 * scenarios); a request the proxy gives up on is dropped without an answer.
 */
export async function startDelayedBackend(name: string, host?: string): Promise<Peer> {
  const echo = echoHandler(name);
  const server = http.createServer((request, response) => {
    const delay = Number(new URL(request.url ?? '/', 'http://backend').searchParams.get('delay') ?? 0);
    const timer = setTimeout(() => echo(request, response), delay);
    response.once('close', () => clearTimeout(timer));
  });
  return listenOnLoopback(server, host);
}
