/**
 * What an Ingress's annotations do to each of its locations besides choosing the backend: access
 * checks (addresses, client certificates, passwords, external auth, rate limits), redirects, CORS,
 * request headers and proxy tuning. Built once per Ingress; the translator adds the per-path parts.
 *
 * Everything that guards access fails closed: when it cannot be set up (a Secret missing, an auth
 * service nginx could not reach without DNS at load time), the Ingress is left out with an error.
 */
import type { FieldPath } from '../../model/diagnostics.js';
import type {
  AuthEndpoint,
  ClientCertificateCheck,
  CorsHeaders,
  ExternalAuthUse,
  GeoBlock,
  Header,
  LimitZone,
  Location,
  LocationBehaviour,
  MapBlock,
  MirrorEndpoint,
  ProxyTuning,
} from '../../model/nginx.js';
import type { SourceObject } from '../../sources/snapshot.js';
import { internalLocationPrefix } from '../internal-locations.js';
import { authEndpoint, targetEndpoint } from './auth-endpoint.js';
import { annotationPrefix, type IngressAnnotations, type SecretReference } from './annotations/index.js';
import type { AuthUrl } from './annotations/external-auth.js';
import type { CorsOrigins } from './annotations/cors.js';
import { permanentCode, temporalCode } from './annotations/paths.js';
import type { ControllerSettings } from './configmap.js';
import { quoteKey, sizeInBytes } from '../checks/allowlist.js';
import { maxProxyBuffersTotalBytes } from './annotations/proxy.js';
import { busySizeRange, locationBusySize } from './busy-buffers.js';
import { fastCgiSettings } from './fastcgi-params.js';
import { directiveSlices } from './annotations/directive-slices.js';
import { digestOf, escapeLiteral, regexKey } from '../settle/extensions.js';
import { upstreamName } from '../upstream-names.js';
import { headerEntries } from './header-configmaps.js';
import { literalDollarVariable } from '../settle/extensions.js';
import { compareStrings } from '../../model/order.js';
import type { ClientCertificateRequest } from '../settle/claims.js';
import type { IngressBehaviour, IngressContext } from './context.js';
import { requestOrigin, returnUriVariable, useRequestOrigin, useReturnUri } from '../settle/client-url.js';

/** Where the internal auth locations live: no Ingress path may be under it (internal-locations.ts). */
const authEndpointPrefix = `${internalLocationPrefix}auth/`;
/** Where the internal mirror locations live. */
const mirrorEndpointPrefix = `${internalLocationPrefix}mirror/`;

const annotationField = (name: string): FieldPath => ['metadata', 'annotations', annotationPrefix + name];

/** What the sections of `buildBehaviour` add to: shared lists, and `fail` for what guards access. */
interface Sections {
  readonly object: SourceObject;
  readonly annotations: IngressAnnotations;
  readonly ctx: IngressContext;
  readonly references: string[];
  readonly companions: Location[];
  readonly headers: { name: string; value: string }[];
  readonly fail: (code: string, message: string, annotation: string) => void;
  /** What guards the locations cannot be set up, and the operator's setting says so once: they answer 503. */
  readonly deny: () => void;
}

/**
 * The behaviour of an Ingress's locations, or undefined when something that guards access cannot be set
 * up. `served`: the host names its locations are served under ('' for a rule without host).
 */
