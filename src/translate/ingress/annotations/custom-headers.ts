import { secretReference, type SecretReference } from './references.js';
import { rule } from './rule.js';

/**
 * `custom-headers`: a ConfigMap (`name`, or `namespace/name`) of response headers for the Ingress's
 * locations. As in ingress-nginx 1.12+, every name in it must be listed in the controller ConfigMap's
 * `global-allowed-response-headers`, and a ConfigMap that cannot be used makes the locations answer 503
 * (ingress-nginx denies them); the headers are read in behaviour.ts.
 */
export const customHeaderAnnotations = {
  configMap: rule<SecretReference | undefined>({
    name: 'custom-headers',
    section: 'Proxy tuning',
    status: 'differs',
    schema: secretReference,
    defaultValue: undefined,
    accepted: 'the name of a ConfigMap, or namespace/name (lowercase DNS-1123 names)',
    note: 'a ConfigMap (`name` or `namespace/name`; another namespace only with `--allow-cross-namespace-secrets`) of response headers for the Ingress\'s paths; every name must be in ConfigMap `global-allowed-response-headers`, else the paths answer 503, as in ingress-nginx 1.12+. Stock nginx has no `more_set_headers`: each is `proxy_hide_header` (the backend\'s header of that name is dropped) plus `add_header … always` (every status), and names nginx writes itself (`Server`, `Date`, `Content-Length`, `Connection`, …) are refused; a `$` in a value stays a literal `$`',
  }),
};
