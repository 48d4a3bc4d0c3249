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

interface TableService {
  readonly namespace: string;
  readonly name: string;
  /** Service port number → the port's name ('' when unnamed), which the slice ports carry. */
  readonly ports: ReadonlyMap<number, string>;
  readonly slices: SliceEndpoints[];
}

/**
 * The Services and their EndpointSlices by the names nginx asks for. Endpoints are picked per Service
 * port when first asked for and kept until the next table: the answers nginx asks for every second
 * cost a map lookup, not a walk over the slices.
 */
export class EndpointTable {
  private readonly picked = new Map<string, readonly Endpoint[]>();
  private readonly targets = new Map<TableService, ReadonlyMap<string, Endpoint>>();

  constructor(private readonly services: ReadonlyMap<string, TableService>) {}

  /** Made from what the watches hold: Services (not ExternalName) and the slices labelled with their name. */
  static of(services: readonly RawObject[], slices: readonly RawObject[]): EndpointTable {
    const table = new Map<string, TableService>();
    for (const service of services) {
      const spec = service['spec'] as { type?: unknown; ports?: unknown } | undefined;
      if (spec?.type === 'ExternalName') continue;
      const ports = new Map<number, string>();
      for (const port of Array.isArray(spec?.ports) ? (spec.ports as { port?: unknown; name?: unknown }[]) : []) {
        if (typeof port.port === 'number') ports.set(port.port, typeof port.name === 'string' ? port.name : '');
      }
      const { namespace = '', name } = service.metadata;
      table.set(serviceHost(namespace, name), { namespace, name, ports, slices: [] });
    }
    for (const slice of slices) {
      const labels = (slice.metadata as { labels?: Record<string, unknown> }).labels;
      const service = labels?.[serviceNameLabel];
      if (typeof service !== 'string') continue;
      table.get(serviceHost(slice.metadata.namespace ?? '', service))?.slices.push(slice as unknown as SliceEndpoints);
    }
    return new EndpointTable(table);
  }

  service(host: string): TableService | undefined {
    return this.services.get(host);
  }

  endpoints(service: TableService, portName: string): readonly Endpoint[] {
    const key = `${serviceHost(service.namespace, service.name)}|${portName}`;
    let found = this.picked.get(key);
    if (found === undefined) {
      found = serviceEndpoints(service.slices, portName).endpoints;
      this.picked.set(key, found);
    }
    return found;
  }

  /** The endpoint an SRV answer of the Service names `host` (endpointHost), on any of its ports. */
  target(service: TableService, host: string): Endpoint | undefined {
    let byHost = this.targets.get(service);
    if (byHost === undefined) {
      const all = [...new Set(service.ports.values())].flatMap((portName) => this.endpoints(service, portName));
      byHost = new Map(all.map((e) => [endpointHost(service.namespace, service.name, e), e]));
      this.targets.set(service, byHost);
    }
    return byHost.get(host);
  }
}

export interface Answered {
  readonly rcode: number;
  readonly answers: Answer[];
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
  const endpoint = table.target(service, name);
  return endpoint ? addressAnswer(question, endpoint) : { rcode: rcode.nameError, answers: [] };
}

function srvAnswer(question: Question, table: EndpointTable, module: ResolvingModule, port: number, host: string, noEndpointsPort: number): Answered {
  const service = table.service(host);
  const portName = service?.ports.get(port);
  if (!service || portName === undefined) return { rcode: rcode.nameError, answers: [] };
  if (question.type !== 'SRV') return { rcode: rcode.noError, answers: [] };
  const endpoints = table.endpoints(service, portName);
  const records =
    endpoints.length > 0
      ? endpoints.map((e) => ({ port: e.port, target: endpointHost(service.namespace, service.name, e) }))
      : module === 'http'
        ? [{ port: noEndpointsPort, target: noEndpointsHost }]
        : [];
  return {
    rcode: rcode.noError,
    answers: records.map((data) => ({ type: 'SRV', class: 'IN', name: question.name, ttl, data: { priority: 0, weight: 1, ...data } })),
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
