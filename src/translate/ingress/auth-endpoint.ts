/**
 * Where nginx sends the auth subrequest of `auth-url`, held to the rules of a backend: no address a
 * tenant may not reach (addresses.ts), another namespace's Service only when a ReferenceGrant there
 * allows it, and never a target the client chooses. The client's headers go with the subrequest, so a
 * client that could steer it would have nginx carry them (and its own credentials to the metadata
 * service) wherever it liked.
 */
import type { Checked } from '../checks/allowlist.js';
import type { AuthEndpoint, MapBlock, ProxiedTarget } from '../../model/nginx.js';
import type { SourceObject } from '../../sources/snapshot.js';
import { specialAddress } from '../checks/addresses.js';
import { isDnsHostname, isIpAddress, isWildcardHostname } from '../checks/allowlist.js';
import { externalNameProblem, resolveServiceBackend } from '../backends.js';
import { mapKey } from '../checks/map-keys.js';
import type { AuthUrl } from './annotations/external-auth.js';
import { digestOf, escapeLiteral } from '../settle/extensions.js';
import type { IngressContext } from './context.js';

/**
 * How nginx reaches the auth service. A Service in the input (by its cluster DNS name) is reached like
 * any backend; a literal address directly (never a special one, nor another namespace's Service by its
 * address); any other name, or `$host`, only with `--resolver`, so that a name that does not resolve
 * fails the request and never the config load. `$host` is looked up in a map of the names the Ingress
 * serves (`served`), so that neither the Host header nor an absolute request URI can point the
 * subrequest anywhere else. Other names are held to the ExternalName rules. An https endpoint's
 * certificate is verified against `--system-ca-bundle` (nginx, and so ingress-nginx, verifies none by
 * default): the answer decides who gets in, so whoever could answer for the address must not.
 */
export function authEndpoint(
  object: SourceObject,
  url: AuthUrl,
  method: string | undefined,
  served: readonly string[],
  ctx: IngressContext,
  what: 'auth-url' | 'global-auth-url' = 'auth-url',
): Checked<AuthEndpoint> {
  const base = { ...(method !== undefined && { method }), ...(url.scheme === 'https' && { trustedCertificate: ctx.backendPolicy.trustedCaBundle }) };
  if (url.authority === undefined) return hostVariableEndpoint(object, url, base, served, ctx);
  // The operator's global-auth-url, or any auth-url when the operator allows it, may name any namespace's Service.
  const anyNamespace = what === 'global-auth-url' || ctx.allowCrossNamespaceAuthUrl;
  const target = targetEndpoint(what, object, { ...url, authority: url.authority }, '$i2n_auth_target', ctx, anyNamespace);
  return target.ok ? { ok: true, value: { ...base, ...target.value } } : target;
}

/**
 * How nginx reaches a URL with a literal host that a tenant named (`auth-url`, `mirror-target`):
 * `what` names the annotation in problems, `variable` is the one `resolve` sets for a name nginx looks
 * up per request.
 */
