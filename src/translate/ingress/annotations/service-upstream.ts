import { goBool, goBoolText } from '../../checks/allowlist.js';
import { rule } from './rule.js';

/**
 * `service-upstream`: the Ingress's backends are reached at the Service's cluster IP, where kube-proxy
 * picks the endpoint, instead of at the endpoints themselves. It only changes anything with
 * `--upstreams endpoints`; the default (`service`) already does so for every Ingress.
 */
export const serviceUpstreamAnnotations = {
  enabled: rule({
    name: 'service-upstream',
    section: 'Proxy tuning',
    status: 'supported',
    schema: goBool,
    defaultValue: false,
    accepted: goBoolText,
    note: '`true`: with `--upstreams endpoints`, the Ingress\'s backends are reached at the Service\'s cluster IP (kube-proxy picks the endpoint; `affinity` and `upstream-hash-by` then cannot hold, a warning says so); with `--upstreams service` (the default) every Ingress is reached so already',
  }),
};
