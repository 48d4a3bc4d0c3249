import { isIP } from 'node:net';
import { specialAddress } from './checks/addresses.js';
import { isIpAddress } from './checks/allowlist.js';
import { nginxFeatures } from './nginx-version.js';
import type { TranslateOptions } from './options.js';

/**
 * Which endpoints of a Service port take traffic, and the DNS names the sidecar's resolver answers for
 * them. One answer for both ways nginx reaches endpoints: written into the upstream block (a reload per
 * change), or looked up by nginx at run time from the sidecar (`resolve`, nginx ≥ 1.27.3, no reload).
 */

/** The fields of an EndpointSlice that decide where traffic goes (kept loose: the resolver reads raw objects). */
export interface SliceEndpoints {
  readonly addressType?: string | null;
  readonly ports?: readonly { readonly name?: string | null; readonly port?: number | null }[] | null;
  readonly endpoints?:
    | readonly {
        readonly addresses?: readonly string[] | null;
        readonly conditions?: { readonly ready?: boolean | null; readonly serving?: boolean | null; readonly terminating?: boolean | null } | null;
      }[]
    | null;
}

export interface Endpoint {
  /** The address as nginx writes it (IPv6 without brackets). */
  readonly ip: string;
  readonly family: 4 | 6;
  readonly port: number;
}

export interface ServiceEndpoints {
  /** Sorted, each once. */
  readonly endpoints: readonly Endpoint[];
  /** Addresses left out because no tenant may send traffic there, with what they are (sorted). */
  readonly refused: readonly string[];
}

/**
 * The endpoints of one Service port, as kube-proxy picks them: the ready ones (`ready` absent counts as
 * ready); when none is ready, those still `serving` while `terminating`, so that the last Pods of a
 * rollout or a scale-down keep answering until they go. The slice port is the one named as the Service
 * port is. Addresses a tenant may not send traffic to (the node's loopback, link-local and metadata
 * addresses, unspecified and multicast) are left out: an EndpointSlice can be written by hand.
 */
export function serviceEndpoints(slices: Iterable<SliceEndpoints>, portName: string | undefined): ServiceEndpoints {
  const ready = new Map<string, Endpoint>();
  const terminating = new Map<string, Endpoint>();
  const refused = new Set<string>();
  for (const slice of slices) {
    if (slice.addressType !== 'IPv4' && slice.addressType !== 'IPv6') continue;
    const port = (slice.ports ?? []).find((p) => (p.name ?? '') === (portName ?? ''))?.port;
    if (port === undefined || port === null) continue;
    for (const endpoint of slice.endpoints ?? []) {
      const conditions = endpoint.conditions ?? {};
      const isReady = conditions.ready !== false;
      const into = isReady ? ready : conditions.serving === true && conditions.terminating === true ? terminating : undefined;
      if (into === undefined) continue;
      for (const address of endpoint.addresses ?? []) {
        if (!isIpAddress(address)) continue;
        const special = specialAddress(address);
        if (special) {
          refused.add(`${address} (${special.what})`);
          continue;
        }
        const family = isIP(address) === 6 ? 6 : 4;
        into.set(`${address}|${port}`, { ip: address, family, port });
      }
    }
  }
  const chosen = ready.size > 0 ? ready : terminating;
  const endpoints = [...chosen.values()].sort((a, b) => (a.ip === b.ip ? a.port - b.port : a.ip < b.ip ? -1 : 1));
  return { endpoints, refused: [...refused].sort() };
}

/** `ip:port`, bracketed for IPv6: how an upstream `server` names an endpoint. */
export function endpointAddress(endpoint: Endpoint): string {
  return endpoint.family === 6 ? `[${endpoint.ip}]:${endpoint.port}` : `${endpoint.ip}:${endpoint.port}`;
}

/**
 * The zone the sidecar's resolver answers. `.internal` is reserved for private use, so no public name can
 * be shadowed, and the resolver answers nothing else (it relays other names to `--resolver`, when given).
 */
export const endpointZone = 'endpoints.ingress2nginx.internal';

/** Which nginx module asks: an http upstream gets the no-endpoints server when nothing serves; a stream one gets nothing. */
export type ResolvingModule = 'http' | 'stream';

/** `<service>.<namespace>.<zone>`: the name an upstream `server … resolve` gives for a Service. */
export function serviceHost(namespace: string, name: string): string {
  return `${name}.${namespace}.${endpointZone}`;
}

