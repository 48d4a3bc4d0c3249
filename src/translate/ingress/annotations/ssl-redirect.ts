import { goBool, goBoolText } from '../../checks/allowlist.js';
import { rule } from './rule.js';

export const sslRedirectAnnotations = {
  sslRedirect: rule({
    name: 'ssl-redirect',
    section: 'TLS and backends',
    status: 'differs',
    schema: goBool,
    // Absent (or rejected) means "as the ConfigMap's ssl-redirect says", which the translator applies.
    defaultValue: undefined,
    configMapKey: 'ssl-redirect',
    accepted: goBoolText,
    note: 'redirect from HTTP for hosts with TLS, with ConfigMap `http-redirect-code` (308), to `https://` + host + the request URI, whose one trailing `/` is dropped unless `preserve-trailing-slash`, as in ingress-nginx. The HTTPS port is named when it is not 443 (ingress-nginx names it only with `use-port-in-redirects`). An invalid value uses the ConfigMap default, with an error',
  }),
  forceSslRedirect: rule({
    name: 'force-ssl-redirect',
    section: 'TLS and backends',
    status: 'supported',
    schema: goBool,
    defaultValue: false,
    defaultWords: 'false',
    accepted: goBoolText,
    note: 'redirect from HTTP even without TLS; an invalid value counts as `false`, with an error',
  }),
  // As ingress-nginx: the HTTPS redirect drops one trailing `/` of the request URI unless this is true.
  preserveTrailingSlash: rule({
    name: 'preserve-trailing-slash',
    section: 'TLS and backends',
    status: 'supported',
    schema: goBool,
    defaultValue: false,
    accepted: goBoolText,
    note: 'the redirect to HTTPS (`ssl-redirect`, `force-ssl-redirect`) keeps the request URI as sent; otherwise one trailing `/` is dropped (`/docs/` → `https://host/docs`, `/` → `https://host`)',
  }),
  usePortInRedirects: rule({
    name: 'use-port-in-redirects',
    section: 'TLS and backends',
    status: 'differs',
    schema: goBool,
    defaultValue: false,
    accepted: goBoolText,
    note: '`true`: the redirect to HTTPS names the HTTPS port (`--https-port`) even when it is 443, and nginx\'s own redirects (a path ending in `/` asked without it) name the port they came in on (`port_in_redirect on`; elsewhere off, as in ingress-nginx). With `false` the redirect to HTTPS still names a port that is not 443, where ingress-nginx sends clients to 443',
  }),
};
