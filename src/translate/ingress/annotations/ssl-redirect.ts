import { goBool, goBoolText } from '../../allowlist.js';
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
};
