import type { FieldPath } from '../../model/diagnostics.js';
import { isKubernetesName, isNamespaceName } from '../checks/allowlist.js';
import { resolveServiceBackend, type BackendPolicy, type ResolvedBackend } from '../backends.js';
import type { Reporter } from '../report.js';
import { key, type Resources } from '../resources.js';
import { condition, reportReason } from './conditions.js';
import { anyHostname, checkHostname, intersectHostnames } from './hostnames.js';
import type { SourceObject } from '../../sources/snapshot.js';
import type { KnownGateway, TlsRouteInput } from './inputs.js';
import type { Listener } from './listeners.js';
import type { Condition, ParentStatus } from '../../model/status.js';
import type { ReferenceGrants } from '../reference-grants.js';
import { gatewayGroup, type BackendRef, type ParentReferenceSpec } from './schemas.js';

/** A backendRef that resolved to a Service port. */
export interface RouteBackend {
  readonly backend: ResolvedBackend;
  readonly weight: number;
  readonly namespace: string;
  readonly service: string;
  /** Name of the Service port, if it has one: BackendTLSPolicy `sectionName` matches it. */
  readonly portName?: string;
  readonly field: FieldPath;
}

export interface RouteBackends {
  /** Resolved refs, including those of weight 0 (they take no traffic but are still valid). */
  readonly resolved: readonly RouteBackend[];
  /** Summed weight of refs that did not resolve. */
  readonly rejectedWeight: number;
  readonly condition: Condition;
}

export interface RouteContext {
  readonly resources: Resources;
  readonly report: Reporter;
  readonly grants: ReferenceGrants;
  readonly backendPolicy: BackendPolicy;
}

/**
 * Resolves the backendRefs of the route's rule. Unlike Ingress, a Service that is not in the input is
 * BackendNotFound and its share of connections is closed: the Gateway API says an invalid backend must
 * reject its share, and falling back to the cluster DNS name would route traffic the status calls broken.
 */
export function resolveRouteBackends(route: TlsRouteInput, ctx: RouteContext): RouteBackends {
  const object = route.object;
  const rules = route.spec.rules;
  if (rules.length > 1) {
    ctx.report.warning(
      'route-rules-ignored',
      object,
      `only the first of ${rules.length} rules is used (TLSRoute ${gatewayGroup}/v1 has exactly one rule); merge the backendRefs into it`,
      ['spec', 'rules'],
    );
  }
  return resolveBackendRefs(object, rules[0]?.backendRefs ?? [], ['spec', 'rules', 0], ctx);
}

/**
 * Resolves one rule's backendRefs (TLSRoute or HTTPRoute): each must be a core Service in the route's
 * namespace or one a ReferenceGrant opens to the route's kind. What does not resolve keeps its weight as
 * `rejectedWeight`: that share of connections is closed (TLSRoute) or answered 500 (HTTPRoute).
 */
