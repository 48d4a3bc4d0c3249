import { createHash } from 'node:crypto';
import type { FieldPath } from '../../model/diagnostics.js';
import type { BackendProtocol, ErrorPageLocation, Location, LocationBehaviour, Proxy, ProxySsl } from '../../model/nginx.js';
import type { SourceObject } from '../../sources/snapshot.js';
import { isDnsHostname, isKubernetesName, isSafePath, isWildcardHostname } from '../checks/allowlist.js';
import { resolveServiceBackend, type ResolvedBackend } from '../backends.js';
import { upstreamName } from '../upstream-names.js';
import type { IngressBackend, IngressSpec, Typed } from '../resources.js';
import { checkSafeRegex, pathRegexAlphabet } from '../checks/safe-regex.js';
import { internalLocationPrefix, isInternalPath } from '../internal-locations.js';
import { annotationPrefix, parseIngressAnnotations, type IngressAnnotations } from './annotations/index.js';
import { allowedSnippets } from './snippets.js';
import { highestGroupReference } from './annotations/paths.js';
import { buildBehaviour } from './behaviour.js';
import { balanced } from './stickiness.js';
import { translateCanary } from './canary.js';
import { passTo } from '../settle/canaries.js';
import { fastCgiTuning } from './fastcgi-params.js';
import type { ServerTlsAsk, IngressContribution, PassthroughClaim, RouteClaim, TlsClaim, WeakClaim } from '../settle/claims.js';
import type { IngressBehaviour, IngressContext } from './context.js';
import { withAddedFields, withFields } from '../../model/objects.js';
import { locationsFor } from '../settle/paths.js';
import { defaultRedirectProblem, withoutDefaultRedirect } from '../settle/canaries.js';

const empty: IngressContribution = { passthrough: [], tls: [], routes: [], canaries: [] };

const annotationField = (name: string): FieldPath => ['metadata', 'annotations', annotationPrefix + name];

/** What one Ingress asks for. Conflicts between Ingresses are settled later, in settle/. */
export function translateIngress(ingress: Typed<IngressSpec>, ctx: IngressContext): IngressContribution {
  const { object, spec } = ingress;
  const read = parseIngressAnnotations(object.metadata.annotations);
  const { issues, snippets } = allowedSnippets(object, read.issues, ctx.snippetScope, ctx.report);
  const parsed = { value: read.value, issues };
  for (const issue of parsed.issues) {
    ctx.report.add(issue.severity, issue.code, object, issue.message, ['metadata', 'annotations', issue.annotation]);
  }
  const annotations = parsed.value;
  const canaryInvalid = parsed.issues.some((issue) => issue.annotation === `${annotationPrefix}canary` && issue.leavesOut);
  if (canaryInvalid) {
    ctx.report.error(
      'canary-invalid',
      object,
      'the canary annotation is not a boolean, so this Ingress is left out: read as a main Ingress, it would compete for the host and path it means to split',
      annotationField('canary'),
    );
    return empty;
  }
  if (parsed.issues.some((issue) => issue.leavesOut)) {
    ctx.report.error(
      'ingress-skipped',
      object,
      'this Ingress is not rendered until its annotation errors are fixed, so that no half-applied setting reaches nginx',
    );
    return empty;
  }
  ctx.snippets.add(object, snippets);
  if (annotations.canary.enabled) return { ...empty, canaries: translateCanary(object, spec, annotations, ctx) };
  const canaryKeys = Object.keys(object.metadata.annotations).filter((key) => key.startsWith(`${annotationPrefix}canary-`));
  if (canaryKeys.length > 0) {
    ctx.report.warning(
      'canary-not-enabled',
      object,
      `${canaryKeys.map((key) => key.slice(annotationPrefix.length)).join(', ')} have no effect without canary: "true"`,
      ['metadata', 'annotations', canaryKeys[0]!],
    );
  }
  return annotations.tls.sslPassthrough
    ? translatePassthrough(object, spec, annotations, ctx)
    : withServerTlsAsk(translateTerminating(object, spec, annotations, ctx), annotations.serverTls);
}

/** The server-level TLS annotations ride on the route claims, for settle to decide per host. */
function withServerTlsAsk(contribution: IngressContribution, serverTls: IngressAnnotations['serverTls']): IngressContribution {
  const { ciphers, preferServerCiphers } = serverTls;
  if (ciphers === undefined && preferServerCiphers === undefined) return contribution;
  const serverTlsAsk: ServerTlsAsk = {
    ...(ciphers !== undefined && { ciphers }),
    ...(preferServerCiphers !== undefined && { preferServerCiphers }),
    field: annotationField(ciphers !== undefined ? 'ssl-ciphers' : 'ssl-prefer-server-ciphers'),
  };
  return { ...contribution, routes: contribution.routes.map((route) => ({ ...route, serverTls: serverTlsAsk })) };
}

