import type { FieldPath } from '../../model/diagnostics.js';
import type { Location, LocationBehaviour, MapBlock, MirrorEndpoint, NginxConfig, Proxy, ProxyTuning } from '../../model/nginx.js';
import type { Condition, ParentStatus, ResourceStatus, RouteStatus } from '../../model/status.js';
import type { SourceObject } from '../../sources/snapshot.js';
import { isDnsHostname, isSafePath } from '../checks/allowlist.js';
import { internalErrorServer, internalGrpcErrorServer, type ResolvedBackend } from '../backends.js';
import type { IngressContribution, RequestMatch, RouteClaim, TlsClaim } from '../settle/claims.js';
import { locationsFor } from '../settle/paths.js';
import { internalLocationPrefix, isInternalPath } from '../internal-locations.js';
import type { Reporter } from '../report.js';
import { resourceName } from '../report.js';
import type { Typed } from '../resources.js';
import type { ObjectRef } from '../secrets/secret-files.js';
import type { TlsFiles } from '../../model/files.js';
import { upstreamName } from '../upstream-names.js';
import { NamespaceBudget, unitsOf } from '../checks/size-budget.js';
import { compareAge } from '../settle/precedence.js';
import { httpRouteBudgetWords, httpRouteLoadCost } from './http-route-size.js';
import { condition } from './conditions.js';
import { requestMatchOf } from './http-matches.js';
import { redirectedRequestUri, ruleFilters, rewrittenPath, type PathModifier, type RuleFilters } from './http-filters.js';
import { digestOf } from '../settle/extensions.js';
import { anyHostname } from './hostnames.js';
import { carryingGateways, proxyOverTls, securedBackends, type SecuredBackends } from './http-backend-tls.js';
import { ruleTimeouts } from './http-timeouts.js';
import type { BackendTlsPlan, PortContribution } from '../settle/port-plan.js';
import type { BackendTlsPolicies } from './policies.js';
import type { OnceReporter } from './traffic.js';
import type { Listener } from './listeners.js';
import { attachRoute, resolveBackendRefs, routeHostnames, type AttachContext, type RouteBackends, type RouteContext } from './routes.js';
import type { BackendRef, HttpRouteRule, HttpRouteSpec } from './schemas.js';
import { grpcField, withoutKindConflicts, withoutPlainGrpc, type HeldHostnames } from './grpc-routes.js';

/**
 * The HTTPRoute front end: each rule's path matches become the same claims as an Ingress's paths (host,
 * path, precedence, backend), so that Ingresses and HTTPRoutes on one host are settled by one routine in
 * settle/; an HTTPS listener adds a TLS claim for each host name with its certificate.
 */
export interface HttpRouteClaims {
  /** Through listeners on the Ingress ports: settled with the Ingresses. */
  readonly contribution: IngressContribution;
  /** Through listeners on other ports, by port: each port's own servers (`PortContribution`). */
  readonly ownPorts: readonly PortContribution[];
  /** Upstream blocks the claims may use (single Services and weighted sets); the data plane keeps the used ones. */
  readonly backends: readonly ResolvedBackend[];
  readonly statuses: readonly RouteStatus[];
  /** A GRPCRoute is served through an HTTP listener: plain HTTP must take HTTP/2 with prior knowledge too. */
  readonly cleartextHttp2: boolean;
}

export interface HttpRouteContext extends RouteContext, AttachContext {
  /** nginx's run directory: the server that answers the share of unresolved backends with 500 listens there. */
  readonly runDir: string;
  /** BackendTLSPolicies, shared with the TLSRoute Terminate backends (statuses, conflicts). */
  readonly policies: BackendTlsPolicies;
  readonly once: OnceReporter;
  /** The build's per-namespace budget, shared with the Ingresses (checks/size-budget.ts); one of its own without. */
  readonly budget?: NamespaceBudget;
  /** nginx takes cleartext HTTP/2 beside HTTP/1.x on one port (1.25.1+): GRPCRoutes may be served through HTTP listeners. */
  readonly cleartextHttp2?: boolean;
}

/** What a rule's requests go to: a proxy, or a status when nothing can serve them. */
type RuleTarget =
  | { readonly proxy: Proxy; readonly backend: ResolvedBackend; readonly filters?: RuleFilters; readonly mirror?: RuleMirror }
  | { readonly status: UnavailableStatus }
  | { readonly redirect: { readonly code: number; readonly url: string; readonly path?: PathModifier } };

/**
 * What requests get that nothing can serve: 500 for an HTTPRoute, as the Gateway API asks; 503 for a
 * GRPCRoute, which gRPC clients read as UNAVAILABLE, the status the GRPCRoute spec asks for.
 */
type UnavailableStatus = 500 | 503;

function unavailableStatus(object: SourceObject): UnavailableStatus {
  return object.kind === 'GRPCRoute' ? 503 : 500;
}

/** A host of a route through its listeners: which protocols carry it, and the HTTPS certificate. */
interface HostAttachment {
  http: boolean;
  https: boolean;
  certificate?: ObjectRef;
  readonly field: FieldPath;
}

