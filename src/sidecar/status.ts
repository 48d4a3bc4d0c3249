import type { Condition, ResourceStatus } from '../model/status.js';

/**
 * Status as the API wants it, computed from what translate decided, what the apply did, and the status
 * the object already has. Pure; writing is the caller's (see status-writer.ts).
 */

export interface ApiCondition {
  readonly type: string;
  readonly status: string;
  readonly reason: string;
  readonly message: string;
  readonly lastTransitionTime: string;
  readonly observedGeneration: number;
}

/** A load-balancer address: `ip` for an IP address, `hostname` otherwise (the Ingress status rule). */
export interface LoadBalancerIngress {
  readonly ip?: string;
  readonly hostname?: string;
}

type Loose = Record<string, unknown>;
const mapping = (value: unknown): Loose => (typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Loose) : {});
const list = (value: unknown): Loose[] => (Array.isArray(value) ? value.map(mapping) : []);

/** The API's time format for conditions: seconds, no fraction. */
export function conditionTime(now: Date): string {
  return now.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/**
 * Conditions with `lastTransitionTime` kept from the current ones whose status did not change (as
 * `meta.SetStatusCondition` does), so an unchanged status is written as the same bytes and causes no
 * further watch event.
 */
export function withTransitions(conditions: readonly Condition[], current: unknown, generation: number, now: Date): ApiCondition[] {
  const previous = new Map(list(current).map((c) => [String(c['type']), c]));
  return conditions.map((condition) => {
    const before = previous.get(condition.type);
    const unchanged = before !== undefined && before['status'] === condition.status && typeof before['lastTransitionTime'] === 'string';
    return {
      type: condition.type,
      status: condition.status,
      reason: condition.reason,
      message: condition.message.slice(0, 32_768),
      lastTransitionTime: unchanged ? (before['lastTransitionTime'] as string) : conditionTime(now),
      observedGeneration: generation,
    };
  });
}

/**
 * `Programmed` comes from the apply, not from translate: while nginx has not loaded a config that holds
 * this status (the last reload failed), every `Programmed: True` becomes `False/Pending`.
 */
export function programmedByApply(conditions: readonly Condition[], applied: boolean): Condition[] {
  if (applied) return [...conditions];
  return conditions.map((c) =>
    c.type === 'Programmed' && c.status === 'True'
      ? { type: 'Programmed', status: 'False', reason: 'Pending', message: 'nginx has not loaded the config that holds this yet (see the Events)' }
      : c,
  );
}

export interface StatusContext {
  readonly controllerName: string;
  readonly now: Date;
  /** The last apply succeeded: nginx serves the config these statuses come from. */
  readonly applied: boolean;
  readonly addresses: readonly LoadBalancerIngress[];
  /**
   * `--gateway`: the Gateways (`namespace/name`) this data plane serves. Route parents and policy
   * ancestors of our controller for other Gateways are another data plane's, kept as they are.
   */
  readonly servedGateways?: ReadonlySet<string>;
}

/**
 * The whole `.status` an object should have, or undefined when what it has is already that. For
 * TLSRoute parents and BackendTLSPolicy ancestors only our controller's entries are ours: the others
 * are kept as they are. An object that no longer has an entry from us loses our entries (`desired`
 * undefined).
 */
export function desiredStatus(kind: ResourceStatus['kind'], current: Loose, desired: ResourceStatus | undefined, ctx: StatusContext): Loose | undefined {
  const status = mapping(current['status']);
  const generation = Number(mapping(current['metadata'])['generation'] ?? 0);
  let next: Loose;
  switch (kind) {
    case 'GatewayClass': {
      if (!desired || desired.kind !== 'GatewayClass') return undefined;
      next = { ...status, conditions: withTransitions(desired.conditions, status['conditions'], generation, ctx.now) };
      break;
    }
    case 'Gateway': {
      if (!desired || desired.kind !== 'Gateway') return undefined;
      const listeners = new Map(list(status['listeners']).map((l) => [String(l['name']), l]));
      next = {
        ...status,
        addresses: ctx.addresses.map((a) => (a.ip !== undefined ? { type: 'IPAddress', value: a.ip } : { type: 'Hostname', value: a.hostname })),
        conditions: withTransitions(programmedByApply(desired.conditions, ctx.applied), status['conditions'], generation, ctx.now),
        listeners: desired.listeners.map((l) => ({
          name: l.name,
          supportedKinds: l.supportedKinds,
          attachedRoutes: l.attachedRoutes,
          conditions: withTransitions(programmedByApply(l.conditions, ctx.applied), listeners.get(l.name)?.['conditions'], generation, ctx.now),
        })),
      };
      break;
    }
    case 'TLSRoute':
    case 'HTTPRoute':
    case 'GRPCRoute': {
      const ours = desired?.kind === kind ? desired.parents : [];
      next = { ...status, parents: withOurEntries(status['parents'], 'parentRef', ours, Infinity, generation, scoped(ctx, current)) };
      break;
    }
    case 'BackendTLSPolicy': {
      const ours = desired?.kind === 'BackendTLSPolicy' ? desired.ancestors : [];
      next = { ...status, ancestors: withOurEntries(status['ancestors'], 'ancestorRef', ours, maxAncestors, generation, scoped(ctx, current)) };
      break;
    }
  }
  return sameJson(next, status) ? undefined : next;
}

/** Which of our controller's entries this data plane writes: all of them, or with `--gateway` those of its Gateways. */
interface EntryScope extends StatusContext {
  readonly writes: (ref: unknown) => boolean;
}

function scoped(ctx: StatusContext, current: Loose): EntryScope {
  const served = ctx.servedGateways;
  if (served === undefined) return { ...ctx, writes: () => true };
  const namespace = String(mapping(current['metadata'])['namespace'] ?? '');
  return {
    ...ctx,
    writes: (ref) => {
      const r = mapping(ref);
      const isGateway = (r['group'] ?? 'gateway.networking.k8s.io') === 'gateway.networking.k8s.io' && (r['kind'] ?? 'Gateway') === 'Gateway';
      return isGateway && served.has(`${String(r['namespace'] ?? namespace)}/${String(r['name'] ?? '')}`);
    },
  };
}

/** PolicyStatus holds at most this many ancestors, ours and other controllers' together. */
const maxAncestors = 16;

/**
 * A list of per-parent entries shared by controllers (RouteParentStatus, PolicyAncestorStatus): the
 * entries of other controllers as they are, then ours, each keeping the transition times of our entry
 * for the same reference. At most `limit` entries in all.
 */
function withOurEntries<Field extends 'parentRef' | 'ancestorRef'>(
  current: unknown,
  field: Field,
  ours: readonly ({ readonly controllerName: string; readonly conditions: readonly Condition[] } & Record<Field, object>)[],
  limit: number,
  generation: number,
  ctx: EntryScope,
): Loose[] {
  const entries = list(current);
  const mine = (e: Loose) => e['controllerName'] === ctx.controllerName && ctx.writes(e[field]);
  const others = entries.filter((e) => !mine(e));
  const previous = entries.filter(mine);
  const written = ours.filter((entry) => ctx.writes(entry[field]));
  return [
    ...others,
    ...written.slice(0, Math.max(0, limit - others.length)).map((entry) => ({
      [field]: entry[field],
      controllerName: entry.controllerName,
      conditions: withTransitions(entry.conditions, previous.find((p) => sameRef(p[field], entry[field]))?.['conditions'], generation, ctx.now),
    })),
  ];
}

/** The Ingress load-balancer status to write, or undefined when it already is that. */
export function desiredIngressStatus(current: Loose, ours: boolean, addresses: readonly LoadBalancerIngress[]): Loose | undefined {
  const status = mapping(current['status']);
  const loadBalancer = mapping(status['loadBalancer']);
  const present = list(loadBalancer['ingress']).map((entry) => ({ ...(entry['ip'] !== undefined && { ip: entry['ip'] }), ...(entry['hostname'] !== undefined && { hostname: entry['hostname'] }) }));
  if (ours) return sameJson(present, addresses) ? undefined : { ...status, loadBalancer: { ...loadBalancer, ingress: addresses } };
  // No longer ours: clear the addresses only if they are the ones we wrote.
  if (present.length === 0 || !sameJson(present, addresses)) return undefined;
  return { ...status, loadBalancer: { ...loadBalancer, ingress: [] } };
}

function sameRef(a: unknown, b: object): boolean {
  const ref = mapping(a);
  const other = b as Loose;
  return ['group', 'kind', 'namespace', 'name', 'sectionName', 'port'].every((key) => (ref[key] ?? '') === (other[key] ?? ''));
}

/** Equal as JSON values, whatever the order of keys (the API server keeps its own field order). */
export function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));
}

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([k, v]) => [k, canonical(v)]),
  );
}
