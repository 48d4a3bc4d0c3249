import { isIP } from 'node:net';
import type { HttpUpstream, UpstreamServer } from '../model/nginx.js';
import type { ServicePortRef } from '../model/provenance.js';
import { specialHostName } from './checks/addresses.js';
import { isDnsHostname, isIpAddress, isKubernetesName, isPortName } from './checks/allowlist.js';
import { clusterIpStandIn } from './cluster-provided.js';
import { endpointAddress, serviceEndpoints, serviceHost, srvService } from './endpoints.js';
import { key, type Resources } from './resources.js';
import { upstreamName } from './upstream-names.js';

export interface ServiceBackendRef {
  readonly name: string;
  readonly port: { readonly number?: number; readonly name?: string };
}

export interface ResolvedBackend {
  /** Upstream block name: `namespace_service_port` behind two letters of its digest (upstream-names.ts), stable and unique per Service port. */
  readonly upstream: string;
  readonly servers: readonly UpstreamServer[];
  /**
   * `name:port` that nginx resolves when a connection or request comes (`resolver`), instead of an
   * upstream block: a name that does not resolve then fails that request, never the config load.
   */
  readonly runtimeName?: string;
  /** `service.namespace.svc.<cluster-domain>`: the name a backend certificate is expected to carry. */
  readonly serviceDnsName: string;
  readonly description: string;
  readonly service: ServicePortRef;
  /** How the upstream block picks an endpoint, when not round-robin (ingress/stickiness.ts); `cookieAffinity` when it hashes by the affinity cookie. */
  readonly balancing?: Pick<HttpUpstream, 'hashKey' | 'leastConn'> & { readonly cookieAffinity?: true };
  /** `auth-keepalive*`: the auth service's own block keeps this many connections, with these directives. */
  readonly keepalive?: Pick<HttpUpstream, 'keepalive' | 'keepaliveDirectives'>;
}

/**
 * The address of the http server that answers every request with 500: an HTTPRoute's share of
 * backends that cannot be used is weighted onto it in the rule's upstream block, as the Gateway API asks.
 */
export function internalErrorServer(runDir: string): string {
  return `unix:${runDir}/http-500.sock`;
}

/**
 * The same for a GRPCRoute: a server that answers 503 over HTTP/2 (what grpc_pass speaks), which gRPC
 * clients read as UNAVAILABLE, the status the GRPCRoute spec asks for. A plain HTTP/1 server would fail
 * as an upstream error, which nginx retries on the other backends.
 */
export function internalGrpcErrorServer(runDir: string): string {
  return `unix:${runDir}/grpc-503.sock`;
}

/** How far backends may be trusted: set by the operator, the same for every tenant. */
export interface BackendPolicy {
  readonly clusterDomain: string;
  /** `--resolver` was given: names may be resolved by nginx at request time. */
  readonly runtimeDns: boolean;
  /** `--disable-svc-external-name`: ExternalName Services are never backends. */
  readonly externalNameDisabled: boolean;
  /** `--external-name-suffix`: when not empty, an ExternalName must end in one of these domains. */
  readonly externalNameSuffixes: readonly string[];
  /** `--upstreams endpoints`: Services are reached at their ready EndpointSlice addresses. */
  readonly endpoints: boolean;
  /** With `endpoints`: nginx resolves them at run time from the sidecar's resolver (`TranslateOptions.endpointResolver`). */
  readonly resolvedEndpoints?: boolean;
  /** A Service without `spec.clusterIP` gets one when the manifests are applied: use a stand-in (`TranslateOptions.expectClusterProvided`). */
  readonly clusterAssignsAddresses?: boolean;
  /** `--system-ca-bundle`: what the certificate of an https endpoint a tenant names by URL (`auth-url`) is verified against. */
  readonly trustedCaBundle: string;
}

export type BackendResolution =
  | {
      readonly ok: true;
      readonly value: ResolvedBackend;
      readonly warning?: string;
      /** The diagnostic code of `warning`: `service-dns-name` unless given. */
      readonly warningCode?: string;
    }
  | {
      readonly ok: false;
      readonly problem: string;
      readonly field?: readonly string[];
      /** The Service is fine but has no ready endpoints (`--upstreams endpoints`). */
      readonly noEndpoints?: true;
    };

