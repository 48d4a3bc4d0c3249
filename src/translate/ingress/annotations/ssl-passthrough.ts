import { trueOrFalse } from '../../allowlist.js';
import type { AnnotationRule } from './rule.js';

export const sslPassthroughAnnotations: { readonly sslPassthrough: AnnotationRule<boolean> } = {
  sslPassthrough: {
    name: 'ssl-passthrough',
    schema: trueOrFalse,
    defaultValue: false,
    accepted: 'true or false',
  },
};
