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
import type { SourceObject } from '../../sources/snapshot.js';
import { resolveServiceBackend } from '../backends.js';
import type { IngressSpec } from '../resources.js';
import { isDnsHostname, isWildcardHostname } from '../checks/allowlist.js';
import { annotationPrefix, type IngressAnnotations } from './annotations/index.js';
import type { CanaryClaim, CanaryPolicy } from '../settle/claims.js';
import type { IngressContext } from './context.js';

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

