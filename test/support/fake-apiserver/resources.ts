import type { JsonObject, JsonValue } from './status.js';

/**
 * The resources the fake serves, with the per-kind rules kube-apiserver's registry strategies apply
 * (pkg/registry/<group>/<kind>/strategy.go; for CRDs apiextensions-apiserver's customresource
 * strategy).
 */

export interface ResourceType {
  readonly group: string;
  /** Served versions, the preferred one first. Objects are stored once and served in any of them. */
  readonly versions: readonly string[];
  /** Plural, as in URLs. */
  readonly resource: string;
  readonly singular: string;
  readonly kind: string;
  readonly namespaced: boolean;
  readonly shortNames: readonly string[];
  readonly categories: readonly string[];
  /** Has a `/status` subresource: the main resource then ignores `.status`, and `/status` ignores the rest. */
  readonly hasStatus: boolean;
  /** Defined by a CustomResourceDefinition: CRD rules for patch types, list items, generation, status writes. */
  readonly custom: boolean;
  /**
   * When metadata.generation is set and bumped: never; on `.spec` changes (Ingress, IngressClass);
   * on any change outside metadata (EndpointSlice, and every CRD).
   */
  readonly generation: 'none' | 'spec' | 'allButMetadata';
  /** PUT of a missing object creates it (Leases). */
  readonly allowCreateOnUpdate: boolean;
  /** PUT without metadata.resourceVersion is allowed (not for Leases nor CRDs). */
  readonly allowUnconditionalUpdate: boolean;
  /** DELETE answers with the object rather than a Success Status. */
  readonly returnDeletedObject: boolean;
  /** Types with the same storage share objects: core v1 and events.k8s.io/v1 Events are one set. */
  readonly storage: string;
  /** Field selectors beyond metadata.name/metadata.namespace, with how to read each from a stored object. */
  readonly fieldLabels: Readonly<Record<string, (stored: JsonObject) => string>>;
  /** Fields decoded as metav1.MicroTime (exactly six fractional digits), as paths in the served form. */
  readonly microTimeFields: readonly (readonly string[])[];
}

export const GATEWAY_API_GROUP = 'gateway.networking.k8s.io';

function text(value: JsonValue | undefined): string {
  return typeof value === 'string' ? value : value === undefined || value === null ? '' : String(value);
}

function at(object: JsonObject, ...path: string[]): JsonValue | undefined {
  let current: JsonValue | undefined = object;
  for (const key of path) {
    if (current === null || typeof current !== 'object' || Array.isArray(current)) return undefined;
    current = current[key];
  }
  return current;
}

const builtIn = {
  shortNames: [],
  categories: [],
  hasStatus: false,
  custom: false,
  generation: 'none',
  allowCreateOnUpdate: false,
  allowUnconditionalUpdate: true,
  returnDeletedObject: false,
  fieldLabels: {},
  microTimeFields: [],
} as const;

function gatewayApi(resource: string, singular: string, kind: string, options: { namespaced: boolean; versions?: string[]; shortNames?: string[]; hasStatus?: boolean }): ResourceType {
  return {
    group: GATEWAY_API_GROUP,
    versions: options.versions ?? ['v1'],
    resource,
    singular,
    kind,
    namespaced: options.namespaced,
    shortNames: options.shortNames ?? [],
    categories: ['gateway-api'],
    hasStatus: options.hasStatus ?? true,
    custom: true,
    generation: 'allButMetadata',
    allowCreateOnUpdate: false,
    allowUnconditionalUpdate: false,
    returnDeletedObject: false,
    storage: `${GATEWAY_API_GROUP}/${resource}`,
    fieldLabels: {},
    microTimeFields: [],
  };
}

// Field labels of core v1 Events (pkg/apis/core/v1/conversion.go) and their events.k8s.io names.
const coreEventFieldLabels: Record<string, (stored: JsonObject) => string> = {
  'involvedObject.kind': (event) => text(at(event, 'involvedObject', 'kind')),
  'involvedObject.namespace': (event) => text(at(event, 'involvedObject', 'namespace')),
  'involvedObject.name': (event) => text(at(event, 'involvedObject', 'name')),
  'involvedObject.uid': (event) => text(at(event, 'involvedObject', 'uid')),
  reason: (event) => text(event.reason),
  reportingComponent: (event) => text(event.reportingComponent),
  source: (event) => text(at(event, 'source', 'component')),
  type: (event) => text(event.type),
};