export function buildBehaviour(object: SourceObject, annotations: IngressAnnotations, served: readonly string[], ctx: IngressContext): IngressBehaviour | undefined {
  const settings = ctx.settings;
  let ok = true;
  let denied = false;
  const sections: Sections = {
    object,
    annotations,
    ctx,
    references: [],
    companions: [],
    headers: [],
    fail: (code, message, annotation) => {
      ctx.report.error(code, object, `${message}; the Ingress is not rendered until this is fixed, since the annotation guards access`, annotationField(annotation));
      ok = false;
    },
    deny: () => {
      denied = true;
    },
  };
  const { references, companions, headers } = sections;
  const { clientCertificate, clientCertificateCheck } = clientCertificates(sections);
  const basicAuth = basicAuthentication(sections);
  const externalAuth = externalAuthentication(sections, served);
  const mirror = mirroring(sections);
  const { rateLimits, connectionLimit } = requestLimits(sections);
  const limits = annotations.rateLimit;

  // ---------------------------------------------------------------- CORS
  let cors: CorsHeaders | undefined;
  if (annotations.cors.enabled) {
    const policy = corsPolicy(annotations.cors, ctx);
    cors = policy.headers;
    references.push(policy.reference);
  }

  // ---------------------------------------------------------------- redirects
  const paths = annotations.paths;
  if (paths.appRoot !== undefined) references.push(useRequestOrigin(ctx.extensions));
  let redirect: LocationBehaviour['redirect'];
  if (paths.temporalRedirect !== undefined) redirect = { code: temporalCode(paths.temporalRedirectCode), url: paths.temporalRedirect };
  else if (paths.permanentRedirect !== undefined) redirect = { code: permanentCode(paths.permanentRedirectCode), url: paths.permanentRedirect };

  if (paths.xForwardedPrefix !== undefined) headers.push({ name: 'X-Forwarded-Prefix', value: paths.xForwardedPrefix });

  if (!ok) return undefined;
  const headerSection = responseHeaders(sections, cors !== undefined || externalAuth !== undefined);
  const fastCgi = fastCgiSettings(object, annotations, ctx);
  const proxy = annotations.proxy;
  const ranges = sourceRanges(annotations.sourceRange.deny ?? settings.denylistSourceRange, annotations.sourceRange.allow ?? settings.whitelistSourceRange, ctx);
  references.push(...ranges);
  const tuning = proxyTuning(annotations, busyBuffers(object, annotations, settings, ctx, buffersWithinLimit(object, annotations, settings, ctx)));
  return {
    behaviour: {
      variables: [],
      ...(clientCertificateCheck && { clientCertificate: clientCertificateCheck }),
      ...(paths.appRoot !== undefined && { appRoot: `${requestOrigin}${paths.appRoot}` }),
      ...(annotations.tls.usePortInRedirects && { portInRedirect: true }),
      ...(redirect && { redirect }),
      ...(cors && { cors }),
      refusedWhen: ranges,
      ...(basicAuth && { basicAuth }),
      ...(externalAuth && { externalAuth }),
      ...(mirror && { mirror }),
      rateLimits,
      ...(connectionLimit && { connectionLimit }),
      ...(limits.rate !== undefined && { limitRate: limits.rate }),
      ...(limits.rateAfter !== undefined && { limitRateAfter: limits.rateAfter }),
      ...(proxy.bodySize !== undefined && { clientMaxBodySize: proxy.bodySize }),
      ...(proxy.clientBodyBufferSize !== undefined && { clientBodyBufferSize: proxy.clientBodyBufferSize }),
      errorPages: [],
      repeatHsts: false,
      ...(headerSection.responseHeaders && { responseHeaders: headerSection.responseHeaders }),
      ...(headerSection.hiddenHeaders && { hiddenHeaders: headerSection.hiddenHeaders }),
      ...(!annotations.logs.accessLog && { accessLogOff: true }),
      ...(annotations.logs.rewriteLog && { rewriteLog: true }),
    },
    ...((headerSection.denied || fastCgi.denied || denied) && { denied: true }),
    ...(fastCgi.fastcgi && { fastcgi: fastCgi.fastcgi }),
    companions,
    ...(clientCertificate && { clientCertificate }),
    headers,
    ...(paths.upstreamVhost !== undefined && { host: paths.upstreamVhost }),
    ...(proxy.connectionHeader !== undefined && { connectionHeader: proxy.connectionHeader }),
    ...(tuning && { tuning }),
    httpVersion: proxy.httpVersion ?? settings.proxyHttpVersion,
    references,
  };
}