function translatePassthrough(
  object: SourceObject,
  spec: IngressSpec,
  annotations: IngressAnnotations,
  ctx: IngressContext,
): IngressContribution {
  const ignored: string[] = [];
  // ssl-redirect and force-ssl-redirect act on the host's plain HTTP, as in ingress-nginx.
  const redirectAnnotations = new Set(['ssl-redirect', 'force-ssl-redirect'].map((name) => annotationPrefix + name));
  const httpLevel = annotations.httpLevelAnnotations.filter((key) => !redirectAnnotations.has(key));
  if (httpLevel.length > 0) ignored.push(`annotations ${httpLevel.map((a) => a.slice(annotationPrefix.length)).join(', ')}`);
  if (spec.tls && spec.tls.length > 0) ignored.push('spec.tls (the backend presents its own certificate; it only turns on the redirect from plain HTTP)');
  const tlsHosts = new Set((spec.tls ?? []).flatMap((entry) => entry.hosts ?? []));
  const redirects = (host: string) => annotations.tls.forceSslRedirect || (tlsHosts.has(host) && (annotations.tls.sslRedirect ?? ctx.settings.sslRedirect));
  const claims: PassthroughClaim[] = [];
  const rules = spec.rules ?? [];
  rules.forEach((rule, ruleIndex) => {
    const rulePath: FieldPath = ['spec', 'rules', ruleIndex];
    if (rule.host === undefined || rule.host === '') {
      ctx.report.error(
        'passthrough-without-host',
        object,
        'ssl-passthrough routes by SNI, so a rule without host can never match; add spec.rules[].host',
        rulePath,
      );
      return;
    }
    const host = checkedHost(rule.host, object, [...rulePath, 'host'], ctx);
    if (host === undefined) return;
    const paths = rule.http?.paths ?? [];
    const rootIndex = paths.findIndex((p) => (p.path ?? '/') === '/');
    for (const [index, p] of paths.entries()) {
      if (index !== rootIndex) ignored.push(`path ${JSON.stringify(p.path ?? '')} of host ${host}`);
    }
    const root = paths[rootIndex];
    const backendRef = root?.backend ?? spec.defaultBackend;
    const backendField: FieldPath = root ? [...rulePath, 'http', 'paths', rootIndex, 'backend'] : ['spec', 'defaultBackend'];
    // The claim stands without a usable backend: the host is this Ingress's, and its connections are
    // closed rather than handed to the terminating servers.
    let backend: ResolvedBackend | undefined;
    if (!backendRef) {
      ctx.report.error(
        'passthrough-without-backend',
        object,
        `ssl-passthrough for ${host} uses the backend of path "/", and there is none; add a path "/" or spec.defaultBackend. TLS connections for ${host} are closed`,
        rulePath,
      );
    } else {
      backend = resolveBackend(backendRef, object, backendField, ctx, `TLS connections for ${host} are closed`);
    }
    claims.push({ ingress: object, field: [...rulePath, 'host'], host, ...(backend && { backend }), ...(redirects(host) && { redirectsPlainHttp: true }) });
  });
  if (ignored.length > 0) {
    ctx.report.warning(
      'passthrough-ignores',
      object,
      `ssl-passthrough hands TLS to the backend untouched, so these do not apply to its TLS traffic: ${ignored.join('; ')}`,
    );
  }
  return { ...empty, passthrough: claims };
}

