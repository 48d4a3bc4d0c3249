import type { SourceObject } from '../../sources/snapshot.js';
import { byString, compareAge } from '../settle/precedence.js';
import type { Reporter } from '../report.js';
import { hasSupportedVersion, hasValidName, key, parseWith, type Typed } from '../resources.js';
import {
  deprecatedVersions,
  gatewayClassNameSchema,
  gatewayClassSchema,
  gatewayGroup,
  gatewayKinds,
  gatewaySchema,
  grpcRouteSchema,
  httpRouteSchema,
  routeParentsSchema,
  tlsRouteSchemas,
  type GatewaySpec,
  type GrpcRouteSpec,
  type HttpRouteSpec,
  type TlsRouteSpec,
} from './schemas.js';
import { referenceGrantSchema, type ReferenceGrantSpec } from '../reference-grants.js';
import { decideGatewayClass, gatewayApiCrds, gatewayRefusal, type GatewayRefusal } from './gateway-class.js';
import type { GatewayClassStatus } from '../../model/status.js';

/** A Gateway in the input. `spec` only for ours that passed validation and are served. */
export interface KnownGateway {
  readonly object: SourceObject;
  readonly ours: boolean;
  readonly spec?: GatewaySpec;
  /** Ours, but not served: its parameters are invalid (gateway-class.ts). */
  readonly refusal?: GatewayRefusal;
}

export interface TlsRouteInput extends Typed<TlsRouteSpec> {
  /** v1alpha2/v1alpha3: read leniently (hostnames optional in v1alpha2, several rules). */
  readonly legacy: boolean;
}

export interface GatewayInputs {
  /** Every Gateway, ours or not, by `namespace/name`: a parentRef to a missing one is NoMatchingParent. */
  readonly knownGateways: ReadonlyMap<string, KnownGateway>;
  /** Ours and valid, oldest first (the order listener conflicts are settled in). */
  readonly gateways: readonly Typed<GatewaySpec>[];
  /** TLSRoutes with a parentRef to one of our Gateways or to a missing Gateway; sorted by namespace/name. */
  readonly routes: readonly TlsRouteInput[];
  /** HTTPRoutes chosen the same way; sorted by namespace/name. */
  readonly httpRoutes: readonly Typed<HttpRouteSpec>[];
  /** GRPCRoutes chosen the same way; sorted by namespace/name. */
  readonly grpcRoutes: readonly Typed<GrpcRouteSpec>[];
  /** BackendTLSPolicies, not validated yet: only those that affect our traffic are. Sorted oldest first. */
  readonly policies: readonly SourceObject[];
  readonly grants: readonly Typed<ReferenceGrantSpec>[];
  /** Labels of every Namespace in the input. */
  readonly namespaceLabels: ReadonlyMap<string, Readonly<Record<string, string>>>;
  /**
   * The status of every GatewayClass in the input that names our controller: the one `--gateway-class`
   * names and any other (another deployment's, which computes the same status: the writes agree).
   */
  readonly gatewayClasses: readonly GatewayClassStatus[];
}

