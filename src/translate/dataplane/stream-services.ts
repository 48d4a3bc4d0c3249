import type { StreamService, StreamUpstream } from '../../model/nginx.js';
import type { SourceObject } from '../../sources/snapshot.js';
import { resolveServiceBackend, type BackendPolicy } from '../backends.js';
import { isKubernetesName, isPortName } from '../checks/allowlist.js';
import { provenanceOf } from '../settle/provenance.js';
import { resourceName, type Reporter } from '../report.js';
import { key, type Resources } from '../resources.js';
import { upstreamName } from '../upstream-names.js';

/**
 * ingress-nginx's TCP and UDP services: a ConfigMap (named by `--tcp-services-configmap` or
 * `--udp-services-configmap`) whose keys are ports nginx listens on and whose values name a Service port,
 * `namespace/service:port[:PROXY][:PROXY]`. The first `PROXY` reads a PROXY protocol header from the
 * client side, the second sends one to the backend (TCP only, as in ingress-nginx). The ConfigMap is the
 * operator's, so the Service may be in any namespace. Each entry is checked on its own: a bad entry is an
 * error on that entry, and the rest are served.
 */

export interface StreamServicesInput {
  readonly resources: Resources;
  /** `namespace/name` of each ConfigMap, as the flags give them. */
  readonly tcp?: string;
  readonly udp?: string;
  /** Ports nginx listens on for something else (the HTTP and HTTPS ports, Gateway listeners), with what. */
  readonly reservedPorts: ReadonlyMap<number, string>;
  readonly policy: BackendPolicy;
  /** Senders trusted for the client address in a PROXY header (`proxy-real-ip-cidr`). */
  readonly trustedProxies: readonly string[];
  readonly report: Reporter;
}

export interface StreamServices {
  readonly services: readonly StreamService[];
  readonly upstreams: readonly StreamUpstream[];
}

type Protocol = StreamService['protocol'];

/**
 * The ports the TCP services ConfigMap gives out, whatever their entries say: the operator holds them,
 * so a Gateway listener may not take one (the entry's own checks come later, in `streamServices`).
 */
export function tcpServicePorts(resources: Resources, tcp: string | undefined): number[] {
  const configMap = tcp === undefined ? undefined : resources.configMaps.get(tcp);
  return Object.keys(configMap?.spec ?? {})
    .filter((port) => portKey.test(port) && Number(port) <= 65535)
    .map(Number)
    .sort((a, b) => a - b);
}

/** A port as ingress-nginx's key: decimal, without leading zeros (two spellings of one port would collide). */
const portKey = /^[1-9][0-9]{0,4}$/;

export function streamServices(input: StreamServicesInput): StreamServices {
  const services: StreamService[] = [];
  const upstreams = new Map<string, StreamUpstream>();
  for (const protocol of ['tcp', 'udp'] as const) {
    const configMap = configMapOf(input, protocol);
    if (!configMap) continue;
    for (const [port, value] of Object.entries(configMap.spec).sort(([a], [b]) => Number(a) - Number(b) || (a < b ? -1 : 1))) {
      const entry = streamService(input, protocol, configMap.object, port, value);
      if (!entry) continue;
      services.push(entry.service);
      if (entry.upstream && !upstreams.has(entry.upstream.name)) upstreams.set(entry.upstream.name, entry.upstream);
    }
  }
  return { services, upstreams: [...upstreams.values()] };
}

function configMapOf(input: StreamServicesInput, protocol: Protocol) {
  const name = input[protocol];
  if (name === undefined) return undefined;
  const configMap = input.resources.configMaps.get(name);
  if (!configMap) {
    input.report.warning('configmap-not-found', undefined, `ConfigMap ${name} (--${protocol}-services-configmap) is not in the input; no ${protocol.toUpperCase()} services`);
  }
  return configMap;
}

interface ParsedEntry {
  readonly namespace: string;
  readonly service: string;
  readonly port: { readonly number?: number; readonly name?: string };
  readonly decode: boolean;
  readonly encode: boolean;
}

/** `namespace/service:port[:PROXY][:PROXY]`, as ingress-nginx splits it (an empty field leaves that side off). */
function parseEntry(value: string, protocol: Protocol): { ok: true; value: ParsedEntry; ignoredProxy: boolean } | { ok: false; problem: string } {
  const fields = value.trim().split(':');
  const [reference = '', port = '', ...proxy] = fields;
  const [namespace = '', service = '', extra] = reference.split('/');
  const grammar = 'expected "namespace/service:port", optionally followed by ":PROXY" (read a PROXY header from clients) and ":PROXY" (send one to the backend)';
  if (fields.length < 2 || fields.length > 4 || extra !== undefined) return { ok: false, problem: grammar };
  if (!isKubernetesName(namespace) || !isKubernetesName(service)) return { ok: false, problem: `"${reference}" is not namespace/service; ${grammar}` };
  const number = /^[1-9][0-9]{0,4}$/.test(port) && Number(port) <= 65535 ? Number(port) : undefined;
  if (number === undefined && !isPortName(port)) return { ok: false, problem: `"${port}" is neither a port number nor a port name; ${grammar}` };
  if (proxy.some((field) => field !== '' && field.toUpperCase() !== 'PROXY')) return { ok: false, problem: `only "PROXY" or nothing may follow the port; ${grammar}` };
  const decode = proxy[0]?.toUpperCase() === 'PROXY';
  const encode = proxy[1]?.toUpperCase() === 'PROXY';
  const tcp = protocol === 'tcp';
  return {
    ok: true,
    value: { namespace, service, port: number !== undefined ? { number } : { name: port }, decode: tcp && decode, encode: tcp && encode },
    ignoredProxy: !tcp && (decode || encode),
  };
}

