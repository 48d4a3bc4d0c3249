/**
 * Settle: decides who owns what. The front ends' claims (Ingress and HTTPRoute claims on hosts and
 * paths, the Gateway API's plan of SNI names per port) come in; winners with their losers come out,
 * host by host (hosts.ts, gather.ts: gathering and memos; tls.ts: passthrough or terminated, and which certificate;
 * routes.ts: paths; canaries.ts: splits), then the SNI front that hands each name on (sni.ts). This folder
 * owns the claim vocabulary (claims.ts, port-plan.ts, extensions.ts) and imports no front end: what it
 * needs of an annotation rides on the claim.
 */
import type { TlsFiles } from '../../model/files.js';
import type { Handoff, Proxy } from '../../model/nginx.js';
import type { SourceObject } from '../../sources/snapshot.js';
import type { ResolvedBackend } from '../backends.js';
import type { Reporter } from '../report.js';
import type { SecretFiles } from '../secrets/secret-files.js';
import type { StreamMemo } from './sni-memo.js';
import type { IngressContribution, ProxyProtocolRequest } from './claims.js';
import type { HttpExtensionRegistry } from './extensions.js';
import { HostSettleMemo, mergeHosts } from './hosts.js';
import { claimantsOf, keepOwnedClaims } from './ownership.js';
import { type MergedHosts } from './settled.js';
import { HostOwnership, hostOwners, type HostClaimant } from './ownership.js';
import type { PortPlan } from './port-plan.js';
import { buildStream, passthroughProxyProtocols, type StreamInput, type StreamParts } from './sni.js';

/** The controller-wide settings settling reads (the controller ConfigMap's, already parsed). */
export interface SettleSettings {
  readonly sslRedirect: boolean;
  readonly useForwardedHeaders: boolean;
  readonly hsts: boolean;
  readonly firstNamespaceOwnsHost: boolean;
  readonly useProxyProtocol: boolean;
  readonly proxyRealIpCidr: StreamInput['trustedProxies'];
}

export interface SettleInput {
  /** Ingress claims, then the HTTPRoutes' claims of the same kind: one routine settles both. */
  readonly contributions: readonly IngressContribution[];
  readonly proxyProtocolRequests: ReadonlyMap<SourceObject, ProxyProtocolRequest>;
  /** Every backend resolved so far, by upstream name; the canaries' are added. */
  readonly backends: Map<string, ResolvedBackend>;
  readonly extensions: HttpExtensionRegistry;
  /** The Gateway API's ports, each with its SNI names whose precedence the Gateway front end settled. */
  readonly gatewayPorts: readonly PortPlan[];
  /** The input's TLSRoutes, to name them in diagnostics and provenance. */
  readonly objects: readonly SourceObject[];
  readonly settings: SettleSettings;
  readonly secrets: SecretFiles;
  readonly defaultTls: TlsFiles;
  readonly httpsPort: number;
  readonly runDir: string;
  readonly handoff: Handoff;
  readonly httpsSocket: string;
  readonly report: Reporter;
  /** The controller's default backend (`--default-backend-service`), for what no Ingress path matches. */
  readonly fallback?: Proxy;
}

export interface SettleMemo {
  readonly hosts: HostSettleMemo;
  readonly stream: StreamMemo;
}

/**
 * Settles the claims among themselves and against the TLSRoutes on the HTTPS port:
 * first-namespace-owns-host, then hosts and paths, then the SNI front that hands each name to its winner.
 */
export function settle(input: SettleInput, memo?: SettleMemo): { hosts: MergedHosts; stream: StreamParts } {
  const { settings, contributions, report } = input;
  const routes = new Map(input.objects.filter((o) => o.kind === 'TLSRoute').map((o) => [`${o.metadata.namespace}/${o.metadata.name}`, o]));
  const routeObject = (namespace: string, name: string) => routes.get(`${namespace}/${name}`);
  const httpsRoutes = input.gatewayPorts.filter((p) => p.port === input.httpsPort).flatMap((p) => p.routes);
  const claimants = (): HostClaimant[] => [
    ...contributions.flatMap(claimantsOf),
    ...httpsRoutes
      .map((r) => ({ host: r.hostname, object: routeObject(r.route.namespace, r.route.name) }))
      .filter((c): c is HostClaimant => c.object !== undefined),
  ];
  const ownership = settings.firstNamespaceOwnsHost ? new HostOwnership(hostOwners(claimants()), report) : undefined;
  const hosts = mergeHosts(
    ownership ? contributions.map((c) => keepOwnedClaims(c, ownership)) : contributions,
    {
      sslRedirect: settings.sslRedirect,
      trustForwardedProto: settings.useForwardedHeaders,
      hsts: settings.hsts,
      defaultTls: input.defaultTls,
      routeHostnames: new Set(httpsRoutes.map((r) => r.hostname)),
      ...(input.fallback && { fallback: input.fallback }),
    },
    input.secrets,
    input.extensions,
    report,
    memo?.hosts,
  );
  for (const backend of hosts.canaryBackends) input.backends.set(backend.upstream, backend);
  const streamInput: StreamInput = {
    handoff: input.handoff,
    httpsSocket: input.httpsSocket,
    httpsPort: input.httpsPort,
    runDir: input.runDir,
    acceptProxyProtocol: settings.useProxyProtocol,
    trustedProxies: settings.proxyRealIpCidr,
    passthrough: hosts.passthrough,
    backendProxyProtocol: passthroughProxyProtocols(input.proxyProtocolRequests, hosts.passthrough, report),
    terminated: hosts.terminated,
    gatewayPorts: input.gatewayPorts,
    ...(ownership && { hostOwnership: ownership }),
    routeObject,
    report,
  };
  return { hosts, stream: memo ? memo.stream.build(streamInput) : buildStream(streamInput) };
}
