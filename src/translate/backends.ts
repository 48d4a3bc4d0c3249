import { isIP } from 'node:net';
import type { UpstreamServer } from '../model/nginx.js';
import { isDnsHostname, isIpAddress, isKubernetesName, isPortName } from './allowlist.js';
import { key, type Resources } from './resources.js';

export interface ServiceBackendRef {
  readonly name: string;
  readonly port: { readonly number?: number; readonly name?: string };
}

export interface ResolvedBackend {
  /** Upstream block name: `namespace_service_port`, stable and unique per Service port. */
  readonly upstream: string;
  readonly servers: readonly UpstreamServer[];
  /** `service.namespace.svc.<cluster-domain>`: the name a backend certificate is expected to carry. */
  readonly serviceDnsName: string;
  readonly description: string;
}

export type BackendResolution =
  | { readonly ok: true; readonly value: ResolvedBackend; readonly warning?: string }
  | { readonly ok: false; readonly problem: string; readonly field?: readonly string[] };

/**
 * A Service we know resolves to its ClusterIP (ExternalName to its DNS name); an unknown one to its
 * cluster DNS name with a warning, since nginx then depends on DNS at load time.
 */
export function resolveServiceBackend(
  resources: Resources,
  namespace: string,
  ref: ServiceBackendRef,
  clusterDomain: string,
): BackendResolution {
  if (!isKubernetesName(ref.name)) {
    return { ok: false, problem: `service name ${JSON.stringify(ref.name)} is not a valid Kubernetes name`, field: ['name'] };
  }
  if (ref.port.name !== undefined && !isPortName(ref.port.name)) {
    return { ok: false, problem: `port name ${JSON.stringify(ref.port.name)} is not a valid port name`, field: ['port', 'name'] };
  }
  const serviceDnsName = `${ref.name}.${namespace}.svc.${clusterDomain}`;
  const id = key(namespace, ref.name);
  const service = resources.services.get(id);
  if (!service) {
    if (ref.port.number === undefined) {
      return {
        ok: false,
        problem: `Service ${id} is not in the input, so its port "${ref.port.name}" cannot be resolved; add the Service or use port.number`,
      };
    }
    return {
      ok: true,
      value: backend(namespace, ref.name, ref.port.number, [{ address: `${serviceDnsName}:${ref.port.number}` }], serviceDnsName),
      warning: `Service ${id} is not in the input; using its cluster DNS name ${serviceDnsName}, which nginx must resolve when it loads the config`,
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
    const external = spec.externalName?.toLowerCase() ?? '';
    if (!isDnsHostname(external)) {
      return { ok: false, problem: `Service ${id} is ExternalName but spec.externalName is not a valid host name` };
    }
    return { ok: true, value: backend(namespace, ref.name, port, [{ address: `${external}:${port}` }], serviceDnsName) };
  }
  const clusterIP = spec.clusterIP;
  if (clusterIP === undefined || clusterIP === '' || clusterIP === 'None') {
    return {
      ok: true,
      value: backend(namespace, ref.name, port, [{ address: `${serviceDnsName}:${port}` }], serviceDnsName),
      warning: `Service ${id} has no cluster IP; using its cluster DNS name ${serviceDnsName}`,
    };
  }
  // isIpAddress, not bare isIP: that one also takes IPv6 zone IDs (`fe80::1%eth0`), which nginx refuses.
  if (!isIpAddress(clusterIP)) return { ok: false, problem: `Service ${id} has an invalid spec.clusterIP` };
  const family = isIP(clusterIP);
  const address = family === 6 ? `[${clusterIP}]:${port}` : `${clusterIP}:${port}`;
  return { ok: true, value: backend(namespace, ref.name, port, [{ address }], serviceDnsName) };
}

function backend(
  namespace: string,
  name: string,
  port: number,
  servers: UpstreamServer[],
  serviceDnsName: string,
): ResolvedBackend {
  return {
    upstream: `${namespace}_${name}_${port}`,
    servers,
    serviceDnsName,
    description: `Service ${namespace}/${name} port ${port}`,
  };
}
