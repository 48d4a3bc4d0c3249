import { createHash } from 'node:crypto';
import type { FieldPath } from '../../model/diagnostics.js';
import type { BackendProtocol, Proxy, ProxySsl } from '../../model/nginx.js';
import type { LocationOrigin } from '../../model/provenance.js';
import type { SourceObject } from '../../sources/snapshot.js';
import { isDnsHostname, isKubernetesName, isSafePath, isWildcardHostname } from '../allowlist.js';
import { annotationPrefix, parseIngressAnnotations, type IngressAnnotations } from './annotations/index.js';
import { resolveServiceBackend, type BackendPolicy, type ResolvedBackend } from '../backends.js';
import type { Reporter } from '../report.js';
import type { IngressBackend, IngressSpec, Resources, Typed } from '../resources.js';
import type { SecretFiles, ObjectRef } from '../secrets.js';

export interface IngressContext {
  readonly resources: Resources;
  readonly secrets: SecretFiles;
  readonly report: Reporter;
  readonly backendPolicy: BackendPolicy;
  readonly allowCrossNamespaceSecrets: boolean;
  /** Every backend resolved so far, by upstream name. */
  readonly backends: Map<string, ResolvedBackend>;
}

interface Claim {
  readonly ingress: SourceObject;
  readonly field: FieldPath;
}

export interface PassthroughClaim extends Claim {
  readonly host: string;
  /** Absent when the backend cannot be used: the host's connections are closed. */
  readonly backend?: ResolvedBackend;
}

export interface TlsClaim extends Claim {
  readonly host: string;
  /** Absent: `spec.tls` without `secretName`, served with the default certificate. */
  readonly secret?: ObjectRef;
}

export interface RouteClaim extends Claim {
  /** Empty for rules without a host (the default server). */
  readonly host: string;
  readonly modifier: '=' | '';
  readonly path: string;
  /** From `spec.defaultBackend`: used only where no explicit path claims the location. */
  readonly fallback: boolean;
  /** From `pathType: Exact`, which beats the exact half of a Prefix path. */
  readonly exact: boolean;
  /** Position within the Ingress, to order claims of one Ingress. */
  readonly ordinal: number;
  /** The Ingress path these locations come from, as written (`/` for defaultBackend). */
  readonly ingressPath: string;
  readonly pathType: LocationOrigin['pathType'];
  readonly comment: string;
  readonly proxy?: Proxy;
  readonly sslRedirect?: boolean;
  readonly forceSslRedirect: boolean;
}

export interface IngressContribution {
  readonly passthrough: readonly PassthroughClaim[];
  readonly tls: readonly TlsClaim[];
  readonly routes: readonly RouteClaim[];
}

const empty: IngressContribution = { passthrough: [], tls: [], routes: [] };

/** What one Ingress asks for. Conflicts between Ingresses are settled later, in hosts.ts. */
export function translateIngress(ingress: Typed<IngressSpec>, ctx: IngressContext): IngressContribution {
  const { object, spec } = ingress;
  const parsed = parseIngressAnnotations(object.metadata.annotations);
  for (const issue of parsed.issues) {
    ctx.report.add(issue.severity, issue.code, object, issue.message, ['metadata', 'annotations', issue.annotation]);
  }
  const canaryField: FieldPath = ['metadata', 'annotations', `${annotationPrefix}canary`];
  if (parsed.value.canary || parsed.issues.some((issue) => issue.annotation === `${annotationPrefix}canary` && issue.severity === 'error')) {
    ctx.report.error(
      'canary-unsupported',
      object,
      'canary Ingresses are not implemented yet: this Ingress is left out and takes no host or path; the main Ingress for its hosts keeps all their traffic',
      canaryField,
    );
    return empty;
  }
  if (parsed.issues.some((issue) => issue.severity === 'error')) {
    ctx.report.error(
      'ingress-skipped',
      object,
      'this Ingress is not rendered until its annotation errors are fixed, so that no half-applied setting reaches nginx',
    );
    return empty;
  }
  return parsed.value.sslPassthrough
    ? translatePassthrough(object, spec, parsed.value, ctx)
    : translateTerminating(object, spec, parsed.value, ctx);
}

function translatePassthrough(
  object: SourceObject,
  spec: IngressSpec,
  annotations: IngressAnnotations,
  ctx: IngressContext,
): IngressContribution {
  const ignored: string[] = [];
  if (annotations.httpLevelAnnotations.length > 0) {
    ignored.push(`annotations ${annotations.httpLevelAnnotations.map((a) => a.slice(annotationPrefix.length)).join(', ')}`);
  }
  if (spec.tls && spec.tls.length > 0) ignored.push('spec.tls (the backend presents its own certificate)');
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
    claims.push({ ingress: object, field: [...rulePath, 'host'], host, ...(backend && { backend }) });
  });
  if (ignored.length > 0) {
    ctx.report.warning(
      'passthrough-ignores',
      object,
      `ssl-passthrough hands TLS to the backend untouched, so these do not apply to its TLS traffic: ${ignored.join('; ')}`,
    );
  }
  return { passthrough: claims, tls: [], routes: [] };
}

