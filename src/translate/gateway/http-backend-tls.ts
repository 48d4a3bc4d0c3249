import type { Proxy } from '../../model/nginx.js';
import type { SourceObject } from '../../sources/snapshot.js';
import { internalErrorServer, internalGrpcErrorServer, type ResolvedBackend } from '../backends.js';
import { key } from '../resources.js';
import type { BackendTlsPlan } from '../settle/port-plan.js';
import type { BackendTlsPolicies } from './policies.js';
import type { ParentOutcome, RouteBackends } from './routes.js';
import { terminateTraffic, type OnceReporter } from './traffic.js';

/** Public CA chains carry intermediates; nginx's default depth of 1 would refuse them (as for TLSRoute backends). */
const verifyDepth = 4;

/** A rule's backends once BackendTLSPolicies are applied, and the TLS nginx must speak to them. */
export interface SecuredBackends {
  readonly backends: RouteBackends;
  readonly tls?: BackendTlsPlan;
}

/** `namespace/name` of the Gateways whose programmed listeners carry the route: the policies' ancestors. */
export function carryingGateways(outcomes: readonly ParentOutcome[]): string[] {
  const gateways = outcomes.flatMap((o) => o.attachments).filter((a) => a.listener.programmed);
  return [...new Set(gateways.map((a) => key(a.listener.ref.gatewayNamespace, a.listener.ref.gatewayName)))].sort();
}

/**
 * The same rule as for TLSRoute Terminate backends (traffic.ts): a Service port targeted by a
 * BackendTLSPolicy is reached over TLS, verified against the policy's CA and hostname; one whose
 * policy is invalid has its share answered 500, never sent in plaintext; backends that disagree on
 * their TLS make the whole rule 500 (nginx speaks one TLS per location, not per upstream server).
 */
export function securedBackends(object: SourceObject, backends: RouteBackends, gateways: readonly string[], policies: BackendTlsPolicies, once: OnceReporter): SecuredBackends {
  // Asked for every Gateway, which each become the policies' ancestor; the answer is the same for all.
  const first = gateways.map((gateway) => terminateTraffic(object, backends, policies, gateway, once))[0];
  if (!first) return { backends };
  const kept = new Set(first.backends.map((b) => b.upstream));
  return {
    backends: { ...backends, resolved: backends.resolved.filter((b) => b.weight === 0 || kept.has(b.backend.upstream)), rejectedWeight: first.rejectedWeight },
    ...(first.backendTls && { tls: first.backendTls }),
  };
}

/**
 * The proxy speaking TLS to its backends, or undefined when it cannot: the share of unusable backends
 * is answered by an internal plain-HTTP server, which a TLS upstream cannot reach.
 */
export function proxyOverTls(proxy: Proxy, backend: ResolvedBackend, tls: BackendTlsPlan, runDir: string): Proxy | undefined {
  const errorServers = [internalErrorServer(runDir), internalGrpcErrorServer(runDir)];
  if (backend.servers.some((server) => errorServers.includes(server.address))) return undefined;
  return {
    ...proxy,
    scheme: proxy.grpc ? 'grpcs' : 'https',
    pass: proxy.pass.replace(/^(http|grpc):/, '$1s:'),
    ssl: {
      verify: true,
      verifyDepth,
      trustedCertificate: tls.trustedCertificate,
      name: tls.hostname,
      serverName: true,
      protocols: 'TLSv1.2 TLSv1.3',
      ciphers: 'DEFAULT',
    },
  };
}
