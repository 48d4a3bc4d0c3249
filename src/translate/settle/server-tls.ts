/**
 * The server-level TLS asks (`ssl-ciphers`, `ssl-prefer-server-ciphers` of an Ingress, carried by its
 * route claims) onto a host once its claims are settled: the host takes them from the oldest Ingress
 * with a location on it that sets them, as one server block can have one cipher list; a newer Ingress
 * that asks for another is told so.
 */
import type { VirtualHost } from '../../model/nginx.js';
import { withFields } from '../../model/objects.js';
import { compareAge } from './precedence.js';
import type { Reporter } from '../report.js';
import type { SourceObject } from '../../sources/snapshot.js';
import type { ServerTlsAsk } from './claims.js';

/** What each Ingress on a host asks of its server's TLS, by `namespace/name`. */
export type ServerTlsAsks = ReadonlyMap<string, { readonly object: SourceObject; readonly ask: ServerTlsAsk }>;

export function withServerTls(host: VirtualHost, asks: ServerTlsAsks, report: Reporter): VirtualHost {
  if (host.tls === undefined || asks.size === 0) return host;
  const owners = [...new Set(host.locations.map((l) => l.origin?.claim.claimant.resource).filter((r) => r?.kind === 'Ingress').map((r) => `${r!.namespace}/${r!.name}`))]
    .flatMap((id) => {
      const entry = asks.get(id);
      return entry ? [{ object: entry.object, settings: entry.ask }] : [];
    })
    .sort((a, b) => compareAge(a.object, b.object));
  const [first, ...later] = owners;
  if (!first) return host;
  for (const entry of later) {
    if (entry.settings.ciphers === first.settings.ciphers && entry.settings.preferServerCiphers === first.settings.preferServerCiphers) continue;
    report.warning(
      'server-tls-not-used',
      entry.object,
      `ssl-ciphers and ssl-prefer-server-ciphers are not used for ${host.serverName}: the older Ingress ${first.object.metadata.namespace}/${first.object.metadata.name} sets them for that server`,
      entry.settings.field,
    );
  }
  const { ciphers, preferServerCiphers } = first.settings;
  return withFields(host, {
    ...(ciphers !== undefined && { sslCiphers: ciphers }),
    ...(preferServerCiphers !== undefined && { sslPreferServerCiphers: preferServerCiphers ? 'on' : 'off' }),
  });
}