/** `auth-tls-*`: the CA a host asks client certificates of, and the checks of its locations. */
function clientCertificates({ object, annotations, ctx, headers, fail }: Sections): {
  clientCertificate?: ClientCertificateRequest;
  clientCertificateCheck?: ClientCertificateCheck;
} {
  const tlsAuth = annotations.clientCertificate;
  let clientCertificate: ClientCertificateRequest | undefined;
  let clientCertificateCheck: ClientCertificateCheck | undefined;
  const tlsAuthPresent = Object.keys(object.metadata.annotations).some((key) => key.startsWith(`${annotationPrefix}auth-tls-`));
  if (tlsAuth.secret) {
    const ref = secretIn(object, tlsAuth.secret);
    const ca = crossNamespaceAllowed(object, ref, ctx) ? ctx.secrets.caBundle(ref) : undefined;
    if (!ca) {
      fail('auth-tls-secret-cross-namespace', `auth-tls-secret names a Secret in namespace ${ref.namespace}; move it to ${object.metadata.namespace} or pass --allow-cross-namespace-secrets`, 'auth-tls-secret');
    } else if (!ca.ok) {
      fail('auth-tls-secret-invalid', ca.problem, 'auth-tls-secret');
    } else {
      const crl = ctx.secrets.revocationList(ref);
      if (crl && !crl.ok) fail('auth-tls-secret-invalid', crl.problem, 'auth-tls-secret');
      else if (tlsAuth.verifyClient !== 'off') {
        clientCertificate = {
          caFile: ca.value,
          ...(crl?.ok && { crlFile: crl.value }),
          depth: tlsAuth.verifyDepth,
          secret: `${ref.namespace}/${ref.name}`,
        };
        clientCertificateCheck = {
          rejectUnverified: tlsAuth.verifyClient === 'on' || tlsAuth.verifyClient === 'optional',
          requireCertificate: tlsAuth.verifyClient === 'on',
          ...(tlsAuth.matchCn !== undefined && { matchCn: tlsAuth.matchCn }),
          ...(tlsAuth.errorPage !== undefined && { errorPage: tlsAuth.errorPage }),
        };
        headers.push(
          { name: 'ssl-client-verify', value: '$ssl_client_verify' },
          { name: 'ssl-client-subject-dn', value: '$ssl_client_s_dn' },
          { name: 'ssl-client-issuer-dn', value: '$ssl_client_i_dn' },
        );
        if (tlsAuth.passCertificate) headers.push({ name: 'ssl-client-cert', value: '$ssl_client_escaped_cert' });
      }
    }
  } else if (tlsAuthPresent) {
    // ingress-nginx ignores the other auth-tls-* without a secret, which leaves the backend open to
    // clients without a certificate while the Ingress reads as if it required one.
    fail('auth-tls-without-secret', 'auth-tls-* annotations without auth-tls-secret cannot verify any client certificate', 'auth-tls-secret');
  }
  return { ...(clientCertificate && { clientCertificate }), ...(clientCertificateCheck && { clientCertificateCheck }) };
}

/** `auth-type: basic` with the users of `auth-secret`. */
function basicAuthentication({ object, annotations, ctx, headers, fail }: Sections): LocationBehaviour['basicAuth'] {
  const basic = annotations.basicAuth;
  let basicAuth: LocationBehaviour['basicAuth'];
  if (basic.type === 'basic') {
    if (!basic.secret) {
      fail('auth-secret-missing', 'auth-type basic needs auth-secret, the Secret with the users', 'auth-type');
    } else {
      const ref = secretIn(object, basic.secret);
      const file = crossNamespaceAllowed(object, ref, ctx) ? ctx.secrets.htpasswd(ref, basic.secretType) : undefined;
      if (!file) {
        fail('auth-secret-cross-namespace', `auth-secret names a Secret in namespace ${ref.namespace}; move it to ${object.metadata.namespace} or pass --allow-cross-namespace-secrets`, 'auth-secret');
      } else if (!file.ok) {
        fail('auth-secret-invalid', file.problem, 'auth-secret');
      } else {
        basicAuth = { realm: basic.realm ?? '', userFile: file.value };
        // As ingress-nginx: the credentials are for nginx, not for the backend.
        headers.push({ name: 'Authorization', value: '""' });
      }
    }
  } else if (basic.secret !== undefined || basic.realm !== undefined) {
    fail('auth-type-missing', 'auth-secret and auth-realm protect nothing without auth-type: basic', 'auth-type');
  }
  return basicAuth;
}

/**
 * `auth-url` (or the ConfigMap's `global-auth-url` for an Ingress without one, unless it says
 * `enable-global-auth: "false"`): an internal location beside the Ingress's, which `auth_request` asks.
 */
