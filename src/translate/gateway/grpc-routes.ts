import type { FieldPath } from '../../model/diagnostics.js';
import type { Typed } from '../resources.js';
import { key } from '../resources.js';
import type { SourceObject } from '../../sources/snapshot.js';
import type { Reporter } from '../report.js';
import { condition, reportReason } from './conditions.js';
import { intersectHostnames } from './hostnames.js';
import type { Listener } from './listeners.js';
import type { ParentOutcome } from './routes.js';
import type { GrpcMethodMatch, GrpcRouteMatch, GrpcRouteSpec, HttpRouteMatch, HttpRouteSpec } from './schemas.js';

/**
 * The GRPCRoute front end. A gRPC call is an HTTP/2 POST to `/<service>/<method>`, so a GRPCRoute is
 * an HTTPRoute whose matches are on that path: it takes the HTTPRoute's way through claims, settling,
 * filters, backends and BackendTLSPolicies (http-routes.ts), with the grpc module instead of the proxy
 * module. Matching by method keeps the gRPC precedence: service and method (an Exact path) before a
 * service alone (its prefix), before the longer service over the shorter, then header matches.
 */
export function grpcAsHttpRoute(route: Typed<GrpcRouteSpec>): Typed<HttpRouteSpec> {
  const { parentRefs, hostnames, rules } = route.spec;
  return {
    object: route.object,
    spec: {
      ...(parentRefs && { parentRefs }),
      ...(hostnames && { hostnames }),
      ...(rules && {
        rules: rules.map((rule) => ({
          ...(rule.name !== undefined && { name: rule.name }),
          ...(rule.matches && { matches: rule.matches.map(httpMatchOf) }),
          ...(rule.filters && { filters: rule.filters }),
          ...(rule.backendRefs && { backendRefs: rule.backendRefs }),
        })),
      }),
    },
  };
}

function httpMatchOf(match: GrpcRouteMatch): HttpRouteMatch {
  return {
    ...(match.method && { path: methodPath(match.method) }),
    ...(match.headers && { headers: match.headers }),
  };
}

/**
 * The path match for a method match. Exact names are the CRD's identifiers (checked by the schema), so
 * they are literal in a path; a missing side of a RegularExpression, or of an Exact method without
 * service, is one path segment.
 */
export function methodPath(match: GrpcMethodMatch): NonNullable<HttpRouteMatch['path']> {
  const service = match.service === '' ? undefined : match.service;
  const method = match.method === '' ? undefined : match.method;
  if ((match.type ?? 'Exact') === 'Exact') {
    if (service !== undefined && method !== undefined) return { type: 'Exact', value: `/${service}/${method}` };
    if (service !== undefined) return { type: 'PathPrefix', value: `/${service}` };
    return { type: 'RegularExpression', value: `/[^/]+/${method ?? '[^/]+'}` };
  }
  const part = (regex: string | undefined) => (regex === undefined ? '[^/]+' : `(?:${regex})`);
  return { type: 'RegularExpression', value: `/${part(service)}/${part(method)}` };
}

/** Where the HTTPRoute front end's field names a GRPCRoute match's path, the GRPCRoute has its method. */
export function grpcField(field: FieldPath): FieldPath {
  const at = field.indexOf('matches');
  if (at < 0 || field[at + 2] !== 'path') return field;
  return [...field.slice(0, at + 2), 'method'];
}

/** The route kinds that may not share a host name on one listener (the GRPCRoute spec). */
const exclusiveKinds: ReadonlySet<string> = new Set(['HTTPRoute', 'GRPCRoute']);

/** Host names each kind holds on each listener, as routes attach oldest first. */
export type HeldHostnames = Map<Listener, { readonly kind: string; readonly hostname: string; readonly route: string }[]>;

/**
 * The GRPCRoute spec: when an HTTPRoute and a GRPCRoute attach to one listener with host names in
 * common, exactly one is accepted there, the older (then first by namespace/name). Routes come here
 * oldest first, so a route loses each listener where the other kind already holds a name it shares; a
 * parent left with no listener says Accepted=False (NotAllowedByListeners), with the winner named.
 */