export function resolveBackendRefs(object: SourceObject, refs: readonly BackendRef[], rulePath: FieldPath, ctx: RouteContext): RouteBackends {
  const routeKind = object.kind;
  const unit = routeKind === 'TLSRoute' ? 'connections' : 'requests';
  const outcome = routeKind === 'TLSRoute' ? 'closed' : routeKind === 'GRPCRoute' ? 'answered UNAVAILABLE' : 'answered 500';
  const resolved: RouteBackend[] = [];
  const failures: { reason: string; message: string }[] = [];
  let rejectedWeight = 0;
  refs.forEach((ref, index) => {
    const field: FieldPath = [...rulePath, 'backendRefs', index];
    const weight = ref.weight ?? 1;
    const fail = (reason: string, message: string, at: FieldPath = field) => {
      failures.push({ reason, message });
      rejectedWeight += weight;
      const share = weight > 0 ? `; its share of ${unit} (weight ${weight}) is ${outcome}` : '';
      reportReason(ctx.report, object, reason, `${message}${share}`, at);
    };
    const group = ref.group ?? '';
    const kind = ref.kind ?? 'Service';
    if (group !== '' || kind !== 'Service') {
      fail('InvalidKind', `backendRefs[${index}] refers to ${kind} in group "${group}"; only core Services are supported`);
      return;
    }
    const namespace = ref.namespace ?? object.metadata.namespace;
    if (!isNamespaceName(namespace) || !isKubernetesName(ref.name)) {
      fail('BackendNotFound', `backendRefs[${index}] is not a valid Service name`);
      return;
    }
    const id = key(namespace, ref.name);
    const permitted = ctx.grants.permits({
      from: { group: gatewayGroup, kind: routeKind, namespace: object.metadata.namespace },
      to: { group: '', kind: 'Service', namespace, name: ref.name },
    });
    if (!permitted) {
      fail(
        'RefNotPermitted',
        `Service ${id} is in another namespace and no ReferenceGrant in ${namespace} allows ${routeKind}s from ${object.metadata.namespace} to use it; add one (from: ${routeKind} in ${object.metadata.namespace}, to: Service)`,
      );
      return;
    }
    const service = ctx.resources.services.get(id);
    if (!service) {
      fail('BackendNotFound', `Service ${id} is not in the input`);
      return;
    }
    const port = ref.port ?? 0;
    const resolution = resolveServiceBackend(ctx.resources, namespace, { name: ref.name, port: { number: port } }, ctx.backendPolicy);
    if (!resolution.ok) {
      fail('BackendNotFound', resolution.problem, resolution.field ? [...field, ...resolution.field] : field);
      return;
    }
    if (resolution.warning) ctx.report.warning(resolution.warningCode ?? 'service-dns-name', object, resolution.warning, field);
    const portName = (service.spec.ports ?? []).find((p) => p.port === port)?.name;
    resolved.push({
      backend: resolution.value,
      weight,
      namespace,
      service: ref.name,
      ...(portName !== undefined && portName !== '' && { portName }),
      field,
    });
  });
  const first = failures[0];
  const resolvedCondition = first
    ? condition('ResolvedRefs', 'False', first.reason, failures.map((f) => f.message).join('; '))
    : condition('ResolvedRefs', 'True', 'ResolvedRefs', 'All references resolved');
  return { resolved, rejectedWeight, condition: resolvedCondition };
}

/** Route hostnames that passed validation, with their index; `*` for a v1alpha2 route without any. */
export interface RouteHostname {
  readonly hostname: string;
  readonly index?: number;
}

export function routeHostnames(route: { readonly object: SourceObject; readonly spec: { readonly hostnames?: readonly string[] | undefined } }, report: Reporter): RouteHostname[] {
  const hostnames = route.spec.hostnames;
  if (hostnames === undefined || hostnames.length === 0) return [{ hostname: anyHostname }];
  const valid: RouteHostname[] = [];
  const seen = new Set<string>();
  hostnames.forEach((hostname, index) => {
    const checked = checkHostname(hostname);
    if (!checked.ok) {
      report.error('hostname-invalid', route.object, `hostname ${checked.problem}; it is ignored`, ['spec', 'hostnames', index]);
      return;
    }
    if (seen.has(checked.value)) return;
    seen.add(checked.value);
    valid.push({ hostname: checked.value, index });
  });
  return valid;
}

/** A route attached to one listener, with the host names they share. */
export interface Attachment {
  readonly listener: Listener;
  readonly hostnames: readonly { readonly hostname: string; readonly routeHostnameIndex?: number }[];
}

export interface ParentOutcome {
  readonly status: ParentStatus;
  readonly attachments: readonly Attachment[];
}

export interface AttachContext {
  readonly report: Reporter;
  readonly controllerName: string;
  readonly knownGateways: ReadonlyMap<string, KnownGateway>;
  readonly listeners: ReadonlyMap<string, readonly Listener[]>;
}

/** What attaching needs of a route of either kind. */
export interface AttachingRoute {
  readonly object: SourceObject;
  readonly spec: { readonly parentRefs?: readonly ParentReferenceSpec[] | undefined };
}

/**
 * Evaluates each parentRef that names one of our Gateways (or a Gateway missing from the input):
 * the listeners it selects (sectionName, port), which of those admit the route (protocol TLS, kind,
 * namespace), and which of those share a host name with it.
 */
