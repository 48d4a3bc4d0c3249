import { z } from 'zod';
import { withBracedVariables } from '../../checks/allowlist.js';
import { secretReference, type SecretReference } from './references.js';
import { rule } from './rule.js';

/**
 * `backend-protocol: FCGI` speaks FastCGI to the backend (`fastcgi_pass`), with nginx's standard
 * parameters, `fastcgi-index` and the parameters of the `fastcgi-params-configmap` ConfigMap (read in
 * fastcgi-params.ts). Names and values are held to ingress-nginx's character sets; a value's `$` may
 * only name a variable nginx has for every request.
 */

/** ingress-nginx's characters for an index file and a parameter name. */
export const isFastCgiName = (value: string): boolean => /^[A-Za-z0-9._-]{1,128}$/.test(value);

/** Variables a parameter value may name: what nginx knows for every FastCGI request. */
const fastCgiVariable =
  /^(http_[a-z0-9_]{1,64}|args|content_length|content_type|document_root|document_uri|fastcgi_path_info|fastcgi_script_name|host|https|is_args|query_string|realpath_root|remote_addr|remote_port|request_id|request_method|request_scheme|request_uri|scheme|server_addr|server_name|server_port|server_protocol|uri)$/;

/**
 * A parameter value as nginx reads it between double quotes: ingress-nginx's characters (letters,
 * digits, `-_/.` and `${}` for variables), each variable one of the list above; undefined otherwise.
 */
export function fastCgiValue(value: string): string | undefined {
  if (value.length > 1024 || !/^[A-Za-z0-9\-_${}/.]*$/.test(value)) return undefined;
  const braced = withBracedVariables(value, (name) => (fastCgiVariable.test(name) ? name : undefined));
  return braced === undefined || /[{}]/.test(braced.replace(/\$\{[a-z0-9_]+\}/g, '')) ? undefined : braced;
}

export const fastCgiAnnotations = {
  index: rule<string | undefined>({
    name: 'fastcgi-index',
    section: 'Proxy tuning',
    status: 'supported',
    schema: z.string().trim().refine(isFastCgiName),
    defaultValue: undefined,
    accepted: 'a file name of letters, digits and . - _ (such as index.php)',
    note: 'with `backend-protocol: FCGI`: `fastcgi_index`, the file appended to a URI ending in `/` in `$fastcgi_script_name` (letters, digits, `.`, `-`, `_`). The backend gets nginx\'s standard FastCGI parameters (its `fastcgi_params` file, written out in the location), and `HTTP_PROXY` empty, so a client\'s `Proxy:` header never becomes a CGI program\'s outgoing proxy (httpoxy); request headers of other annotations (`x-forwarded-prefix`, `auth-response-headers`) do not reach a FastCGI backend',
  }),
  paramsConfigMap: rule<SecretReference | undefined>({
    name: 'fastcgi-params-configmap',
    section: 'Proxy tuning',
    status: 'supported',
    schema: secretReference,
    defaultValue: undefined,
    accepted: 'the name of a ConfigMap, or namespace/name (lowercase DNS-1123 names)',
    note: 'a ConfigMap (`name` or `namespace/name`; another namespace only with `--allow-cross-namespace-secrets`) of FastCGI parameters, each replacing the standard one of its name. As in ingress-nginx: names of letters, digits, `.`, `-`, `_`; values of those, `/` and nginx variables, here only those nginx has for every request (`$document_root`, `$fastcgi_script_name`, `$request_uri`, `$http_<name>`, …). A ConfigMap that is missing or has another value makes the paths answer 503',
  }),
};
