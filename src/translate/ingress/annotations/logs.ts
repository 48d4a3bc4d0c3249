import { goBool, goBoolText } from '../../checks/allowlist.js';
import { rule } from './rule.js';

/**
 * `enable-access-log: "false"` turns the access log off in the Ingress's locations (the request-metrics
 * line of the cluster mode stays: it is not the access log); `enable-rewrite-log` logs how `rewrite`
 * changed the URI, at notice level in the error log.
 */
export const logAnnotations = {
  accessLog: rule({ name: 'enable-access-log', schema: goBool, defaultValue: true, accepted: goBoolText }),
  rewriteLog: rule({ name: 'enable-rewrite-log', schema: goBool, defaultValue: false, accepted: goBoolText }),
};
