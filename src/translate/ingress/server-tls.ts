/**
 * The server-level TLS annotations (`ssl-ciphers`, `ssl-prefer-server-ciphers`) onto a host once its
 * claims are settled: the host takes them from the oldest Ingress with a location on it that sets them,
 * as one server block can have one cipher list; a newer Ingress that asks for another is told so.
 */
import type { VirtualHost } from '../../model/nginx.js';
import { withFields } from '../../model/objects.js';
import { compareAge } from '../settle/precedence.js';
import type { Reporter } from '../report.js';
import type { SourceObject } from '../../sources/snapshot.js';
import { annotationPrefix, parseIngressAnnotations } from './annotations/index.js';
import { serverTlsAnnotations } from './annotations/server-tls.js';

export function withServerTls(host: VirtualHost, ingresses: ReadonlyMap<string, SourceObject>, report: Reporter): VirtualHost {
  if (host.tls === undefined) return host;
  const owners = [...new Set(host.locations.map((l) => l.origin?.claim.claimant.resource).filter((r) => r?.kind === 'Ingress').map((r) => `${r!.namespace}/${r!.name}`))]
    .flatMap((id) => {
      const object = ingresses.get(id);
      // Parsing every annotation of every host's Ingresses again is most of this pass: only where one of these is set.
      const asks = object && Object.values(serverTlsAnnotations).some((r) => [r.name, ...(r.aliases ?? [])].some((name) => object.metadata.annotations[`${annotationPrefix}${name}`] !== undefined));
      const settings = asks ? parseIngressAnnotations(object.metadata.annotations).value.serverTls : undefined;
      return object && settings && (settings.ciphers !== undefined || settings.preferServerCiphers !== undefined) ? [{ object, settings }] : [];
    })
    .sort((a, b) => compareAge(a.object, b.object));
  const [first, ...later] = owners;
  if (!first) return host;
  for (const entry of later) {
    if (JSON.stringify(entry.settings) === JSON.stringify(first.settings)) continue;
    report.warning(
      'server-tls-not-used',
      entry.object,
      `ssl-ciphers and ssl-prefer-server-ciphers are not used for ${host.serverName}: the older Ingress ${first.object.metadata.namespace}/${first.object.metadata.name} sets them for that server`,
      ['metadata', 'annotations', `${annotationPrefix}${entry.settings.ciphers !== undefined ? 'ssl-ciphers' : 'ssl-prefer-server-ciphers'}`],
    );
  }
  const { ciphers, preferServerCiphers } = first.settings;
  return withFields(host, {
    ...(ciphers !== undefined && { sslCiphers: ciphers }),
    ...(preferServerCiphers !== undefined && { sslPreferServerCiphers: preferServerCiphers ? 'on' : 'off' }),
  });
}
