import type { Location, PlainHttpAction, Proxy, RedirectServer, VirtualHost } from '../../model/nginx.js';
import { acmeChallengePrefix } from '../settle/routes.js';
import { mapKey } from '../checks/map-keys.js';
import { withFields } from '../../model/objects.js';

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
 * redirects, so every path does), and its challenge location is a plain proxy the shared one reproduces:
 * the same settings (headers, timeouts) as the most common one among such hosts, but its own upstream.
 * Passthrough hosts answer plain HTTP with 404 on every path: they share another.
 */
export function sharePlainHttpServers(
  virtualHosts: readonly VirtualHost[],
  sharingOf: (locations: readonly Location[]) => PlainHttpSharing = plainHttpSharing,
  shared: (host: VirtualHost) => VirtualHost = sharingPlainHttp,
  memo?: RedirectServerMemo,
): SharedPlainHttp {
  const candidates: RedirectedHost[] = [];
  const notFound: VirtualHost[] = [];
  for (const host of virtualHosts) {
    // A server-snippet is the host's own, on plain HTTP too.
    if (host.serverSnippet !== undefined) continue;
    const sharing = sharingOf(host.locations);
    if (sharing === 'not-found') notFound.push(host);
    else if (sharing) candidates.push({ host, acme: sharing });
  }
  const notFoundServerNames = notFound.map((host) => host.serverName);
  const shape = mostCommon(candidates.map((c) => c.acme.shape));
  const redirected = candidates.filter((c) => c.acme.shape === shape);
  // By host object (each name has one host): a set of their names hashed thousands of strings a build.
  const sharing = new Set<VirtualHost>([...notFound, ...redirected.map((s) => s.host)]);
  const hosts = virtualHosts.map((host) => (sharing.has(host) ? shared(host) : host));
  const first = redirected[0];
  if (!first) return { virtualHosts: hosts, notFoundServerNames };
  const make = (): RedirectServer => {
    const acmeProxy: Proxy = { ...first.acme.proxy, upstream: `$${acmeVariable}`, pass: `${first.acme.proxy.scheme}://$${acmeVariable}` };
    return {
      serverNames: redirected.map((s) => s.host.serverName),
      acmeVariable,
      acmeUpstreams: redirected.map((s) => ({ mapKey: mapKey(s.host.serverName), upstream: s.acme.proxy.upstream })),
      locations: [
        { modifier: '', path: '/', comment: 'every path: 308 to HTTPS', plainHttp: first.acme.redirect },
        {
          modifier: '',
          path: acmeChallengePrefix,
          comment: "ACME HTTP-01 challenges are never redirected; served by the host's own upstream",
          plainHttp: { redirect: false, serve: true },
          proxy: acmeProxy,
        },
      ],
    };
  };
  return { virtualHosts: hosts, notFoundServerNames, redirectServer: memo ? memo.kept(redirected, make) : make() };
}

/** `host` marked as answering plain HTTP from a shared server (redirect or 404), not its own. */
export function sharingPlainHttp(host: VirtualHost): VirtualHost {
  return withFields(host, { plainHttpShared: true });
}

/**
 * The redirect server of the last build, for the next (the cluster mode keeps one): the same object
 * while it lists the same hosts with the same challenge proxies, which are the same objects while
 * unchanged (translate.ts `TranslateMemo`), so that render writes its 10,000 names again only when it
 * changed.
 */
export class RedirectServerMemo {
  private last: { readonly redirected: readonly RedirectedHost[]; readonly server: RedirectServer } | undefined;

  kept(redirected: readonly RedirectedHost[], make: () => RedirectServer): RedirectServer {
    const last = this.last;
    const same = last !== undefined && last.redirected.length === redirected.length && last.redirected.every((r, i) => r.host === redirected[i]!.host && r.acme === redirected[i]!.acme);
    const server = same ? last.server : make();
    this.last = { redirected, server };
    return server;
  }
}

/** A host that joins the redirect server, with its ACME challenge proxy. */
interface RedirectedHost {
  readonly host: VirtualHost;
  readonly acme: AcmeProxy;
}

/**
 * What a host's locations allow of sharing its plain HTTP: the 404 server, the redirect server (with the
 * host's ACME challenge proxy), or neither (undefined). Made from the locations alone, so that the cluster
 * mode can keep it per locations array (location-facts.ts).
 */
export type PlainHttpSharing = 'not-found' | AcmeProxy | undefined;

export function plainHttpSharing(locations: readonly Location[]): PlainHttpSharing {
  // A configuration-snippet is the host's own, on plain HTTP too.
  if (locations.some((l) => l.snippet !== undefined)) return undefined;
  return onlyNotFound(locations) ? 'not-found' : onlyRedirects(locations);
}

function onlyNotFound(locations: readonly Location[]): boolean {
  const [only] = locations;
  return locations.length === 1 && !!only && only.modifier === '' && only.path === '/' && !only.proxy && only.returnStatus === 404 && !only.plainHttp.redirect;
}

/** A host's ACME challenge proxy, and what the shared location would have to render for it besides the upstream. */
export interface AcmeProxy {
  readonly proxy: Proxy;
  /** What its plain HTTP gets on every other path. */
  readonly redirect: PlainHttpAction;
  readonly shape: string;
}

/** The ACME challenge proxy of a host whose plain HTTP only redirects; undefined for any other host. */
function onlyRedirects(locations: readonly Location[]): AcmeProxy | undefined {
  const redirects = (l: Location) => l.plainHttp.redirect && !l.plainHttp.serve;
  const root = locations.find((l) => l.modifier === '' && l.path === '/' && redirects(l));
  if (!root) return undefined;
  const others = locations.filter((l) => !redirects(l));
  const acme = others[0];
  if (others.length !== 1 || !acme || acme.path !== acmeChallengePrefix || (acme.modifier !== '' && acme.modifier !== '^~')) return undefined;
  if (!acme.proxy || acme.behaviour) return undefined;
  // Provenance (which Service it is) is for reports, not part of what nginx is told.
  const { service: _service, upstream, pass, ...rendered } = acme.proxy;
  // Only a proxy to an upstream block by name can take its upstream from the map: not TLS (its name and
  // CA are per backend), gRPC, a resolver name, a canary split, or `proxy_redirect default` (which a
  // variable in proxy_pass rules out).
  const plain = !rendered.grpc && !rendered.ssl && !rendered.resolve && !rendered.canary && rendered.tuning?.redirect !== 'default';
  if (!plain || pass !== `${rendered.scheme}://${upstream}`) return undefined;
  // How the redirect writes the URI (trailing slash, port) is part of the shared server too.
  return { proxy: acme.proxy, redirect: root.plainHttp, shape: JSON.stringify([rendered, root.plainHttp]) };
}

/** The most frequent value; among equally frequent ones, the first in sort order. */
function mostCommon(values: readonly string[]): string | undefined {
  const counts = new Map<string, number>();
  for (const value of values) counts.set(value, (counts.get(value) ?? 0) + 1);
  return [...counts].sort(([a, countA], [b, countB]) => countB - countA || (a < b ? -1 : a > b ? 1 : 0))[0]?.[0];
}
