import type { Answer, Packet, Question } from 'dns-packet';
import {
  endpointHost,
  endpointZone,
  noEndpointsHost,
  serviceEndpoints,
  serviceHost,
  type Endpoint,
  type ResolvingModule,
  type SliceEndpoints,
} from '../translate/endpoints.js';
import type { RawObject } from '../sources/cluster/reflector.js';
import { serviceNameLabel } from '../translate/resources.js';

/**
 * What the sidecar's resolver answers (endpoint-resolver.ts serves it): the endpoints of each Service
 * port as SRV records, one target name per endpoint, and that name's address. Decisions only: the
 * table is made from the objects the watches hold, the answer from the table and a question.
 */

/** The DNS response codes we send. */
export const rcode = { noError: 0, serverFailure: 2, nameError: 3, refused: 5 } as const;
export const rcodeName: Readonly<Record<number, string>> = { 0: 'NOERROR', 2: 'SERVFAIL', 3: 'NXDOMAIN', 5: 'REFUSED' };

/** nginx asks again after `valid=1s`; the TTL says the same to anything else that caches. */
const ttl = 1;

/**
 * One Service as the resolver sees it, with what was worked out for it so far. Kept from one table to the
 * next while its Service and slices are the same objects (the watches replace an object that changes):
 * during a rollout only the Service that rolls is worked out again.
 */
export class TableService {
  /** Service port number → the port's name ('' when unnamed), which the slice ports carry. */
  readonly ports: ReadonlyMap<number, string>;
  readonly slices: SliceEndpoints[] = [];
  /** The Service, then its slices: what this was made from. */
  readonly sources: RawObject[];
  private readonly picked = new Map<string, readonly Endpoint[]>();
  private targets: ReadonlyMap<string, Endpoint> | undefined;

  constructor(
    readonly namespace: string,
    readonly name: string,
    service: RawObject,
  ) {
    const spec = service['spec'] as { ports?: unknown } | undefined;
    const ports = new Map<number, string>();
    for (const port of Array.isArray(spec?.ports) ? (spec.ports as { port?: unknown; name?: unknown }[]) : []) {
      if (typeof port.port === 'number') ports.set(port.port, typeof port.name === 'string' ? port.name : '');
    }
    this.ports = ports;
    this.sources = [service];
  }

  /** The endpoints of one port (picked when first asked for). */
  endpoints(portName: string): readonly Endpoint[] {
    let found = this.picked.get(portName);
    if (found === undefined) {
      found = serviceEndpoints(this.slices, portName).endpoints;
      this.picked.set(portName, found);
    }
    return found;
  }

  /** The endpoint an SRV answer of the Service names `host` (endpointHost), on any of its ports. */
  target(host: string): Endpoint | undefined {
    this.targets ??= new Map(
      [...new Set(this.ports.values())].flatMap((portName) => this.endpoints(portName)).map((e) => [endpointHost(this.namespace, this.name, e), e] as const),
    );
    return this.targets.get(host);
  }
}

/** The Services (not ExternalName) and their EndpointSlices by the names nginx asks for. */
export class EndpointTable {
  constructor(private readonly services: ReadonlyMap<string, TableService>) {}

  /**
   * Made from what the watches hold; a Service whose objects are those of `previous` is taken over as
   * it is, with what was worked out for it.
   */
  static of(services: readonly RawObject[], slices: readonly RawObject[], previous?: EndpointTable): EndpointTable {
    const table = new Map<string, TableService>();
    for (const service of services) {
      if ((service['spec'] as { type?: unknown } | undefined)?.type === 'ExternalName') continue;
      const { namespace = '', name } = service.metadata;
      table.set(serviceHost(namespace, name), new TableService(namespace, name, service));
    }
    for (const slice of slices) {
      const labels = (slice.metadata as { labels?: Record<string, unknown> }).labels;
      const service = labels?.[serviceNameLabel];
      if (typeof service !== 'string') continue;
      const entry = table.get(serviceHost(slice.metadata.namespace ?? '', service));
      entry?.slices.push(slice as unknown as SliceEndpoints);
      entry?.sources.push(slice);
    }
    if (previous) {
      for (const [host, entry] of table) {
        const before = previous.services.get(host);
        if (before && before.sources.length === entry.sources.length && before.sources.every((object, i) => object === entry.sources[i])) table.set(host, before);
      }
    }
    return new EndpointTable(table);
  }

