import { X509Certificate } from 'node:crypto';
import type { FieldPath } from '../../model/diagnostics.js';
import type { TlsFiles } from '../../model/files.js';
import { isKubernetesName, isNamespaceName } from '../checks/allowlist.js';
import type { Reporter } from '../report.js';
import { resourceName } from '../report.js';
import { key, type Resources, type Typed } from '../resources.js';
import type { SecretFiles, ObjectRef } from '../secrets/secret-files.js';
import { condition, reportReason } from './conditions.js';
import { checkHostname } from './hostnames.js';
import { selectorMatches, selectorProblem } from './namespaces.js';
import { namespaceLabels } from '../resources.js';
import type { ListenerRef } from '../settle/port-plan.js';
import type { Condition } from '../../model/status.js';
import type { ReferenceGrants } from '../reference-grants.js';
import { gatewayGroup, type GatewaySpec, type LabelSelector, type ListenerSpec } from './schemas.js';

export const tlsRouteKind = { group: gatewayGroup, kind: 'TLSRoute' } as const;
export const httpRouteKind = { group: gatewayGroup, kind: 'HTTPRoute' } as const;
export const grpcRouteKind = { group: gatewayGroup, kind: 'GRPCRoute' } as const;

/** Listener protocols we serve: TLS in the stream SNI front, HTTP and HTTPS in the http servers. */
export type ListenerProtocol = 'TLS' | 'HTTP' | 'HTTPS';

/** One listener of one of our Gateways, evaluated. Attachment counts are added while routes attach. */
export interface Listener {
  readonly gateway: Typed<GatewaySpec>;
  readonly index: number;
  readonly spec: ListenerSpec;
  readonly ref: ListenerRef;
  readonly port: number;
  /** Validated; undefined: any host name. */
  readonly hostname?: string;
  readonly mode: 'Passthrough' | 'Terminate';
  /** Upper-cased; only meaningful when `usable`. */
  readonly protocol: ListenerProtocol;
  /** Protocol TLS, HTTP or HTTPS on a port nginx serves it on, and a valid hostname: routes may attach. */
  readonly usable: boolean;
  /**
   * HTTP or HTTPS on a port other than the Ingress ports (`--http-port`, `--https-port`): the port's own
   * servers serve it, apart from the Ingresses' and other ports' (undefined: the Ingress ports, or TLS).
   */
  readonly ownPort?: number;
  readonly supportedKinds: readonly { readonly group: string; readonly kind: string }[];
  readonly admitsNamespace: (namespace: string) => boolean;
  /** Terminate: the checked certificates, first of each key type. */
  readonly certificates: readonly TlsFiles[];
  /** The Secrets behind `certificates`, same order (the http servers check them again per host name). */
  readonly certificateRefs: readonly ObjectRef[];
  /** Accepted, not conflicted, and (Terminate) with at least one usable certificate: renders traffic. */
  programmed: boolean;
  accepted: Condition;
  conflicted: Condition;
  resolvedRefs: Condition;
  readonly attachedRoutes: Set<string>;
}

export interface ListenerContext {
  readonly resources: Resources;
  readonly secrets: SecretFiles;
  readonly report: Reporter;
  readonly grants: ReferenceGrants;
  readonly namespaceLabels: ReadonlyMap<string, Readonly<Record<string, string>>>;
  readonly plainHttpPorts: readonly number[];
  /** Where the Ingresses' http servers listen (`--http-port`, `--https-port`): HTTP and HTTPS listeners there share them. */
  readonly httpPort?: number;
  readonly httpsPort?: number;
  /** Ports the operator's configuration holds, with what holds each: no listener is accepted there. */
  readonly operatorPorts: ReadonlyMap<number, string>;
}

const noConflicts = condition('Conflicted', 'False', 'NoConflicts', 'No conflicts');

