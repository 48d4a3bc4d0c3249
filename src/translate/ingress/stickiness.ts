/**
 * How a location's upstream picks an endpoint: cookie affinity, `upstream-hash-by`, `load-balance`, in
 * ingress-nginx's precedence (affinity, then the hash, then the algorithm). On stock nginx:
 *
 *   map $http_cookie $i2n_sticky_<n>_cookie { "~(?:^|;) *NAME=([^;]*)" $1; default ""; }
 *   map $i2n_sticky_<n>_cookie $i2n_sticky_<n> { "" $request_id; default $i2n_sticky_<n>_cookie; }
 *   map $i2n_sticky_<n>_cookie $i2n_sticky_set_<m> { "" "NAME=$request_id; Path=/; HttpOnly"; default ""; }
 *   upstream <service>_hash_<k> { hash "$i2n_sticky_<n>" consistent; server …; }
 *   location … { add_header Set-Cookie $i2n_sticky_set_<m> always; proxy_pass http://<service>_hash_<k>; }
 *
 * The client's cookie only ever feeds the hash; a client without one is hashed by a fresh request id,
 * which the Set-Cookie hands it for its next requests. A balancing other than round-robin gets an
 * upstream block of its own (the Service's name plus a suffix of the method), so that Ingresses of one
 * Service that balance differently never share one.
 */
import type { FieldPath } from '../../model/diagnostics.js';
import type { LocationBehaviour, MapBlock, Proxy } from '../../model/nginx.js';
import { withFields } from '../../model/objects.js';
import type { SourceObject } from '../../sources/snapshot.js';
import type { Balancing } from '../backends.js';
import { annotationPrefix, type IngressAnnotations } from './annotations/index.js';
import type { RouteClaim } from '../settle/claims.js';
import type { IngressContext } from './context.js';
import { digestOf, escapeLiteral, regexKey } from '../settle/extensions.js';
import { balancedVariant } from '../settle/canaries.js';

type Target = Pick<RouteClaim, 'proxy' | 'backend' | 'implicitSslName'>;

/** The Ingress asks for a balancing other than round-robin: which, in ingress-nginx's precedence. */
function requested(annotations: IngressAnnotations): { balancing: Balancing; annotation: string } | undefined {
  const { affinity, loadBalancing } = annotations;
  if (affinity.type === 'cookie') return { balancing: { hashKey: `$${keyVariable(affinity.cookieName)}`, cookieAffinity: true }, annotation: 'affinity' };
  if (loadBalancing.hashBy !== undefined) return { balancing: { hashKey: loadBalancing.hashBy }, annotation: 'upstream-hash-by' };
  if (loadBalancing.algorithm === 'least_conn') return { balancing: { leastConn: true }, annotation: 'load-balance' };
  return undefined;
}

/**
 * The location's target balanced as its Ingress asks, and the Set-Cookie its behaviour adds for cookie
 * affinity. Balancing needs the Service's endpoints in the upstream block: behind a ClusterIP kube-proxy
 * balances, and a name nginx resolves per request has no block at all; both are warned about and left
 * round-robin.
 */
export function balanced(
  target: Target,
  annotations: IngressAnnotations,
  cookiePath: string,
  object: SourceObject,
  ctx: IngressContext,
): { target: Target; stickyCookie?: LocationBehaviour['stickyCookie'] } {
  const asked = requested(annotations);
  const { proxy, backend } = target;
  if (!asked || !proxy || !backend) return { target };
  const field: FieldPath = ['metadata', 'annotations', `${annotationPrefix}${asked.annotation}`];
  reportOverridden(asked.annotation, annotations, object, ctx);
  const what = asked.balancing.cookieAffinity ? 'stickiness' : asked.balancing.leastConn ? 'least_conn' : 'hashing';
  if (backend.runtimeName !== undefined) {
    ctx.report.warning('balancing-unavailable', object, `${backend.description} is looked up by nginx per request, so there are no endpoints to choose among and ${what} cannot hold; ${asked.annotation} is not rendered`, field);
    return { target };
  }
  if (!ctx.backendPolicy.endpoints || annotations.serviceUpstream.enabled) {
    const why = ctx.backendPolicy.endpoints ? 'with service-upstream' : 'with --upstreams service';
    const instead = ctx.backendPolicy.endpoints ? 'remove service-upstream' : 'use --upstreams endpoints';
    ctx.report.warning(
      'balancing-needs-endpoints',
      object,
      `${why} nginx reaches ${backend.description} at its ClusterIP and kube-proxy picks the endpoint, so ${what} cannot hold; ${asked.annotation} is not rendered (${instead})`,
      field,
    );
    return { target };
  }
  const variant = balancedVariant(backend, asked.balancing);
  ctx.backends.set(variant.upstream, variant);
  const balancedProxy: Proxy = withFields(proxy, { upstream: variant.upstream, pass: `${proxy.scheme}://${variant.upstream}` });
  const balancedTarget = { ...target, proxy: balancedProxy, backend: variant };
  if (!asked.balancing.cookieAffinity) return { target: balancedTarget };
  return { target: balancedTarget, stickyCookie: stickyCookie(annotations.affinity, cookiePath, ctx) };
}