export function targetEndpoint(
  what: string,
  object: SourceObject,
  url: AuthUrl & { readonly authority: string },
  variable: string,
  ctx: IngressContext,
  anyNamespace = false,
): Checked<ProxiedTarget> {
  const policy = ctx.backendPolicy;
  const defaultPort = url.scheme === 'https' ? 443 : 80;
  const [host = '', portText] = url.authority.startsWith('[') ? [url.authority.slice(0, url.authority.indexOf(']') + 1), url.authority.split(']:')[1]] : url.authority.split(':');
  const port = portText === undefined ? defaultPort : Number(portText);
  const service = new RegExp(`^([a-z0-9-]+)\\.([a-z0-9-]+)\\.svc\\.${escapeLiteral(policy.clusterDomain)}$`).exec(host);
  if (service) {
    const [, name = '', namespace = ''] = service;
    const from = object.metadata.namespace;
    if (!anyNamespace && !ctx.referenceGrants.permits({ from: { group: 'networking.k8s.io', kind: 'Ingress', namespace: from }, to: { group: '', kind: 'Service', namespace, name } })) {
      return {
        ok: false,
        problem: `${what} names Service ${namespace}/${name}, in another namespace, and no ReferenceGrant in ${namespace} allows Ingresses from ${from} to use it (as for any backend); add one (from: networking.k8s.io Ingress in ${from}, to: Service ${name})${what === 'auth-url' ? ', or the operator may pass --allow-cross-namespace-auth-url' : ''}`,
      };
    }
    const resolution = resolveServiceBackend(ctx.resources, namespace, { name, port: { number: port } }, policy);
    if (!resolution.ok) return { ok: false, problem: `${what}: ${resolution.problem}` };
    const backend = resolution.value;
    ctx.backends.set(backend.upstream, backend);
    const ssl = url.scheme === 'https' ? { sslServerName: host } : {};
    if (backend.runtimeName !== undefined) {
      return { ok: true, value: { ...ssl, pass: variable, resolve: `${url.scheme}://${backend.runtimeName}${url.path}`, host: url.authority } };
    }
    return { ok: true, value: { ...ssl, pass: `${url.scheme}://${backend.upstream}${url.path}`, host: url.authority, upstream: backend.upstream } };
  }
  if (host.endsWith(`.${policy.clusterDomain}`)) {
    return {
      ok: false,
      problem: `${what} names ${host}, in the cluster domain but not a Service (<service>.<namespace>.svc.${policy.clusterDomain}): such names (Pods, endpoints of headless Services) reach any namespace; name the Service`,
    };
  }
  const bare = host.startsWith('[') ? host.slice(1, -1) : host;
  if (isIpAddress(bare)) {
    const special = specialAddress(bare);
    if (special) return { ok: false, problem: `${what} points at ${bare}, ${special.what}; refused` };
    const owner = serviceAt(bare, object.metadata.namespace, ctx);
    if (owner !== undefined) return { ok: false, problem: `${what} points at ${bare}, an address of Service ${owner} in another namespace, which no Ingress may use as a backend; name the Service and add a ReferenceGrant` };
    return { ok: true, value: { pass: url.url, host: url.authority } };
  }
  const external = externalNameProblem(host, { externalNameDisabled: false, externalNameSuffixes: policy.externalNameSuffixes });
  if (!external.ok) return { ok: false, problem: `${what}: ${external.problem.replace('spec.externalName', 'the host')}` };
  if (!policy.runtimeDns) {
    return {
      ok: false,
      problem: `${what} names ${host}, which is not a Service in the input; nginx can look it up per request only with --resolver (at load time, a name that does not resolve would stop the whole config)`,
    };
  }
  return { ok: true, value: { pass: variable, resolve: url.url, host: url.authority, ...(url.scheme === 'https' && { sslServerName: host }) } };
}

/**
 * `https://$host/…` (oauth2-proxy's own pattern): the host is the request's, looked up in a map of
 * the names the Ingress serves, whose value is empty for any other (then the subrequest answers 403).
 * nginx's `$host` comes from the request line of an absolute URI, else the Host header, whatever SNI
 * said, so only the map keeps the client from choosing.
 */
function hostVariableEndpoint(object: SourceObject, url: AuthUrl, base: { method?: string; trustedCertificate?: string }, served: readonly string[], ctx: IngressContext): Checked<AuthEndpoint> {
  if (!ctx.backendPolicy.runtimeDns) return { ok: false, problem: 'auth-url names its host with $host, which nginx resolves per request only with --resolver' };
  if (served.includes('')) {
    return { ok: false, problem: 'auth-url names its host with $host, and a rule of this Ingress has no host: any Host a client sends would be the auth target' };
  }
  // Each name becomes a map key: only those that pass the host allow-list (a rule with another host is
  // not rendered anyway).
  const names = [...new Set(served.filter((name) => isDnsHostname(name) || isWildcardHostname(name)))].sort();
  const variable = `i2n_auth_host_${digestOf(...names)}`;
  const map: MapBlock = {
    comment: `auth-url $host of Ingress ${object.metadata.namespace}/${object.metadata.name}: only the names it serves`,
    source: '$host',
    variable,
    hostnames: true,
    entries: names.map((name) => ({ key: mapKey(name), value: '$host' })),
    defaultValue: '""',
  };
  ctx.extensions.define(variable, { maps: [map] });
  const target = `$${variable}${url.port === undefined ? '' : `:${url.port}`}`;
  return {
    ok: true,
    value: {
      ...base,
      pass: '$i2n_auth_target',
      resolve: `${url.scheme}://${target}${url.path}`,
      host: `$${variable}`,
      servedHost: variable,
      ...(url.scheme === 'https' && { sslServerName: `$${variable}` }),
    },
  };
}

/** The Service outside `namespace` whose cluster IP or endpoint address `address` is, as `namespace/name`. */
function serviceAt(address: string, namespace: string, ctx: IngressContext): string | undefined {
  for (const [id, service] of ctx.resources.services) {
    if (service.object.metadata.namespace === namespace) continue;
    const ips = [service.spec.clusterIP];
    const endpoints = (ctx.resources.endpointSlices.get(id) ?? []).flatMap((slice) => (slice.spec.endpoints ?? []).flatMap((e) => e.addresses));
    if ([...ips, ...endpoints].includes(address)) return id;
  }
  return undefined;
}
