import type { Snapshot, SourceObject } from '../../src/sources/snapshot.js';
import type { GatewayContext, GatewayPlan } from '../../src/translate/gateway/index.js';
import type { Condition, GatewayStatus, ListenerStatus, PolicyStatus, RouteStatus } from '../../src/model/status.js';
import { planGateways } from '../../src/translate/gateway/index.js';
import { Reporter } from '../../src/translate/report.js';
import { indexResources } from '../../src/translate/resources.js';
import { SecretFiles } from '../../src/translate/secrets/secret-files.js';
import { testNow } from './options.js';
import type { Diagnostic } from '../../src/model/diagnostics.js';
import type { OutputFile } from '../../src/model/files.js';
import { KeyPairCache } from '../../src/translate/secrets/key-pairs.js';

/** In-memory Gateway API objects for unit tests of src/translate/gateway. */

export const group = 'gateway.networking.k8s.io';
export const v1 = `${group}/v1`;

export interface Meta {
  readonly labels?: Record<string, string>;
  readonly creationTimestamp?: string;
  readonly apiVersion?: string;
}

export function object(apiVersion: string, kind: string, namespace: string, name: string, body: Record<string, unknown>, meta: Meta = {}): SourceObject {
  return {
    apiVersion: meta.apiVersion ?? apiVersion,
    kind,
    metadata: {
      name,
      namespace,
      annotations: {},
      labels: meta.labels ?? {},
      creationTimestamp: meta.creationTimestamp ?? '',
    },
    raw: { apiVersion: meta.apiVersion ?? apiVersion, kind, metadata: { name, namespace }, ...body },
  };
}

export function gateway(namespace: string, name: string, listeners: Record<string, unknown>[], meta: Meta & { className?: string } = {}): SourceObject {
  return object(v1, 'Gateway', namespace, name, { spec: { gatewayClassName: meta.className ?? 'ingress2nginx', listeners } }, meta);
}

export function passthrough(name: string, port: number, hostname?: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { name, port, protocol: 'TLS', ...(hostname !== undefined && { hostname }), tls: { mode: 'Passthrough' }, ...extra };
}

export function terminate(
  name: string,
  port: number,
  hostname: string | undefined,
  certificateRefs: Record<string, unknown>[],
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return { name, port, protocol: 'TLS', ...(hostname !== undefined && { hostname }), tls: { mode: 'Terminate', certificateRefs }, ...extra };
}

export interface RouteSpec {
  readonly parentRefs?: Record<string, unknown>[];
  readonly hostnames?: string[];
  readonly backendRefs?: Record<string, unknown>[];
  readonly rules?: Record<string, unknown>[];
}

export function tlsRoute(namespace: string, name: string, spec: RouteSpec, meta: Meta = {}): SourceObject {
  return object(
    v1,
    'TLSRoute',
    namespace,
    name,
    {
      spec: {
        parentRefs: spec.parentRefs ?? [{ name: 'gw', namespace: 'infra' }],
        ...(spec.hostnames !== undefined && { hostnames: spec.hostnames }),
        rules: spec.rules ?? [{ backendRefs: spec.backendRefs ?? [{ name: 'app', port: 8443 }] }],
      },
    },
    meta,
  );
}

export function service(namespace: string, name: string, clusterIP: string, ports: { port: number; name?: string }[]): SourceObject {
  return object('v1', 'Service', namespace, name, { spec: { clusterIP, ports } });
}

export function tlsSecret(namespace: string, name: string, pair: { certPem: string; keyPem: string }, type = 'kubernetes.io/tls'): SourceObject {
  return object('v1', 'Secret', namespace, name, { type, stringData: { 'tls.crt': pair.certPem, 'tls.key': pair.keyPem } });
}

export function configMap(namespace: string, name: string, data: Record<string, string>): SourceObject {
  return object('v1', 'ConfigMap', namespace, name, { data });
}

export function namespaceObject(name: string, labels: Record<string, string>): SourceObject {
  return object('v1', 'Namespace', '', name, {}, { labels });
}