function externalAuthentication({ object, annotations, ctx, headers, companions, references, fail, deny }: Sections, served: readonly string[]): ExternalAuthUse | undefined {
  const own = annotations.externalAuth;
  const wantsGlobal = own.url === undefined && own.enableGlobalAuth;
  // A global-auth-url that cannot be used is the operator's error, said once at the ConfigMap key; the
  // Ingresses it guards answer 503 meanwhile, neither left out nor open.
  if (wantsGlobal && ctx.settings.globalAuthUnusable) {
    deny();
    return undefined;
  }
  const global = wantsGlobal ? ctx.settings.globalAuth : undefined;
  const external = global ?? own;
  const what = global ? 'global-auth-url' : 'auth-url';
  if (!external.url) {
    if (own.signin !== undefined || own.method !== undefined || own.responseHeaders.length > 0) {
      fail('auth-url-missing', 'auth-signin, auth-method and auth-response-headers do nothing without auth-url', 'auth-url');
    }
    return undefined;
  }
  const checked = authEndpoint(object, external.url, external.method, served, ctx, what);
  // An allowed auth-snippet goes into the subrequest's location, as in ingress-nginx (and into its name, so it is the Ingress's own).
  const target = checked.ok && !global ? { ...checked, value: ctx.snippets.withAuthSnippet(object, checked.value) } : checked;
  if (!target.ok && global) {
    ctx.report.error('global-auth-url-unusable', ctx.controllerConfigMap, `${target.problem}; the Ingresses it guards answer 503 until this is fixed (never unguarded)`, ['data', 'global-auth-url']);
    deny();
    return undefined;
  }
  if (!target.ok) {
    fail('auth-url-unreachable', target.problem, 'auth-url');
    return undefined;
  }
  const cache = external.cacheKey === undefined ? undefined : authCache(object, external.cacheKey, external.cacheDuration, ctx);
  const endpoint: AuthEndpoint = {
    ...(global ? target.value : keptAlive(object, annotations.authKeepalive, target.value, ctx)),
    ...(external.requestRedirect !== undefined && { requestRedirect: external.requestRedirect }),
    ...(cache && { cache }),
  };
  const path = `${authEndpointPrefix}${digestOf(JSON.stringify(endpoint))}`;
  companions.push({
    modifier: '=',
    path,
    comment: `${what} of Ingress ${object.metadata.namespace}/${object.metadata.name}`,
    plainHttp: { redirect: false, serve: true },
    authEndpoint: endpoint,
  });
  const responseHeaders = external.responseHeaders.map((header) => {
    const variable = header.toLowerCase().replaceAll('-', '_');
    return { header, variable: `i2n_auth_${variable}`, upstreamVariable: `upstream_http_${variable}` };
  });
  for (const header of responseHeaders) headers.push({ name: header.header, value: `$${header.variable}` });
  if (external.signin) references.push(useRequestOrigin(ctx.extensions), useReturnUri(ctx.extensions));
  return {
    endpoint: path,
    ...(external.signin && { signin: signinUrl(external.signin, external.signinRedirectParam) }),
    alwaysSetCookie: external.alwaysSetCookie,
    responseHeaders,
  };
}

/**
 * `auth-keepalive`: the auth service in an upstream block of its own with the annotations' keepalive
 * settings, as ingress-nginx builds it when the target is no variable; here, when it is a Service of the
 * input (an address or name nginx resolves per request has no block). Without it, a Service target is
 * reached through its own block, kept alive as the ConfigMap says.
 */
function keptAlive(object: SourceObject, keepalive: IngressAnnotations['authKeepalive'], target: AuthEndpoint, ctx: IngressContext): AuthEndpoint {
  if (keepalive.connections === 0) return target;
  const field = annotationField('auth-keepalive');
  if (keepalive.requests === 0 || keepalive.timeout === 0) {
    ctx.report.warning('auth-keepalive-off', object, 'auth-keepalive-requests or auth-keepalive-timeout is 0, which turns auth-keepalive off, as in ingress-nginx', field);
    return target;
  }
  const backend = target.upstream === undefined ? undefined : ctx.backends.get(target.upstream);
  if (!backend) {
    ctx.report.warning('auth-keepalive-unavailable', object, 'auth-keepalive needs an auth-url that names a Service of the input (an upstream block); this target gets a connection per subrequest', field);
    return target;
  }
  const { service } = backend;
  const upstream = upstreamName(`${service.namespace}_${service.name}_${service.port}_auth-keepalive-${keepalive.connections}-${keepalive.requests}-${keepalive.timeout}`);
  ctx.backends.set(upstream, {
    ...backend,
    upstream,
    description: `${backend.description}, for auth-url with auth-keepalive`,
    keepalive: {
      keepalive: keepalive.connections,
      keepaliveDirectives: [
        { name: 'keepalive_requests', value: String(keepalive.requests) },
        { name: 'keepalive_timeout', value: `${keepalive.timeout}s` },
      ],
    },
  });
  return { ...target, upstream, pass: target.pass.replace(`://${backend.upstream}`, `://${upstream}`) };
}

/**
 * `auth-cache-key`: the auth service's answers kept in one http-level zone (ingress-nginx's size),
 * under the Ingress's name, the request's host and the key, so that no other Ingress or host is
 * admitted by an answer given for this one.
 */
function authCache(object: SourceObject, key: string, valid: readonly string[], ctx: IngressContext): AuthEndpoint['cache'] {
  const zone = 'i2n_auth_cache';
  ctx.extensions.define(zone, { cacheZones: [{ comment: 'auth-cache-key: answers of auth services', name: zone }] });
  return { zone, key: `${object.metadata.namespace}/${object.metadata.name}:$host:${key}`, valid };
}