export function withoutKindConflicts(object: SourceObject, outcomes: readonly ParentOutcome[], held: HeldHostnames, report: Reporter): ParentOutcome[] {
  if (!exclusiveKinds.has(object.kind)) return [...outcomes];
  const id = key(object.metadata.namespace, object.metadata.name);
  return outcomes.map((outcome) => {
    if (outcome.attachments.length === 0) return outcome;
    const lost: string[] = [];
    const kept = outcome.attachments.filter((attachment) => {
      const others = (held.get(attachment.listener) ?? []).filter((h) => h.kind !== object.kind);
      const winner = others.find((h) => attachment.hostnames.some((a) => intersectHostnames(h.hostname, a.hostname) !== undefined));
      if (!winner) return true;
      attachment.listener.attachedRoutes.delete(`${object.kind}/${id}`);
      lost.push(`listener ${attachment.listener.spec.name} carries ${winner.kind} ${winner.route} for a host name in common, which is older (or first by namespace/name)`);
      return false;
    });
    for (const attachment of kept) {
      const list = held.get(attachment.listener) ?? [];
      list.push(...attachment.hostnames.map((h) => ({ kind: object.kind, hostname: h.hostname, route: id })));
      held.set(attachment.listener, list);
    }
    if (lost.length === 0) return outcome;
    const message = `${lost.join('; ')}: an HTTPRoute and a GRPCRoute may not share a host name on one listener`;
    if (kept.length > 0) {
      report.warning('route-kind-conflict', object, `${message}; the route is not served there`, ['spec', 'parentRefs']);
      return { ...outcome, attachments: kept };
    }
    reportReason(report, object, 'NotAllowedByListeners', message, ['spec', 'parentRefs']);
    const conditions = outcome.status.conditions.map((c) => (c.type === 'Accepted' ? condition('Accepted', 'False', 'NotAllowedByListeners', message) : c));
    return { status: { ...outcome.status, conditions }, attachments: [] };
  });
}

/**
 * Through an HTTP listener a gRPC client speaks HTTP/2 with prior knowledge, which nginx takes beside
 * HTTP/1.x on one port from 1.25.1 (`http2 on`); an older nginx would lose HTTP/1.x there. So there a
 * GRPCRoute does not attach to HTTP listeners: each is reported, and a parent left with no listener says
 * Accepted=False (UnsupportedValue).
 */
export function withoutPlainGrpc(object: SourceObject, outcomes: readonly ParentOutcome[], cleartextHttp2: boolean, report: Reporter): ParentOutcome[] {
  if (object.kind !== 'GRPCRoute' || cleartextHttp2) return [...outcomes];
  const id = key(object.metadata.namespace, object.metadata.name);
  return outcomes.map((outcome) => {
    const plain = outcome.attachments.filter((a) => a.listener.protocol === 'HTTP');
    if (plain.length === 0) return outcome;
    for (const attachment of plain) attachment.listener.attachedRoutes.delete(`${object.kind}/${id}`);
    const message = `listener ${plain.map((a) => a.listener.spec.name).join(', ')} is plain HTTP, where gRPC needs HTTP/2 with prior knowledge beside HTTP/1.x on one port, which nginx has from 1.25.1 (this build is for an older nginx); the route is not served there`;
    const kept = outcome.attachments.filter((a) => a.listener.protocol !== 'HTTP');
    if (kept.length > 0) {
      report.warning('grpc-cleartext-unsupported', object, message, ['spec', 'parentRefs']);
      return { ...outcome, attachments: kept };
    }
    reportReason(report, object, 'UnsupportedValue', message, ['spec', 'parentRefs']);
    const conditions = outcome.status.conditions.map((c) => (c.type === 'Accepted' ? condition('Accepted', 'False', 'UnsupportedValue', message) : c));
    return { status: { ...outcome.status, conditions }, attachments: [] };
  });
}
