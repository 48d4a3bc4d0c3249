import { z } from 'zod';
import { goBool, goBoolText } from '../../checks/allowlist.js';
import { rule } from './rule.js';

/** Error responses answered by another Service (`custom-http-errors`, `default-backend`). */

const statusCodes = z.string().transform((value, context) => {
  const items = value.split(',').map((item) => item.trim()).filter((item) => item !== '');
  if (items.length === 0 || !items.every((item) => /^[45][0-9]{2}$/.test(item))) {
    context.addIssue({ code: 'custom', message: 'has an item that is not a status code from 400 to 599' });
    return z.NEVER;
  }
  return [...new Set(items.map(Number))].sort((a, b) => a - b);
});

/** A Service name as ingress-nginx's `default-backend` takes it: a DNS-1035 label. */
const serviceName = z.string().trim().regex(/^[a-z]([a-z0-9-]{0,61}[a-z0-9])?$/);

export const errorAnnotations = {
  customHttpErrors: rule<readonly number[]>({
    name: 'custom-http-errors',
    section: 'Error pages',
    status: 'differs',
    schema: statusCodes,
    defaultValue: [],
    accepted: 'comma-separated status codes from 400 to 599',
    note: 'comma-separated codes (400–599) from the backend answered by `default-backend`, which gets `X-Code`, `X-Format`, `X-Original-URI`, `X-Namespace`, `X-Ingress-Name`, `X-Service-Name`, `X-Service-Port`, `X-Request-ID`; without `default-backend`, nginx answers them with its own page. It replaces the ConfigMap\'s `custom-http-errors` on the Ingress\'s paths',
  }),
  defaultBackend: rule<string | undefined>({
    name: 'default-backend',
    section: 'Error pages',
    status: 'differs',
    schema: serviceName,
    defaultValue: undefined,
    accepted: 'the name of a Service in the Ingress namespace',
    note: 'a Service of the Ingress\'s namespace (its first port) for `custom-http-errors`, and for paths whose Service has no ready endpoints (`--upstreams endpoints`)',
  }),
  disableInterceptErrors: rule({
    name: 'disable-proxy-intercept-errors',
    section: 'Error pages',
    status: 'supported',
    schema: goBool,
    defaultValue: false,
    accepted: goBoolText,
    note: '`true` keeps the backend\'s own error responses despite `custom-http-errors`',
  }),
};