export function referenceGrant(
  namespace: string,
  name: string,
  from: { group: string; kind: string; namespace: string }[],
  to: { group: string; kind: string; name?: string }[],
): SourceObject {
  return object(v1, 'ReferenceGrant', namespace, name, { spec: { from, to } });
}

export function backendTlsPolicy(namespace: string, name: string, spec: Record<string, unknown>, meta: Meta = {}): SourceObject {
  return object(v1, 'BackendTLSPolicy', namespace, name, { spec }, meta);
}

export interface PlanResult {
  readonly plan: GatewayPlan;
  readonly diagnostics: readonly Diagnostic[];
  readonly files: readonly OutputFile[];
}


/** Runs planGateways over `objects` with the defaults the CLI uses; only its own diagnostics are returned. */
export function runPlan(objects: readonly SourceObject[], overrides: Partial<GatewayContext> = {}): PlanResult {
  const snapshot: Snapshot = { objects };
  const resources = indexResources(snapshot, new Reporter());
  const secrets = new SecretFiles(resources, testNow, new KeyPairCache());
  const report = new Reporter();
  const plan = planGateways({
    objects,
    resources,
    secrets,
    report,
    gatewayClass: 'ingress2nginx',
    controllerName: 'ingress2nginx.dev/controller',
    backendPolicy: { clusterDomain: 'cluster.local', runtimeDns: false, externalNameDisabled: false, externalNameSuffixes: [], endpoints: false, trustedCaBundle: '/etc/ssl/certs/ca-certificates.crt' },
    systemCaBundle: '/etc/ssl/certs/ca-certificates.crt',
    ...overrides,
  });
  return { plan, diagnostics: report.diagnostics, files: secrets.checkedFiles() };
}

export function gatewayStatus(plan: GatewayPlan, namespace: string, name: string): GatewayStatus {
  const status = plan.statuses.find((s): s is GatewayStatus => s.kind === 'Gateway' && s.namespace === namespace && s.name === name);
  if (!status) throw new Error(`no status for Gateway ${namespace}/${name}`);
  return status;
}

export function listenerStatus(plan: GatewayPlan, namespace: string, name: string, listener: string): ListenerStatus {
  const status = gatewayStatus(plan, namespace, name).listeners.find((l) => l.name === listener);
  if (!status) throw new Error(`no status for listener ${listener} of Gateway ${namespace}/${name}`);
  return status;
}

export function routeStatus(plan: GatewayPlan, namespace: string, name: string): RouteStatus | undefined {
  return plan.statuses.find((s): s is RouteStatus => s.kind === 'TLSRoute' && s.namespace === namespace && s.name === name);
}

export function policyStatus(plan: GatewayPlan, namespace: string, name: string): PolicyStatus | undefined {
  return plan.statuses.find((s): s is PolicyStatus => s.kind === 'BackendTLSPolicy' && s.namespace === namespace && s.name === name);
}

/** `{ Accepted: 'True/Accepted', … }`: conditions in a form that reads well in expectations. */
export function conditions(list: readonly Condition[]): Record<string, string> {
  return Object.fromEntries(list.map((c) => [c.type, `${c.status}/${c.reason}`]));
}

/** Conditions of the route's parent status at `index`. */
export function parentConditions(plan: GatewayPlan, namespace: string, name: string, index = 0): Record<string, string> {
  const parent = routeStatus(plan, namespace, name)?.parents[index];
  if (!parent) throw new Error(`no parent status ${index} for TLSRoute ${namespace}/${name}`);
  return conditions(parent.conditions);
}

/** The SNI map entries of `port` as `hostname → route namespace/name`. */
export function sniRoutes(plan: GatewayPlan, port: number): Record<string, string> {
  const entries = plan.ports.find((p) => p.port === port)?.routes ?? [];
  return Object.fromEntries(entries.map((r) => [r.hostname, `${r.route.namespace}/${r.route.name}`]));
}

export function codes(diagnostics: readonly Diagnostic[]): string[] {
  return diagnostics.map((d) => `${d.severity}:${d.code}`).sort();
}
