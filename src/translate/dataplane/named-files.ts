import type { TlsFiles } from '../../model/files.js';
import type { Location, NginxConfig } from '../../model/nginx.js';

/**
 * The key, CA and user files that the config names: the only ones the build writes. A Secret is
 * checked where a claim references it, before the claims are settled; a claim that loses, or an
 * Ingress that is refused, leaves nothing behind on disk.
 */
export function filesNamedBy(config: Omit<NginxConfig, 'files'>, filesOf: (locations: readonly Location[]) => readonly string[] = filesOfLocations): Set<string> {
  const named = new Set<string>();
  const pair = (files: TlsFiles | undefined) => {
    if (!files) return;
    named.add(files.certificate);
    named.add(files.certificateKey);
  };
  const { http, stream } = config;
  pair(http.defaultServer.tls);
  const addAll = (files: readonly string[]) => {
    for (const file of files) named.add(file);
  };
  addAll(filesOf(http.defaultServer.locations));
  addAll(filesOf(http.redirectServer?.locations ?? []));
  for (const own of http.ownPorts ?? []) addAll(filesOf(own.defaultServer.locations));
  for (const own of http.ownPorts ?? []) pair(own.defaultServer.tls);
  for (const host of [...http.virtualHosts, ...(http.ownPorts ?? []).flatMap((own) => own.virtualHosts)]) {
    pair(host.tls);
    if (host.clientCertificate) {
      named.add(host.clientCertificate.caFile);
      if (host.clientCertificate.crlFile !== undefined) named.add(host.clientCertificate.crlFile);
    }
    addAll(filesOf(host.locations));
  }
  if (http.certificateMap) {
    named.add(http.certificateMap.defaultFile);
    for (const entry of http.certificateMap.entries) named.add(entry.file);
  }
  for (const server of stream.terminateServers) {
    for (const files of server.certificates) pair(files);
    if (server.backendTls) named.add(server.backendTls.trustedCertificate);
  }
  return named;
}

function filesOfLocations(locations: readonly Location[]): string[] {
  return locations.flatMap(locationFiles);
}

export function locationFiles(location: Location): string[] {
  if (location.servedBy !== undefined) return [];
  const ssl = location.proxy?.ssl;
  return [
    ...(location.behaviour?.basicAuth ? [location.behaviour.basicAuth.userFile] : []),
    ...(ssl?.trustedCertificate !== undefined ? [ssl.trustedCertificate] : []),
    ...(ssl?.clientCertificate ? [ssl.clientCertificate.certificate, ssl.clientCertificate.certificateKey] : []),
  ];
}