/** Evaluates every listener of our Gateways (oldest Gateway first) and settles conflicts between them. */
export function evaluateListeners(gateways: readonly Typed<GatewaySpec>[], ctx: ListenerContext): Map<string, Listener[]> {
  const byGateway = new Map<string, Listener[]>();
  for (const gateway of gateways) {
    byGateway.set(
      key(gateway.object.metadata.namespace, gateway.object.metadata.name),
      gateway.spec.listeners.map((spec, index) => evaluateListener(gateway, spec, index, ctx)),
    );
  }
  settleConflicts([...byGateway.values()].flat(), ctx);
  for (const listener of [...byGateway.values()].flat()) {
    listener.programmed =
      listener.accepted.status === 'True' &&
      listener.conflicted.status === 'False' &&
      (listener.mode === 'Passthrough' || listener.protocol === 'HTTP' || listener.certificates.length > 0);
  }
  return byGateway;
}

function evaluateListener(gateway: Typed<GatewaySpec>, spec: ListenerSpec, index: number, ctx: ListenerContext): Listener {
  const object = gateway.object;
  const path: FieldPath = ['spec', 'listeners', index];
  const ref: ListenerRef = { gatewayNamespace: object.metadata.namespace, gatewayName: object.metadata.name, listenerName: spec.name };
  const mode = spec.tls?.mode ?? 'Terminate';
  const base = {
    gateway,
    index,
    spec,
    ref,
    port: spec.port,
    mode,
    conflicted: noConflicts,
    attachedRoutes: new Set<string>(),
    programmed: false,
  } as const;

  const protocol = spec.protocol.toUpperCase();
  const unusable = protocolProblem(protocol, spec) ?? operatorPortProblem(spec, ctx);
  if (unusable) {
    reportReason(ctx.report, object, unusable.reason, `listener ${spec.name}: ${unusable.message}`, [...path, unusable.field]);
    return {
      ...base,
      protocol: 'TLS',
      usable: false,
      supportedKinds: [],
      admitsNamespace: () => false,
      certificates: [],
      certificateRefs: [],
      accepted: condition('Accepted', 'False', unusable.reason, unusable.message),
      resolvedRefs: condition('ResolvedRefs', 'True', 'ResolvedRefs', 'No references to resolve'),
    };
  }
  const served = protocol as ListenerProtocol;

  let hostname: string | undefined;
  let accepted = condition('Accepted', 'True', 'Accepted', 'Listener is valid');
  if (spec.hostname !== undefined && spec.hostname !== '') {
    const checked = checkHostname(spec.hostname);
    if (checked.ok) {
      hostname = checked.value;
    } else {
      const message = `hostname ${checked.problem}`;
      reportReason(ctx.report, object, 'UnsupportedValue', `listener ${spec.name}: ${message}; the listener takes no traffic`, [...path, 'hostname']);
      accepted = condition('Accepted', 'False', 'UnsupportedValue', message);
    }
  }

  const problems: { reason: string; message: string }[] = [];
  const terminates = served !== 'HTTP' && mode === 'Terminate' && accepted.status === 'True';
  const { files: certificates, refs: certificateRefs } = terminates ? listenerCertificates(gateway, spec, index, hostname, ctx, problems) : { files: [], refs: [] };
  const { supportedKinds } = routeKinds(gateway, spec, index, served, ctx, problems);
  const admitsNamespace = namespaceFilter(gateway, spec, index, ctx);
  const firstProblem = problems[0];
  const resolvedRefs = firstProblem
    ? condition('ResolvedRefs', 'False', firstProblem.reason, problems.map((p) => p.message).join('; '))
    : condition('ResolvedRefs', 'True', 'ResolvedRefs', 'All references resolved');
  const ownPort = served === 'TLS' || spec.port === (served === 'HTTP' ? ctx.httpPort : ctx.httpsPort) ? undefined : spec.port;
  return {
    ...base,
    ...(hostname !== undefined && { hostname }),
    ...(ownPort !== undefined && { ownPort }),
    protocol: served,
    usable: accepted.status === 'True',
    supportedKinds,
    admitsNamespace,
    certificates,
    certificateRefs,
    accepted,
    resolvedRefs,
  };
}

