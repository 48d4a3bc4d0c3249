/**
 * Canaries: a canary claim splits the winning location of its main Ingress (same host, path and
 * namespace) by weight, header or cookie; and the upstream variants that balancing and splitting name.
 */
import type { MapBlock, Proxy, ProxyTuning, SplitBlock } from '../../model/nginx.js';
import { withFields } from '../../model/objects.js';
import type { Balancing, ResolvedBackend } from '../backends.js';
import { resourceName, type Reporter } from '../report.js';
import type { CanaryClaim, CanaryPolicy, RouteClaim } from './claims.js';
import { digestOf, escapeLiteral, regexKey, type HttpExtensionRegistry } from './extensions.js';
import { compareAge } from './precedence.js';

/** The upstream block of `backend` balanced by `balancing`, named after both. */
export function balancedVariant(backend: ResolvedBackend, balancing: Balancing): ResolvedBackend {
  const suffix = balancing.hashKey !== undefined ? `_hash_${digestOf(balancing.hashKey)}` : '_least_conn';
  const how = balancing.cookieAffinity ? 'by its affinity cookie' : balancing.hashKey !== undefined ? `by upstream-hash-by ${balancing.hashKey}` : 'to the least busy endpoint';
  return withFields(backend, { upstream: `${backend.upstream}${suffix}`, balancing, description: `${backend.description}, balanced ${how}` });
}

/** What a canary does to one main location: its new proxy, and the canary's backend to declare. */
export interface CanarySplitResult {
  readonly proxy: Proxy;
  readonly canaryBackend: ResolvedBackend;
}

/** `canary-by-header`: its value, its pattern, or `always`/`never`. */
export function headerEntries(policy: CanaryPolicy, canaryTarget: string, mainTarget: string): MapBlock['entries'] {
  if (policy.headerValue !== undefined) return [{ key: regexKey(`^${escapeLiteral(policy.headerValue)}$`), value: canaryTarget }];
  if (policy.headerPattern !== undefined) return [{ key: regexKey(policy.headerPattern), value: canaryTarget }];
  return [
    { key: regexKey('^always$'), value: canaryTarget },
    { key: regexKey('^never$'), value: mainTarget },
  ];
}

/**
 * Splits `main`'s traffic with `canary`. The canary's backend is reached with the main location's
 * protocol and TLS settings, in an upstream of its own; a backend verified by the name chosen for it
 * (verify on, no `proxy-ssl-name`) is verified by its own name.
 */
