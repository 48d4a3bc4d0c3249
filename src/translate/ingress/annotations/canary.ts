import { trueOrFalse } from '../../allowlist.js';
import type { AnnotationRule } from './rule.js';

/**
 * `canary: "true"` marks an Ingress that only diverts part of another Ingress's traffic. Until canaries
 * are implemented such an Ingress is left out: rendered as an ordinary Ingress it would compete for the
 * main Ingress's host and path, and win them when it is older.
 */
export const canaryAnnotations: { readonly canary: AnnotationRule<boolean> } = {
  canary: {
    name: 'canary',
    schema: trueOrFalse,
    defaultValue: false,
    accepted: 'true or false',
  },
};