/** ingress-nginx's precedence: affinity, then upstream-hash-by, then load-balance; the losers are said to have no effect. */
function reportOverridden(winner: string, annotations: IngressAnnotations, object: SourceObject, ctx: IngressContext): void {
  const set = [
    ...(annotations.loadBalancing.hashBy !== undefined ? ['upstream-hash-by'] : []),
    ...(annotations.loadBalancing.algorithm !== undefined ? ['load-balance'] : []),
  ];
  const overridden = set.slice(set.indexOf(winner) + 1);
  if (overridden.length === 0) return;
  ctx.report.warning(
    'balancing-overridden',
    object,
    `${overridden.join(' and ')} ha${overridden.length > 1 ? 've' : 's'} no effect: ${winner} decides how this Ingress's backends are balanced, as in ingress-nginx`,
    ['metadata', 'annotations', `${annotationPrefix}${overridden[0]}`],
  );
}

/** The variable (without `$`) that the affinity cookie `name` is hashed by: its value, else the request id. */
export function keyVariable(name: string): string {
  return `i2n_sticky_${digestOf(name)}`;
}

/** The Set-Cookie variable of one cookie (name and attributes) and the maps it needs. */
function stickyCookie(affinity: IngressAnnotations['affinity'], path: string, ctx: IngressContext): NonNullable<LocationBehaviour['stickyCookie']> {
  const name = affinity.cookieName;
  const key = keyVariable(name);
  const received = `${key}_cookie`;
  const comment = `affinity cookie ${name}`;
  ctx.extensions.define(key, {
    maps: [
      // A cookie value may hold any text the client likes: it only ever feeds the hash.
      { comment, source: '$http_cookie', variable: received, entries: [{ key: regexKey(`(?:^|;) *${escapeLiteral(name)}=([^;]*)`), value: '$1' }], defaultValue: '""' },
      { comment, source: `$${received}`, variable: key, entries: [{ key: '""', value: '$request_id' }], defaultValue: `$${received}` },
    ],
  });
  const references = [key];
  const attributes: string[] = [];
  // ingress-nginx writes Expires from session-cookie-expires; stock nginx cannot compute a date, and Max-Age means the same to browsers.
  const maxAge = affinity.cookieMaxAge ?? affinity.cookieExpires;
  if (maxAge !== undefined) attributes.push(`; Max-Age=${maxAge}`);
  if (affinity.cookieDomain !== undefined) attributes.push(`; Domain=${affinity.cookieDomain}`);
  attributes.push(`; Path=${affinity.cookiePath ?? path}`);
  if (affinity.cookieSecure) attributes.push('; Secure');
  else {
    references.push(defineSecureAttribute(ctx));
    attributes.push('${i2n_sticky_secure}');
  }
  attributes.push('; HttpOnly');
  if (affinity.cookieSameSite === 'None' && affinity.conditionalSameSiteNone) {
    references.push(defineSameSiteNone(ctx));
    attributes.push('${i2n_sticky_samesite_none}');
  } else if (affinity.cookieSameSite !== undefined) attributes.push(`; SameSite=${affinity.cookieSameSite}`);
  const value = `${name}=$request_id${attributes.join('')}`;
  const variable = `i2n_sticky_set_${digestOf(value)}`;
  ctx.extensions.define(variable, { maps: [{ comment, source: `$${received}`, variable, entries: [{ key: '""', value: `"${value}"` }], defaultValue: '""' }] });
  return { variable, references: [...references, variable] };
}

/** `Secure` over HTTPS, as ingress-nginx sets it unless `session-cookie-secure` asks for it always. */
function defineSecureAttribute(ctx: IngressContext): string {
  const variable = 'i2n_sticky_secure';
  ctx.extensions.define(variable, {
    maps: [{ comment: 'affinity cookies are Secure over HTTPS', source: '$https', variable, entries: [{ key: 'on', value: '"; Secure"' }], defaultValue: '""' }],
  });
  return variable;
}

/**
 * `session-cookie-conditional-samesite-none`: no `SameSite=None` for the browsers that reject a cookie
 * carrying it (the list ingress-nginx checks the User-Agent against).
 */
function defineSameSiteNone(ctx: IngressContext): string {
  const variable = 'i2n_sticky_samesite_none';
  const incompatible = ['Chrome/[4-6]', 'CPU iPhone OS 12', 'iPad; CPU OS 12', '^(?!.*Chrome)(?=.*Macintosh)(?=.*Intel Mac OS X 10_14).*Safari'];
  const block: MapBlock = {
    comment: 'SameSite=None, except for browsers that reject cookies carrying it',
    source: '$http_user_agent',
    variable,
    entries: incompatible.map((regex) => ({ key: regexKey(regex), value: '""' })),
    defaultValue: '"; SameSite=None"',
  };
  ctx.extensions.define(variable, { maps: [block] });
  return variable;
}