export const RESOURCE_TYPES: readonly ResourceType[] = [
  { ...builtIn, group: '', versions: ['v1'], resource: 'namespaces', singular: 'namespace', kind: 'Namespace', namespaced: false, shortNames: ['ns'], hasStatus: true, storage: 'namespaces', returnDeletedObject: true, fieldLabels: { 'status.phase': (namespace) => text(at(namespace, 'status', 'phase')) } },
  { ...builtIn, group: '', versions: ['v1'], resource: 'services', singular: 'service', kind: 'Service', namespaced: true, shortNames: ['svc'], categories: ['all'], hasStatus: true, storage: 'services', returnDeletedObject: true },
  { ...builtIn, group: '', versions: ['v1'], resource: 'secrets', singular: 'secret', kind: 'Secret', namespaced: true, storage: 'secrets', fieldLabels: { type: (secret) => text(secret.type) } },
  { ...builtIn, group: '', versions: ['v1'], resource: 'configmaps', singular: 'configmap', kind: 'ConfigMap', namespaced: true, shortNames: ['cm'], storage: 'configmaps' },
  { ...builtIn, group: '', versions: ['v1'], resource: 'events', singular: 'event', kind: 'Event', namespaced: true, shortNames: ['ev'], storage: 'events', fieldLabels: coreEventFieldLabels, microTimeFields: [['eventTime'], ['series', 'lastObservedTime']] },
  { ...builtIn, group: 'networking.k8s.io', versions: ['v1'], resource: 'ingresses', singular: 'ingress', kind: 'Ingress', namespaced: true, shortNames: ['ing'], hasStatus: true, generation: 'spec', storage: 'ingresses' },
  { ...builtIn, group: 'networking.k8s.io', versions: ['v1'], resource: 'ingressclasses', singular: 'ingressclass', kind: 'IngressClass', namespaced: false, generation: 'spec', storage: 'ingressclasses' },
  { ...builtIn, group: 'discovery.k8s.io', versions: ['v1'], resource: 'endpointslices', singular: 'endpointslice', kind: 'EndpointSlice', namespaced: true, generation: 'allButMetadata', storage: 'endpointslices' },
  { ...builtIn, group: 'coordination.k8s.io', versions: ['v1'], resource: 'leases', singular: 'lease', kind: 'Lease', namespaced: true, allowCreateOnUpdate: true, allowUnconditionalUpdate: false, storage: 'leases', microTimeFields: [['spec', 'acquireTime'], ['spec', 'renewTime']] },
  {
    ...builtIn,
    group: 'events.k8s.io',
    versions: ['v1'],
    resource: 'events',
    singular: 'event',
    kind: 'Event',
    namespaced: true,
    shortNames: ['ev'],
    storage: 'events',
    fieldLabels: {
      'regarding.kind': coreEventFieldLabels['involvedObject.kind']!,
      'regarding.namespace': coreEventFieldLabels['involvedObject.namespace']!,
      'regarding.name': coreEventFieldLabels['involvedObject.name']!,
      'regarding.uid': coreEventFieldLabels['involvedObject.uid']!,
      reason: coreEventFieldLabels.reason!,
      reportingController: coreEventFieldLabels.reportingComponent!,
      type: coreEventFieldLabels.type!,
    },
    microTimeFields: [['eventTime'], ['series', 'lastObservedTime']],
  },
  { ...builtIn, group: 'admissionregistration.k8s.io', versions: ['v1'], resource: 'validatingwebhookconfigurations', singular: 'validatingwebhookconfiguration', kind: 'ValidatingWebhookConfiguration', namespaced: false, generation: 'allButMetadata', storage: 'validatingwebhookconfigurations' },
  // The CRDs themselves, as objects to read (their annotations); creating one serves nothing here.
  { ...builtIn, group: 'apiextensions.k8s.io', versions: ['v1'], resource: 'customresourcedefinitions', singular: 'customresourcedefinition', kind: 'CustomResourceDefinition', namespaced: false, shortNames: ['crd', 'crds'], hasStatus: true, generation: 'spec', storage: 'customresourcedefinitions' },
  gatewayApi('gatewayclasses', 'gatewayclass', 'GatewayClass', { namespaced: false, shortNames: ['gc'] }),
  gatewayApi('gateways', 'gateway', 'Gateway', { namespaced: true, shortNames: ['gtw'] }),
  gatewayApi('tlsroutes', 'tlsroute', 'TLSRoute', { namespaced: true, versions: ['v1', 'v1alpha3', 'v1alpha2'] }),
  gatewayApi('httproutes', 'httproute', 'HTTPRoute', { namespaced: true, versions: ['v1', 'v1beta1'] }),
  gatewayApi('grpcroutes', 'grpcroute', 'GRPCRoute', { namespaced: true, versions: ['v1'] }),
  gatewayApi('backendtlspolicies', 'backendtlspolicy', 'BackendTLSPolicy', { namespaced: true, shortNames: ['btlspolicy'] }),
  // The ReferenceGrant CRD has no status subresource (nor a status field).
  gatewayApi('referencegrants', 'referencegrant', 'ReferenceGrant', { namespaced: true, shortNames: ['refgrant'], hasStatus: false }),
];

