/**
 * Every kind the cluster mode touches, and how: the one list the watches and the status writes are
 * derived from. deploy/base/rbac.yaml grants exactly the calls made through it (a test records them).
 */

export interface ApiKind {
  readonly kind: string;
  /** API group; `''` for the core group. */
  readonly group: string;
  readonly version: string;
  /** The resource name in URLs, e.g. `ingresses`. */
  readonly plural: string;
  readonly namespaced: boolean;
}

/** Why a kind is list+watched: always, or only in some configurations. */
export type WatchCondition =
  | 'always'
  /** `--configmap` is set: the one controller ConfigMap. */
  | 'configmap'
  /** `--upstreams endpoints`. */
  | 'endpoints'
  /** The Gateway API CRDs are served (discovered at start and rechecked). */
  | 'gateway-api';

export interface WatchedKind extends ApiKind {
  readonly when: WatchCondition;
  /**
   * How the leader writes this kind's status subresource: a merge patch where the whole status is
   * ours, a replace at a resourceVersion where other controllers own entries of its lists.
   */
  readonly statusWrite?: 'patch' | 'update';
  /** Versions to try in order; the first one served is watched. */
  readonly versions: readonly string[];
}

const gatewayGroup = 'gateway.networking.k8s.io';

export const watchedKinds: readonly WatchedKind[] = [
  { kind: 'Ingress', group: 'networking.k8s.io', version: 'v1', versions: ['v1'], plural: 'ingresses', namespaced: true, when: 'always', statusWrite: 'patch' },
  { kind: 'IngressClass', group: 'networking.k8s.io', version: 'v1', versions: ['v1'], plural: 'ingressclasses', namespaced: false, when: 'always' },
  { kind: 'Service', group: '', version: 'v1', versions: ['v1'], plural: 'services', namespaced: true, when: 'always' },
  // Secrets are watched in two narrow ways, never all of them: see cluster/secrets.ts.
  { kind: 'Secret', group: '', version: 'v1', versions: ['v1'], plural: 'secrets', namespaced: true, when: 'always' },
  { kind: 'ConfigMap', group: '', version: 'v1', versions: ['v1'], plural: 'configmaps', namespaced: true, when: 'configmap' },
  { kind: 'Namespace', group: '', version: 'v1', versions: ['v1'], plural: 'namespaces', namespaced: false, when: 'gateway-api' },
  { kind: 'EndpointSlice', group: 'discovery.k8s.io', version: 'v1', versions: ['v1'], plural: 'endpointslices', namespaced: true, when: 'endpoints' },
  { kind: 'GatewayClass', group: gatewayGroup, version: 'v1', versions: ['v1', 'v1beta1'], plural: 'gatewayclasses', namespaced: false, when: 'gateway-api', statusWrite: 'patch' },
  { kind: 'Gateway', group: gatewayGroup, version: 'v1', versions: ['v1', 'v1beta1'], plural: 'gateways', namespaced: true, when: 'gateway-api', statusWrite: 'patch' },
  { kind: 'TLSRoute', group: gatewayGroup, version: 'v1', versions: ['v1', 'v1alpha3', 'v1alpha2'], plural: 'tlsroutes', namespaced: true, when: 'gateway-api', statusWrite: 'update' },
  { kind: 'HTTPRoute', group: gatewayGroup, version: 'v1', versions: ['v1', 'v1beta1'], plural: 'httproutes', namespaced: true, when: 'gateway-api', statusWrite: 'update' },
  { kind: 'GRPCRoute', group: gatewayGroup, version: 'v1', versions: ['v1'], plural: 'grpcroutes', namespaced: true, when: 'gateway-api', statusWrite: 'update' },
  { kind: 'BackendTLSPolicy', group: gatewayGroup, version: 'v1', versions: ['v1', 'v1alpha3'], plural: 'backendtlspolicies', namespaced: true, when: 'gateway-api', statusWrite: 'update' },
  { kind: 'ReferenceGrant', group: gatewayGroup, version: 'v1', versions: ['v1', 'v1beta1'], plural: 'referencegrants', namespaced: true, when: 'gateway-api' },
];

/**
 * The Gateway API CRDs, each watched by its name (`<plural>.gateway.networking.k8s.io`, for the kinds
 * above) once the group is served, never all CRDs: their bundle-version annotation is the GatewayClass's
 * SupportedVersion.
 */
export const customResourceDefinitionKind: ApiKind = {
  kind: 'CustomResourceDefinition',
  group: 'apiextensions.k8s.io',
  version: 'v1',
  plural: 'customresourcedefinitions',
  namespaced: false,
};

/** Written, never watched: leader election (read, created, replaced) and Events (created). */
export const leaseKind: ApiKind = { kind: 'Lease', group: 'coordination.k8s.io', version: 'v1', plural: 'leases', namespaced: true };
export const eventKind: ApiKind = { kind: 'Event', group: 'events.k8s.io', version: 'v1', plural: 'events', namespaced: true };

export function apiVersionOf(kind: Pick<ApiKind, 'group' | 'version'>): string {
  return kind.group === '' ? kind.version : `${kind.group}/${kind.version}`;
}

/** `/api/v1` or `/apis/<group>/<version>`, then the namespace if any, then the resource. */
export function collectionPath(kind: ApiKind, namespace?: string): string {
  const base = kind.group === '' ? `/api/${kind.version}` : `/apis/${kind.group}/${kind.version}`;
  return namespace !== undefined && kind.namespaced ? `${base}/namespaces/${namespace}/${kind.plural}` : `${base}/${kind.plural}`;
}

export function objectPath(kind: ApiKind, namespace: string, name: string): string {
  return `${collectionPath(kind, kind.namespaced ? namespace : undefined)}/${name}`;
}