function streamService(
  input: StreamServicesInput,
  protocol: Protocol,
  configMap: SourceObject,
  portText: string,
  value: string,
): { service: StreamService; upstream?: StreamUpstream } | undefined {
  const { report } = input;
  const field = ['data', portText];
  const what = `${protocol.toUpperCase()} service on port ${portText}`;
  const port = Number(portText);
  if (!portKey.test(portText) || port > 65535) {
    report.error('stream-service-invalid', configMap, `${JSON.stringify(portText)} is not a port number 1-65535; this entry is not served`, field);
    return undefined;
  }
  const reserved = input.reservedPorts.get(port);
  if (reserved !== undefined) {
    report.error('stream-service-port-clash', configMap, `port ${port} is ${reserved}; the ${what} is not served`, field);
    return undefined;
  }
  const parsed = parseEntry(value, protocol);
  if (!parsed.ok) {
    report.error('stream-service-invalid', configMap, `${parsed.problem}; the ${what} is not served`, field);
    return undefined;
  }
  if (parsed.ignoredProxy) report.warning('stream-service-proxy-ignored', configMap, `PROXY protocol is for TCP services only; ignored on the ${what}, as ingress-nginx does`, field);
  const entry = parsed.value;
  const servicePort = protocolPort(input.resources, entry, protocol);
  if (!servicePort.ok) {
    report.error('stream-service-backend', configMap, `${servicePort.problem}; the ${what} is not served`, field);
    return undefined;
  }
  const resolution = resolveServiceBackend(input.resources, entry.namespace, { name: entry.service, port: servicePort.port }, input.policy);
  if (!resolution.ok) {
    const severity = resolution.noEndpoints ? 'warning' : 'error';
    report.add(severity, 'stream-service-backend', configMap, `${resolution.problem}; the ${what} is not served`, field);
    return undefined;
  }
  if (resolution.warning !== undefined) report.warning(resolution.warningCode ?? 'service-dns-name', configMap, resolution.warning, field);
  const backend = resolution.value;
  // Apart from TCP's blocks: a UDP Service port may have another name, so other endpoint ports.
  const upstream = protocol === 'udp' ? upstreamName(`udp_${backend.service.namespace}_${backend.service.name}_${backend.service.port}`) : backend.upstream;
  const comment = `${protocol.toUpperCase()} port ${port}: ${backend.description} (ConfigMap ${resourceName(configMap)})`;
  return {
    service: {
      port,
      protocol,
      udp: protocol === 'udp',
      acceptProxyProtocol: entry.decode,
      trustedProxies: entry.decode ? input.trustedProxies : [],
      sendProxyProtocol: entry.encode,
      upstream,
      ...(backend.runtimeName !== undefined && { resolve: backend.runtimeName }),
      comment,
      origin: {
        entry: provenanceOf(configMap, field),
        backend: { service: backend.service, weight: 1, addresses: backend.servers.map((s) => s.address) },
      },
    },
    ...(backend.runtimeName === undefined && { upstream: { name: upstream, servers: backend.servers, comment: backend.description } }),
  };
}

/**
 * The Service port of the entry with the entry's protocol (ingress-nginx matches both), as a reference
 * that picks that port alone: by name when it has one, since a number may be on TCP and UDP both.
 */
function protocolPort(
  resources: Resources,
  entry: ParsedEntry,
  protocol: Protocol,
): { ok: true; port: { number?: number; name?: string } } | { ok: false; problem: string } {
  const service = resources.services.get(key(entry.namespace, entry.service));
  // Not in the input: resolveServiceBackend says what can be done.
  if (!service) return { ok: true, port: entry.port };
  const ports = service.spec.ports ?? [];
  const wanted = protocol.toUpperCase();
  const matches = ports.filter((p) => (entry.port.number !== undefined ? p.port === entry.port.number : p.name === entry.port.name));
  const match = matches.find((p) => (p.protocol ?? 'TCP') === wanted);
  if (!match) {
    const port = entry.port.number ?? `"${entry.port.name}"`;
    const other = matches[0]?.protocol;
    return { ok: false, problem: `Service ${entry.namespace}/${entry.service} has no ${wanted} port ${port}${other !== undefined ? ` (only ${other})` : ''}` };
  }
  return { ok: true, port: match.name !== undefined && match.name !== '' ? { name: match.name } : { number: match.port } };
}
