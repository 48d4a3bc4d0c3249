import { createSocket, type Socket } from 'node:dgram';
import { once } from 'node:events';
import { connect, createServer, isIP, type Server } from 'node:net';
import dnsPacket from 'dns-packet';
import type { RawObject } from '../sources/cluster/reflector.js';
import { answer, EndpointTable, rcode, rcodeName, response, type Answered, type TableService } from './endpoint-answers.js';
import type { Logger } from './log.js';

/** What a UDP answer may hold: nginx sends no EDNS, so a longer answer is truncated and asked again over TCP. */
const udpLimit = 512;
const relayTimeoutMs = 3000;
const udpReceiveBuffer = 8 * 1024 * 1024;
/** About 2 answers per endpoint and Service port at 100,000 endpoints: past that, the kept answers start again. */
const maxKeptAnswers = 250_000;

/** An answer kept for the next identical question, with what the metrics count of it. */
interface KeptAnswer {
  readonly bytes: Buffer;
  readonly type: string;
  readonly rcode: string;
  /** The Service it comes from: it goes when that Service or its slices change. None: when anything changes. */
  readonly service?: TableService;
}

export interface EndpointResolverOptions {
  /** Loopback only: nothing outside the Pod may ask. */
  readonly host: string;
  /** 0 for any free port (tests); `port` tells which. */
  readonly port: number;
  readonly noEndpointsPort: number;
  /**
   * The Services and EndpointSlices the watches hold; undefined until they have listed. Until then every
   * question is answered SERVFAIL, on which nginx keeps the endpoints it had (a restart of the sidecar
   * must not empty the upstreams), where NXDOMAIN or an empty answer would remove them.
   */
  readonly objects: () => { readonly services: readonly RawObject[]; readonly slices: readonly RawObject[] } | undefined;
  /** `--resolver` addresses: nginx asks only us, so names outside our zone are relayed to the first. */
  readonly relayTo: readonly string[];
  readonly log: Logger;
  /** Each question answered from our zone (not relayed), for the metrics. */
  readonly onAnswered?: (type: string, rcode: string) => void;
}

/**
 * The sidecar's DNS server for nginx's `resolver` (translate/endpoints.ts says what the names are):
 * UDP and TCP on loopback, answering from the EndpointSlices the watches hold. `changed` is called on
 * every change the watches see; the table is made again at the next question.
 */
export class EndpointResolver {
  private table: EndpointTable | undefined;
  /** The table before the last change: what did not change is taken over from it. */
  private previous: EndpointTable | undefined;
  /**
   * Encoded answers, by the query's bytes after its id: nginx asks the same questions every second or two
   * (an SRV per upstream, an A per endpoint), so most are a lookup and a copy. An answer goes when its
   * Service changes (the others stay through a rollout); bounded, since any process in the Pod may ask.
   */
  private readonly answers = new Map<string, KeptAnswer>();
  private udp: Socket | undefined;
  private tcp: Server | undefined;
  private boundPort = 0;

  constructor(private readonly options: EndpointResolverOptions) {}

  get port(): number {
    return this.boundPort;
  }

  changed(): void {
    this.previous = this.table ?? this.previous;
    this.table = undefined;
  }

  /** The table of what the watches hold now, made again after a change; undefined until they have listed. */
  private currentTable(): EndpointTable | undefined {
    if (this.table) return this.table;
    const objects = this.options.objects();
    if (!objects) return undefined;
    const table = EndpointTable.of(objects.services, objects.slices, this.previous);
    for (const [key, kept] of this.answers) if (kept.service === undefined || !table.holds(kept.service)) this.answers.delete(key);
    this.table = table;
    return table;
  }

  async start(): Promise<void> {
    const { host, port } = this.options;
    const tcp = createServer((socket) => {
      let buffered = Buffer.alloc(0);
      socket.on('error', () => socket.destroy());
      socket.on('data', (chunk) => {
        buffered = Buffer.concat([buffered, chunk]);
        while (buffered.length >= 2 && buffered.length >= 2 + buffered.readUInt16BE(0)) {
          const query = buffered.subarray(2, 2 + buffered.readUInt16BE(0));
          buffered = buffered.subarray(2 + query.length);
          void this.reply(query, 'tcp').then((reply) => {
            if (reply && !socket.destroyed) socket.write(Buffer.concat([lengthPrefix(reply.length), reply]));
          });
        }
      });
    });
    tcp.listen(port, host);
    await once(tcp, 'listening');
    this.tcp = tcp;
    this.boundPort = (tcp.address() as { port: number }).port;
    // nginx starts resolving every upstream at once and keeps asking in bursts, a question per upstream:
    // the bigger the buffer, the fewer the kernel drops (each one costs nginx its resolver_timeout).
    // The kernel caps it at net.core.rmem_max.
    const udp = createSocket({ type: isIP(host) === 6 ? 'udp6' : 'udp4', recvBufferSize: udpReceiveBuffer });
    udp.on('message', (query, peer) => {
      void this.reply(query, 'udp').then((reply) => reply && udp.send(reply, peer.port, peer.address));
    });
    udp.on('error', (error) => this.options.log.warn('endpoint resolver: UDP error', { error: error.message }));
    udp.bind(this.boundPort, host);
    await once(udp, 'listening');
    this.udp = udp;
    this.options.log.info('endpoint resolver: UDP receive buffer', { bytes: udp.getRecvBufferSize(), asked: udpReceiveBuffer });
  }

  async close(): Promise<void> {
    this.udp?.close();
    const tcp = this.tcp;
    if (tcp) await new Promise<void>((resolve) => tcp.close(() => resolve()));
  }