/**
 * Each certificateRef must be a core Secret of type kubernetes.io/tls, in the Gateway's namespace or
 * granted by a ReferenceGrant, that parses, matches its key and is in date. Of several valid ones the
 * first of each key type is kept (nginx holds one certificate per key type).
 */
function listenerCertificates(
  gateway: Typed<GatewaySpec>,
  spec: ListenerSpec,
  index: number,
  hostname: string | undefined,
  ctx: ListenerContext,
  problems: { reason: string; message: string }[],
): { files: TlsFiles[]; refs: ObjectRef[] } {
  const object = gateway.object;
  const path: FieldPath = ['spec', 'listeners', index, 'tls'];
  const refs = spec.tls?.certificateRefs ?? [];
  const problem = (reason: string, message: string, at: FieldPath) => {
    problems.push({ reason, message });
    reportReason(ctx.report, object, reason, `listener ${spec.name}: ${message}`, at);
  };
  if (refs.length === 0) {
    problem('InvalidCertificateRef', `${spec.protocol.toUpperCase() === 'HTTPS' ? 'protocol HTTPS' : 'tls.mode Terminate'} needs tls.certificateRefs naming a kubernetes.io/tls Secret`, path);
    return { files: [], refs: [] };
  }
  const chosen = new Map<string, { files: TlsFiles; ref: ObjectRef; standIn?: boolean }>();
  refs.forEach((certificateRef, refIndex) => {
    const at: FieldPath = [...path, 'certificateRefs', refIndex];
    const group = certificateRef.group ?? '';
    const kind = certificateRef.kind ?? 'Secret';
    const namespace = certificateRef.namespace ?? object.metadata.namespace;
    const name = certificateRef.name;
    if (group !== '' || kind !== 'Secret') {
      problem('InvalidCertificateRef', `certificateRefs[${refIndex}] refers to ${kind} in group "${group}"; only core Secrets are supported`, at);
      return;
    }
    if (!isNamespaceName(namespace) || !isKubernetesName(name)) {
      problem('InvalidCertificateRef', `certificateRefs[${refIndex}] is not a valid Secret name`, at);
      return;
    }
    const ref: ObjectRef = { namespace, name };
    const permitted = ctx.grants.permits({
      from: { group: gatewayGroup, kind: 'Gateway', namespace: object.metadata.namespace },
      to: { group: '', kind: 'Secret', namespace, name },
    });
    if (!permitted) {
      problem(
        'RefNotPermitted',
        `Secret ${key(namespace, name)} is in another namespace and no ReferenceGrant in ${namespace} allows Gateways from ${object.metadata.namespace} to use it; add one (from: Gateway in ${object.metadata.namespace}, to: Secret)`,
        at,
      );
      return;
    }
    const secret = ctx.resources.secrets.get(key(namespace, name));
    if (secret && secret.spec.type !== 'kubernetes.io/tls') {
      problem('InvalidCertificateRef', `Secret ${key(namespace, name)} is of type ${secret.spec.type}; a listener certificate must be a kubernetes.io/tls Secret`, at);
      return;
    }
    const checked = ctx.secrets.serverCertificate(ref, undefined);
    const expectedFrom = checked.ok ? undefined : ctx.secrets.expectedFromCluster(ref, object);
    if (!checked.ok && expectedFrom !== undefined) {
      ctx.report.warning(
        'tls-secret-from-cluster',
        object,
        `listener ${spec.name}: ${checked.problem}: ${expectedFrom}. nginx -t checks the listener with a stand-in certificate (--strict: an error)`,
        at,
      );
      // Its key type is unknown until the cluster makes it: it takes no other certificate's place.
      chosen.set(`stand-in ${key(namespace, name)}`, { files: ctx.secrets.standInCertificate(ref), ref, standIn: true });
      return;
    }
    if (!checked.ok) {
      problem('InvalidCertificateRef', checked.problem, at);
      return;
    }
    const keyType = certificateKeyType(ctx.resources, ref);
    const existing = chosen.get(keyType);
    if (existing) {
      ctx.report.warning(
        'certificate-ignored',
        object,
        `listener ${spec.name}: Secret ${key(namespace, name)} holds another ${keyType} certificate after Secret ${key(existing.ref.namespace, existing.ref.name)}; nginx serves one certificate per key type, so it is not used`,
        at,
      );
      return;
    }
    chosen.set(keyType, { files: checked.value, ref });
  });
  const kept = [...chosen.values()];
  const covers = ({ ref, standIn }: (typeof kept)[number], host: string) => standIn === true || ctx.secrets.serverCertificate(ref, host).ok;
  if (hostname !== undefined && kept.length > 0 && !kept.some((c) => covers(c, hostname))) {
    ctx.report.warning(
      'certificate-hostname-mismatch',
      object,
      `listener ${spec.name}: no certificate in tls.certificateRefs covers the listener hostname ${hostname}; clients that verify the name will refuse the connection`,
      [...path, 'certificateRefs'],
    );
  }
  return { files: kept.map(({ files }) => files), refs: kept.map(({ ref }) => ref) };
}