export function splitWithCanary(
  main: RouteClaim & { readonly proxy: Proxy; readonly backend: ResolvedBackend },
  canary: CanaryClaim,
  extensions: HttpExtensionRegistry,
): CanarySplitResult {
  const mainProxy = main.proxy;
  const policy = canary.policy;
  const tlsSuffix = mainProxy.ssl ? (/_tls_[0-9a-f]+/.exec(main.backend.upstream)?.[0] ?? '') : '';
  const tlsBackend: ResolvedBackend = { ...canary.backend, upstream: `${canary.backend.upstream}${tlsSuffix}` };
  // The canary is balanced as its main, unless affinity-canary-behavior: legacy leaves the cookie out of it.
  const balancing = main.backend.balancing;
  const sticky = balancing?.cookieAffinity === true && policy.affinity === 'sticky';
  const canaryBackend = balancing && (sticky || !balancing.cookieAffinity) ? balancedVariant(tlsBackend, balancing) : tlsBackend;
  const target = (backend: ResolvedBackend) => backend.runtimeName ?? backend.upstream;
  const mainTarget = target(main.backend);
  const canaryTarget = target(canaryBackend);
  const id = digestOf(main.host, main.modifier, main.path);
  const prefix = `i2n_canary_${id}`;
  const comment = `canary Ingress ${canary.ingress.metadata.namespace}/${canary.ingress.metadata.name} for ${main.comment}`;

  // ingress-nginx counts the weight out of canary-weight-total when that is above 100, else out of 100.
  const total = policy.weightTotal > 100 ? policy.weightTotal : 100;
  const share = Math.round((Math.min(policy.weight, total) / total) * 10_000) / 100;
  const splits: SplitBlock[] = [];
  let next: string;
  if (share <= 0) next = mainTarget;
  else if (share >= 100) next = canaryTarget;
  else {
    // With sticky affinity the split is keyed by the affinity cookie (or the request id its Set-Cookie hands out): a client keeps its side.
    const source = sticky && balancing.hashKey !== undefined ? balancing.hashKey : '${request_id}';
    splits.push({ comment, source, variable: `${prefix}_weight`, share: String(share), value: canaryTarget, rest: mainTarget });
    next = `$${prefix}_weight`;
  }
  const maps: MapBlock[] = [];
  if (policy.cookie !== undefined) {
    const name = `(?i:${escapeLiteral(policy.cookie)})`;
    maps.push({
      comment,
      source: '$http_cookie',
      variable: `${prefix}_cookie`,
      entries: [
        { key: regexKey(`(^|;\\s*)${name}=always(;|$)`), value: canaryTarget },
        { key: regexKey(`(^|;\\s*)${name}=never(;|$)`), value: mainTarget },
      ],
      defaultValue: next,
    });
    next = `$${prefix}_cookie`;
  }
  if (policy.header !== undefined) {
    const source = `$http_${policy.header.toLowerCase().replaceAll('-', '_')}`;
    maps.push({ comment, source, variable: `${prefix}_header`, entries: headerEntries(policy, canaryTarget, mainTarget), defaultValue: next });
    next = `$${prefix}_header`;
  }

  const variable = next.startsWith('$') ? next : undefined;
  const canaryPart = { upstream: canaryBackend.upstream, comment, ...(variable && { reference: variable.slice(1) }) };
  let proxy: Proxy;
  if (variable === undefined && share <= 0) {
    // Weight 0 and neither header nor cookie: the canary takes no request; the main proxy stays.
    proxy = mainProxy;
  } else if (variable === undefined) {
    // The weight alone sends every request to the canary.
    proxy = {
      ...withoutResolve(mainProxy),
      ...(canaryBackend.runtimeName !== undefined
        ? { resolve: canaryBackend.runtimeName, pass: passTo(mainProxy.scheme, '$i2n_backend') }
        : { pass: passTo(mainProxy.scheme, next) }),
      ...(mainProxy.ssl && main.implicitSslName && { ssl: { ...mainProxy.ssl, name: canary.backend.serviceDnsName } }),
      canary: canaryPart,
    };
  } else {
    let sslNameVariable: string | undefined;
    if (mainProxy.ssl && main.implicitSslName) {
      sslNameVariable = `${prefix}_ssl_name`;
      maps.push({
        comment,
        source: variable,
        variable: sslNameVariable,
        entries: [{ key: regexKey(`^${escapeLiteral(canaryTarget)}$`), value: canary.backend.serviceDnsName }],
        defaultValue: mainProxy.ssl.name ?? main.backend.serviceDnsName,
      });
    }
    proxy = {
      ...withoutResolve(mainProxy),
      pass: passTo(mainProxy.scheme, variable),
      canary: canaryPart,
      // proxy_ssl_name takes variables: each backend is verified by the name of its own Service.
      ...(sslNameVariable !== undefined && mainProxy.ssl && { ssl: { ...mainProxy.ssl, name: `$${sslNameVariable}` } }),
    };
  }
  if (variable !== undefined) extensions.define(variable.slice(1), { maps, splits });
  return { proxy, canaryBackend };
}

/** The proxy without its own per-request name: the split decides the backend now. */
export function withoutResolve(proxy: Proxy): Proxy {
  const copy: { -readonly [Key in keyof Proxy]: Proxy[Key] } = { ...proxy };
  delete copy.resolve;
  return copy;
}