/**
 * `mirror-target`: an internal location that proxies to the target, which `mirror` sends a copy of each
 * request to (nginx drops its answer). A target nginx may not reach leaves the mirror out: the copy is
 * the tenant's convenience, and the Ingress serves its clients the same without it.
 */
function mirroring({ object, annotations, ctx, companions }: Sections): LocationBehaviour['mirror'] {
  const { target, requestBody, host } = annotations.mirror;
  if (target === undefined) {
    if (host !== undefined) ctx.report.warning('mirror-target-missing', object, 'mirror-host does nothing without mirror-target', annotationField('mirror-host'));
    return undefined;
  }
  const checked = targetEndpoint('mirror-target', object, { ...target, authority: target.authority ?? '' }, '$i2n_mirror_target', ctx);
  if (!checked.ok) {
    ctx.report.error('mirror-target-unreachable', object, `${checked.problem}; requests are not mirrored`, annotationField('mirror-target'));
    return undefined;
  }
  // As ingress-nginx: the Host of the copy is mirror-host, else the target's host name without its port.
  const endpoint: MirrorEndpoint = { ...checked.value, host: host ?? hostName(checked.value.host), requestBody };
  const path = `${mirrorEndpointPrefix}${digestOf(JSON.stringify(endpoint))}`;
  companions.push({
    modifier: '=',
    path,
    comment: `mirror-target of Ingress ${object.metadata.namespace}/${object.metadata.name}`,
    plainHttp: { redirect: false, serve: true },
    mirrorEndpoint: endpoint,
  });
  return { endpoint: path, requestBody };
}

/** The host of `host[:port]` or `[v6][:port]`. */
function hostName(authority: string): string {
  return authority.startsWith('[') ? authority.slice(0, authority.indexOf(']') + 1) : authority.replace(/:\d+$/, '');
}

/** `limit-rps`, `limit-rpm`, `limit-connections`: zones at http level, keyed by client unless allow-listed. */
function requestLimits({ object, annotations, ctx, references }: Sections): {
  rateLimits: { zone: string; burst: number }[];
  connectionLimit?: LocationBehaviour['connectionLimit'];
} {
  const limits = annotations.rateLimit;
  const rateLimits: { zone: string; burst: number }[] = [];
  let connectionLimit: LocationBehaviour['connectionLimit'];
  if (limits.rps !== undefined || limits.rpm !== undefined || limits.connections !== undefined) {
    const id = digestOf(object.metadata.namespace, object.metadata.name);
    const key = limitKey(object, id, limits.allowlist, ctx);
    const comment = `Ingress ${object.metadata.namespace}/${object.metadata.name}`;
    const zones: LimitZone[] = [];
    for (const [rate, unit] of [
      [limits.rps, 's'],
      [limits.rpm, 'm'],
    ] as const) {
      if (rate === undefined) continue;
      const zone = `i2n_${id}_rp${unit}`;
      zones.push({ comment, kind: 'req', name: zone, key: key.variable, rate: `${rate}r/${unit}` });
      rateLimits.push({ zone, burst: rate * limits.burstMultiplier });
    }
    if (limits.connections !== undefined) {
      const zone = `i2n_${id}_conn`;
      zones.push({ comment, kind: 'conn', name: zone, key: key.variable });
      connectionLimit = { zone, limit: limits.connections };
    }
    for (const zone of zones) {
      ctx.extensions.define(zone.name, { limitZones: [zone], geos: key.geos, maps: key.maps });
      references.push(zone.name);
    }
  } else if (limits.allowlist.length > 0) {
    ctx.report.warning('limit-allowlist-without-limit', object, 'limit-whitelist has no effect without limit-rps, limit-rpm or limit-connections', annotationField('limit-whitelist'));
  }
  return { rateLimits, ...(connectionLimit && { connectionLimit }) };
}

/**
 * Response headers of the locations: ConfigMap `add-headers` repeated wherever the location has an
 * `add_header` of its own (`addsOthers`; nginx inherits them all or nothing), then `custom-headers`,
 * which replace the backend's headers of the same names. A `custom-headers` ConfigMap that cannot be
 * used denies the locations (503), as ingress-nginx does.
 */