  service(host: string): TableService | undefined {
    return this.services.get(host);
  }

  /** `service` is in this table as it is (taken over, not made again). */
  holds(service: TableService): boolean {
    return this.services.get(serviceHost(service.namespace, service.name)) === service;
  }
}

export interface Answered {
  readonly rcode: number;
  readonly answers: Answer[];
  /** The Service the answer comes from; none for the no-endpoints server's name, or a name not found. */
  readonly service?: TableService;
}

/**
 * The answer to one question inside our zone, or `undefined` for a name outside it (relayed, or
 * refused). An http upstream whose Service has no endpoint gets nginx's own 503 server on loopback; a
 * stream one gets no record, so that nginx closes its connections as when no endpoint is written in.
 */
export function answer(question: Question, table: EndpointTable, noEndpointsPort: number): Answered | undefined {
  const name = question.name.toLowerCase().replace(/\.$/, '');
  if (name !== endpointZone && !name.endsWith(`.${endpointZone}`)) return undefined;
  if (name === noEndpointsHost) return addressAnswer(question, { ip: '127.0.0.1', family: 4, port: noEndpointsPort });
  const srv = /^_(http|stream)-(\d{1,5})\._tcp\.(.+)$/.exec(name);
  if (srv) return srvAnswer(question, table, srv[1] as ResolvingModule, Number(srv[2]), srv[3] as string, noEndpointsPort);
  const target = /^[^.]+\.(.+)$/.exec(name);
  const service = target ? table.service(target[1] as string) : undefined;
  if (!service) return { rcode: rcode.nameError, answers: [] };
  const endpoint = service.target(name);
  return endpoint ? { ...addressAnswer(question, endpoint), service } : { rcode: rcode.nameError, answers: [] };
}

function srvAnswer(question: Question, table: EndpointTable, module: ResolvingModule, port: number, host: string, noEndpointsPort: number): Answered {
  const service = table.service(host);
  const portName = service?.ports.get(port);
  if (!service || portName === undefined) return { rcode: rcode.nameError, answers: [] };
  if (question.type !== 'SRV') return { rcode: rcode.noError, answers: [], service };
  const endpoints = service.endpoints(portName);
  const records =
    endpoints.length > 0
      ? endpoints.map((e) => ({ port: e.port, target: endpointHost(service.namespace, service.name, e) }))
      : module === 'http'
        ? [{ port: noEndpointsPort, target: noEndpointsHost }]
        : [];
  return {
    rcode: rcode.noError,
    answers: records.map((data) => ({ type: 'SRV', class: 'IN', name: question.name, ttl, data: { priority: 0, weight: 1, ...data } })),
    service,
  };
}

/** A or AAAA for the endpoint's family; the other type has no record (and the name exists). */
function addressAnswer(question: Question, endpoint: Endpoint): Answered {
  const type = endpoint.family === 4 ? 'A' : 'AAAA';
  if (question.type !== type) return { rcode: rcode.noError, answers: [] };
  return { rcode: rcode.noError, answers: [{ type, class: 'IN', name: question.name, ttl, data: endpoint.ip }] };
}

/** The response to `query` with `answered`; the question is echoed as asked. */
export function response(query: Packet, answered: Answered): Packet {
  const recursionDesired = (query.flags ?? 0) & 0x0100;
  return {
    id: query.id ?? 0,
    type: 'response',
    flags: 0x0400 | recursionDesired | answered.rcode,
    questions: query.questions ?? [],
    answers: answered.answers,
  };
}
