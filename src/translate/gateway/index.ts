/**
 * The Gateway API front end: Gateways, TLSRoutes, HTTPRoutes, BackendTLSPolicies and ReferenceGrants →
 * a plan of ports whose SNI names are settled among the routes (settle/port-plan.ts), the HTTPRoutes'
 * claims of the Ingress kind (http-routes.ts), and the status of every object that is ours. It may import
 * settle/ (the claim vocabulary) and the shared ground of translate/, never ingress/.
 */
import type { SourceObject } from '../../sources/snapshot.js';
import type { BackendPolicy } from '../backends.js';
import { byString } from '../settle/precedence.js';
import type { Reporter } from '../report.js';
import { key, type Resources } from '../resources.js';
import type { SecretFiles } from '../secrets/secret-files.js';
import { condition } from './conditions.js';
import { anyHostname } from './hostnames.js';
import { readGatewayInputs, type GatewayInputs } from './inputs.js';
import { evaluateListeners, listenerConditions, type Listener } from './listeners.js';
import type { GatewayPlan } from '../settle/port-plan.js';
import type { GatewayStatus, ResourceStatus, RouteStatus } from '../../model/status.js';
import { BackendTlsPolicies } from './policies.js';
import { ReferenceGrants } from '../reference-grants.js';
import { attachRoute, resolveRouteBackends, routeHostnames } from './routes.js';
import { httpRouteClaims } from './http-routes.js';
import { grpcAsHttpRoute } from './grpc-routes.js';
import type { NamespaceBudget } from '../checks/size-budget.js';
import { settleClaims, type Claim } from './sni.js';
import { OnceReporter, passthroughTraffic, terminateTraffic, withoutRuntimeNamesInSets } from './traffic.js';

export type * from '../settle/port-plan.js';
export { gatewayKinds } from './schemas.js';

export interface GatewayContext {
  /** The whole snapshot; the Gateway API kinds and Namespaces are picked (and validated) here. */
  readonly objects: readonly SourceObject[];
  /** Services, Secrets and ConfigMaps, already indexed. */
  readonly resources: Resources;
  readonly secrets: SecretFiles;
  readonly report: Reporter;
  /** `--gateway-class`: Gateways with this `spec.gatewayClassName` are ours. */
  readonly gatewayClass: string;
  /** `--gateway`: only these Gateways (`namespace/name`) of the class are ours; unset: all of them. */
  readonly servedGateways?: ReadonlySet<string>;
  /** Written into route and policy parent statuses, e.g. `ingress2nginx.dev/controller`. */
  readonly controllerName: string;
  readonly backendPolicy: BackendPolicy;
  /** Absolute path of the system CA bundle, for `wellKnownCACertificates: System`. */
  readonly systemCaBundle: string;
  /**
   * Ports on which nginx serves plain HTTP for Ingresses (`--http-port`): a TLS listener there is
   * Conflicted (ProtocolConflict) and takes no traffic. Default: none.
   */
  readonly plainHttpPorts?: readonly number[];
  /** Where the http servers listen: HTTP and HTTPS listeners are served on these ports only. */
  readonly httpPort?: number;
  readonly httpsPort?: number;
  /**
   * Ports the operator's configuration holds (the Pod's own ports, TCP services), with what holds each:
   * a listener there is not accepted (PortUnavailable), since operator configuration outranks tenants.
   */
  readonly operatorPorts?: ReadonlyMap<number, string>;
  /** nginx's run directory (the server answering 500 for unusable HTTPRoute backends listens there). */
  readonly runDir?: string;
  /** The build's per-namespace budget, which the Ingresses have drawn on first (checks/size-budget.ts). */
  readonly sizeBudget?: NamespaceBudget;
  /** nginx takes cleartext HTTP/2 beside HTTP/1.1 on one port (1.25.1+): GRPCRoutes may attach to HTTP listeners. */
  readonly cleartextHttp2?: boolean;
}

/**
 * Gateway API → what the data plane must do, plus the status of every Gateway, TLSRoute and
 * BackendTLSPolicy that is ours. Pure: no I/O, no clock, and the output does not depend on input order.
 */