function responseHeaders({ object, annotations, ctx }: Sections, addsOthers: boolean): { responseHeaders?: Header[]; hiddenHeaders?: string[]; denied: boolean } {
  const defaults = ctx.headers;
  const ref = annotations.customHeaders.configMap;
  if (ref === undefined) return addsOthers ? { responseHeaders: [...defaults.response], denied: false } : { denied: false };
  const configMap = secretIn(object, ref);
  const id = `${configMap.namespace}/${configMap.name}`;
  const deny = (problem: string) => {
    ctx.report.error('custom-headers-denied', object, `custom-headers: ${problem}; the Ingress's paths answer 503 until this is fixed, as in ingress-nginx`, annotationField('custom-headers'));
    return { denied: true };
  };
  if (!crossNamespaceAllowed(object, configMap, ctx)) return deny(`ConfigMap ${id} is in another namespace; move it to ${object.metadata.namespace} or pass --allow-cross-namespace-secrets`);
  const data = ctx.secrets.configMap(configMap);
  if (!data) return deny(`ConfigMap ${id} is not in the input`);
  const entries = headerEntries(data, 'response', 'literal');
  const notAllowed = entries.headers.find((header) => !defaults.allowedResponseHeaders.has(header.name));
  const problem =
    entries.problems[0]?.problem ??
    (notAllowed && `header ${quoteKey(notAllowed.name)} is not listed in the controller ConfigMap's global-allowed-response-headers (ingress-nginx 1.12+ requires it)`);
  if (problem !== undefined) return deny(`ConfigMap ${id}: ${problem}`);
  if (Object.values(data).some((value) => value.includes('$'))) {
    ctx.extensions.define(literalDollarVariable, {
      geos: [{ comment: 'a literal "$" in custom-headers values', source: '$remote_addr', variable: literalDollarVariable, defaultValue: '"$"', entries: [] }],
    });
  }
  const replaced = new Set(entries.headers.map((header) => header.name.toLowerCase()));
  const hidden = new Map([...defaults.hidden, ...entries.headers.map((header) => header.name)].map((name) => [name.toLowerCase(), name]));
  return {
    responseHeaders: [...defaults.response.filter((header) => !replaced.has(header.name.toLowerCase())), ...entries.headers],
    hiddenHeaders: [...hidden.values()].sort(compareStrings),
    denied: false,
  };
}

function secretIn(object: SourceObject, ref: SecretReference): { namespace: string; name: string } {
  return { namespace: ref.namespace ?? object.metadata.namespace, name: ref.name };
}

function crossNamespaceAllowed(object: SourceObject, ref: { namespace: string }, ctx: IngressContext): boolean {
  return ref.namespace === object.metadata.namespace || ctx.allowCrossNamespaceSecrets;
}

/**
 * ingress-nginx appends `<param>=<original URL>` (`rd` unless `auth-signin-redirect-param`) to the sign-in
 * URL unless it has that parameter; the original URL is the request's own origin and its URI as one
 * query value (settle/client-url.ts), so a client can add no parameter of its own.
 */
function signinUrl(signin: AuthUrl, param: string): string {
  if (new RegExp(`[?&]${param}=`).test(signin.url)) return signin.url;
  return `${signin.url}${signin.url.includes('?') ? '&' : '?'}${param}=${requestOrigin}$${returnUriVariable}`;
}

/**
 * The zone key: the client address, or empty (not limited) for `limit-whitelist` addresses, looked up
 * with `geo` on the client address as the access checks see it.
 */
function limitKey(
  object: SourceObject,
  id: string,
  allowlist: readonly string[],
  ctx: IngressContext,
): { variable: string; geos: GeoBlock[]; maps: MapBlock[] } {
  if (allowlist.length === 0) return { variable: ctx.limitKey, geos: [], maps: [] };
  const comment = `limit-whitelist of Ingress ${object.metadata.namespace}/${object.metadata.name}`;
  const exempt = `i2n_${id}_limit_exempt`;
  const variable = `i2n_${id}_limit_key`;
  return {
    variable: `$${variable}`,
    geos: [{ comment, source: ctx.clientAddress, variable: exempt, defaultValue: '0', entries: allowlist.map((network) => ({ network, value: '1' })) }],
    maps: [{ comment, source: `$${exempt}`, variable, entries: [{ key: '1', value: '""' }], defaultValue: ctx.limitKey }],
  };
}

