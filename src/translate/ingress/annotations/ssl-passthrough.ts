import { goBool, goBoolText } from '../../checks/allowlist.js';
import { rule } from './rule.js';

export const sslPassthroughAnnotations = {
  sslPassthrough: rule({ name: 'ssl-passthrough', schema: goBool, defaultValue: false, accepted: goBoolText }),
};
