import { trueOrFalse } from '../../allowlist.js';
import type { AnnotationRule } from './rule.js';

export const sslRedirectAnnotations: {
  readonly sslRedirect: AnnotationRule<boolean | undefined>;
  readonly forceSslRedirect: AnnotationRule<boolean>;
} = {
  sslRedirect: {
    name: 'ssl-redirect',
    schema: trueOrFalse,
    // Absent means "as the ConfigMap's ssl-redirect says", which the translator applies.
    defaultValue: undefined,
    accepted: 'true or false',
  },
  forceSslRedirect: {
    name: 'force-ssl-redirect',
    schema: trueOrFalse,
    defaultValue: false,
    accepted: 'true or false',
  },
};