function translateTerminating(
  object: SourceObject,
  spec: IngressSpec,
  annotations: IngressAnnotations,
  ctx: IngressContext,
): IngressContribution {
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

  const redirects: Pick<RouteClaim, 'sslRedirect' | 'forceSslRedirect'> = {
    ...(annotations.sslRedirect !== undefined && { sslRedirect: annotations.sslRedirect }),
    forceSslRedirect: annotations.forceSslRedirect,
  };
  const routes: RouteClaim[] = [];
  const hosts: string[] = [];
  let ordinal = 0;
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
      if (!isSafePath(path)) {
        ctx.report.error(
          'path-invalid',
          object,
          'path must start with "/" and use only letters, digits and - . _ ~ % ! & ( ) * + , = : @ /; this path is not rendered',
          [...pathField, 'path'],
        );
        return;
      }
      const proxy = buildProxy(p.backend, annotations, object, [...pathField, 'backend'], ctx);
      const comment = `${object.metadata.namespace}/${object.metadata.name} ${p.pathType} ${path}`;
      for (const location of locationsFor(p.pathType, path)) {
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
          ...(proxy && { proxy }),
          ...redirects,
        });
      }
    });
  });

  if (spec.defaultBackend) {
    const proxy = buildProxy(spec.defaultBackend, annotations, object, ['spec', 'defaultBackend'], ctx);
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
        ...(proxy && { proxy }),
        ...redirects,
      });
    }
  }
  return { passthrough: [], tls, routes };
}

/**
 * nginx locations for an Ingress path. Prefix matching is element-wise: `/foo` matches `/foo` and
 * `/foo/bar` but not `/foobar`, which takes an exact location plus a `/foo/` prefix location.
 */
export function locationsFor(
  pathType: 'Exact' | 'Prefix' | 'ImplementationSpecific',
  path: string,
): { modifier: '=' | ''; path: string; exact: boolean }[] {
  if (pathType === 'Exact') return [{ modifier: '=', path, exact: true }];
  if (pathType === 'ImplementationSpecific') return [{ modifier: '', path, exact: false }];
  const trimmed = path.replace(/\/+$/, '');
  if (trimmed === '') return [{ modifier: '', path: '/', exact: false }];
  return [
    { modifier: '=', path: trimmed, exact: false },
    { modifier: '', path: `${trimmed}/`, exact: false },
  ];
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
  const resolution = resolveServiceBackend(ctx.resources, object.metadata.namespace, ref.service, ctx.backendPolicy);
  if (!resolution.ok) {
    ctx.report.error('backend-unresolved', object, `${resolution.problem}; ${consequence}`, [
      ...field,
      'service',
      ...(resolution.field ?? []),
    ]);
    return undefined;
  }
  if (resolution.warning) ctx.report.warning('service-dns-name', object, resolution.warning, [...field, 'service']);
  ctx.backends.set(resolution.value.upstream, resolution.value);
  return resolution.value;
}

const protocols: Record<IngressAnnotations['backendProtocol'], BackendProtocol> = {
  HTTP: 'http',
  HTTPS: 'https',
  GRPC: 'grpc',
  GRPCS: 'grpcs',
  AUTO_HTTP: 'auto',
};

function buildProxy(
  ref: IngressBackend,
  annotations: IngressAnnotations,
  object: SourceObject,
  field: FieldPath,
  ctx: IngressContext,
): Proxy | undefined {
  const backend = resolveBackend(ref, object, field, ctx);
  if (!backend) return undefined;
  const protocol = protocols[annotations.backendProtocol];
  if (protocol === 'http' || protocol === 'grpc') {
    if (annotations.proxySsl.secret || annotations.proxySsl.verify) {
      ctx.report.warning(
        'proxy-ssl-ignored',
        object,
        `proxy-ssl-* annotations only apply to HTTPS backends; set backend-protocol to HTTPS or GRPCS (it is ${annotations.backendProtocol})`,
        ['metadata', 'annotations', `${annotationPrefix}backend-protocol`],
      );
    }
    return proxyTo(protocol, backend);
  }
  const ssl = buildProxySsl(annotations.proxySsl, backend, object, ctx);
  if (!ssl) return undefined;
  // nginx keeps idle connections and TLS sessions per upstream block. Locations that reach one
  // Service with different TLS settings (name, CA, client certificate) must not share them, or one
  // location's verified connection would carry another's traffic unchecked.
  const digest = createHash('sha256').update(JSON.stringify(ssl)).digest('hex').slice(0, 10);
  const variant: ResolvedBackend = { ...backend, upstream: `${backend.upstream}_tls_${digest}` };
  ctx.backends.set(variant.upstream, variant);
  const secret = annotations.proxySsl.secret;
  return { ...proxyTo(protocol, variant), ssl: { ...ssl, ...(secret && { secret: { kind: 'Secret', namespace: secret.namespace, name: secret.name } }) } };
}

function proxyTo(protocol: BackendProtocol, backend: ResolvedBackend): Proxy {
  // AUTO_HTTP speaks to the backend in the scheme the client used, as ingress-nginx does.
  const scheme = protocol === 'auto' ? '$scheme' : protocol;
  const grpc = protocol === 'grpc' || protocol === 'grpcs';
  const module = grpc ? 'grpc' : 'proxy';
  const service = backend.service;
  if (backend.runtimeName !== undefined) {
    return { upstream: backend.upstream, grpc, module, resolve: backend.runtimeName, pass: `${scheme}://$i2n_backend`, service };
  }
  return { upstream: backend.upstream, grpc, module, pass: `${scheme}://${backend.upstream}`, service };
}

function buildProxySsl(
  settings: IngressAnnotations['proxySsl'],
  backend: ResolvedBackend,
  object: SourceObject,
  ctx: IngressContext,
): ProxySsl | undefined {
  const secretField: FieldPath = ['metadata', 'annotations', `${annotationPrefix}proxy-ssl-secret`];
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
      ['metadata', 'annotations', `${annotationPrefix}proxy-ssl-verify`],
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
