/**
 * Canary Ingresses (`canary: "true"`). A canary claims no host and no path: it only diverts part of the
 * traffic of a location that a main Ingress in its own namespace routes (same host, path and path
 * type), in stock nginx terms:
 *
 *   map $http_<header> $i2n_canary_<id>_header  { "~^always$" <canary>; "~^never$" <main>; default $…_cookie; }
 *   map $http_cookie   $i2n_canary_<id>_cookie  { "~(^|;)name=always(;|$)" <canary>; …never… <main>; default $…_weight; }
 *   split_clients "${request_id}" $i2n_canary_<id>_weight { <share>% <canary>; * <main>; }
 *
 * with ingress-nginx's precedence: the header (its value, pattern, or `always`/`never`), then the
 * cookie, then the weight. The main location keeps everything else it has (access checks, TLS to the
 * backend, tuning); the canary's own annotations other than `canary-*` have no effect.
 */
import type { FieldPath } from '../../model/diagnostics.js';
import type { MapBlock, Proxy, SplitBlock } from '../../model/nginx.js';
import type { SourceObject } from '../../sources/snapshot.js';
import { resolveServiceBackend, type ResolvedBackend } from '../backends.js';
import type { IngressSpec } from '../resources.js';
import { isDnsHostname, isWildcardHostname } from '../checks/allowlist.js';
import { annotationPrefix, type IngressAnnotations } from './annotations/index.js';
import { digestOf, escapeLiteral, regexKey, type HttpExtensionRegistry } from './extensions.js';
import type { CanaryClaim, CanaryPolicy, IngressContext, RouteClaim } from './claims.js';
import { balancedVariant } from './stickiness.js';

/** The paths a canary Ingress offers to split; what it cannot take part in is reported. */
export function translateCanary(object: SourceObject, spec: IngressSpec, annotations: IngressAnnotations, ctx: IngressContext): CanaryClaim[] {
  const ignored: string[] = [];
  // affinity-canary-behavior is read from the canary, as ingress-nginx does.
  const mainOnly = annotations.httpLevelAnnotations.filter((key) => key !== `${annotationPrefix}affinity-canary-behavior`);
  if (mainOnly.length > 0) {
    ignored.push(`annotations ${mainOnly.map((key) => key.slice(annotationPrefix.length)).join(', ')} (the main Ingress's apply)`);
  }
  if (annotations.tls.sslPassthrough) ignored.push('ssl-passthrough');
  if (spec.tls && spec.tls.length > 0) ignored.push('spec.tls (a canary never changes how the main Ingress terminates TLS)');
  if (spec.defaultBackend) ignored.push('spec.defaultBackend (only paths of rules are split)');
  if (ignored.length > 0) {
    ctx.report.warning('canary-ignores', object, `a canary only diverts traffic of its main Ingress's paths, so these have no effect: ${ignored.join('; ')}`);
  }
  const { canary } = annotations;
  const policy: CanaryPolicy = {
    weight: canary.weight,
    weightTotal: canary.weightTotal,
    ...(canary.header !== undefined && { header: canary.header }),
    ...(canary.headerValue !== undefined && { headerValue: canary.headerValue }),
    ...(canary.headerPattern !== undefined && { headerPattern: canary.headerPattern }),
    ...(canary.cookie !== undefined && { cookie: canary.cookie }),
    affinity: annotations.affinity.canaryBehavior,
  };
  if ((policy.headerValue !== undefined || policy.headerPattern !== undefined) && policy.header === undefined) {
    ctx.report.warning(
      'canary-header-missing',
      object,
      'canary-by-header-value and canary-by-header-pattern need canary-by-header, the header to look at; they are ignored',
      ['metadata', 'annotations', `${annotationPrefix}canary-by-header`],
    );
  }
  const claims: CanaryClaim[] = [];
  (spec.rules ?? []).forEach((rule, ruleIndex) => {
    const rulePath: FieldPath = ['spec', 'rules', ruleIndex];
    const host = rule.host ?? '';
    if (host !== '' && !isDnsHostname(host) && !isWildcardHostname(host)) {
      ctx.report.error('host-invalid', object, 'host must be a lowercase RFC 1123 DNS name, optionally with a leading "*." label; this rule is not used', [...rulePath, 'host']);
      return;
    }
    (rule.http?.paths ?? []).forEach((p, pathIndex) => {
      const field: FieldPath = [...rulePath, 'http', 'paths', pathIndex];
      if (!p.backend.service) {
        ctx.report.error('backend-unsupported', object, 'only service backends are supported; this path is not split', [...field, 'backend']);
        return;
      }
      const resolution = resolveServiceBackend(ctx.resources, object.metadata.namespace, p.backend.service, ctx.backendPolicy);
      if (!resolution.ok) {
        ctx.report.error('backend-unresolved', object, `${resolution.problem}; this path is not split`, [...field, 'backend', 'service', ...(resolution.field ?? [])]);
        return;
      }
      if (resolution.warning) ctx.report.warning(resolution.warningCode ?? 'service-dns-name', object, resolution.warning, [...field, 'backend', 'service']);
      claims.push({
        ingress: object,
        field: [...field, 'path'],
        host,
        ingressPath: p.path === undefined || p.path === '' ? '/' : p.path,
        pathType: p.pathType,
        backend: resolution.value,
        policy,
      });
    });
  });
  return claims;
}

/** What a canary does to one main location: its new proxy, and the canary's backend to declare. */
export interface CanarySplitResult {
  readonly proxy: Proxy;
  readonly canaryBackend: ResolvedBackend;
}

/** `canary-by-header`: its value, its pattern, or `always`/`never`. */
function headerEntries(policy: CanaryPolicy, canaryTarget: string, mainTarget: string): MapBlock['entries'] {
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
function withoutResolve(proxy: Proxy): Proxy {
  const copy: { -readonly [Key in keyof Proxy]: Proxy[Key] } = { ...proxy };
  delete copy.resolve;
  return copy;
}

/** `proxy_pass`/`grpc_pass` take a URL; `fastcgi_pass` (no scheme) the address alone. */
export function passTo(scheme: string, target: string): string {
  return scheme === '' ? target : `${scheme}://${target}`;
}