export function httpRouteClaims(routes: readonly Typed<HttpRouteSpec>[], ctx: HttpRouteContext): HttpRouteClaims {
  const tls: TlsClaim[] = [];
  const claims: RouteClaim[] = [];
  const ownPorts = new Map<number, { tls: TlsClaim[]; routes: RouteClaim[]; https: boolean; defaultCertificate?: TlsFiles }>();
  const claimsOn = (port: number | undefined, https: boolean) => {
    if (port === undefined) return { tls, routes: claims };
    let own = ownPorts.get(port);
    if (!own) ownPorts.set(port, (own = { tls: [], routes: [], https }));
    return own;
  };
  // A port of its own is served from its first programmed listener, routes or not (unknown hosts: 404).
  for (const listener of [...ctx.listeners.values()].flat()) {
    if (!listener.programmed || listener.ownPort === undefined) continue;
    const own = claimsOn(listener.ownPort, listener.protocol === 'HTTPS');
    if ('https' in own && listener.protocol === 'HTTPS' && listener.hostname === undefined) own.defaultCertificate ??= listener.certificates[0];
  }
  const backends = new Map<string, ResolvedBackend>();
  const statuses: RouteStatus[] = [];
  const held: HeldHostnames = new Map();
  let cleartextHttp2 = false;
  const budget = ctx.budget ?? new NamespaceBudget();
  // Oldest first: a newer route cannot take an older one's share of its namespace's budget.
  for (const route of [...routes].sort((a, b) => compareAge(a.object, b.object))) {
    const object = route.object;
    const rules = route.spec.rules?.length ? route.spec.rules : [{}];
    const resolved = rules.map((rule, index) => resolveBackendRefs(object, rule.backendRefs ?? [], ['spec', 'rules', index], ctx));
    const attachedOutcomes = withoutPlainGrpc(object, attachRoute(route, routeHostnames(route, ctx.report), resolvedRefsOf(resolved), ctx), ctx.cleartextHttp2 ?? false, ctx.report);
    const outcomes = withoutKindConflicts(object, attachedOutcomes, held, ctx.report);
    const byPort = hostAttachments(outcomes.flatMap((o, index) => o.attachments.map((a) => ({ ...a, index }))));
    const attachedHosts = [...byPort.values()].reduce((sum, hosts) => sum + hosts.size, 0);
    if (outcomes.length > 0 && !budget.admit(object, unitsOf(httpRouteLoadCost(route.spec, attachedHosts)), httpRouteBudgetWords, ctx.report)) {
      statuses.push(tooLargeStatus(object, outcomes));
      continue;
    }
    const secured = resolved.map((backends) => securedBackends(object, backends, carryingGateways(outcomes), ctx.policies, ctx.once));
    const unsupported: string[] = [];
    const targets = rules.map((rule, index) => ruleTarget(object, rule, index, (secured[index] as SecuredBackends).backends, ctx, unsupported));
    const timed = targets.map((target, index) =>
      withTimeouts(withBackendTls(object, target, index, (secured[index] as SecuredBackends).tls, ctx), ruleTimeouts(object, rules[index] as HttpRouteRule, index, ctx.report)),
    );
    const paths = rules.map((rule, index) => rulePaths(object, rule, index, ctx.report, unsupported));
    if (outcomes.length === 0) continue;
    const partial = unsupported.length > 0 ? [condition('PartiallyInvalid', 'True', 'UnsupportedValue', unsupported.join('; '))] : [];
    statuses.push({
      kind: routeKindOf(object),
      namespace: object.metadata.namespace,
      name: object.metadata.name,
      parents: outcomes.map((o): ParentStatus => ({ ...o.status, conditions: [...o.status.conditions, ...partial] })),
    });
    if (object.kind === 'GRPCRoute' && [...byPort.values()].some((hosts) => [...hosts.values()].some((h) => h.http))) cleartextHttp2 = true;
    for (const target of targets) if ('backend' in target) backends.set(target.backend.upstream, target.backend);
    for (const target of targets) if ('mirror' in target && target.mirror) backends.set(target.mirror.backend.upstream, target.mirror.backend);
    for (const [port, hosts] of byPort) {
      const overTls = [...hosts.values()].some((a) => a.https);
      const portTargets = port === undefined ? timed : timed.map((target) => onOwnPort(target, port, overTls));
      for (const [host, attachment] of hosts) {
        const into = claimsOn(port, attachment.https);
        if (attachment.https && attachment.certificate && host !== '') {
          into.tls.push({ ingress: object, field: attachment.field, host, secret: attachment.certificate });
        }
        into.routes.push(...ruleClaims(object, paths, portTargets, host, attachment));
      }
    }
  }
  return {
    contribution: { passthrough: [], tls, routes: claims, canaries: [] },
    ownPorts: [...ownPorts.entries()]
      .sort(([a], [b]) => a - b)
      .map(([port, own]) => ({
        port,
        tls: own.https,
        contribution: { passthrough: [], tls: own.tls, routes: own.routes, canaries: [] },
        ...(own.defaultCertificate && { defaultCertificate: own.defaultCertificate }),
      })),
    backends: [...backends.values()],
    statuses,
    cleartextHttp2,
  };
}