  /** The bytes to send back, or undefined for a packet that is no question (dropped, as servers do). */
  private async reply(bytes: Buffer, transport: 'udp' | 'tcp'): Promise<Buffer | undefined> {
    const key = bytes.length > 12 ? `${transport}${bytes.subarray(2).toString('latin1')}` : undefined;
    const known = key === undefined || this.currentTable() === undefined ? undefined : this.answers.get(key);
    if (known) {
      this.options.onAnswered?.(known.type, known.rcode);
      const copy = Buffer.from(known.bytes);
      bytes.copy(copy, 0, 0, 2);
      return copy;
    }
    const answered = await this.decided(bytes, transport);
    if (answered?.kept && key !== undefined) {
      if (this.answers.size >= maxKeptAnswers) this.answers.clear();
      this.answers.set(key, { ...answered.kept, bytes: answered.bytes });
    }
    return answered?.bytes;
  }

  /** The answer to a query, and what to keep of it when it is the table's own (until the table changes). */
  private async decided(bytes: Buffer, transport: 'udp' | 'tcp'): Promise<{ bytes: Buffer; kept?: Omit<KeptAnswer, 'bytes'> } | undefined> {
    let query: dnsPacket.Packet;
    try {
      query = dnsPacket.decode(bytes);
    } catch {
      return undefined;
    }
    const question = query.questions?.[0];
    if (query.type !== 'query' || question === undefined || (query.questions?.length ?? 0) !== 1) {
      return { bytes: dnsPacket.encode(response(query, { rcode: rcode.refused, answers: [] })) };
    }
    let table: EndpointTable | undefined;
    let answered: Answered | undefined;
    try {
      table = this.currentTable();
      answered = table ? answer(question, table, this.options.noEndpointsPort) : { rcode: rcode.serverFailure, answers: [] };
    } catch (error) {
      // An object the table could not read must cost one answer (nginx keeps what it had), never the resolver.
      this.options.log.error('endpoint resolver: a question failed', { error: (error as Error).message });
      return { bytes: dnsPacket.encode(response(query, { rcode: rcode.serverFailure, answers: [] })) };
    }
    if (answered === undefined) return { bytes: await this.relay(query, bytes, transport) };
    const counted = { type: question.type, rcode: rcodeName[answered.rcode] ?? String(answered.rcode) };
    this.options.onAnswered?.(counted.type, counted.rcode);
    const kept = table ? { kept: { ...counted, ...(answered.service && { service: answered.service }) } } : {};
    const encoded = dnsPacket.encode(response(query, answered));
    if (transport === 'udp' && encoded.length > udpLimit) {
      const truncated = response(query, { rcode: answered.rcode, answers: [] });
      return { bytes: dnsPacket.encode({ ...truncated, flags: (truncated.flags ?? 0) | 0x0200 }), ...kept };
    }
    return { bytes: encoded, ...kept };
  }

  /** A name outside our zone: to the first `--resolver`, bytes as they came; REFUSED when there is none or it does not answer. */
  private async relay(query: dnsPacket.Packet, bytes: Buffer, transport: 'udp' | 'tcp'): Promise<Buffer> {
    const target = this.options.relayTo[0];
    const refused = () => dnsPacket.encode(response(query, { rcode: rcode.refused, answers: [] }));
    if (target === undefined) return refused();
    const { host, port } = resolverAddress(target);
    try {
      return await (transport === 'udp' ? relayUdp(bytes, host, port) : relayTcp(bytes, host, port));
    } catch (error) {
      this.options.log.warn('endpoint resolver: --resolver did not answer', { resolver: target, error: (error as Error).message });
      return dnsPacket.encode(response(query, { rcode: rcode.serverFailure, answers: [] }));
    }
  }
}

function lengthPrefix(length: number): Buffer {
  const prefix = Buffer.alloc(2);
  prefix.writeUInt16BE(length);
  return prefix;
}

/** `IP`, `IP:port` or `[IPv6]:port` (`--resolver`), port 53 unless given. */
export function resolverAddress(address: string): { host: string; port: number } {
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(address);
  if (bracketed) return { host: bracketed[1] as string, port: Number(bracketed[2] ?? 53) };
  if (isIP(address) === 6) return { host: address, port: 53 };
  const [host = address, port] = address.split(':');
  return { host, port: Number(port ?? 53) };
}

async function relayUdp(bytes: Buffer, host: string, port: number): Promise<Buffer> {
  const socket = createSocket(isIP(host) === 6 ? 'udp6' : 'udp4');
  try {
    socket.send(bytes, port, host);
    const timeout = AbortSignal.timeout(relayTimeoutMs);
    const [reply] = (await once(socket, 'message', { signal: timeout })) as [Buffer];
    return reply;
  } finally {
    socket.close();
  }
}

async function relayTcp(bytes: Buffer, host: string, port: number): Promise<Buffer> {
  const socket = connect({ host, port });
  socket.setTimeout(relayTimeoutMs, () => socket.destroy(new Error('timed out')));
  try {
    await once(socket, 'connect');
    socket.write(Buffer.concat([lengthPrefix(bytes.length), bytes]));
    let buffered = Buffer.alloc(0);
    for await (const chunk of socket) {
      buffered = Buffer.concat([buffered, chunk as Buffer]);
      if (buffered.length >= 2 && buffered.length >= 2 + buffered.readUInt16BE(0)) return buffered.subarray(2, 2 + buffered.readUInt16BE(0));
    }
    throw new Error('closed before the answer');
  } finally {
    socket.destroy();
  }
}