export function planGateways(ctx: GatewayContext): GatewayPlan {
  const { report } = ctx;
  const inputs = readGatewayInputs(ctx.objects, ctx.gatewayClass, ctx.controllerName, report, ctx.servedGateways);
  const grants = new ReferenceGrants(inputs.grants);
  const listeners = evaluateListeners(inputs.gateways, {
    resources: ctx.resources,
    secrets: ctx.secrets,
    report,
    grants,
    namespaceLabels: inputs.namespaceLabels,
    plainHttpPorts: ctx.plainHttpPorts ?? [],
    ...(ctx.httpPort !== undefined && { httpPort: ctx.httpPort }),
    ...(ctx.httpsPort !== undefined && { httpsPort: ctx.httpsPort }),
    operatorPorts: ctx.operatorPorts ?? new Map(),
  });
  const policies = new BackendTlsPolicies(inputs.policies, ctx);
  const once = new OnceReporter(report);

  const claims: Claim[] = [];
  const routeStatuses: RouteStatus[] = [];
  for (const route of inputs.routes) {
    const backends = resolveRouteBackends(route, { resources: ctx.resources, report, grants, backendPolicy: ctx.backendPolicy });
    const hostnames = routeHostnames(route, report);
    const outcomes = attachRoute(route, hostnames, backends.condition, {
      report,
      controllerName: ctx.controllerName,
      knownGateways: inputs.knownGateways,
      listeners,
    });
    if (outcomes.length > 0) {
      routeStatuses.push({
        kind: 'TLSRoute',
        namespace: route.object.metadata.namespace,
        name: route.object.metadata.name,
        parents: outcomes.map((o) => o.status),
      });
    }
    for (const { listener, hostnames: shared } of outcomes.flatMap((o) => o.attachments)) {
      // A listener that carries no traffic makes no policy an ancestor and gets no traffic diagnostics.
      if (!listener.programmed) continue;
      const gateway = key(listener.ref.gatewayNamespace, listener.ref.gatewayName);
      const traffic = withoutRuntimeNamesInSets(
        listener.mode === 'Passthrough' ? passthroughTraffic(backends) : terminateTraffic(route.object, backends, policies, gateway, once),
        route.object,
        once,
      );
      for (const { hostname, routeHostnameIndex } of shared) {
        if (hostname === anyHostname) {
          once.warning(
            'hostname-required',
            route.object,
            `neither this TLSRoute nor listener ${listener.spec.name} of Gateway ${gateway} names a host name, and SNI routing needs one; add spec.hostnames`,
            ['spec'],
          );
          continue;
        }
        claims.push({ hostname, listener, route, ...(routeHostnameIndex !== undefined && { routeHostnameIndex }), traffic });
      }
    }
  }

  // GRPCRoutes are HTTPRoutes on the paths of their methods (grpc-routes.ts), settled with them oldest first.
  const http = httpRouteClaims([...inputs.httpRoutes, ...inputs.grpcRoutes.map(grpcAsHttpRoute)], {
    resources: ctx.resources,
    report,
    grants,
    backendPolicy: ctx.backendPolicy,
    controllerName: ctx.controllerName,
    knownGateways: inputs.knownGateways,
    listeners,
    runDir: ctx.runDir ?? '/run/ingress2nginx',
    policies,
    once,
    cleartextHttp2: ctx.cleartextHttp2 ?? false,
    ...(ctx.sizeBudget && { budget: ctx.sizeBudget }),
  });
  const all = [...listeners.values()].flat();
  // HTTP and HTTPS listeners are the http servers' (settled with the Ingress paths), not the SNI front's.
  const ports = settleClaims(claims, all.filter((l) => l.programmed && l.protocol === 'TLS'), once);
  const statuses: ResourceStatus[] = [
    ...inputs.gatewayClasses,
    ...gatewayStatuses(inputs, listeners, report),
    ...routeStatuses,
    ...http.statuses,
    ...policies.statuses(),
  ];
  statuses.sort(byString((s) => `${s.kind}\n${s.namespace}\n${s.name}`));
  return { ports, statuses, http: { contribution: http.contribution, ownPorts: http.ownPorts, backends: http.backends, cleartextHttp2: http.cleartextHttp2 } };
}

function gatewayStatuses(inputs: GatewayInputs, listeners: ReadonlyMap<string, readonly Listener[]>, report: Reporter): GatewayStatus[] {
  const statuses: GatewayStatus[] = [];
  for (const [id, known] of inputs.knownGateways) {
    if (!known.ours) continue;
    const { namespace, name } = known.object.metadata;
    if (known.refusal) {
      const { reason, message } = known.refusal;
      statuses.push({ kind: 'Gateway', namespace, name, conditions: [condition('Accepted', 'False', reason, message), condition('Programmed', 'False', 'Invalid', message)], listeners: [] });
      continue;
    }
    const own = listeners.get(id);
    if (!own) {
      const message = 'The Gateway is malformed (see its diagnostics)';
      statuses.push({
        kind: 'Gateway',
        namespace,
        name,
        conditions: [condition('Accepted', 'False', 'Invalid', message), condition('Programmed', 'False', 'Invalid', message)],
        listeners: [],
      });
      continue;
    }
    const valid = own.filter((l) => l.accepted.status === 'True' && l.conflicted.status === 'False');
    const invalidNames = own.filter((l) => !valid.includes(l)).map((l) => l.spec.name);
    let accepted;
    if (invalidNames.length === 0) {
      accepted = condition('Accepted', 'True', 'Accepted', 'Gateway is accepted');
    } else if (valid.length > 0) {
      accepted = condition('Accepted', 'True', 'ListenersNotValid', `Listeners not valid: ${invalidNames.join(', ')}`);
    } else {
      const message = `No listener is valid (${invalidNames.join(', ')})`;
      accepted = condition('Accepted', 'False', 'ListenersNotValid', message);
      report.warning('listeners-not-valid', known.object, `${message}; the Gateway takes no traffic (see the listeners' diagnostics)`, ['spec', 'listeners']);
    }
    const programmed = own.some((l) => l.programmed)
      ? condition('Programmed', 'True', 'Programmed', 'Gateway is programmed')
      : condition('Programmed', 'False', 'Invalid', 'No listener is programmed');
    statuses.push({
      kind: 'Gateway',
      namespace,
      name,
      conditions: [accepted, programmed],
      listeners: own.map((l) => ({
        name: l.spec.name,
        attachedRoutes: l.attachedRoutes.size,
        supportedKinds: l.supportedKinds,
        conditions: listenerConditions(l),
      })),
    });
  }
  return statuses;
}
