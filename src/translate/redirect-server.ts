import type { Location, Proxy, RedirectServer, VirtualHost } from '../model/nginx.js';
import { acmeChallengePrefix } from './ingress/hosts.js';
import { mapKey } from './stream.js';

const acmeVariable = 'i2n_acme_upstream';

export interface SharedPlainHttp {
  readonly virtualHosts: VirtualHost[];
  readonly redirectServer?: RedirectServer;
  readonly notFoundServerNames: string[];
}

/**
 * Plain-HTTP servers that many hosts share, instead of one each: thousands of servers that only redirect
 * or answer 404 are most of nginx's load time and memory. Most hosts with TLS answer plain HTTP with a
 * 308 on every path and serve only ACME challenges, from their own upstream: they share one server with
 * a `$host` map for the challenge upstream. A host joins only when it behaves exactly so (its `/`
 * redirects, so every path does), and its challenge location is a plain proxy the shared one reproduces.
 * Passthrough hosts answer plain HTTP with 404 on every path: they share another.
 */
export function sharePlainHttpServers(virtualHosts: readonly VirtualHost[]): SharedPlainHttp {
  const shared: { host: VirtualHost; upstream: string }[] = [];
  const notFoundServerNames: string[] = [];
  const hosts = virtualHosts.map((host) => {
    if (onlyNotFound(host.locations)) {
      notFoundServerNames.push(host.serverName);
      return { ...host, plainHttpShared: true };
    }
    const upstream = onlyRedirects(host.locations);
    if (upstream === undefined) return host;
    shared.push({ host, upstream });
    return { ...host, plainHttpShared: true };
  });
  if (shared.length === 0) return { virtualHosts: hosts, notFoundServerNames };
  const acmeProxy: Proxy = { upstream: `$${acmeVariable}`, grpc: false, module: 'proxy', pass: `http://$${acmeVariable}` };
  return {
    virtualHosts: hosts,
    notFoundServerNames,
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

function onlyNotFound(locations: readonly Location[]): boolean {
  const [only] = locations;
  return locations.length === 1 && !!only && only.modifier === '' && only.path === '/' && !only.proxy && only.returnStatus === 404 && !only.plainHttp.redirect;
}

/** The ACME challenge upstream of a host whose plain HTTP only redirects; undefined for any other host. */
function onlyRedirects(locations: readonly Location[]): string | undefined {
  const redirects = (l: Location) => l.plainHttp.redirect && !l.plainHttp.serve;
  if (!locations.some((l) => l.modifier === '' && l.path === '/' && redirects(l))) return undefined;
  const others = locations.filter((l) => !redirects(l));
  const acme = others[0];
  if (others.length !== 1 || !acme || acme.modifier !== '' || acme.path !== acmeChallengePrefix || !acme.proxy) return undefined;
  // Provenance (which Service it is) is for reports, not part of what nginx is told.
  const { service: _service, ...rendered } = acme.proxy;
  const { upstream } = rendered;
  // Exactly the plain proxy the shared location renders: anything more (TLS, gRPC, a resolver name, or
  // a setting added later) keeps the host's own server.
  const plain: Proxy = { upstream, grpc: false, module: 'proxy', pass: `http://${upstream}` };
  return JSON.stringify(rendered) === JSON.stringify(plain) ? upstream : undefined;
}