function routeKindOf(object: SourceObject): RouteStatus['kind'] {
  return object.kind === 'GRPCRoute' ? 'GRPCRoute' : 'HTTPRoute';
}

/** A route past its budget is not served: every parent says so. */
function tooLargeStatus(object: SourceObject, outcomes: readonly { readonly status: ParentStatus }[]): RouteStatus {
  const refused = condition('Accepted', 'False', 'UnsupportedValue', 'the route asks nginx to load more than one object, or its namespace, may (see the httproute-too-large or namespace-too-large diagnostic)');
  return {
    kind: routeKindOf(object),
    namespace: object.metadata.namespace,
    name: object.metadata.name,
    parents: outcomes.map((o): ParentStatus => ({ ...o.status, conditions: o.status.conditions.map((c) => (c.type === 'Accepted' ? refused : c)) })),
  };
}

function resolvedRefsOf(resolved: readonly RouteBackends[]): Condition {
  const failed = resolved.filter((r) => r.condition.status !== 'True');
  const first = failed[0];
  if (!first) return condition('ResolvedRefs', 'True', 'ResolvedRefs', 'All references resolved');
  return condition('ResolvedRefs', 'False', first.condition.reason, failed.map((r) => r.condition.message).join('; '));
}

/**
 * Host names the route serves through programmed listeners, by the listener's own port (undefined: the
 * Ingress ports); `*` (no host name on either side) is the default server.
 */
