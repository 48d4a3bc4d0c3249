import type { Location, Proxy, RedirectServer, TlsFiles, VirtualHost } from '../model/nginx.js';
import { acmeChallengePrefix } from './ingress/hosts.js';
import { mapKey } from './stream.js';

const acmeVariable = 'i2n_acme_upstream';

/**
 * Most hosts with TLS answer plain HTTP with a 308 on every path and serve only ACME challenges, from
 * their own upstream. Every such host goes into one shared server, with a `$host` map for the challenge
 * upstream, instead of a server each: thousands of servers that only redirect are most of nginx's load
 * time and memory. A host joins only when it behaves exactly so (its `/` redirects, so every path does),
 * and its challenge location is a plain proxy the shared one reproduces.
 */
export function shareRedirectServer(virtualHosts: readonly VirtualHost[]): { virtualHosts: VirtualHost[]; redirectServer?: RedirectServer } {
  const shared: { host: VirtualHost; upstream: string }[] = [];
  const hosts = virtualHosts.map((host) => {
    const upstream = onlyRedirects(host.locations);
    if (upstream === undefined) return host;
    shared.push({ host, upstream });
    return { ...host, plainHttpShared: true };
  });
  if (shared.length === 0) return { virtualHosts: hosts };
  const acmeProxy: Proxy = { upstream: `$${acmeVariable}`, grpc: false, module: 'proxy', pass: `http://$${acmeVariable}` };
  return {
    virtualHosts: hosts,
    redirectServer: {
      serverNames: shared.map((s) => s.host.serverName),
      acmeVariable,
      acmeUpstreams: shared.map((s) => ({ mapKey: mapKey(s.host.serverName), upstream: s.upstream })),
      locations: [
        { modifier: '', path: '/', comment: 'every path: 308 to HTTPS', plainHttp: { redirect: true, serve: false } },
        {
          modifier: '',
          path: acmeChallengePrefix,
          comment: "ACME HTTP-01 challenges are never redirected; served by the host's own upstream",
          plainHttp: { redirect: false, serve: true },
          proxy: acmeProxy,
        },
      ],
    },
  };
}

/** The ACME challenge upstream of a host whose plain HTTP only redirects; undefined for any other host. */
function onlyRedirects(locations: readonly Location[]): string | undefined {
  const redirects = (l: Location) => l.plainHttp.redirect && !l.plainHttp.serve;
  if (!locations.some((l) => l.modifier === '' && l.path === '/' && redirects(l))) return undefined;
  const others = locations.filter((l) => !redirects(l));
  const acme = others[0];
  if (others.length !== 1 || !acme || acme.modifier !== '' || acme.path !== acmeChallengePrefix || !acme.proxy) return undefined;
  const { upstream } = acme.proxy;
  // Exactly the plain proxy the shared location renders: anything more (TLS, gRPC, a resolver name, or
  // a setting added later) keeps the host's own server.
  const plain: Proxy = { upstream, grpc: false, module: 'proxy', pass: `http://${upstream}` };
  return JSON.stringify(acme.proxy) === JSON.stringify(plain) ? upstream : undefined;
}

/** Hosts served with the default server's certificate keep its SSL context instead of one of their own. */
export function shareDefaultTls(virtualHosts: readonly VirtualHost[], defaultTls: TlsFiles | undefined): VirtualHost[] {
  if (!defaultTls) return [...virtualHosts];
  return virtualHosts.map((host) =>
    host.tls && host.tls.certificate === defaultTls.certificate && host.tls.certificateKey === defaultTls.certificateKey
      ? { ...host, sharesDefaultTls: true }
      : host,
  );
}