export function attachRoute(
  route: AttachingRoute,
  hostnames: readonly RouteHostname[],
  resolvedRefs: Condition,
  ctx: AttachContext,
): ParentOutcome[] {
  const object = route.object;
  const routeNamespace = object.metadata.namespace;
  const outcomes: ParentOutcome[] = [];
  const seen = new Set<string>();
  (route.spec.parentRefs ?? []).forEach((ref, index) => {
    const group = ref.group ?? gatewayGroup;
    const kind = ref.kind ?? 'Gateway';
    if (group !== gatewayGroup || kind !== 'Gateway') return;
    const namespace = ref.namespace ?? routeNamespace;
    const gatewayId = key(namespace, ref.name);
    const known = ctx.knownGateways.get(gatewayId);
    if (known && !known.ours) return;
    const parentRef = {
      group,
      kind,
      namespace,
      name: ref.name,
      ...(ref.sectionName !== undefined && { sectionName: ref.sectionName }),
      ...(ref.port !== undefined && { port: ref.port }),
    };
    const identity = JSON.stringify(parentRef);
    if (seen.has(identity)) return;
    seen.add(identity);
    const path: FieldPath = ['spec', 'parentRefs', index];
    const reject = (reason: string, message: string): void => {
      reportReason(ctx.report, object, reason, `parentRefs[${index}]: ${message}`, path);
      outcomes.push({
        status: { parentRef, controllerName: ctx.controllerName, conditions: [condition('Accepted', 'False', reason, message), resolvedRefs] },
        attachments: [],
      });
    };

    if (!known) return reject('NoMatchingParent', `Gateway ${gatewayId} is not in the input`);
    const listeners = ctx.listeners.get(gatewayId);
    if (!listeners) return reject('NoMatchingParent', `Gateway ${gatewayId} is invalid (see its diagnostics), so nothing can attach to it`);
    const selected = listeners.filter(
      (l) => (ref.sectionName === undefined || l.spec.name === ref.sectionName) && (ref.port === undefined || l.port === ref.port),
    );
    if (selected.length === 0) {
      const wanted = [
        ...(ref.sectionName !== undefined ? [`named ${ref.sectionName}`] : []),
        ...(ref.port !== undefined ? [`on port ${ref.port}`] : []),
      ].join(' and ');
      return reject('NoMatchingParent', `Gateway ${gatewayId} has no listener ${wanted}`);
    }
    const routeKind = object.kind;
    const admitting = selected.filter(
      (l) => l.usable && l.supportedKinds.some((k) => k.group === gatewayGroup && k.kind === routeKind) && l.admitsNamespace(routeNamespace),
    );
    if (admitting.length === 0) {
      const why = selected.map((l) => `${l.spec.name} (${refusal(l, routeKind, routeNamespace)})`).join(', ');
      return reject('NotAllowedByListeners', `no listener of Gateway ${gatewayId} admits this ${routeKind}: ${why}`);
    }
    const attachments: Attachment[] = [];
    for (const listener of admitting) {
      const shared: { hostname: string; routeHostnameIndex?: number }[] = [];
      for (const { hostname, index: routeHostnameIndex } of hostnames) {
        const intersection = intersectHostnames(listener.hostname, hostname);
        if (intersection === undefined || shared.some((s) => s.hostname === intersection)) continue;
        shared.push({ hostname: intersection, ...(routeHostnameIndex !== undefined && { routeHostnameIndex }) });
      }
      if (shared.length > 0) attachments.push({ listener, hostnames: shared });
    }
    if (attachments.length === 0) {
      const listenerNames = admitting.map((l) => `${l.spec.name} (${l.hostname ?? 'any hostname'})`).join(', ');
      const routeNames = hostnames.length > 0 ? hostnames.map((h) => h.hostname).join(', ') : 'no valid hostname';
      return reject(
        'NoMatchingListenerHostname',
        `none of the route's hostnames (${routeNames}) intersects the hostname of listener ${listenerNames} of Gateway ${gatewayId}`,
      );
    }
    for (const attachment of attachments) attachment.listener.attachedRoutes.add(`${routeKind}/${key(routeNamespace, object.metadata.name)}`);
    const names = attachments.map((a) => a.listener.spec.name).join(', ');
    outcomes.push({
      status: {
        parentRef,
        controllerName: ctx.controllerName,
        conditions: [condition('Accepted', 'True', 'Accepted', `Attached to listener ${names} of Gateway ${gatewayId}`), resolvedRefs],
      },
      attachments,
    });
  });
  return outcomes;
}

function refusal(listener: Listener, kind: string, namespace: string): string {
  if (!listener.usable) return 'the listener is not accepted';
  const protocol = listener.spec.protocol.toUpperCase();
  if (kind === 'TLSRoute' && protocol !== 'TLS') return `protocol ${listener.spec.protocol}; TLSRoutes attach to protocol TLS only`;
  if ((kind === 'HTTPRoute' || kind === 'GRPCRoute') && protocol === 'TLS') return `protocol ${listener.spec.protocol}; ${kind}s attach to protocol HTTP and HTTPS only`;
  if (!listener.supportedKinds.some((k) => k.kind === kind)) return `allowedRoutes.kinds does not include ${kind}`;
  return `allowedRoutes.namespaces does not admit namespace ${namespace}`;
}