/** Picks the Gateway API kinds (and Namespaces) out of the snapshot, checked and typed. */
export function readGatewayInputs(
  objects: readonly SourceObject[],
  gatewayClass: string,
  controllerName: string,
  report: Reporter,
  served?: ReadonlySet<string>,
): GatewayInputs {
  const byKind = new Map<string, SourceObject[]>();
  for (const object of objects) {
    const versions = gatewayKinds[object.kind];
    if (!versions) continue;
    if (!hasSupportedVersion(object, versions, report) || !hasValidName(object, report)) continue;
    const list = byKind.get(object.kind) ?? [];
    list.push(object);
    byKind.set(object.kind, list);
  }
  const ofKind = (kind: string) => [...(byKind.get(kind) ?? [])].sort((a, b) => compareAge(a, b));

  const crds = gatewayApiCrds(ofKind('CustomResourceDefinition'));
  const classObject = ofKind('GatewayClass').find((c) => c.metadata.name === gatewayClass);
  const classDecision = decideGatewayClass(classObject, controllerName, crds, report);
  const otherClasses = ofKind('GatewayClass')
    .filter((c) => c !== classObject && gatewayClassSchema.safeParse(c.raw).data?.spec.controllerName === controllerName)
    .flatMap((c) => decideGatewayClass(c, controllerName, crds, report).status ?? []);

  const knownGateways = new Map<string, KnownGateway>();
  const gateways: Typed<GatewaySpec>[] = [];
  for (const object of ofKind('Gateway')) {
    const id = key(object.metadata.namespace, object.metadata.name);
    const loose = gatewayClassNameSchema.safeParse(object.raw);
    // A Gateway of the class that this data plane is not for (`--gateway`) is another data plane's.
    const ours = loose.success && loose.data.spec.gatewayClassName === gatewayClass && (served === undefined || served.has(id));
    if (!ours) {
      knownGateways.set(id, { object, ours: false });
      continue;
    }
    const refusal = gatewayRefusal(object, classDecision.refusal, report);
    if (refusal) {
      knownGateways.set(id, { object, ours: true, refusal });
      continue;
    }
    const parsed = parseWith(gatewaySchema, object, report);
    knownGateways.set(id, { object, ours: true, ...(parsed && { spec: parsed.spec }) });
    if (parsed) gateways.push({ object, spec: parsed.spec });
  }
  for (const id of [...(served ?? [])].sort()) {
    const known = knownGateways.get(id);
    if (known?.ours) continue;
    const why = known ? `is not of class ${gatewayClass} (--gateway-class)` : 'is not in the input';
    report.warning('served-gateway-missing', known?.object, `--gateway ${id} ${why}: this data plane serves nothing for it`);
  }

  const routes: TlsRouteInput[] = [];
  for (const object of [...(byKind.get('TLSRoute') ?? [])].sort(byString((o) => key(o.metadata.namespace, o.metadata.name)))) {
    if (!concernsOurGateways(object, knownGateways)) continue;
    const deprecated = deprecatedVersions[object.kind]?.includes(object.apiVersion) ?? false;
    if (deprecated) {
      report.info(
        'api-version-deprecated',
        object,
        `TLSRoute ${object.apiVersion} is deprecated; move to ${gatewayGroup}/v1 (hostnames required, exactly one rule)`,
        ['apiVersion'],
      );
    }
    const schema = tlsRouteSchemas[object.apiVersion];
    if (!schema) continue;
    const parsed = parseWith(schema, object, report);
    if (parsed) routes.push({ object, spec: parsed.spec, legacy: deprecated });
  }

  const httpRoutes: Typed<HttpRouteSpec>[] = [];
  for (const object of [...(byKind.get('HTTPRoute') ?? [])].sort(byString((o) => key(o.metadata.namespace, o.metadata.name)))) {
    if (!concernsOurGateways(object, knownGateways)) continue;
    const parsed = parseWith(httpRouteSchema, object, report);
    if (parsed) httpRoutes.push({ object, spec: parsed.spec });
  }

  const grpcRoutes: Typed<GrpcRouteSpec>[] = [];
  for (const object of [...(byKind.get('GRPCRoute') ?? [])].sort(byString((o) => key(o.metadata.namespace, o.metadata.name)))) {
    if (!concernsOurGateways(object, knownGateways)) continue;
    const parsed = parseWith(grpcRouteSchema, object, report);
    if (parsed) grpcRoutes.push({ object, spec: parsed.spec });
  }

  const grants: Typed<ReferenceGrantSpec>[] = [];
  for (const object of ofKind('ReferenceGrant')) {
    const parsed = parseWith(referenceGrantSchema, object, report);
    if (parsed) grants.push({ object, spec: parsed.spec });
  }

  const namespaceLabels = new Map<string, Readonly<Record<string, string>>>();
  for (const object of ofKind('Namespace')) namespaceLabels.set(object.metadata.name, object.metadata.labels);

  return {
    knownGateways,
    gateways,
    routes,
    httpRoutes,
    grpcRoutes,
    policies: ofKind('BackendTLSPolicy'),
    grants,
    namespaceLabels,
    gatewayClasses: [...(classDecision.status ? [classDecision.status] : []), ...otherClasses],
  };
}

/** A route is ours when a parentRef names one of our Gateways, or a Gateway that is not in the input at all. */
function concernsOurGateways(route: SourceObject, knownGateways: ReadonlyMap<string, KnownGateway>): boolean {
  const loose = routeParentsSchema.safeParse(route.raw);
  if (!loose.success) return false;
  return (loose.data.spec?.parentRefs ?? []).some((ref) => {
    if (typeof ref !== 'object' || ref === null) return false;
    const r = ref as Record<string, unknown>;
    if ((r.group ?? gatewayGroup) !== gatewayGroup || (r.kind ?? 'Gateway') !== 'Gateway' || typeof r.name !== 'string') return false;
    const namespace = typeof r.namespace === 'string' ? r.namespace : route.metadata.namespace;
    const gateway = knownGateways.get(key(namespace, r.name));
    return gateway === undefined || gateway.ours;
  });
}

