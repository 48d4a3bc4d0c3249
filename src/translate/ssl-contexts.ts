import type { CertificateMap, TlsFiles, VirtualHost } from '../model/nginx.js';
import { mapKey } from './stream.js';

/**
 * Above this many TLS servers with a certificate of their own, certificates are chosen per handshake
 * (one SSL context, a map from the SNI to the file) instead of one SSL context per server, each loading
 * its certificate whenever nginx loads the config: that is half of a reload at 10,000 hosts, and most
 * of its growth. Below it, a handshake reads no file. Figures: README, "Data plane and performance".
 */
export const perHandshakeCertificatesAbove = 1000;

const certificateVariable = 'i2n_certificate';

/**
 * Which TLS servers need an SSL context of their own. A server that names no certificate keeps the
 * default server's context: so every host served with the default certificate, and, above the
 * threshold, every host, with the default server choosing the certificate by SNI.
 */
export function shareSslContexts(
  virtualHosts: readonly VirtualHost[],
  defaultTls: TlsFiles | undefined,
): { virtualHosts: VirtualHost[]; certificateMap?: CertificateMap } {
  if (!defaultTls) return { virtualHosts: [...virtualHosts] };
  const isDefault = (tls: TlsFiles) => tls.certificate === defaultTls.certificate && tls.certificateKey === defaultTls.certificateKey;
  const own = virtualHosts.filter((host) => host.tls && !isDefault(host.tls));
  const perHandshake = own.length > perHandshakeCertificatesAbove;
  const hosts = virtualHosts.map((host) => (host.tls && (perHandshake || isDefault(host.tls)) ? { ...host, sharesDefaultTls: true } : host));
  if (!perHandshake) return { virtualHosts: hosts };
  return {
    virtualHosts: hosts,
    certificateMap: {
      variable: certificateVariable,
      // Each key file holds the certificate chain and its key.
      entries: own.map((host) => ({ mapKey: mapKey(host.serverName), file: (host.tls as TlsFiles).certificate })),
      defaultFile: defaultTls.certificate,
    },
  };
}
