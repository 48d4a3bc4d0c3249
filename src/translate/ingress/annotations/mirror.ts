import { z } from 'zod';
import { isHostWithPort } from '../../checks/allowlist.js';
import { parseTargetUrl, type AuthUrl } from './external-auth.js';
import { rule } from './rule.js';

/**
 * Request mirroring (`mirror-target`): nginx sends a copy of each request to another URL and drops its
 * answer. The target is the tenant's choice, held to the rules of a backend (auth-endpoint.ts); a target
 * that is rejected or cannot be reached leaves the mirror out, never the Ingress.
 */

/**
 * What a mirror URL's path and query may use: the request as the client sent it. Its host is always
 * literal, so that no client can point the copy (with its headers) anywhere.
 */
const mirrorVariables: Readonly<Record<string, string>> = {
  $request_uri: '$request_uri',
  $is_args: '$is_args',
  $args: '$args',
};

const mirrorUrl = z.string().trim().transform((value, context) => {
  const parsed = parseTargetUrl(value, [], mirrorVariables);
  if (!parsed) {
    context.addIssue({ code: 'custom', message: 'is not an accepted URL' });
    return z.NEVER;
  }
  return parsed;
});

export const mirrorAnnotations = {
  target: rule<AuthUrl | undefined>({
    name: 'mirror-target',
    section: 'Proxy tuning',
    status: 'differs',
    schema: mirrorUrl,
    defaultValue: undefined,
    accepted: `an http:// or https:// URL with a literal host and optional port (path and query may use ${Object.keys(mirrorVariables).join(', ')}; the path may start with $request_uri)`,
    note: 'nginx `mirror`: a copy of each request goes to this `http(s)` URL and its answer is dropped; the client gets the backend\'s. The copy carries the client\'s headers (and credentials) to the target, which the tenant chooses, as in ingress-nginx; the target is held to the rules of `auth-url` (a Service in the input at its address, another namespace\'s only with a ReferenceGrant, no special addresses, other names only with `--resolver`). The host is literal; the path and query may use `$request_uri`, `$is_args`, `$args` (write `https://mirror.example$request_uri` for the original URI). A target that is rejected or cannot be reached leaves the mirror out (an error), not the Ingress',
  }),
  requestBody: rule<boolean>({
    name: 'mirror-request-body',
    section: 'Proxy tuning',
    status: 'supported',
    schema: z.string().trim().pipe(z.enum(['on', 'off'])).transform((value) => value === 'on'),
    defaultValue: true,
    defaultWords: '`on`',
    accepted: 'on or off',
    note: '`on` or `off`: whether the copy carries the request body',
  }),
  host: rule<string | undefined>({
    name: 'mirror-host',
    section: 'Proxy tuning',
    status: 'supported',
    schema: z.string().trim().toLowerCase().refine(isHostWithPort),
    defaultValue: undefined,
    defaultWords: 'the host name of `mirror-target`',
    accepted: 'a host name or address, with an optional port',
    note: '`Host` of the copy: a host name or address, with an optional port',
  }),
};
