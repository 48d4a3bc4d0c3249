/**
 * The FastCGI parameters of an Ingress with `backend-protocol: FCGI`: nginx's standard ones (the
 * `fastcgi_params` file ingress-nginx includes, written out here so the config needs no file beside it)
 * and those of its `fastcgi-params-configmap`, which replace a standard one of the same name. A
 * ConfigMap that cannot be used makes the paths answer 503, as ingress-nginx denies the location.
 */
import type { Proxy, ProxyTuning } from '../../model/nginx.js';
import type { SourceObject } from '../../sources/snapshot.js';
import { quoteKey } from '../checks/allowlist.js';
import { annotationPrefix, type IngressAnnotations } from './annotations/index.js';
import { fastCgiValue, isFastCgiName } from './annotations/fastcgi.js';
import type { IngressContext } from './context.js';

type FastCgi = NonNullable<Proxy['fastcgi']>;

/** nginx's `fastcgi_params` file, as distributed with nginx. */
const standardParams: FastCgi['params'] = [
  ['QUERY_STRING', '$query_string'],
  ['REQUEST_METHOD', '$request_method'],
  ['CONTENT_TYPE', '$content_type'],
  ['CONTENT_LENGTH', '$content_length'],
  ['SCRIPT_NAME', '$fastcgi_script_name'],
  ['REQUEST_URI', '$request_uri'],
  ['DOCUMENT_URI', '$document_uri'],
  ['DOCUMENT_ROOT', '$document_root'],
  ['SERVER_PROTOCOL', '$server_protocol'],
  ['REQUEST_SCHEME', '$scheme'],
  ['HTTPS', '$https if_not_empty'],
  ['GATEWAY_INTERFACE', 'CGI/1.1'],
  ['SERVER_SOFTWARE', 'nginx/$nginx_version'],
  ['REMOTE_ADDR', '$remote_addr'],
  ['REMOTE_PORT', '$remote_port'],
  ['SERVER_ADDR', '$server_addr'],
  ['SERVER_PORT', '$server_port'],
  ['SERVER_NAME', '$server_name'],
  ['REDIRECT_STATUS', '200'],
  // nginx passes every request header as HTTP_<NAME>; a client's `Proxy:` would become HTTP_PROXY, which
  // CGI libraries take for their outgoing proxy (httpoxy). Setting the parameter drops the header.
  ['HTTP_PROXY', '""'],
].map(([name, value]) => ({ name: name!, value: value! }));

/** The FastCGI settings, `denied` when the ConfigMap cannot be used; undefined for another protocol. */
export function fastCgiSettings(object: SourceObject, annotations: IngressAnnotations, ctx: IngressContext): { fastcgi?: FastCgi; denied: boolean } {
  const { index, paramsConfigMap } = annotations.fastCgi;
  if (annotations.tls.backendProtocol !== 'FCGI') {
    if (index !== undefined || paramsConfigMap !== undefined) {
      ctx.report.warning('fastcgi-ignored', object, 'fastcgi-index and fastcgi-params-configmap act only with backend-protocol FCGI', [
        'metadata',
        'annotations',
        `${annotationPrefix}${index !== undefined ? 'fastcgi-index' : 'fastcgi-params-configmap'}`,
      ]);
    }
    return { denied: false };
  }
  const base = { ...(index !== undefined && { index: `"${index}"` }) };
  if (paramsConfigMap === undefined) return { fastcgi: { ...base, params: standardParams }, denied: false };
  const ref = { namespace: paramsConfigMap.namespace ?? object.metadata.namespace, name: paramsConfigMap.name };
  const id = `${ref.namespace}/${ref.name}`;
  const deny = (problem: string) => {
    ctx.report.error('fastcgi-params-denied', object, `fastcgi-params-configmap: ${problem}; the Ingress's paths answer 503 until this is fixed, as in ingress-nginx`, [
      'metadata',
      'annotations',
      `${annotationPrefix}fastcgi-params-configmap`,
    ]);
    return { denied: true };
  };
  if (ref.namespace !== object.metadata.namespace && !ctx.allowCrossNamespaceSecrets) {
    return deny(`ConfigMap ${id} is in another namespace; move it to ${object.metadata.namespace} or pass --allow-cross-namespace-secrets`);
  }
  const data = ctx.secrets.configMap(ref);
  if (!data) return deny(`ConfigMap ${id} is not in the input`);
  const params: { name: string; value: string }[] = [];
  for (const name of Object.keys(data).sort()) {
    const value = fastCgiValue(data[name]!);
    if (!isFastCgiName(name)) return deny(`ConfigMap ${id}: key ${quoteKey(name)} is not a parameter name (letters, digits and . - _)`);
    if (value === undefined) {
      return deny(`ConfigMap ${id}: the value of ${quoteKey(name)} has a character outside letters, digits and - _ / . or a "$" that names no variable nginx has for every request ($document_root, $fastcgi_script_name, $request_uri, $http_<name>, …)`);
    }
    params.push({ name, value: `"${value}"` });
  }
  const own = new Set(params.map((p) => p.name));
  return { fastcgi: { ...base, params: [...standardParams.filter((p) => !own.has(p.name)), ...params] }, denied: false };
}

/** `proxy-next-upstream` for `fastcgi_next_upstream`, which has no `http_502` and `http_504` (nginx would refuse them). */
export function fastCgiTuning(tuning: ProxyTuning | undefined): ProxyTuning | undefined {
  if (tuning?.nextUpstream === undefined) return tuning;
  const { nextUpstream, ...rest } = tuning;
  const kept = nextUpstream.split(' ').filter((condition) => condition !== 'http_502' && condition !== 'http_504');
  return kept.length > 0 ? { ...rest, nextUpstream: kept.join(' ') } : rest;
}
