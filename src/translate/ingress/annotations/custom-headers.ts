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
    schema: secretReference,
    defaultValue: undefined,
    accepted: 'the name of a ConfigMap, or namespace/name (lowercase DNS-1123 names)',
  }),
};