/** Key algorithm of a certificate already checked by SecretFiles (`rsa`, `ec`, `ed25519`, …). */
function certificateKeyType(resources: Resources, ref: ObjectRef): string {
  const pem = resources.secrets.get(key(ref.namespace, ref.name))?.spec.data.get('tls.crt') ?? '';
  try {
    return new X509Certificate(pem).publicKey.asymmetricKeyType ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

/**
 * The route kinds a protocol carries: TLSRoute on TLS; HTTPRoute and GRPCRoute on HTTP and HTTPS (a
 * GRPCRoute through HTTP needs an nginx that takes cleartext HTTP/2: http-routes.ts says when not).
 */
function protocolKinds(protocol: ListenerProtocol): readonly { group: string; kind: string }[] {
  return protocol === 'TLS' ? [tlsRouteKind] : [httpRouteKind, grpcRouteKind];
}

/** `allowedRoutes.kinds`: empty means the protocol's kinds; a kind the protocol does not carry is InvalidRouteKinds. */
function routeKinds(
  gateway: Typed<GatewaySpec>,
  spec: ListenerSpec,
  index: number,
  protocol: ListenerProtocol,
  ctx: ListenerContext,
  problems: { reason: string; message: string }[],
): { supportedKinds: { group: string; kind: string }[] } {
  const own = protocolKinds(protocol);
  const kinds = spec.allowedRoutes?.kinds ?? [];
  if (kinds.length === 0) return { supportedKinds: [...own] };
  const supported: { group: string; kind: string }[] = [];
  kinds.forEach((entry, kindIndex) => {
    const group = entry.group ?? gatewayGroup;
    const known = own.find((k) => k.group === group && k.kind === entry.kind);
    if (known) {
      if (!supported.includes(known)) supported.push(known);
      return;
    }
    const message = `route kind ${group === '' ? entry.kind : `${group}/${entry.kind}`} is not supported on a${protocol === 'TLS' ? ' TLS' : 'n ' + protocol} listener; only ${own.map((k) => `${k.group}/${k.kind}`).join(' and ')} ${own.length > 1 ? 'are' : 'is'}`;
    problems.push({ reason: 'InvalidRouteKinds', message });
    reportReason(ctx.report, gateway.object, 'InvalidRouteKinds', `listener ${spec.name}: ${message}`, [
      'spec',
      'listeners',
      index,
      'allowedRoutes',
      'kinds',
      kindIndex,
    ]);
  });
  return { supportedKinds: supported };
}

/**
 * What keeps a listener's protocol from being served: TLS, HTTP and HTTPS are served on any port (TLS
 * through the stream SNI front; HTTP and HTTPS by http servers, on a port other than the Ingress ports by
 * servers of that port's own). Which protocols may share a port is settled between listeners
 * (`settleConflicts`).
 */
function protocolProblem(
  protocol: string,
  spec: ListenerSpec,
): { reason: string; message: string; field: 'protocol' | 'port' | 'tls' } | undefined {
  switch (protocol) {
    case 'TLS':
    case 'HTTP':
      return undefined;
    case 'HTTPS':
      if (spec.tls?.mode === 'Passthrough') {
        return { reason: 'UnsupportedValue', message: 'protocol HTTPS terminates TLS; for tls.mode Passthrough use protocol TLS and a TLSRoute', field: 'tls' };
      }
      return undefined;
    default:
      return {
        reason: 'UnsupportedProtocol',
        message: `protocol ${spec.protocol} is not supported: ingress2nginx serves listeners with protocol TLS, HTTP and HTTPS`,
        field: 'protocol',
      };
  }
}

/**
 * A port the operator's configuration holds (a TCP service, the sidecar's own ports) is not the tenant's
 * to take: the listener is not accepted, with the Gateway API's reason for a port that cannot be used.
 */
function operatorPortProblem(spec: ListenerSpec, ctx: ListenerContext): { reason: string; message: string; field: 'port' } | undefined {
  const holder = ctx.operatorPorts.get(spec.port);
  if (holder === undefined) return undefined;
  return { reason: 'PortUnavailable', message: `port ${spec.port} is ${holder}, which the operator's configuration holds; move the listener to another port`, field: 'port' };
}

/** `allowedRoutes.namespaces`: Same (default), All, or Selector over the labels of Namespaces in the input. */
function namespaceFilter(gateway: Typed<GatewaySpec>, spec: ListenerSpec, index: number, ctx: ListenerContext): (namespace: string) => boolean {
  const own = gateway.object.metadata.namespace;
  const namespaces = spec.allowedRoutes?.namespaces;
  switch (namespaces?.from ?? 'Same') {
    case 'All':
      return () => true;
    case 'Same':
      return (namespace) => namespace === own;
    case 'Selector': {
      const selector: LabelSelector | undefined = namespaces?.selector;
      const problem = selector === undefined ? 'from: Selector needs a selector' : selectorProblem(selector);
      if (problem !== undefined || selector === undefined) {
        ctx.report.warning(
          'allowed-routes-selector-invalid',
          gateway.object,
          `listener ${spec.name}: allowedRoutes.namespaces ${problem}; no routes are admitted until it is fixed`,
          ['spec', 'listeners', index, 'allowedRoutes', 'namespaces'],
        );
        return () => false;
      }
      return (namespace) => selectorMatches(selector, namespaceLabels(ctx.namespaceLabels, namespace));
    }
  }
}

/**
 * Listeners of all our Gateways share nginx's ports, so they must be distinct across Gateways. A port
 * carries plain HTTP or TLS (HTTPS and TLS listeners share it by SNI), never both: the first listener
 * there (the oldest Gateway's, then namespace/name, then listener order) decides, and the Ingress ports
 * are plain HTTP (`--http-port`) and TLS (`--https-port`) already; a listener of the other kind is a
 * ProtocolConflict. Then one hostname (or none) per port, except HTTP listeners of different Gateways on
 * the Ingress HTTP port, which nginx serves as one as it serves Ingresses (their routes are settled by
 * host and path). On a port of their own, listeners of different Gateways are served together only with
 * hostnames of their own. The others are Conflicted and get no traffic.
 */
function settleConflicts(listeners: readonly Listener[], ctx: ListenerContext): void {
  const owners = new Map<string, Listener>();
  const kinds = new Map<number, { kind: 'HTTP' | 'TLS'; by?: Listener }>(ctx.plainHttpPorts.map((port) => [port, { kind: 'HTTP' }]));
  if (ctx.httpsPort !== undefined && !kinds.has(ctx.httpsPort)) kinds.set(ctx.httpsPort, { kind: 'TLS' });
  for (const listener of listeners) {
    if (!listener.usable) continue;
    const object = listener.gateway.object;
    const path: FieldPath = ['spec', 'listeners', listener.index];
    const kind = listener.protocol === 'HTTP' ? 'HTTP' : 'TLS';
    const portKind = kinds.get(listener.port);
    if (portKind && portKind.kind !== kind) {
      const message = protocolConflictMessage(listener, portKind);
      listener.conflicted = condition('Conflicted', 'True', 'ProtocolConflict', message);
      reportReason(ctx.report, object, 'ProtocolConflict', `listener ${listener.spec.name}: ${message}`, [...path, 'port']);
      continue;
    }
    if (!portKind) kinds.set(listener.port, { kind, by: listener });
    const slot = `${listener.port}/${listener.hostname ?? ''}`;
    const owner = owners.get(slot);
    if (!owner) {
      owners.set(slot, listener);
      continue;
    }
    // HTTP listeners of different Gateways share the Ingress HTTP port and host name: nginx routes their
    // requests by host and path, and the routes of both are settled there as Ingress paths are (oldest first).
    if (listener.protocol === 'HTTP' && owner.protocol === 'HTTP' && owner.gateway !== listener.gateway && listener.ownPort === undefined) continue;
    const what = listener.hostname === undefined ? 'no hostname' : `hostname ${listener.hostname}`;
    const owning =
      owner.gateway === listener.gateway
        ? `listener ${owner.spec.name} of this Gateway (listed earlier)`
        : `listener ${owner.spec.name} of Gateway ${resourceName(owner.gateway.object)} (older, or first by namespace/name)`;
    const message = `${owning} already uses port ${listener.port} with ${what}; this listener gets no traffic`;
    listener.conflicted = condition('Conflicted', 'True', 'HostnameConflict', message);
    reportReason(ctx.report, object, 'HostnameConflict', `listener ${listener.spec.name}: ${message}`, path);
  }
}

function protocolConflictMessage(listener: Listener, port: { kind: 'HTTP' | 'TLS'; by?: Listener }): string {
  const by = port.by;
  if (!by) {
    return port.kind === 'HTTP'
      ? `port ${listener.port} serves plain HTTP for Ingresses, so it cannot take TLS; move the listener to another port`
      : `port ${listener.port} serves TLS for Ingresses (--https-port), so it cannot take plain HTTP; move the listener to another port`;
  }
  const owning = by.gateway === listener.gateway ? `listener ${by.spec.name} of this Gateway` : `listener ${by.spec.name} of Gateway ${resourceName(by.gateway.object)} (older, or first by namespace/name)`;
  const served = port.kind === 'HTTP' ? 'plain HTTP' : 'TLS';
  return `${owning} already serves ${served} on port ${listener.port}, and one port carries plain HTTP or TLS, not both; this listener gets no traffic`;
}

export function listenerConditions(listener: Listener): Condition[] {
  const programmed = listener.programmed
    ? condition('Programmed', 'True', 'Programmed', 'Listener is programmed')
    : condition('Programmed', 'False', 'Invalid', notProgrammedBecause(listener));
  return [listener.accepted, listener.conflicted, listener.resolvedRefs, programmed];
}

function notProgrammedBecause(listener: Listener): string {
  if (listener.accepted.status !== 'True') return `Listener is not accepted: ${listener.accepted.message}`;
  if (listener.conflicted.status === 'True') return `Listener is conflicted: ${listener.conflicted.message}`;
  return 'Listener has no usable certificate';
}