function translateTerminating(
  object: SourceObject,
  spec: IngressSpec,
  annotations: IngressAnnotations,
  ctx: IngressContext,
): IngressContribution {
  const served = [...(spec.rules ?? []).map((rule) => rule.host ?? ''), ...annotations.paths.serverAlias];
  const built = buildBehaviour(object, annotations, served, ctx);
  if (!built) {
    ctx.report.error('ingress-skipped', object, 'this Ingress is not rendered until the access control its annotations ask for can be set up (see the errors above)');
    return empty;
  }
  const errorPages = customErrorPages(object, annotations, ctx);

  const tls = tlsClaims(object, spec, ctx);

  const redirects: Pick<RouteClaim, 'sslRedirect' | 'forceSslRedirect' | 'redirectUri'> = {
    ...(annotations.tls.sslRedirect !== undefined && { sslRedirect: annotations.tls.sslRedirect }),
    forceSslRedirect: annotations.tls.forceSslRedirect,
    redirectUri: {
      ...(!annotations.tls.preserveTrailingSlash && { trimTrailingSlash: true }),
      ...(annotations.tls.usePortInRedirects && { namePort: true }),
    },
  };
  const rewriteTarget = annotations.paths.rewriteTarget;
  const allPaths = (spec.rules ?? []).flatMap((rule) => (rule.http?.paths ?? []).map((p) => p.path || '/'));
  // As ingress-nginx: a rewrite-target that differs from a path turns the paths into regexes.
  const regex = annotations.paths.useRegex || (rewriteTarget !== undefined && allPaths.some((path) => path !== rewriteTarget));
  if (rewriteTarget !== undefined && !regex) {
    ctx.report.info('rewrite-target-unchanged', object, 'rewrite-target equals every path, so nothing is rewritten', annotationField('rewrite-target'));
  }
  const shared = {
    ...redirects,
    companions: [...built.companions, ...errorPages.companions],
    ...(built.clientCertificate && { clientCertificate: built.clientCertificate }),
    references: built.references,
  };
  const routes: RouteClaim[] = [];
  const hosts: string[] = [];
  let ordinal = 0;
  const cookiePathOf = cookiePaths(regex, annotations, object, ctx);
  (spec.rules ?? []).forEach((rule, ruleIndex) => {
    const rulePath: FieldPath = ['spec', 'rules', ruleIndex];
    let host = '';
    if (rule.host !== undefined && rule.host !== '') {
      const checked = checkedHost(rule.host, object, [...rulePath, 'host'], ctx);
      if (checked === undefined) return;
      host = checked;
    }
    hosts.push(host);
    (rule.http?.paths ?? []).forEach((p, pathIndex) => {
      const pathField: FieldPath = [...rulePath, 'http', 'paths', pathIndex];
      const path = p.path === undefined || p.path === '' ? '/' : p.path;
      if (!usablePath(path, regex, rewriteTarget, object, [...pathField, 'path'], ctx)) return;
      const { target, stickyCookie } = balanced(
        backendFor(p.backend, annotations, built, errorPages, object, [...pathField, 'backend'], ctx),
        annotations,
        cookiePathOf(path),
        object,
        ctx,
      );
      const behaviour = withStickyCookie(locationBehaviour(built, errorPages, object, p.backend, path, rewriteTarget, regex), stickyCookie, ctx);
      const comment = `${object.metadata.namespace}/${object.metadata.name} ${p.pathType} ${path}`;
      // A regex path is quoted: its braces and backslashes must not reach nginx's config parser bare.
      const locations = regex ? [{ modifier: '~*' as const, path: `"^${path}"`, exact: false }] : locationsFor(p.pathType, path);
      for (const location of locations) {
        routes.push({
          ingress: object,
          field: [...pathField, 'path'],
          host,
          ...location,
          fallback: false,
          ordinal: ordinal++,
          ingressPath: path,
          pathType: p.pathType,
          comment,
          ...target,
          ...shared,
          behaviour,
        });
      }
    });
  });

  if (spec.defaultBackend) routes.push(...defaultBackendRoutes(spec.defaultBackend, hosts, ordinal, { object, annotations, built, errorPages, shared, ctx }));
  const weak = weakClaims(object, annotations, tls, routes, hosts, ctx.settings.httpRedirectCode);
  return { ...empty, tls: [...tls, ...weak.tls], routes: [...routes, ...weak.routes] };
}

/** A path as written is served: it is safe (or a safe regex), outside our internal prefix, and rewrite-target fits it. */
function usablePath(path: string, regex: boolean, rewriteTarget: string | undefined, object: SourceObject, field: FieldPath, ctx: IngressContext): boolean {
  const groups = regex ? checkedRegexPath(path, object, field, ctx) : isSafePath(path) ? 0 : undefined;
  if (!regex && groups !== undefined && isInternalPath(path)) {
    ctx.report.error(
      'path-invalid',
      object,
      `paths under ${internalLocationPrefix} are where ingress2nginx puts locations of its own (auth-url), so no Ingress may use them; this path is not rendered`,
      field,
    );
    return false;
  }
  if (groups === undefined) {
    if (!regex) {
      ctx.report.error(
        'path-invalid',
        object,
        'path must start with "/" and use only letters, digits and - . _ ~ % ! & ( ) * + , = : @ /; this path is not rendered',
        field,
      );
    }
    return false;
  }
  if (regex && rewriteTarget !== undefined && highestGroupReference(rewriteTarget) > groups) {
    ctx.report.warning(
      'rewrite-target-group-missing',
      object,
      `rewrite-target uses $${highestGroupReference(rewriteTarget)}, but this path has ${groups} group(s); nginx puts nothing in its place`,
      field,
    );
  }
  return true;
}

