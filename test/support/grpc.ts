import * as grpc from '@grpc/grpc-js';
import type { Peer } from './peers.js';

/**
 * gRPC peers for the GRPCRoute traffic tests, on @grpc/grpc-js with raw Buffer messages, so no .proto
 * is needed: a backend answers every method it knows with JSON naming itself, the path it was called
 * on and the request metadata it got; a client calls any `/<service>/<method>` with metadata and
 * reports the status code, the answer and the response headers.
 */

/** The methods every test backend implements, by full path. */
export const grpcMethods = [
  '/echo.v1.Echo/Ping',
  '/echo.v1.Echo/Other',
  '/echo.v1.Echo/Missing',
  '/echo.v1.Echo/StreamUp',
  '/echo.v1.Regex/Ping',
  '/echo.v1.Regex/Other',
  '/other.v1.Other/Ping',
] as const;

export interface GrpcEcho {
  readonly backend: string;
  readonly path: string;
  /** Request metadata as the backend got it (lowercase names; several values joined by ", "). */
  readonly metadata: Readonly<Record<string, string>>;
}

const raw = (b: Buffer) => b;

function definition(): grpc.ServiceDefinition {
  return Object.fromEntries(
    grpcMethods.map((path) => [
      path,
      { path, requestStream: false, responseStream: false, requestSerialize: raw, requestDeserialize: raw, responseSerialize: raw, responseDeserialize: raw, originalName: path },
    ]),
  );
}

export interface GrpcPeer extends Peer {
  /** Every call the backend answered, in order. */
  readonly calls: readonly GrpcEcho[];
}

/** A gRPC backend on `host`, plaintext HTTP/2, or TLS with `tls`'s key pair. */
export async function startGrpcBackend(name: string, host: string, tls?: { readonly cert: string; readonly key: string }): Promise<GrpcPeer> {
  const server = new grpc.Server();
  const calls: GrpcEcho[] = [];
  const handler: grpc.handleUnaryCall<Buffer, Buffer> = (call, callback) => {
    const metadata: Record<string, string> = {};
    for (const [key, value] of Object.entries(call.metadata.getMap())) metadata[key] = String(value);
    const answer: GrpcEcho = { backend: name, path: call.getPath(), metadata };
    calls.push(answer);
    callback(null, Buffer.from(JSON.stringify(answer)));
  };
  server.addService(definition(), Object.fromEntries(grpcMethods.map((path) => [path, handler])));
  const credentials = tls
    ? grpc.ServerCredentials.createSsl(null, [{ private_key: Buffer.from(tls.key), cert_chain: Buffer.from(tls.cert) }])
    : grpc.ServerCredentials.createInsecure();
  const port = await new Promise<number>((resolve, reject) => server.bindAsync(`${host}:0`, credentials, (error, bound) => (error ? reject(error) : resolve(bound))));
  return {
    port,
    calls,
    close: () => new Promise<void>((resolve) => server.tryShutdown(() => resolve())).then(() => server.forceShutdown()),
  };
}

export interface GrpcCall {
  /** Where nginx listens. */
  readonly port: number;
  /** `:authority` (and, over TLS, the SNI name and the name the certificate must carry). */
  readonly authority: string;
  readonly path: string;
  readonly metadata?: Readonly<Record<string, string>>;
  /** TLS trusting this CA (HTTP/2 by ALPN); without: cleartext HTTP/2 with prior knowledge. */
  readonly caPem?: string;
}

export interface GrpcResult {
  readonly code: grpc.status;
  readonly details: string;
  readonly echo?: GrpcEcho;
  /** Response headers (lowercase names). */
  readonly headers: Readonly<Record<string, string>>;
}

/** One unary call through nginx; never rejects: a failed call is its status code. */
export function grpcCall(call: GrpcCall): Promise<GrpcResult> {
  const credentials = call.caPem !== undefined ? grpc.credentials.createSsl(Buffer.from(call.caPem)) : grpc.credentials.createInsecure();
  const client = new grpc.Client(`127.0.0.1:${call.port}`, credentials, {
    'grpc.default_authority': call.authority,
    ...(call.caPem !== undefined && { 'grpc.ssl_target_name_override': call.authority }),
  });
  const metadata = new grpc.Metadata();
  for (const [key, value] of Object.entries(call.metadata ?? {})) metadata.set(key, value);
  const headers: Record<string, string> = {};
  return new Promise<GrpcResult>((resolve) => {
    const pending = client.makeUnaryRequest(call.path, raw, raw, Buffer.alloc(0), metadata, { deadline: Date.now() + 10_000 }, (error, answer) => {
      client.close();
      if (error) resolve({ code: error.code, details: error.details, headers });
      else resolve({ code: grpc.status.OK, details: '', echo: JSON.parse(String(answer)) as GrpcEcho, headers });
    });
    pending.on('metadata', (received: grpc.Metadata) => {
      for (const [key, value] of Object.entries(received.getMap())) headers[key] = String(value);
    });
  });
}

export { status as grpcStatus } from '@grpc/grpc-js';
