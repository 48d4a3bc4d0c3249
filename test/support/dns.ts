import { createSocket, type Socket } from 'node:dgram';

/**
 * A DNS server on a loopback UDP port for nginx's `resolver`: it answers A queries for the names it
 * knows with their address, every other query with NXDOMAIN, and remembers every name it was asked
 * about, so a test can tell where nginx tried to go.
 */
export interface DnsServer {
  readonly port: number;
  /** The names asked about so far, lowercase, in order. */
  queries(): string[];
  close(): Promise<void>;
}

export async function startDnsServer(records: Readonly<Record<string, string>>): Promise<DnsServer> {
  const asked: string[] = [];
  const socket: Socket = createSocket('udp4');
  socket.on('message', (query, peer) => {
    const question = readQuestion(query);
    if (!question) return;
    asked.push(question.name);
    const exists = Object.hasOwn(records, question.name);
    const address = question.type === 1 && exists ? records[question.name] : undefined;
    socket.send(answer(query, question.end, exists, address), peer.port, peer.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  return {
    port: socket.address().port,
    queries: () => [...asked],
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}

/** The first question of a query: its name, type and where it ends. */
function readQuestion(query: Buffer): { name: string; type: number; end: number } | undefined {
  const labels: string[] = [];
  let offset = 12;
  while (offset < query.length) {
    const length = query[offset]!;
    if (length === 0) break;
    labels.push(query.subarray(offset + 1, offset + 1 + length).toString('latin1'));
    offset += length + 1;
  }
  if (offset + 5 > query.length) return undefined;
  return { name: labels.join('.').toLowerCase(), type: query.readUInt16BE(offset + 1), end: offset + 5 };
}

/** The response: the query's id and question, and one A record (TTL 0), or no record, or NXDOMAIN. */
function answer(query: Buffer, questionEnd: number, exists: boolean, address: string | undefined): Buffer {
  const header = Buffer.alloc(12);
  query.copy(header, 0, 0, 2);
  const known = address !== undefined;
  header.writeUInt16BE(0x8180 | (exists ? 0 : 3), 2);
  header.writeUInt16BE(1, 4);
  header.writeUInt16BE(known ? 1 : 0, 6);
  const question = query.subarray(12, questionEnd);
  if (!known) return Buffer.concat([header, question]);
  const record = Buffer.alloc(16);
  record.writeUInt16BE(0xc00c, 0);
  record.writeUInt16BE(1, 2);
  record.writeUInt16BE(1, 4);
  record.writeUInt32BE(0, 6);
  record.writeUInt16BE(4, 10);
  address.split('.').forEach((part, i) => record.writeUInt8(Number(part), 12 + i));
  return Buffer.concat([header, question, record]);
}