/** `spec.defaultBackend`: a fallback `/` on each of the Ingress's hosts and on the default server. */
function defaultBackendRoutes(
  backend: IngressBackend,
  hosts: readonly string[],
  firstOrdinal: number,
  { object, annotations, built, errorPages, shared, ctx }: {
    object: SourceObject;
    annotations: IngressAnnotations;
    built: IngressBehaviour;
    errorPages: CustomErrorPages;
    shared: Pick<RouteClaim, 'sslRedirect' | 'forceSslRedirect' | 'redirectUri' | 'companions' | 'clientCertificate' | 'references'>;
    ctx: IngressContext;
  },
): RouteClaim[] {
  const routes: RouteClaim[] = [];
  let ordinal = firstOrdinal;
  const { target, stickyCookie } = balanced(backendFor(backend, annotations, built, errorPages, object, ['spec', 'defaultBackend'], ctx), annotations, '/', object, ctx);
  const behaviour = withStickyCookie(locationBehaviour(built, errorPages, object, backend, '/', undefined, false), stickyCookie, ctx);
  const comment = `${object.metadata.namespace}/${object.metadata.name} defaultBackend`;
  // The default backend catches what no path of this Ingress matches on its hosts, and on the default server.
  for (const host of new Set(['', ...hosts])) {
    routes.push({
      ingress: object,
      field: ['spec', 'defaultBackend'],
      host,
      modifier: '',
      path: '/',
      exact: false,
      fallback: true,
      ordinal: ordinal++,
      ingressPath: '/',
      pathType: 'defaultBackend',
      comment,
      ...target,
      ...shared,
      behaviour,
    });
  }
  return routes;
}

/** `spec.tls`: a claim on each listed host, with its Secret (none: the default certificate). */
function tlsClaims(object: SourceObject, spec: IngressSpec, ctx: IngressContext): TlsClaim[] {
  const tls: TlsClaim[] = [];
  (spec.tls ?? []).forEach((entry, tlsIndex) => {
    const secretName = entry.secretName;
    const nameIsValid = secretName === undefined || isKubernetesName(secretName);
    if (!nameIsValid) {
      ctx.report.error(
        'secret-name-invalid',
        object,
        'secretName must be a lowercase DNS-1123 name; these hosts are served with the default certificate',
        ['spec', 'tls', tlsIndex, 'secretName'],
      );
    }
    const secret = secretName !== undefined && nameIsValid ? { namespace: object.metadata.namespace, name: secretName } : undefined;
    (entry.hosts ?? []).forEach((rawHost, hostIndex) => {
      const host = checkedHost(rawHost, object, ['spec', 'tls', tlsIndex, 'hosts', hostIndex], ctx);
      if (host === undefined) return;
      tls.push({ ingress: object, field: ['spec', 'tls', tlsIndex, 'secretName'], host, ...(secret && { secret }) });
    });
  });
  return tls;
}

/**
 * `server-alias` names and the `www.` twins of `from-to-www-redirect`, as weak claims: the aliases
 * serve the Ingress's own routes, the twins one redirect. Their TLS uses the Ingress's first certificate.
 */
function weakClaims(
  object: SourceObject,
  annotations: IngressAnnotations,
  tls: readonly TlsClaim[],
  routes: readonly RouteClaim[],
  hosts: readonly string[],
  redirectCode: number,
): { tls: TlsClaim[]; routes: RouteClaim[] } {
  const named = [...new Set(hosts.filter((host) => host !== ''))];
  const secret = tls.find((claim) => claim.secret)?.secret;
  const out: { tls: TlsClaim[]; routes: RouteClaim[] } = { tls: [], routes: [] };
  const addTls = (host: string, weak: WeakClaim, field: FieldPath) => {
    if (tls.length > 0) out.tls.push({ ingress: object, field, host, ...(secret && { secret }), weak });
  };
  const aliasField = annotationField('server-alias');
  for (const alias of annotations.paths.serverAlias) {
    if (named.includes(alias)) continue;
    addTls(alias, 'server-alias', aliasField);
    const source = routes.filter((route) => route.host === (named[0] ?? ''));
    for (const route of source) out.routes.push(withFields(route, { host: alias, field: aliasField, weak: 'server-alias' }));
  }
  if (annotations.paths.fromToWwwRedirect) {
    const wwwField = annotationField('from-to-www-redirect');
    for (const host of named) {
      if (host.startsWith('*.')) continue;
      const twin = host.startsWith('www.') ? host.slice(4) : `www.${host}`;
      if (named.includes(twin) || annotations.paths.serverAlias.includes(twin)) continue;
      addTls(twin, 'from-to-www-redirect', wwwField);
      out.routes.push({
        ingress: object,
        field: wwwField,
        host: twin,
        modifier: '',
        path: '/',
        fallback: false,
        exact: false,
        ordinal: 0,
        ingressPath: '/',
        pathType: 'Prefix',
        comment: `${object.metadata.namespace}/${object.metadata.name} from-to-www-redirect to ${host}`,
        implicitSslName: false,
        forceSslRedirect: false,
        companions: [],
        references: [],
        behaviour: { ...emptyBehaviour, redirect: { code: redirectCode, url: `$scheme://${host}$request_uri` } },
        weak: 'from-to-www-redirect',
      });
    }
  }
  return out;
}