/**
 * A Service we know resolves to its ClusterIP. A backend known only by a DNS name (an ExternalName, a
 * headless Service, a Service that is not in the input) is resolved by nginx at request time when
 * `--resolver` is given, and cannot be used otherwise: a name in an upstream block is resolved when
 * nginx loads the config, and one that does not resolve would stop the whole config from loading.
 */
export function resolveServiceBackend(
  resources: Resources,
  namespace: string,
  ref: ServiceBackendRef,
  policy: BackendPolicy,
): BackendResolution {
  if (!isKubernetesName(ref.name)) {
    return { ok: false, problem: `service name ${JSON.stringify(ref.name)} is not a valid Kubernetes name`, field: ['name'] };
  }
  if (ref.port.name !== undefined && !isPortName(ref.port.name)) {
    return { ok: false, problem: `port name ${JSON.stringify(ref.port.name)} is not a valid port name`, field: ['port', 'name'] };
  }
  const serviceDnsName = `${ref.name}.${namespace}.svc.${policy.clusterDomain}`;
  const id = key(namespace, ref.name);
  const service = resources.services.get(id);
  if (!service) {
    if (ref.port.number === undefined) {
      return {
        ok: false,
        problem: `Service ${id} is not in the input, so its port "${ref.port.name}" cannot be resolved; add the Service or use port.number`,
      };
    }
    if (!policy.runtimeDns) {
      return { ok: false, problem: `Service ${id} is not in the input (with --resolver, nginx would look up ${serviceDnsName} at request time)` };
    }
    return {
      ok: true,
      value: byName(namespace, ref.name, ref.port.number, serviceDnsName, serviceDnsName),
      warning: `Service ${id} is not in the input; nginx looks up its cluster DNS name ${serviceDnsName} at request time`,
    };
  }
  const servicePort = (service.spec.ports ?? []).find((p) =>
    ref.port.number !== undefined ? p.port === ref.port.number : p.name === ref.port.name,
  );
  if (!servicePort) {
    const wanted = ref.port.number !== undefined ? `port ${ref.port.number}` : `a port named "${ref.port.name}"`;
    return { ok: false, problem: `Service ${id} has no ${wanted}` };
  }
  const port = servicePort.port;
  const spec = service.spec;
  if (spec.type === 'ExternalName') {
    const external = externalNameProblem(spec.externalName ?? '', policy);
    if (!external.ok) return { ok: false, problem: `Service ${id} is ExternalName: ${external.problem}` };
    if (!policy.runtimeDns) {
      return {
        ok: false,
        problem: `Service ${id} is ExternalName (${external.value}), which nginx can reach only with --resolver (it looks the name up at request time, so a name that does not resolve cannot stop the config from loading)`,
      };
    }
    return { ok: true, value: byName(namespace, ref.name, port, external.value, serviceDnsName) };
  }
  if (policy.endpoints) return endpointsBackend(resources, namespace, ref.name, servicePort, serviceDnsName, policy.resolvedEndpoints === true);
  const clusterIP = spec.clusterIP;
  if ((clusterIP === undefined || clusterIP === '') && policy.clusterAssignsAddresses) {
    const standIn = backend(namespace, ref.name, port, [{ address: `${clusterIpStandIn}:${port}` }], serviceDnsName);
    return {
      ok: true,
      value: {
        ...standIn,
        description: `${standIn.description}; its cluster IP is assigned when the manifests are applied, ${clusterIpStandIn} stands in`,
        service: { ...standIn.service, addressAssignedByCluster: true },
      },
    };
  }
  if (clusterIP === undefined || clusterIP === '' || clusterIP === 'None') {
    if (!policy.runtimeDns) {
      const why = clusterIP === 'None' ? '(headless)' : 'in the input (the cluster assigns one when it is applied; --strict asks for it)';
      return { ok: false, problem: `Service ${id} has no cluster IP ${why}; with --resolver, nginx would look up ${serviceDnsName} at request time` };
    }
    return {
      ok: true,
      value: byName(namespace, ref.name, port, serviceDnsName, serviceDnsName),
      warning: `Service ${id} has no cluster IP; nginx looks up its cluster DNS name ${serviceDnsName} at request time`,
    };
  }
  // isIpAddress, not bare isIP: that one also takes IPv6 zone IDs (`fe80::1%eth0`), which nginx refuses.
  if (!isIpAddress(clusterIP)) return { ok: false, problem: `Service ${id} has an invalid spec.clusterIP` };
  const family = isIP(clusterIP);
  const address = family === 6 ? `[${clusterIP}]:${port}` : `${clusterIP}:${port}`;
  return { ok: true, value: backend(namespace, ref.name, port, [{ address }], serviceDnsName) };
}