/** Per-location proxy settings for the annotations that differ from the ConfigMap's defaults. */
function proxyTuning(annotations: IngressAnnotations, buffers: LocationBuffers | undefined): ProxyTuning | undefined {
  const proxy = annotations.proxy;
  const redirect =
    proxy.redirectFrom === undefined
      ? undefined
      : proxy.redirectFrom === 'off' || proxy.redirectFrom === 'default'
        ? proxy.redirectFrom
        : proxy.redirectTo !== undefined && proxy.redirectTo !== 'off'
          ? `${proxy.redirectFrom} ${proxy.redirectTo}`
          : undefined;
  const onOff = (value: boolean) => (value ? 'on' : 'off');
  const directives = directiveSlices.flatMap((slice) => {
    const value = annotations.directives[slice.name];
    return value === undefined ? [] : [{ name: slice.directive, value }];
  });
  const tuning: ProxyTuning = {
    ...(proxy.connectTimeout !== undefined && { connectTimeout: `${proxy.connectTimeout}s` }),
    ...(proxy.readTimeout !== undefined && { readTimeout: `${proxy.readTimeout}s` }),
    ...(proxy.sendTimeout !== undefined && { sendTimeout: `${proxy.sendTimeout}s` }),
    ...(proxy.buffering !== undefined && { buffering: onOff(proxy.buffering) }),
    ...(buffers && { buffers }),
    ...(proxy.requestBuffering !== undefined && { requestBuffering: onOff(proxy.requestBuffering) }),
    ...(proxy.nextUpstream !== undefined && { nextUpstream: proxy.nextUpstream }),
    ...(proxy.nextUpstreamTries !== undefined && { nextUpstreamTries: String(proxy.nextUpstreamTries) }),
    ...(proxy.nextUpstreamTimeout !== undefined && { nextUpstreamTimeout: `${proxy.nextUpstreamTimeout}s` }),
    ...(redirect !== undefined && { redirect }),
    ...(directives.length > 0 && { directives }),
  };
  return Object.keys(tuning).length > 0 ? tuning : undefined;
}

/** The buffers a location sets for its Ingress's `proxy-buffer-size`, `proxy-buffers-number` and `proxy-busy-buffers-size`. */
type LocationBuffers = NonNullable<ProxyTuning['buffers']>;

/**
 * The buffers of the Ingress's locations, when it sets any: both sizes and the number, from the ConfigMap
 * where not set here, and the busy size the location needs said (busy-buffers.ts). A busy size that does
 * not fit the buffers, which nginx would refuse to load, is an error here and left out.
 */
function busyBuffers(object: SourceObject, annotations: IngressAnnotations, settings: ControllerSettings, ctx: IngressContext, buffersAllowed: boolean): LocationBuffers | undefined {
  const proxy = annotations.proxy;
  const ownBuffers = buffersAllowed && (proxy.bufferSize !== undefined || proxy.buffersNumber !== undefined);
  if (!ownBuffers && proxy.busyBuffersSize === undefined) return undefined;
  const buffers = ownBuffers
    ? { size: proxy.bufferSize ?? settings.proxyBufferSize, number: proxy.buffersNumber ?? settings.proxyBuffersNumber }
    : { size: settings.proxyBufferSize, number: settings.proxyBuffersNumber };
  const { busySize, annotationUnfit } = locationBusySize(buffers, proxy.busyBuffersSize, settings.proxyBusyBuffersSize);
  if (annotationUnfit) {
    ctx.report.error(
      'annotation-invalid',
      object,
      `proxy-busy-buffers-size ${proxy.busyBuffersSize} must be ${busySizeRange(buffers)}, which nginx requires; ${settings.proxyBusyBuffersSize !== undefined ? 'the ConfigMap\'s value' : 'nginx\'s default'} applies`,
      annotationField('proxy-busy-buffers-size'),
    );
  }
  if (!ownBuffers && busySize === undefined) return undefined;
  return { ...buffers, ...(busySize !== undefined && { busySize }) };
}

/**
 * Whether this Ingress's buffers, `proxy-buffer-size` × `proxy-buffers-number` (each from the ConfigMap
 * when not set here), stay within what one request may hold: nginx allocates them per request, and one
 * tenant's client that never reads would hold them all. Over it, both fall back to the ConfigMap's.
 */
function buffersWithinLimit(object: SourceObject, annotations: IngressAnnotations, settings: ControllerSettings, ctx: IngressContext): boolean {
  const proxy = annotations.proxy;
  if (proxy.bufferSize === undefined && proxy.buffersNumber === undefined) return true;
  const size = proxy.bufferSize ?? settings.proxyBufferSize;
  const number = proxy.buffersNumber ?? settings.proxyBuffersNumber;
  if (sizeInBytes(size) * number <= maxProxyBuffersTotalBytes) return true;
  ctx.report.error(
    'annotation-invalid',
    object,
    `proxy-buffers-number ${number} of proxy-buffer-size ${size} is ${Math.round((sizeInBytes(size) * number) / 1024 ** 2)}m per request, above the ${maxProxyBuffersTotalBytes / 1024 ** 2}m one request may hold; both fall back to the ConfigMap's values`,
    annotationField(proxy.buffersNumber !== undefined ? 'proxy-buffers-number' : 'proxy-buffer-size'),
  );
  return false;
}