/** A behaviour that does nothing, for the redirect of a `www.` twin. */
const emptyBehaviour: LocationBehaviour = {
  variables: [],
  refusedWhen: [],
  rateLimits: [],
  errorPages: [],
  repeatHsts: false,
};

/**
 * The behaviour with the affinity cookie's Set-Cookie. That is an `add_header` of the location's own, so
 * nginx no longer inherits the ConfigMap's `add-headers` there: they are repeated, as for CORS.
 */
function withStickyCookie(behaviour: LocationBehaviour, stickyCookie: LocationBehaviour['stickyCookie'], ctx: IngressContext): LocationBehaviour {
  if (!stickyCookie) return behaviour;
  const repeated = behaviour.responseHeaders === undefined && ctx.headers.response.length > 0 ? { responseHeaders: [...ctx.headers.response] } : {};
  return withAddedFields(behaviour, { stickyCookie, ...repeated });
}

/**
 * The affinity cookie's Path: `session-cookie-path`, else the Ingress path as ingress-nginx takes it. A
 * regex path is no cookie path: `/` then, with a warning (ingress-nginx warns too).
 */
function cookiePaths(regex: boolean, annotations: IngressAnnotations, object: SourceObject, ctx: IngressContext): (path: string) => string {
  if (!regex || annotations.affinity.type !== 'cookie' || annotations.affinity.cookiePath !== undefined) return (path) => path;
  ctx.report.warning(
    'session-cookie-path-missing',
    object,
    'this Ingress\'s paths are regular expressions, which a cookie Path cannot be; the affinity cookie gets Path=/ (set session-cookie-path to narrow it)',
    annotationField('affinity'),
  );
  return () => '/';
}

/** The Ingress's behaviour with what depends on the path: the rewrite, and the variables error pages read. */
function locationBehaviour(
  built: IngressBehaviour,
  errorPages: CustomErrorPages,
  object: SourceObject,
  ref: IngressBackend,
  path: string,
  rewriteTarget: string | undefined,
  regex: boolean,
): LocationBehaviour {
  // Anchored as the location is: the same match, and safe-regex.ts's cost analysis counts one start only.
  const rewrite = regex && rewriteTarget !== undefined && rewriteTarget !== path ? { regex: `(?i)^${path}`, target: rewriteTarget } : undefined;
  const service = ref.service;
  const port = service?.port.number ?? (service?.port.name !== undefined && /^[a-z0-9-]+$/.test(service.port.name) ? service.port.name : '-');
  // What the error locations send as X-Namespace and friends; set wherever one of them may be reached.
  const variables =
    errorPages.setsVariables
      ? [
          { name: 'i2n_namespace', value: object.metadata.namespace },
          { name: 'i2n_ingress_name', value: object.metadata.name },
          { name: 'i2n_service_name', value: service && isKubernetesName(service.name) ? service.name : '-' },
          { name: 'i2n_service_port', value: String(port) },
        ]
      : [];
  return withFields(built.behaviour, {
    variables,
    ...(rewrite && { rewrite }),
    errorPages: errorPages.pages,
  });
}

interface CustomErrorPages {
  readonly pages: LocationBehaviour['errorPages'];
  readonly intercept: boolean;
  /** The locations set the variables error pages send: they have pages, or the controller's may be reached from them. */
  readonly setsVariables: boolean;
  readonly companions: readonly Location[];
  /** The `default-backend`, for paths whose Service has no ready endpoints. */
  readonly defaultBackend?: ResolvedBackend;
}