/**
 * The `service=` of an upstream server: nginx asks for SRV records of `_<this>._tcp.<serviceHost>`. One
 * per module and Service port, so that the answer is the port's endpoints, each with its own target
 * port, whether the Service's target port is a number or a name.
 */
export function srvService(module: ResolvingModule, servicePort: number): string {
  return `${module}-${servicePort}`;
}

/**
 * The SRV target of one endpoint: a name of its own, so that nginx makes each endpoint a `server` of its
 * own (consistent hashing and cookie affinity hash over those names), stable while the endpoint stays.
 * The port is in the name too: one address may serve a Service port on two ports (two slices).
 */
export function endpointHost(namespace: string, name: string, endpoint: Endpoint): string {
  return `${addressLabel(endpoint)}.${serviceHost(namespace, name)}`;
}

function addressLabel(endpoint: Endpoint): string {
  if (endpoint.family === 4) return `v4-${endpoint.ip.replaceAll('.', '-')}-p${endpoint.port}`;
  return `v6-${expandIpv6(endpoint.ip).join('-')}-p${endpoint.port}`;
}

/** The eight groups of an IPv6 address, in hex without leading zeros: one spelling per address. */
function expandIpv6(ip: string): string[] {
  const [head = '', tail] = ip.toLowerCase().split('::');
  const groups = (part: string) => (part === '' ? [] : part.split(':')).flatMap((group) => (group.includes('.') ? ipv4Groups(group) : [group]));
  const front = groups(head);
  const back = tail === undefined ? [] : groups(tail);
  const zeros = Array.from({ length: 8 - front.length - back.length }, () => '0');
  return [...front, ...zeros, ...back].map((group) => Number.parseInt(group, 16).toString(16));
}

function ipv4Groups(dotted: string): string[] {
  const [a = 0, b = 0, c = 0, d = 0] = dotted.split('.').map(Number);
  return [((a << 8) | b).toString(16), ((c << 8) | d).toString(16)];
}

/** The SRV target an http upstream is given while its Service has no endpoint: nginx's own 503 server on loopback. */
export const noEndpointsHost = `no-endpoints.${endpointZone}`;

/** nginx resolves Services' endpoints at run time: they are the upstreams, the sidecar's resolver is there, and nginx can (1.27.3). */
export function resolvesEndpoints(options: Pick<TranslateOptions, 'upstreams' | 'endpointResolver' | 'nginxVersion'>): boolean {
  return options.upstreams === 'endpoints' && options.endpointResolver !== undefined && nginxFeatures(options.nginxVersion).upstreamResolve;
}

/**
 * Some Service has IPv6 (its cluster IP, or `ipFamilies`): nginx then asks for AAAA as well as A records
 * of each endpoint. Otherwise it asks for A only (`ipv6=off`), half the questions; read from the
 * Services, never from their endpoints, so that no endpoint changes the config.
 */
export function servicesHaveIpv6(services: Iterable<{ readonly spec: { readonly clusterIP?: string | undefined; readonly ipFamilies?: readonly string[] | undefined } }>): boolean {
  for (const { spec } of services) if (spec.clusterIP?.includes(':') || spec.ipFamilies?.includes('IPv6')) return true;
  return false;
}

/**
 * Whether an object names a URL by IP address (an Ingress's `auth-url` or `mirror-target`, a ConfigMap's
 * `global-auth-url`): the one place where a build that resolves endpoints still reads their addresses,
 * to refuse an address of another namespace's Service, its endpoints included (ingress/auth-endpoint.ts).
 * Only while some object does must an endpoint change build again; otherwise it changes no byte.
 */
export function namesUrlByAddress(object: { readonly metadata?: unknown; readonly data?: unknown }): boolean {
  const annotations = (object.metadata as { annotations?: unknown } | undefined)?.annotations;
  for (const values of [annotations, object.data]) {
    if (typeof values !== 'object' || values === null) continue;
    for (const value of Object.values(values)) {
      if (typeof value !== 'string' || !value.includes('://')) continue;
      for (const [, host = ''] of value.matchAll(/:\/\/(?:[^@/?#\s]*@)?(\[[^\]]*\]|[^/:?#\s]+)/g)) {
        if (isIpAddress(host.replace(/^\[|\]$/g, ''))) return true;
      }
    }
  }
  return false;
}
