import type { CertificateMap, VirtualHost } from '../../model/nginx.js';
import type { TlsFiles } from '../../model/files.js';
import { mapKey } from '../checks/map-keys.js';
import { withFields } from '../../model/objects.js';

const certificateVariable = 'i2n_certificate';

/**
 * Which TLS servers need an SSL context of their own. A server that names no certificate keeps the
 * default server's context: so every host served with the default certificate, and, with
 * `--certificates-per-handshake`, every host, the default server choosing the certificate by SNI. One
 * SSL context per server, each loading its certificate whenever nginx loads the config, is half of a
 * reload at 10,000 hosts; per handshake, the nginx workers read the key file on every handshake, so
 * they must be allowed to (docs/performance.md, "Config that loads fast at scale"). A host that asks for client
 * certificates always has its own: nginx sets the handshake's verification from the chosen server's
 * context, and a server without one would ask for nothing; so does one with `ssl-ciphers` or
 * `ssl-prefer-server-ciphers`, which are settings of the context.
 */
export function shareSslContexts(
  virtualHosts: readonly VirtualHost[],
  defaultTls: TlsFiles | undefined,
  perHandshake: boolean,
  sharing: (host: VirtualHost) => VirtualHost = sharingDefaultTls,
): { virtualHosts: VirtualHost[]; certificateMap?: CertificateMap } {
  if (!defaultTls) return { virtualHosts: [...virtualHosts] };
  const isDefault = (tls: TlsFiles) => tls.certificate === defaultTls.certificate && tls.certificateKey === defaultTls.certificateKey;
  const ownSettings = (host: VirtualHost) => host.clientCertificate !== undefined || host.sslCiphers !== undefined || host.sslPreferServerCiphers !== undefined;
  const shares = (host: VirtualHost) => host.tls !== undefined && !ownSettings(host) && (perHandshake || isDefault(host.tls));
  const own = virtualHosts.filter((host) => shares(host) && host.tls && !isDefault(host.tls));
  const hosts = virtualHosts.map((host) => (shares(host) ? sharing(host) : host));
  if (!perHandshake || own.length === 0) return { virtualHosts: hosts };
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

/** `host` marked as served by the default server's SSL context. */
export function sharingDefaultTls(host: VirtualHost): VirtualHost {
  return withFields(host, { sharesDefaultTls: true });
}