/**
 * `custom-http-errors` answered by `default-backend` (its first port), in named locations that get
 * ingress-nginx's `X-Code`, `X-Format`, ... headers; without `default-backend`, nginx's own page.
 */
function customErrorPages(object: SourceObject, annotations: IngressAnnotations, ctx: IngressContext): CustomErrorPages {
  const { customHttpErrors, defaultBackend: serviceName, disableInterceptErrors } = annotations.errors;
  let defaultBackend: ResolvedBackend | undefined;
  if (serviceName !== undefined) {
    const service = ctx.resources.services.get(`${object.metadata.namespace}/${serviceName}`);
    const port = service?.spec.ports?.[0]?.port;
    if (port === undefined) {
      ctx.report.error(
        'default-backend-unresolved',
        object,
        `default-backend names Service ${object.metadata.namespace}/${serviceName}, which is not in the input or has no port; errors are answered by nginx itself`,
        annotationField('default-backend'),
      );
    } else {
      defaultBackend = resolveBackend({ service: { name: serviceName, port: { number: port } } }, object, annotationField('default-backend'), ctx, 'errors are answered by nginx itself');
    }
  }
  const companions: Location[] = [];
  const pages = customHttpErrors.map((code) => {
    const name = defaultBackend ? `@i2n_error_${defaultBackend.upstream}_${code}` : `@i2n_status_${code}`;
    const errorPage: ErrorPageLocation = {
      code,
      ...(defaultBackend && {
        proxy: defaultBackend.runtimeName !== undefined
          ? { pass: 'http://$i2n_backend', resolve: defaultBackend.runtimeName, upstream: defaultBackend.upstream }
          : { pass: `http://${defaultBackend.upstream}`, upstream: defaultBackend.upstream },
      }),
    };
    companions.push({
      modifier: '',
      path: name,
      comment: `custom-http-errors ${code} of Ingress ${object.metadata.namespace}/${object.metadata.name}`,
      plainHttp: { redirect: false, serve: true },
      errorPage,
    });
    return { code, target: name };
  });
  return {
    pages,
    intercept: pages.length > 0 && !disableInterceptErrors,
    setsVariables: pages.length > 0 || ctx.controllerErrorPages,
    companions,
    ...(defaultBackend && { defaultBackend }),
  };
}

/** A `use-regex` path checked against the safe grammar; its number of groups, or undefined (reported). */
function checkedRegexPath(path: string, object: SourceObject, field: FieldPath, ctx: IngressContext): number | undefined {
  const checked = path.startsWith('/') ? checkSafeRegex(path, pathRegexAlphabet) : { ok: false as const, problem: 'does not start with "/"' };
  if (checked.ok) return checked.value.capturingGroups;
  ctx.report.error(
    'path-invalid',
    object,
    `as a regular expression (use-regex) this path ${checked.problem}; paths take literals, . ^ $ | ( ) (?: ) [ ] * + ? {n,m} and \\d \\w \\s escapes, matching in time linear in the path. This path is not rendered`,
    field,
  );
  return undefined;
}

function checkedHost(raw: string, object: SourceObject, field: FieldPath, ctx: IngressContext): string | undefined {
  if (isDnsHostname(raw) || isWildcardHostname(raw)) return raw;
  ctx.report.error(
    'host-invalid',
    object,
    'host must be a lowercase RFC 1123 DNS name, optionally with a leading "*." label; this rule is not rendered',
    field,
  );
  return undefined;
}

function resolveBackend(
  ref: IngressBackend,
  object: SourceObject,
  field: FieldPath,
  ctx: IngressContext,
  consequence = 'this path answers 503',
  defaultBackend?: ResolvedBackend,
  serviceUpstream = false,
): ResolvedBackend | undefined {
  if (!ref.service) {
    ctx.report.error(
      'backend-unsupported',
      object,
      `only service backends are supported (resource backends are not); ${consequence}`,
      field,
    );
    return undefined;
  }
  // service-upstream: the cluster IP even with --upstreams endpoints, in an upstream block of its own.
  const viaClusterIp = serviceUpstream && ctx.backendPolicy.endpoints;
  const policy = viaClusterIp ? { ...ctx.backendPolicy, endpoints: false } : ctx.backendPolicy;
  const found = resolveServiceBackend(ctx.resources, object.metadata.namespace, ref.service, policy);
  const resolution = viaClusterIp && found.ok ? { ...found, value: clusterIpBackend(found.value) } : found;
  if (!resolution.ok) {
    if (resolution.noEndpoints && defaultBackend) {
      ctx.report.warning('backend-no-endpoints', object, `${resolution.problem}; this path is served by the default-backend ${defaultBackend.description}, as in ingress-nginx`, [...field, 'service']);
      return defaultBackend;
    }
    ctx.report.error('backend-unresolved', object, `${resolution.problem}; ${consequence}`, [
      ...field,
      'service',
      ...(resolution.field ?? []),
    ]);
    return undefined;
  }
  if (resolution.warning) ctx.report.warning(resolution.warningCode ?? 'service-dns-name', object, resolution.warning, [...field, 'service']);
  ctx.backends.set(resolution.value.upstream, resolution.value);
  return resolution.value;
}

