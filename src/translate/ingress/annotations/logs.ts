import { goBool, goBoolText } from '../../checks/allowlist.js';
import { rule } from './rule.js';

/**
 * `enable-access-log: "false"` turns the access log off in the Ingress's locations (the request-metrics
 * line of the cluster mode stays: it is not the access log); `enable-rewrite-log` logs how `rewrite`
 * changed the URI, at notice level in the error log.
 */
export const logAnnotations = {
  accessLog: rule({
    name: 'enable-access-log',
    section: 'Logging, tracing, WAF',
    status: 'supported',
    schema: goBool,
    defaultValue: true,
    accepted: goBoolText,
    note: '`false` turns the access log (`--access-log`) off in the Ingress\'s locations; the cluster mode\'s request metrics still count their requests',
  }),
  rewriteLog: rule({
    name: 'enable-rewrite-log',
    section: 'Logging, tracing, WAF',
    status: 'supported',
    schema: goBool,
    defaultValue: false,
    accepted: goBoolText,
    note: '`rewrite_log on` in the Ingress\'s locations (notice level, in the error log)',
  }),
};
