import { goBool, goBoolText } from '../../checks/allowlist.js';
import { rule } from './rule.js';

export const sslRedirectAnnotations = {
  sslRedirect: rule({
    name: 'ssl-redirect',
    schema: goBool,
    // Absent (or rejected) means "as the ConfigMap's ssl-redirect says", which the translator applies.
    defaultValue: undefined,
    accepted: goBoolText,
  }),
  forceSslRedirect: rule({ name: 'force-ssl-redirect', schema: goBool, defaultValue: false, accepted: goBoolText }),
  // As ingress-nginx: the HTTPS redirect drops one trailing `/` of the request URI unless this is true.
  preserveTrailingSlash: rule({ name: 'preserve-trailing-slash', schema: goBool, defaultValue: false, accepted: goBoolText }),
  usePortInRedirects: rule({ name: 'use-port-in-redirects', schema: goBool, defaultValue: false, accepted: goBoolText }),
};