/** A Service reached at its cluster IP while others are reached at their endpoints: its own upstream name. */
function clusterIpBackend(backend: ResolvedBackend): ResolvedBackend {
  const service = backend.service;
  if (backend.runtimeName !== undefined) return backend;
  return { ...backend, upstream: upstreamName(`${service.namespace}_${service.name}_${service.port}_cluster-ip`), description: `${backend.description} (cluster IP: service-upstream)` };
}

const protocols: Record<IngressAnnotations['tls']['backendProtocol'], BackendProtocol> = {
  HTTP: 'http',
  HTTPS: 'https',
  GRPC: 'grpc',
  GRPCS: 'grpcs',
  AUTO_HTTP: 'auto',
  FCGI: 'fcgi',
};

/** The proxy of one path: its backend, with the Ingress's protocol, TLS, headers and tuning. */
function backendFor(
  ref: IngressBackend,
  annotations: IngressAnnotations,
  built: IngressBehaviour,
  { defaultBackend, intercept: interceptErrors }: CustomErrorPages,
  object: SourceObject,
  field: FieldPath,
  ctx: IngressContext,
): Pick<RouteClaim, 'proxy' | 'backend' | 'implicitSslName'> {
  if (built.denied) return { implicitSslName: false };
  const resolved = resolveBackend(ref, object, field, ctx, 'this path answers 503', defaultBackend, annotations.serviceUpstream.enabled);
  if (!resolved) return { implicitSslName: false };
  const proxied = proxyFor(resolved, annotations, object, ctx);
  if (!proxied) return { implicitSslName: false };
  const proxy: Proxy = withAddedFields(proxied.proxy, {
    host: built.host ?? '$i2n_best_host',
    httpVersion: built.httpVersion,
    headers: built.headers,
    inheritsRequestHeaders: built.host === undefined && built.headers.length === 0 && built.connectionHeader === undefined,
    ...(built.connectionHeader !== undefined && { connectionHeader: built.connectionHeader }),
    ...(built.fastcgi && { fastcgi: built.fastcgi }),
    ...(built.tuning && { tuning: proxied.proxy.module === 'fastcgi' ? fastCgiTuning(built.tuning) : built.tuning }),
    interceptErrors,
  } satisfies Partial<Proxy>);
  if (proxy.resolve !== undefined && proxy.tuning?.redirect === 'default') {
    ctx.report.warning('proxy-redirect-default-ignored', object, defaultRedirectProblem, annotationField('proxy-redirect-from'));
    return { proxy: withoutDefaultRedirect(proxy), backend: proxied.backend, implicitSslName: proxied.implicitSslName };
  }
  return { proxy, backend: proxied.backend, implicitSslName: proxied.implicitSslName };
}

/** Protocol and TLS to one backend: the part of the proxy that a canary backend shares with its main. */
function proxyFor(
  backend: ResolvedBackend,
  annotations: IngressAnnotations,
  object: SourceObject,
  ctx: IngressContext,
): { proxy: Omit<Proxy, 'host' | 'httpVersion' | 'headers' | 'inheritsRequestHeaders'>; backend: ResolvedBackend; implicitSslName: boolean } | undefined {
  const protocol = protocols[annotations.tls.backendProtocol];
  if (protocol === 'http' || protocol === 'grpc' || protocol === 'fcgi') {
    if (annotations.proxySsl.secret || annotations.proxySsl.verify) {
      ctx.report.warning(
        'proxy-ssl-ignored',
        object,
        `proxy-ssl-* annotations only apply to HTTPS backends; set backend-protocol to HTTPS or GRPCS (it is ${annotations.tls.backendProtocol})`,
        annotationField('backend-protocol'),
      );
    }
    return { proxy: proxyTo(protocol, backend), backend, implicitSslName: false };
  }
  const ssl = buildProxySsl(annotations.proxySsl, backend, object, ctx);
  if (!ssl) return undefined;
  const variant = tlsVariant(backend, ssl, ctx);
  const secret = annotations.proxySsl.secret;
  const sslWithSource = { ...ssl, ...(secret && { secret: { kind: 'Secret', namespace: secret.namespace, name: secret.name } }) };
  return { proxy: withFields(proxyTo(protocol, variant), { ssl: sslWithSource }), backend: variant, implicitSslName: ssl.verify && annotations.proxySsl.name === undefined };
}