/**
 * A Service reached at its endpoints (endpoints.ts picks them, as kube-proxy does). Written into the
 * upstream block, or, with the sidecar's resolver, one `server` that nginx resolves at run time: an SRV
 * name whose answer is every endpoint with its own target port, so the block needs no reload when
 * Pods come and go, and a Service without endpoints is answered by nginx's no-endpoints server.
 */
function endpointsBackend(
  resources: Resources,
  namespace: string,
  name: string,
  servicePort: { readonly name?: string | undefined; readonly port: number },
  serviceDnsName: string,
  resolved: boolean,
): BackendResolution {
  if (resolved) {
    const resolve = { httpService: srvService('http', servicePort.port), streamService: srvService('stream', servicePort.port) };
    const value = backend(namespace, name, servicePort.port, [{ address: serviceHost(namespace, name), resolve }], serviceDnsName);
    return { ok: true, value: { ...value, description: `${value.description} (endpoints resolved by nginx at run time)` } };
  }
  const id = key(namespace, name);
  const { endpoints, refused } = serviceEndpoints((resources.endpointSlices.get(id) ?? []).map((slice) => slice.spec), servicePort.name);
  const left = refused.length === 0 ? '' : `; its EndpointSlices' addresses ${refused.join(', ')} are left out, since no tenant may send traffic there`;
  if (endpoints.length === 0) return { ok: false, problem: `Service ${id} has no ready endpoints for port ${servicePort.port}${left}`, noEndpoints: true };
  const servers = endpoints.map(endpointAddress).sort().map((address) => ({ address }));
  const value = backend(namespace, name, servicePort.port, servers, serviceDnsName);
  return { ok: true, value, ...(refused.length > 0 && { warning: `Service ${id}${left.slice(1)}`, warningCode: 'endpoint-address-refused' }) };
}

/**
 * An ExternalName that may be handed to nginx: a DNS name, not an address in disguise (`127.0.0.1`,
 * `2130706433` and `0x7f.1` all reach the loopback through the C library), not the node or a metadata
 * service (addresses.ts), and inside the operator's allowed domains when there are any.
 */
export function externalNameProblem(
  raw: string,
  policy: Pick<BackendPolicy, 'externalNameDisabled' | 'externalNameSuffixes'>,
): { ok: true; value: string } | { ok: false; problem: string } {
  if (policy.externalNameDisabled) {
    return { ok: false, problem: 'ExternalName backends are switched off (--disable-svc-external-name); the backend cannot be used' };
  }
  const name = raw.toLowerCase().replace(/\.$/, '');
  if (!isDnsHostname(name)) return { ok: false, problem: 'spec.externalName is not a valid host name' };
  const special = specialHostName(name);
  if (special !== undefined) return { ok: false, problem: `spec.externalName ${name} ${special}; refused (a tenant must not point nginx at the node, a metadata service or any address)` };
  const allowed = policy.externalNameSuffixes;
  if (allowed.length > 0 && !allowed.some((suffix) => name === suffix || name.endsWith(`.${suffix}`))) {
    return { ok: false, problem: `spec.externalName ${name} is outside the allowed domains (--external-name-suffix ${allowed.join(', ')})` };
  }
  return { ok: true, value: name };
}

function byName(namespace: string, name: string, port: number, host: string, serviceDnsName: string): ResolvedBackend {
  return { ...backend(namespace, name, port, [{ address: `${host}:${port}` }], serviceDnsName), runtimeName: `${host}:${port}` };
}

function backend(
  namespace: string,
  name: string,
  port: number,
  servers: UpstreamServer[],
  serviceDnsName: string,
): ResolvedBackend {
  return {
    upstream: upstreamName(`${namespace}_${name}_${port}`),
    servers,
    serviceDnsName,
    description: `Service ${namespace}/${name} port ${port}`,
    service: { namespace, name, port },
  };
}

/** What a location's backend is balanced by, and whether that is the affinity cookie. */
export type Balancing = NonNullable<ResolvedBackend['balancing']>;