/** `proxy_pass`/`grpc_pass` take a URL; `fastcgi_pass` (no scheme) the address alone. */
export function passTo(scheme: string, target: string): string {
  return scheme === '' ? target : `${scheme}://${target}`;
}

export const defaultRedirectProblem =
  'proxy-redirect-from: default rewrites redirects from the proxy_pass address, which nginx cannot do when it chooses the backend per request (a name it resolves then, or a canary split); the backend\'s redirects are passed unchanged';

/** The proxy without `proxy_redirect default`, for a `proxy_pass` with variables. */
export function withoutDefaultRedirect(proxy: Proxy): Proxy {
  if (!proxy.tuning) return proxy;
  const tuning: { -readonly [Key in keyof ProxyTuning]: ProxyTuning[Key] } = { ...proxy.tuning };
  delete tuning.redirect;
  return { ...proxy, tuning };
}

/**
 * Canaries split the winning locations of their main Ingress: same host, path and path type, and the
 * same namespace (a canary never diverts another tenant's traffic). One canary per location: the oldest.
 */
export function attachCanaries(
  routes: Map<string, RouteClaim[]>,
  canaries: readonly CanaryClaim[],
  extensions: HttpExtensionRegistry,
  report: Reporter,
): ResolvedBackend[] {
  const backends: ResolvedBackend[] = [];
  const used = new Map<string, CanaryClaim>();
  for (const canary of [...canaries].sort((a, b) => compareAge(a.ingress, b.ingress))) {
    const winners = routes.get(canary.host) ?? [];
    const mains = winners.filter((w) => w.ingress.kind === 'Ingress' && !w.fallback && !w.weak && w.ingressPath === canary.ingressPath && w.pathType === canary.pathType);
    const where = `${canary.host === '' ? 'rules without host' : `host ${canary.host}`} path ${canary.ingressPath} (${canary.pathType})`;
    if (mains.length === 0) {
      report.warning('canary-without-main', canary.ingress, `no Ingress routes ${where}, so this canary serves nothing there; a canary never claims a path by itself`, canary.field);
      continue;
    }
    for (const main of mains) {
      const index = winners.indexOf(main);
      if (main.ingress.metadata.namespace !== canary.ingress.metadata.namespace) {
        report.warning(
          'canary-other-namespace',
          canary.ingress,
          `${where} is routed by Ingress ${resourceName(main.ingress)} in another namespace; a canary only splits traffic of its own namespace, so it serves nothing there`,
          canary.field,
        );
        break;
      }
      const location = `${main.host} ${main.modifier} ${main.path}`;
      const earlier = used.get(location);
      if (earlier && earlier !== canary) {
        report.warning('canary-conflict', canary.ingress, `${where} is already split with canary Ingress ${resourceName(earlier.ingress)} (older, or first by namespace/name); this one is not used there`, canary.field);
        break;
      }
      used.set(location, canary);
      if (!main.proxy || !main.backend) {
        report.warning('canary-main-unavailable', canary.ingress, `the main Ingress ${resourceName(main.ingress)} cannot proxy ${where} (see its diagnostics), so nothing is split there`, canary.field);
        continue;
      }
      const split = splitWithCanary({ ...main, proxy: main.proxy, backend: main.backend }, canary, extensions);
      if (split.proxy === main.proxy) {
        report.warning('canary-takes-nothing', canary.ingress, `canary-weight is 0 and there is no canary-by-header or canary-by-cookie, so no request of ${where} goes to the canary`, canary.field);
        continue;
      }
      backends.push(split.canaryBackend);
      let proxy = split.proxy;
      if (proxy.pass.includes('$') && proxy.tuning?.redirect === 'default') {
        report.warning('proxy-redirect-default-ignored', main.ingress, defaultRedirectProblem, ['metadata', 'annotations', 'nginx.ingress.kubernetes.io/proxy-redirect-from']);
        proxy = withoutDefaultRedirect(proxy);
      }
      winners[index] = withFields(main, { proxy });
    }
  }
  return backends;
}
