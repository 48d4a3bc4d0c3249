import { goBool, goBoolText } from '../../checks/allowlist.js';
import { rule } from './rule.js';

export const sslPassthroughAnnotations = {
  sslPassthrough: rule({
    name: 'ssl-passthrough',
    section: 'TLS and backends',
    status: 'differs',
    schema: goBool,
    defaultValue: false,
    defaultWords: 'false',
    accepted: goBoolText,
    note: 'nginx routes the TLS connection by SNI to the backend of path `/` (no Go proxy in the data path, client addresses kept, wildcard hosts work); other paths, `spec.tls` and HTTP-level annotations do not apply to it (warning). Plain HTTP to the host is redirected to HTTPS with `force-ssl-redirect`, or with `ssl-redirect` (default on) when `spec.tls` lists the host, as in ingress-nginx; otherwise it answers 404 (the backend is never spoken to in plain HTTP)',
  }),
};
