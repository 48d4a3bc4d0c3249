import net from 'node:net';
import type { Peer } from './peers.js';

/**
 * A FastCGI responder (the protocol php-fpm speaks), small and real: it reads each request's
 * parameters and body over the FastCGI records nginx sends, and answers 200 with a JSON document of
 * them. Counts requests.
 */
export interface FastCgiRequest {
  readonly params: Readonly<Record<string, string>>;
  readonly body: string;
}

const version = 1;
const types = { beginRequest: 1, endRequest: 3, params: 4, stdin: 5, stdout: 6 } as const;

function record(type: number, requestId: number, content: Buffer): Buffer {
  const padding = (8 - (content.length % 8)) % 8;
  const header = Buffer.alloc(8);
  header.writeUInt8(version, 0);
  header.writeUInt8(type, 1);
  header.writeUInt16BE(requestId, 2);
  header.writeUInt16BE(content.length, 4);
  header.writeUInt8(padding, 6);
  return Buffer.concat([header, content, Buffer.alloc(padding)]);
}

/** Name-value pairs: each length in one byte, or four with the high bit set. */
function decodeParams(data: Buffer): Record<string, string> {
  const params: Record<string, string> = {};
  let offset = 0;
  const length = () => {
    const first = data.readUInt8(offset);
    if (first < 128) {
      offset += 1;
      return first;
    }
    const long = data.readUInt32BE(offset) & 0x7fffffff;
    offset += 4;
    return long;
  };
  while (offset < data.length) {
    const nameLength = length();
    const valueLength = length();
    const name = data.subarray(offset, offset + nameLength).toString('latin1');
    offset += nameLength;
    params[name] = data.subarray(offset, offset + valueLength).toString('latin1');
    offset += valueLength;
  }
  return params;
}

function answer(socket: net.Socket, requestId: number, request: FastCgiRequest, keepConnection: boolean): void {
  const body = JSON.stringify(request);
  const output = Buffer.from(`Status: 200 OK\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
  const end = Buffer.alloc(8);
  socket.write(Buffer.concat([record(types.stdout, requestId, output), record(types.stdout, requestId, Buffer.alloc(0)), record(types.endRequest, requestId, end)]));
  if (!keepConnection) socket.end();
}

export async function startFastCgiResponder(): Promise<Peer & { requestCount(): number }> {
  let count = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    let buffered = Buffer.alloc(0);
    const pending = new Map<number, { params: Buffer[]; stdin: Buffer[]; keep: boolean }>();
    socket.on('data', (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      while (buffered.length >= 8) {
        const type = buffered.readUInt8(1);
        const requestId = buffered.readUInt16BE(2);
        const contentLength = buffered.readUInt16BE(4);
        const total = 8 + contentLength + buffered.readUInt8(6);
        if (buffered.length < total) break;
        const content = buffered.subarray(8, 8 + contentLength);
        buffered = buffered.subarray(total);
        if (type === types.beginRequest) pending.set(requestId, { params: [], stdin: [], keep: (content.readUInt8(2) & 1) === 1 });
        const current = pending.get(requestId);
        if (!current) continue;
        if (type === types.params && contentLength > 0) current.params.push(Buffer.from(content));
        if (type === types.stdin && contentLength > 0) current.stdin.push(Buffer.from(content));
        if (type === types.stdin && contentLength === 0) {
          pending.delete(requestId);
          count++;
          answer(socket, requestId, { params: decodeParams(Buffer.concat(current.params)), body: Buffer.concat(current.stdin).toString() }, current.keep);
        }
      }
    });
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    port,
    requestCount: () => count,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