export function apiVersionOf(type: ResourceType, version: string): string {
  return type.group === '' ? version : `${type.group}/${version}`;
}

/** The type an `apiVersion`/`kind` pair names, whether or not its group is served right now. */
export function typeForKind(apiVersion: string, kind: string): { type: ResourceType; version: string } | undefined {
  const [group, version] = apiVersion.includes('/') ? (apiVersion.split('/') as [string, string]) : ['', apiVersion];
  const type = RESOURCE_TYPES.find((candidate) => candidate.group === group && candidate.kind === kind && candidate.versions.includes(version));
  return type && { type, version };
}

// events.k8s.io/v1 Event fields and the core v1 (stored) fields they are (pkg/apis/events/v1/conversion.go).
const EVENTS_V1_TO_CORE: readonly [string, string][] = [
  ['regarding', 'involvedObject'],
  ['note', 'message'],
  ['reportingController', 'reportingComponent'],
  ['deprecatedSource', 'source'],
  ['deprecatedFirstTimestamp', 'firstTimestamp'],
  ['deprecatedLastTimestamp', 'lastTimestamp'],
  ['deprecatedCount', 'count'],
];

function renameFields(object: JsonObject, renames: readonly [string, string][]): JsonObject {
  const renamed: JsonObject = { ...object };
  for (const [from, to] of renames) {
    delete renamed[from];
    if (object[from] !== undefined) renamed[to] = object[from];
  }
  return renamed;
}

/** An object as a client sent it (any served version) → as stored (no kind/apiVersion). */
export function toStored(type: ResourceType, served: JsonObject): JsonObject {
  const { kind: _kind, apiVersion: _apiVersion, ...rest } = served;
  return type.group === 'events.k8s.io' ? renameFields(rest, EVENTS_V1_TO_CORE) : rest;
}

/** A stored object → as served at `version`, with kind/apiVersion when `withTypeMeta`. */
export function toServed(type: ResourceType, version: string, stored: JsonObject, withTypeMeta: boolean): JsonObject {
  const body =
    type.group === 'events.k8s.io'
      ? renameFields(stored, EVENTS_V1_TO_CORE.map(([served, core]) => [core, served] as [string, string]))
      : stored;
  // Key order as kube-apiserver writes objects: type meta, metadata, the rest, status last.
  const { metadata, status, ...rest } = body;
  return {
    ...(withTypeMeta ? { kind: type.kind, apiVersion: apiVersionOf(type, version) } : {}),
    ...(metadata === undefined ? {} : { metadata }),
    ...rest,
    ...(status === undefined ? {} : { status }),
  };
}