function hostAttachments(
  attachments: readonly { listener: Listener; hostnames: readonly { hostname: string }[]; index: number }[],
): Map<number | undefined, Map<string, HostAttachment>> {
  const byPort = new Map<number | undefined, Map<string, HostAttachment>>();
  for (const { listener, hostnames, index } of attachments) {
    if (!listener.programmed) continue;
    let hosts = byPort.get(listener.ownPort);
    if (!hosts) byPort.set(listener.ownPort, (hosts = new Map()));
    for (const { hostname } of hostnames) {
      const host = hostname === anyHostname ? '' : hostname;
      const entry = hosts.get(host) ?? { http: false, https: false, field: ['spec', 'parentRefs', index] };
      if (listener.protocol === 'HTTP') entry.http = true;
      if (listener.protocol === 'HTTPS') {
        entry.https = true;
        entry.certificate ??= listener.certificateRefs[0];
      }
      hosts.set(host, entry);
    }
  }
  const sorted = (hosts: Map<string, HostAttachment>) => new Map([...hosts.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  return new Map([...byPort.entries()].sort(([a], [b]) => (a ?? 0) - (b ?? 0)).map(([port, hosts]) => [port, sorted(hosts)]));
}

/**
 * A target on a port of its own: a redirect that keeps the listener's port names it (the Ingress ports
 * name theirs by `$i2n_listener_port`, which tells them apart by scheme only).
 */
function onOwnPort(target: RuleTarget, port: number, overTls: boolean): RuleTarget {
  if (!('redirect' in target) || !target.redirect.url.includes(`$${listenerPortVariable}`)) return target;
  const wellKnown = port === (overTls ? 443 : 80);
  return { redirect: { ...target.redirect, url: target.redirect.url.replace(`$${listenerPortVariable}`, wellKnown ? '' : `:${port}`) } };
}

/**
 * Where a rule sends its requests. The Gateway API says requests for backends that cannot be used get a
 * 500, by share: one usable Service is proxied to directly; several, or one with unusable ones beside it,
 * become one upstream block weighted by `weight`, where the unusable share is a server that answers 500.
 * A filter we do not implement answers 500 too: serving the rule without it could skip what it guards.
 */
function ruleTarget(object: SourceObject, rule: HttpRouteRule, index: number, backends: RouteBackends, ctx: HttpRouteContext, unsupported: string[]): RuleTarget {
  const redirect = requestRedirect(object, rule, index, ctx.report, unsupported);
  if (redirect) return redirect;
  const mirror = requestMirror(object, rule, index, ctx, unsupported);
  if (mirror === 'fail') return { status: unavailableStatus(object) };
  const filters = ruleFiltersOf(object, { ...rule, filters: (rule.filters ?? []).filter((f) => f.type !== 'RequestMirror') }, index, ctx.report, unsupported);
  if (!filters) return { status: unavailableStatus(object) };
  const target = backendTarget(object, index, backends, ctx);
  return 'proxy' in target ? { ...withFilters(target, filters), ...(mirror && { mirror }) } : target;
}

/** A copy of each request to another Service: an internal location that `mirror` sends it to. */
interface RuleMirror {
  readonly backend: ResolvedBackend;
  readonly companion: Location;
}

const mirrorPrefix = `${internalLocationPrefix}route-mirror/`;

/**
 * The rule's RequestMirror: its Service gets a copy of each request, body included, whose answer nginx
 * drops. One mirror without a percentage (nginx mirrors every request, to one target here); more, or a
 * share, are refused ('fail': the rule answers 500). A backendRef that does not resolve is reported by
 * resolveBackendRefs and mirrors nothing: a copy guards nothing, so the rule still serves.
 */
function requestMirror(object: SourceObject, rule: HttpRouteRule, index: number, ctx: HttpRouteContext, unsupported: string[]): RuleMirror | undefined | 'fail' {
  const filters = rule.filters ?? [];
  const found = filters.findIndex((f) => f.type === 'RequestMirror');
  if (found < 0) return undefined;
  const at: FieldPath = ['spec', 'rules', index, 'filters', found, 'requestMirror'];
  const problem = (message: string, field: FieldPath, outcome: string) => {
    const text = `rule ${index}: ${message}; ${outcome}`;
    unsupported.push(text);
    ctx.report.error('httproute-filter-unsupported', object, text, field);
  };
  const spec = ((filters[found] as { requestMirror?: unknown }).requestMirror ?? {}) as { backendRef?: BackendRef; percent?: unknown; fraction?: unknown };
  if (filters.filter((f) => f.type === 'RequestMirror').length > 1) return problem('more than one RequestMirror is not supported', ['spec', 'rules', index, 'filters'], "the rule's requests are answered 500"), 'fail';
  if (spec.percent !== undefined || spec.fraction !== undefined) {
    return problem('RequestMirror percent and fraction are not supported (nginx mirrors every request)', at, "the rule's requests are answered 500"), 'fail';
  }
  if (!spec.backendRef) return problem('RequestMirror needs a backendRef', at, "the rule's requests are answered 500"), 'fail';
  const resolved = resolveBackendRefs(object, [spec.backendRef], at, ctx).resolved[0];
  if (!resolved) return undefined;
  if (resolved.backend.runtimeName !== undefined) {
    problem(`RequestMirror to ${resolved.backend.description}, reached by DNS name, is not supported`, [...at, 'backendRef'], 'requests are not mirrored');
    return undefined;
  }
  // A gRPC copy goes over HTTP/2 by grpc_pass, which sends the request's own URI.
  const endpoint: MirrorEndpoint =
    object.kind === 'GRPCRoute'
      ? { pass: `grpc://${resolved.backend.upstream}`, host: '$host', upstream: resolved.backend.upstream, requestBody: true, grpc: true }
      : { pass: `http://${resolved.backend.upstream}$request_uri`, host: '$host', upstream: resolved.backend.upstream, requestBody: true };
  const companion: Location = {
    modifier: '=',
    path: `${mirrorPrefix}${digestOf(JSON.stringify(endpoint))}`,
    comment: `RequestMirror of ${object.kind} ${resourceName(object)} rule ${index}`,
    plainHttp: { redirect: false, serve: true },
    mirrorEndpoint: endpoint,
  };
  return { backend: resolved.backend, companion };
}

/** Headers the http block sets for every backend: a filter that set them too would send them twice. */
const standardRequestHeaders = new Set(['host', 'x-request-id', 'x-real-ip', 'x-forwarded-for', 'x-forwarded-host', 'x-forwarded-port', 'x-forwarded-proto', 'x-forwarded-scheme', 'x-scheme', 'proxy', 'connection', 'upgrade']);

/**
 * The rule's filters, with a backendRef's own when the rule has that one backend only (nginx cannot vary
 * them between the servers of one weighted upstream); undefined, reported, when they cannot be served:
 * the rule then answers 500, as serving it without a filter could skip what the filter guards.
 */
function ruleFiltersOf(object: SourceObject, rule: HttpRouteRule, index: number, report: Reporter, unsupported: string[]): RuleFilters | undefined {
  const fail = (message: string, field: FieldPath) => {
    const text = `rule ${index}: ${message}; the rule's requests are answered 500`;
    unsupported.push(text);
    report.error('httproute-filter-unsupported', object, text, field);
    return undefined;
  };
  const refs = rule.backendRefs ?? [];
  const withOwn = refs.findIndex((ref) => (ref.filters ?? []).length > 0);
  if (withOwn >= 0 && refs.length > 1) return fail('filters of one backendRef among several are not supported (nginx applies one set per rule)', ['spec', 'rules', index, 'backendRefs', withOwn, 'filters']);
  const at: FieldPath = ['spec', 'rules', index, 'filters'];
  const parsed = ruleFilters(rule.filters ?? [], at);
  if (!parsed.ok) return fail(parsed.problem.message, parsed.problem.field);
  const own = withOwn >= 0 ? ruleFilters(refs[withOwn]?.filters ?? [], ['spec', 'rules', index, 'backendRefs', withOwn, 'filters']) : undefined;
  if (own && !own.ok) return fail(own.problem.message, own.problem.field);
  const filters = own ? mergedFilters(parsed.value, own.value) : parsed.value;
  const standard = filters.requestHeaders.find((h) => standardRequestHeaders.has(h.name.toLowerCase()));
  if (standard) return fail(`header ${standard.name} is one ingress2nginx sets for every backend (Host: use URLRewrite hostname)`, at);
  if (filters.rewrite?.type === 'ReplacePrefixMatch' && (rule.matches ?? []).some((m) => (m.path?.type ?? 'PathPrefix') !== 'PathPrefix')) {
    return fail('URLRewrite ReplacePrefixMatch needs PathPrefix matches only', at);
  }
  return filters;
}

function mergedFilters(a: RuleFilters, b: RuleFilters): RuleFilters {
  const host = b.host ?? a.host;
  const rewrite = b.rewrite ?? a.rewrite;
  return {
    requestHeaders: [...a.requestHeaders, ...b.requestHeaders],
    ...(host !== undefined && { host }),
    responseHeaders: [...a.responseHeaders, ...b.responseHeaders],
    hiddenHeaders: [...a.hiddenHeaders, ...b.hiddenHeaders],
    ...(rewrite && { rewrite }),
    definitions: [...a.definitions, ...b.definitions],
  };
}

/** The proxy with the filters' request headers and Host; the response headers and path wait for the path (`targetFields`). */
function withFilters(target: { readonly proxy: Proxy; readonly backend: ResolvedBackend }, filters: RuleFilters): RuleTarget {
  const changesRequest = filters.requestHeaders.length > 0 || filters.host !== undefined;
  const proxy: Proxy = changesRequest
    ? { ...target.proxy, headers: [...target.proxy.headers, ...filters.requestHeaders], host: filters.host ?? target.proxy.host, inheritsRequestHeaders: false }
    : target.proxy;
  return { proxy, backend: target.backend, filters };
}

/** Where the rule's requests go when it redirects nowhere: its backends, by weight. */
function backendTarget(object: SourceObject, index: number, backends: RouteBackends, ctx: HttpRouteContext): RuleTarget {
  const usable = backends.resolved.filter((b) => b.weight > 0);
  const only = usable[0];
  if (!only) return { status: unavailableStatus(object) };
  if (usable.length === 1 && backends.rejectedWeight === 0) return { proxy: proxyTo(only.backend, object.kind === 'GRPCRoute'), backend: only.backend };
  const byName = usable.filter((b) => b.backend.runtimeName !== undefined);
  for (const b of byName) {
    ctx.report.error(
      'backend-weighted-by-name',
      object,
      `${b.backend.description} is reached by DNS name (${b.backend.runtimeName}), which nginx resolves per request and cannot weigh against other backends; its share of requests (weight ${b.weight}) is answered 500. Make it the rule's only backend`,
      b.field,
    );
  }
  const members = usable.filter((b) => b.backend.runtimeName === undefined);
  const rejected = backends.rejectedWeight + byName.reduce((sum, b) => sum + b.weight, 0);
  const divisor = [...members.map((m) => m.weight), ...(rejected > 0 ? [rejected] : [])].reduce(gcd);
  const weighted: ResolvedBackend = {
    upstream: upstreamName(`${object.metadata.namespace}_${object.metadata.name}_rule${index}_weighted`),
    servers: [
      ...members.flatMap((m) => m.backend.servers.map((server) => ({ ...server, weight: m.weight / divisor }))),
      ...(rejected > 0 ? [{ address: object.kind === 'GRPCRoute' ? internalGrpcErrorServer(ctx.runDir) : internalErrorServer(ctx.runDir), weight: rejected / divisor }] : []),
    ],
    serviceDnsName: only.backend.serviceDnsName,
    description: `${object.kind} ${resourceName(object)} rule ${index}: ${[
      ...members.map((m) => `${m.backend.description} (weight ${m.weight})`),
      ...(rejected > 0 ? [`unresolved weight ${rejected} (${object.kind === 'GRPCRoute' ? 'UNAVAILABLE' : '500'})`] : []),
    ].join(', ')}`,
    service: only.backend.service,
  };
  if (members.length === 0) return { status: unavailableStatus(object) };
  return { proxy: proxyTo(weighted, object.kind === 'GRPCRoute'), backend: weighted };
}

/** A proxying target over TLS when a BackendTLSPolicy applies (http-backend-tls.ts); 500 when it cannot be. */
function withBackendTls(object: SourceObject, target: RuleTarget, index: number, tls: BackendTlsPlan | undefined, ctx: HttpRouteContext): RuleTarget {
  if (tls === undefined || !('proxy' in target)) return target;
  const proxy = proxyOverTls(target.proxy, target.backend, tls, ctx.runDir);
  if (proxy) return { ...target, proxy };
  ctx.once.error(
    'backend-tls-mixed',
    object,
    `rule ${index}: its backends speak TLS (BackendTLSPolicy ${tls.policy}) beside backends that cannot be used, whose share nginx answers from a plain server; the rule's requests are answered 500 until every backend can be used`,
    ['spec', 'rules', index, 'backendRefs'],
  );
  return { status: unavailableStatus(object) };
}

/** A proxying target with the rule's `timeouts` (http-timeouts.ts); the others have nothing to time. */
function withTimeouts(target: RuleTarget, tuning: ProxyTuning | undefined): RuleTarget {
  return tuning !== undefined && 'proxy' in target ? { ...target, proxy: { ...target.proxy, tuning } } : target;
}

/** The claim's fields for a target on one path: a proxy (with its filters' response headers and path rewrite), a status, or a redirect. */
function targetFields(target: RuleTarget, path: RulePath): Pick<RouteClaim, 'proxy' | 'backend' | 'unavailableStatus' | 'behaviour' | 'definitions'> {
  const none = { variables: [], refusedWhen: [], rateLimits: [], errorPages: [], repeatHsts: false };
  if ('status' in target) return { unavailableStatus: target.status };
  if ('redirect' in target) return redirectFields(target.redirect, path, none);
  const filters = target.filters;
  const mirror = target.mirror && { mirror: { endpoint: target.mirror.companion.path, requestBody: true } };
  if (!filters) return { proxy: target.proxy, backend: target.backend, ...(mirror && { behaviour: { ...none, ...mirror } }) };
  const behaviour = {
    ...none,
    ...mirror,
    ...(filters.responseHeaders.length > 0 && { responseHeaders: filters.responseHeaders }),
    ...(filters.hiddenHeaders.length > 0 && { hiddenHeaders: filters.hiddenHeaders }),
    ...(filters.rewrite && { rewrite: rewrittenPath(filters.rewrite, path.type === 'PathPrefix' ? path.value : '/') }),
  };
  const changesMore = behaviour.responseHeaders !== undefined || behaviour.hiddenHeaders !== undefined || behaviour.rewrite !== undefined || mirror !== undefined;
  return {
    proxy: target.proxy,
    backend: target.backend,
    ...(changesMore && { behaviour }),
    ...(filters.definitions.length > 0 && { definitions: filters.definitions }),
  };
}

const redirectCodes: ReadonlySet<number> = new Set([301, 302, 303, 307, 308]);

/**
 * A rule whose one filter is `RequestRedirect` answers with the redirect: scheme, hostname, port, path
 * (ReplaceFullPath, ReplacePrefixMatch; else kept) and status code (default 302). Without a port, the port is the scheme's well-known one
 * when a scheme is given, else the listener's (`$i2n_listener_port`, empty for 80 and 443). What it
 * cannot express (another filter beside it) answers 500, said in status.
 */
function requestRedirect(object: SourceObject, rule: HttpRouteRule, index: number, report: Reporter, unsupported: string[]): RuleTarget | undefined {
  const filters = rule.filters ?? [];
  const found = filters.findIndex((f) => f.type === 'RequestRedirect');
  if (found < 0) return undefined;
  const at: FieldPath = ['spec', 'rules', index, 'filters', found, 'requestRedirect'];
  const fail = (message: string, field: FieldPath = at): RuleTarget => {
    const text = `rule ${index}: ${message}; the rule's requests are answered 500`;
    unsupported.push(text);
    report.error('httproute-filter-unsupported', object, text, field);
    return { status: 500 };
  };
  if (filters.length > 1) return fail(`RequestRedirect beside filter ${filters.filter((f) => f.type !== 'RequestRedirect').map((f) => f.type).join(', ')} is not supported yet`);
  const spec = (filters[found] as { requestRedirect?: Record<string, unknown> }).requestRedirect ?? {};
  const { scheme, hostname, port, statusCode, path } = spec;
  const pathModifier = path === undefined ? undefined : redirectPath(path);
  if (pathModifier && !pathModifier.ok) return fail(pathModifier.problem.message, [...at, 'path', ...pathModifier.problem.field]);
  if (pathModifier?.value.type === 'ReplacePrefixMatch' && (rule.matches ?? []).some((m) => (m.path?.type ?? 'PathPrefix') !== 'PathPrefix')) {
    return fail('RequestRedirect ReplacePrefixMatch needs PathPrefix matches only', [...at, 'path']);
  }
  if (scheme !== undefined && scheme !== 'http' && scheme !== 'https') return fail(`RequestRedirect scheme ${JSON.stringify(scheme)} is not http or https`, [...at, 'scheme']);
  if (hostname !== undefined && (typeof hostname !== 'string' || !isDnsHostname(hostname))) return fail('RequestRedirect hostname is not a host name', [...at, 'hostname']);
  if (port !== undefined && (typeof port !== 'number' || !Number.isInteger(port) || port < 1 || port > 65535)) return fail('RequestRedirect port is not a port number', [...at, 'port']);
  const code = statusCode ?? 302;
  if (typeof code !== 'number' || !redirectCodes.has(code)) return fail(`RequestRedirect statusCode ${JSON.stringify(code)} is not one of 301, 302, 303, 307, 308`, [...at, 'statusCode']);
  const wellKnown = (p: number) => (scheme === 'http' && p === 80) || (scheme === 'https' && p === 443);
  const portPart = port !== undefined ? (wellKnown(port) ? '' : `:${port}`) : scheme !== undefined ? '' : `$${listenerPortVariable}`;
  // The URL without its path: redirectFields adds the path for each match.
  return { redirect: { code, url: `${scheme ?? '$scheme'}://${hostname ?? '$host'}${portPart}`, ...(pathModifier && { path: pathModifier.value }) } };
}

function redirectPath(raw: unknown): { ok: true; value: PathModifier } | { ok: false; problem: { message: string; field: FieldPath } } {
  const checked = ruleFilters([{ type: 'URLRewrite', urlRewrite: { path: raw } }], []);
  if (!checked.ok) return { ok: false, problem: { message: checked.problem.message.replace('URLRewrite', 'RequestRedirect'), field: checked.problem.field.slice(3) } };
  return { ok: true, value: checked.value.rewrite! };
}

/**
 * A redirect's fields on one path: the request's URI kept, a full path replaced (the query kept), or the
 * matched prefix replaced, by a map of the raw `$request_uri` (`redirectedRequestUri`). Never the decoded
 * `$uri`: its `%0d%0a` would end the `Location` header and start one the client wrote.
 */
function redirectFields(
  redirect: { readonly code: number; readonly url: string; readonly path?: PathModifier },
  path: RulePath,
  none: Omit<LocationBehaviour, 'redirect'>,
): Pick<RouteClaim, 'behaviour' | 'definitions'> {
  const modifier = redirect.path;
  if (!modifier) return { behaviour: { ...none, redirect: { code: redirect.code, url: `${redirect.url}$request_uri` } } };
  if (modifier.type === 'ReplaceFullPath') return { behaviour: { ...none, redirect: { code: redirect.code, url: `${redirect.url}${modifier.path}$is_args$args` } } };
  const { regex, target } = redirectedRequestUri(modifier, path.value);
  const variable = `i2n_redirect_${digestOf(regex, target)}`;
  const map: MapBlock = {
    comment: `the path of a redirect from prefix ${path.value}`,
    source: '$request_uri',
    variable,
    entries: [{ key: `"~${regex}"`, value: `"${target}"` }],
    defaultValue: '$request_uri',
  };
  return {
    behaviour: { ...none, redirect: { code: redirect.code, url: `${redirect.url}\${${variable}}` } },
    definitions: [{ reference: variable, blocks: { maps: [map] } }],
  };
}

/** `:<port>` of the listener a request came in on, empty for 80 and 443: set by the data plane when a redirect uses it. */
export const listenerPortVariable = 'i2n_listener_port';

function gcd(a: number, b: number): number {
  return b === 0 ? a : gcd(b, a % b);
}

/** The proxy module for an HTTPRoute; the grpc module (HTTP/2 to the backend) for a GRPCRoute. */
function proxyTo(backend: ResolvedBackend, grpc: boolean): Proxy {
  const resolve = backend.runtimeName;
  const scheme = grpc ? 'grpc' : 'http';
  return {
    upstream: backend.upstream,
    grpc,
    module: grpc ? 'grpc' : 'proxy',
    scheme,
    pass: resolve !== undefined ? `${scheme}://$i2n_backend` : `${scheme}://${backend.upstream}`,
    ...(resolve !== undefined && { resolve }),
    service: backend.service,
    host: '$i2n_best_host',
    httpVersion: '1.1',
    headers: [],
    inheritsRequestHeaders: true,
    interceptErrors: false,
  };
}

/** A path match this front end serves, with where it is written and the request's other conditions. */
interface RulePath {
  readonly type: 'Exact' | 'PathPrefix' | 'RegularExpression';
  readonly value: string;
  readonly field: FieldPath;
  readonly match?: RequestMatch;
}

/** The claims of every rule's path matches on one host, in rule and match order. */
function ruleClaims(
  object: SourceObject,
  paths: readonly (readonly RulePath[])[],
  targets: readonly RuleTarget[],
  host: string,
  attachment: HostAttachment,
): RouteClaim[] {
  const claims: RouteClaim[] = [];
  let ordinal = 0;
  paths.forEach((rulePaths, ruleIndex) => {
    const target = targets[ruleIndex] as RuleTarget;
    for (const path of rulePaths) {
      const comment = `${object.kind} ${resourceName(object)} rule ${ruleIndex} ${path.type} ${path.value}`;
      // A RegularExpression path stands on `/` and tests the URI as a condition (request-dispatch.ts).
      const pathType = path.type === 'Exact' ? 'Exact' : path.type === 'RegularExpression' ? 'ImplementationSpecific' : 'Prefix';
      const locations = path.type === 'RegularExpression' ? [{ modifier: '' as const, path: '/', exact: false }] : locationsFor(pathType, path.value);
      for (const location of locations) {
        claims.push({
          ingress: object,
          field: path.field,
          host,
          ...location,
          fallback: false,
          ordinal: ordinal++,
          ingressPath: path.value,
          pathType,
          comment,
          ...targetFields(target, path),
          implicitSslName: false,
          // Through an HTTPS listener only: plain HTTP is sent there, not served.
          forceSslRedirect: attachment.https && !attachment.http,
          sslRedirect: false,
          companions: 'mirror' in target && target.mirror ? [target.mirror.companion] : [],
          references: [],
          ...(path.match && { requestMatch: path.match }),
        });
      }
    }
  });
  return claims;
}

/** The rule's path matches this front end can serve (no matches: `PathPrefix /`); the others are reported once. */
function rulePaths(object: SourceObject, rule: HttpRouteRule, ruleIndex: number, report: Reporter, unsupported: string[]): RulePath[] {
  if (!rule.matches?.length) return [{ type: 'PathPrefix', value: '/', field: ['spec', 'rules', ruleIndex] }];
  const paths: RulePath[] = [];
  rule.matches.forEach((match, matchIndex) => {
    const field: FieldPath = ['spec', 'rules', ruleIndex, 'matches', matchIndex];
    const problem = (code: string, message: string, at: FieldPath) => {
      const text = `rule ${ruleIndex} match ${matchIndex}: ${message}; this match is not served`;
      unsupported.push(text);
      report.error(code, object, text, object.kind === 'GRPCRoute' ? grpcField(at) : at);
    };
    const type = match.path?.type ?? 'PathPrefix';
    const value = match.path?.value ?? '/';
    const conditions = requestMatchOf(match, field);
    if (!conditions.ok) return problem('httproute-match-unsupported', conditions.problem.message, conditions.problem.field);
    if (type !== 'RegularExpression' && !isSafePath(value)) {
      return problem('path-invalid', 'path must start with "/" and use only letters, digits and - . _ ~ % ! & ( ) * + , = : @ /', [...field, 'path', 'value']);
    }
    if (isInternalPath(value)) {
      return problem('path-invalid', `paths under ${internalLocationPrefix} are where ingress2nginx puts locations of its own`, [...field, 'path', 'value']);
    }
    paths.push({ type, value, field: [...field, 'path'], ...(conditions.value && { match: conditions.value }) });
  });
  return paths;
}

/** Condition type for an HTTPRoute path that another resource serves; the Gateway API defines none for it. */
export const pathConflictCondition = 'ingress2nginx.dev/PathConflict';

/** The route kinds whose rules become path claims: their statuses tell of lost paths. */
const pathRouteKinds: ReadonlySet<string> = new Set(['HTTPRoute', 'GRPCRoute']);

/**
 * Route statuses with a condition on every accepted parent of an HTTPRoute (or GRPCRoute) that lost a host and path to
 * another resource (an Ingress or an older HTTPRoute), read from the served locations' provenance: the
 * Gateway API keeps such a route Accepted, so the status says where its path went.
 */
export function withPathConflicts(statuses: readonly ResourceStatus[], http: Pick<NginxConfig['http'], 'defaultServer' | 'virtualHosts' | 'ownPorts'>): ResourceStatus[] {
  // Only an HTTPRoute's status tells of its lost paths: without one, no location needs a look.
  if (!statuses.some((status) => pathRouteKinds.has(status.kind))) return [...statuses];
  const lost = new Map<string, string[]>();
  const add = (serverName: string, locations: readonly Location[]) => {
    for (const location of locations) {
      const claim = location.origin?.claim;
      if (!claim || !location.origin) continue;
      for (const loser of claim.losers) {
        if (!pathRouteKinds.has(loser.resource.kind)) continue;
        const id = `${loser.resource.kind}/${loser.resource.namespace ?? ''}/${loser.resource.name}`;
        const winner = `${claim.claimant.resource.kind} ${claim.claimant.resource.namespace ?? ''}/${claim.claimant.resource.name}`;
        const where = `${serverName === '' ? 'requests without a known host' : `host ${serverName}`} path ${location.origin.path}`;
        lost.set(id, [...new Set([...(lost.get(id) ?? []), `${where} is served by ${winner}`])]);
      }
    }
  };
  add('', http.defaultServer.locations);
  for (const host of http.virtualHosts) add(host.serverName, host.locations);
  for (const own of http.ownPorts ?? []) for (const host of own.virtualHosts) add(host.serverName, host.locations);
  if (lost.size === 0) return [...statuses];
  return statuses.map((status) => {
    const conflicts = lost.get(`${status.kind}/${status.namespace}/${status.name}`);
    if ((status.kind !== 'HTTPRoute' && status.kind !== 'GRPCRoute') || !conflicts) return status;
    const conflicted = condition(pathConflictCondition, 'True', 'PathConflict', `${conflicts.sort().join('; ')} (older, or first by namespace/name)`);
    return {
      ...status,
      parents: status.parents.map((parent) =>
        parent.conditions.some((c) => c.type === 'Accepted' && c.status === 'True') ? { ...parent, conditions: [...parent.conditions, conflicted] } : parent,
      ),
    };
  });
}