/**
 * CORS as http-level maps keyed on the request's origin: each header's value is empty (so nginx does
 * not send it) unless the origin is allowed. With `*` every header is a literal. The maps are named by a
 * digest of the policy, so Ingresses with the same policy share them.
 */
function corsPolicy(cors: IngressAnnotations['cors'], ctx: IngressContext): { headers: CorsHeaders; reference: string } {
  const id = digestOf(JSON.stringify(cors));
  const prefix = `i2n_cors_${id}`;
  const preflight = `${prefix}_preflight`;
  const comment = 'CORS (enable-cors)';
  const quoted = (value: string) => `"${value}"`;
  const values = {
    methods: quoted(cors.allowMethods),
    headers: quoted(cors.allowHeaders),
    ...(cors.allowCredentials && { credentials: 'true' }),
    ...(cors.exposeHeaders !== undefined && { exposeHeaders: quoted(cors.exposeHeaders) }),
    maxAge: String(cors.maxAge),
  };
  const origins: CorsOrigins = cors.allowOrigin;
  if (origins.any) {
    const maps: MapBlock[] = [
      { comment, source: '$request_method', variable: preflight, entries: [{ key: 'OPTIONS', value: '1' }], defaultValue: '""' },
    ];
    ctx.extensions.define(preflight, { maps });
    return { headers: { origin: '*', ...values, preflight: `$${preflight}` }, reference: preflight };
  }
  const originVariable = `${prefix}_origin`;
  // One entry per origin: a single regex of them all would outgrow nginx's 4 KB parameter limit. An
  // empty list (a rejected annotation) allows no origin: the map never matches.
  const entries = origins.origins.map((origin) => ({ key: regexKey(`^${escapeLiteral(origin).replace('\\*', '[A-Za-z0-9-]+')}$`, true), value: '$http_origin' }));
  const maps: MapBlock[] = [
    { comment, source: '$http_origin', variable: originVariable, entries, defaultValue: '""' },
    { comment, source: `"$request_method:$${originVariable}"`, variable: preflight, entries: [{ key: regexKey('^OPTIONS:.'), value: '1' }], defaultValue: '""' },
  ];
  const headers: Record<string, string> = {};
  for (const [field, value] of Object.entries(values)) {
    const variable = `${prefix}_${field.toLowerCase()}`;
    maps.push({ comment, source: `$${originVariable}`, variable, entries: [{ key: '""', value: '""' }], defaultValue: value });
    headers[field] = `$${variable}`;
  }
  ctx.extensions.define(preflight, { maps });
  return {
    headers: {
      origin: `$${originVariable}`,
      methods: headers['methods']!,
      headers: headers['headers']!,
      ...(headers['credentials'] !== undefined && { credentials: headers['credentials'] }),
      ...(headers['exposeHeaders'] !== undefined && { exposeHeaders: headers['exposeHeaders'] }),
      maxAge: headers['maxAge']!,
      preflight: `$${preflight}`,
    },
    reference: preflight,
  };
}

/**
 * `denylist-source-range` and `whitelist-source-range` as `geo` blocks on the client address (as the
 * access checks see it), each 1 for an address the location refuses. Named by a digest of the list,
 * so Ingresses with the same list share one block.
 */
function sourceRanges(deny: readonly string[], allow: readonly string[], ctx: IngressContext): string[] {
  const source = ctx.clientAddress;
  const variables: string[] = [];
  if (deny.length > 0) {
    const variable = `i2n_deny_${digestOf(...deny)}`;
    ctx.extensions.define(variable, {
      geos: [{ comment: 'denylist-source-range', source, variable, defaultValue: '0', entries: deny.map((network) => ({ network, value: '1' })) }],
    });
    variables.push(variable);
  }
  if (allow.length > 0) {
    const variable = `i2n_allow_${digestOf(...allow)}`;
    ctx.extensions.define(variable, {
      geos: [{ comment: 'whitelist-source-range', source, variable, defaultValue: '1', entries: allow.map((network) => ({ network, value: '0' })) }],
    });
    variables.push(variable);
  }
  return variables;
}
