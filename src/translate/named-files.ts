import type { TlsFiles } from '../model/files.js';
import type { Location, NginxConfig } from '../model/nginx.js';

/**
 * The key, CA and user files that the config names: the only ones the build writes. A Secret is
 * checked where a claim references it, before the claims are settled; a claim that loses, or an
 * Ingress that is refused, leaves nothing behind on disk.
 */
export function filesNamedBy(config: Omit<NginxConfig, 'files'>): Set<string> {
  const named = new Set<string>();
  const pair = (files: TlsFiles | undefined) => {
    if (!files) return;
    named.add(files.certificate);
    named.add(files.certificateKey);
  };
  const { http, stream } = config;
  pair(http.defaultServer.tls);
  const locations = [...http.defaultServer.locations, ...(http.redirectServer?.locations ?? [])];
  for (const host of http.virtualHosts) {
    pair(host.tls);
    if (host.clientCertificate) {
      named.add(host.clientCertificate.caFile);
      if (host.clientCertificate.crlFile !== undefined) named.add(host.clientCertificate.crlFile);
    }
    locations.push(...host.locations);
  }
  for (const location of locations) for (const file of locationFiles(location)) named.add(file);
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

function locationFiles(location: Location): string[] {
  if (location.servedBy !== undefined) return [];
  const ssl = location.proxy?.ssl;
  return [
    ...(location.behaviour?.basicAuth ? [location.behaviour.basicAuth.userFile] : []),
    ...(ssl?.trustedCertificate !== undefined ? [ssl.trustedCertificate] : []),
    ...(ssl?.clientCertificate ? [ssl.clientCertificate.certificate, ssl.clientCertificate.certificateKey] : []),
  ];
}
