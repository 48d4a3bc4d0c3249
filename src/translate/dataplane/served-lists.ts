import type { NginxConfig } from '../../model/nginx.js';
import { compareStrings } from '../../model/order.js';
import type { GatewayPlan } from '../gateway/index.js';
import { byString } from '../settle/precedence.js';
import type { IngressSpec, Typed } from '../resources.js';
import type { CertificateSummary, SecretFiles } from '../secrets/secret-files.js';

/** An Ingress of our class, by name: the cluster mode writes its load-balancer status. */
export interface IngressName {
  readonly namespace: string;
  readonly name: string;
}

export interface ServedCertificate extends CertificateSummary {
  readonly host: string;
}

/**
 * The lists a build hands the cluster mode besides the config, as the last build made them while they
 * come out the same: an edit of one Ingress among 10,000 changes neither its name nor, mostly, a
 * certificate, and making both lists anew was 10-15 ms of such a build.
 */
export class ServedListsMemo {
  private names: { readonly ingresses: readonly Typed<IngressSpec>[]; readonly sorted: readonly IngressName[] } | undefined;
  private certificates = new Map<string, { readonly summary: CertificateSummary; readonly served: ServedCertificate }>();

  /** `ingressNames`, the last list while the Ingresses have the same names in the same order. */
  ingressNames(ours: readonly Typed<IngressSpec>[]): readonly IngressName[] {
    const last = this.names;
    const same =
      last !== undefined &&
      last.ingresses.length === ours.length &&
      last.ingresses.every((earlier, i) => {
        const now = ours[i]!.object.metadata;
        return earlier === ours[i] || (earlier.object.metadata.namespace === now.namespace && earlier.object.metadata.name === now.name);
      });
    const sorted = same ? last.sorted : ingressNames(ours);
    this.names = { ingresses: ours, sorted };
    return sorted;
  }

  /**
   * `servedCertificates`, each entry the last build's object while its host serves the same summary (the
   * same object: the Secret checks of an unchanged host are replayed, summaries included).
   */
  servedCertificates(model: NginxConfig, ports: GatewayPlan['ports'], secrets: SecretFiles): ServedCertificate[] {
    const last = this.certificates;
    const next = new Map<string, { readonly summary: CertificateSummary; readonly served: ServedCertificate }>();
    const served = servedCertificates(model, ports, secrets, (host, summary) => {
      const earlier = last.get(host);
      const entry = earlier?.summary === summary ? earlier : { summary, served: { host, ...summary } };
      next.set(host, entry);
      return entry.served;
    });
    this.certificates = next;
    return served;
  }
}

/** The Ingresses' names, sorted by `namespace/name` (made once each: a sort that made them per comparison took 6 ms at 10,000). */
export function ingressNames(ours: readonly Typed<IngressSpec>[]): IngressName[] {
  return ours
    .map((i) => ({ id: `${i.object.metadata.namespace}/${i.object.metadata.name}`, namespace: i.object.metadata.namespace, name: i.object.metadata.name }))
    .sort((a, b) => compareStrings(a.id, b.id))
    .map(({ namespace, name }) => ({ namespace, name }));
}

/** The certificate served for each host name (Ingress and Gateway Terminate), sorted by host. */
export function servedCertificates(
  model: NginxConfig,
  ports: GatewayPlan['ports'],
  secrets: SecretFiles,
  entry: (host: string, summary: CertificateSummary) => ServedCertificate = (host, summary) => ({ host, ...summary }),
): ServedCertificate[] {
  const served = new Map<string, ServedCertificate>();
  const add = (host: string, certificate: string | undefined) => {
    const summary = certificate === undefined ? undefined : secrets.summary(certificate);
    if (summary && !served.has(host)) served.set(host, entry(host, summary));
  };
  for (const host of model.http.virtualHosts) add(host.serverName, host.tls?.certificate);
  for (const route of ports.flatMap((p) => p.routes)) for (const files of route.certificates) add(route.hostname, files.certificate);
  // Hosts of ports Gateway listeners have to themselves, where the Ingress ports do not serve the name.
  for (const own of model.http.ownPorts ?? []) for (const host of own.virtualHosts) if (own.tls) add(host.serverName, host.tls?.certificate);
  return [...served.values()].sort(byString((c) => c.host));
}