/**
 * nginx keeps idle connections and TLS sessions per upstream block. Locations that reach one Service
 * with different TLS settings (name, CA, client certificate) must not share them, or one location's
 * verified connection would carry another's traffic unchecked.
 */
function tlsVariant(backend: ResolvedBackend, ssl: ProxySsl, ctx: IngressContext): ResolvedBackend {
  const digest = createHash('sha256').update(JSON.stringify(ssl)).digest('hex').slice(0, 10);
  const variant: ResolvedBackend = withFields(backend, { upstream: `${backend.upstream}_tls_${digest}` });
  ctx.backends.set(variant.upstream, variant);
  return variant;
}

function proxyTo(protocol: BackendProtocol, backend: ResolvedBackend): Omit<Proxy, 'host' | 'httpVersion' | 'headers' | 'inheritsRequestHeaders'> {
  // AUTO_HTTP speaks to the backend in the scheme the client used, as ingress-nginx does; FastCGI has none.
  const scheme = protocol === 'auto' ? '$scheme' : protocol === 'fcgi' ? '' : protocol;
  const grpc = protocol === 'grpc' || protocol === 'grpcs';
  const module = grpc ? 'grpc' : protocol === 'fcgi' ? 'fastcgi' : 'proxy';
  const service = backend.service;
  if (backend.runtimeName !== undefined) {
    return { upstream: backend.upstream, grpc, module, scheme, resolve: backend.runtimeName, pass: passTo(scheme, '$i2n_backend'), interceptErrors: false, service };
  }
  return { upstream: backend.upstream, grpc, module, scheme, pass: passTo(scheme, backend.upstream), interceptErrors: false, service };
}

function buildProxySsl(
  settings: IngressAnnotations['proxySsl'],
  backend: ResolvedBackend,
  object: SourceObject,
  ctx: IngressContext,
): ProxySsl | undefined {
  const secretField = annotationField('proxy-ssl-secret');
  let trustedCertificate: string | undefined;
  let clientCertificate: ProxySsl['clientCertificate'];
  if (settings.secret) {
    const ref = settings.secret;
    if (ref.namespace !== object.metadata.namespace && !ctx.allowCrossNamespaceSecrets) {
      ctx.report.error(
        'proxy-ssl-secret-cross-namespace',
        object,
        `proxy-ssl-secret names a Secret in namespace ${ref.namespace}; move it to ${object.metadata.namespace} or pass --allow-cross-namespace-secrets. The backend answers 503`,
        secretField,
      );
      return undefined;
    }
    const ca = ctx.secrets.caBundle(ref);
    if (!ca.ok) {
      ctx.report.error('proxy-ssl-secret-invalid', object, `${ca.problem}; the backend answers 503`, secretField);
      return undefined;
    }
    trustedCertificate = ca.value;
    const client = ctx.secrets.clientCertificate(ref);
    if (client && !client.ok) {
      ctx.report.error('proxy-ssl-secret-invalid', object, `${client.problem}; the backend answers 503`, secretField);
      return undefined;
    }
    if (client) clientCertificate = client.value;
  }
  if (settings.verify && trustedCertificate === undefined) {
    ctx.report.error(
      'proxy-ssl-verify-without-ca',
      object,
      'proxy-ssl-verify is on but there is no CA to verify with; set proxy-ssl-secret to a Secret holding ca.crt. The backend answers 503 rather than being reached unverified',
      annotationField('proxy-ssl-verify'),
    );
    return undefined;
  }
  // nginx checks the backend certificate against the proxy_pass host, which is our upstream block's
  // name; with verification on, always name the host the certificate is really issued for.
  const name = settings.name ?? (settings.verify ? backend.serviceDnsName : undefined);
  return {
    verify: settings.verify,
    verifyDepth: settings.verifyDepth,
    ...(trustedCertificate !== undefined && { trustedCertificate }),
    ...(name !== undefined && { name }),
    serverName: settings.verify || settings.serverName,
    protocols: settings.protocols,
    ciphers: settings.ciphers,
    ...(clientCertificate && { clientCertificate }),
  };
}
