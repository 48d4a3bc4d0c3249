import { z } from 'zod';
import { rule } from './rule.js';

/**
 * How an upstream picks among the Service's endpoints: `upstream-hash-by` (nginx's `hash … consistent`)
 * and `load-balance`. Cookie affinity (affinity.ts) takes precedence over both, and `upstream-hash-by`
 * over `load-balance`, as in ingress-nginx's balancer.
 */

/**
 * Variables a hash key may name: what nginx knows for every request before it picks an endpoint
 * (core, realip, SSL), besides the prefixes below. Anything else is refused here rather than by
 * `nginx -t` ("unknown variable"), and none of our own `i2n_` variables is reachable. Not `$hostname`
 * (the machine's name, alike for every request) nor regex captures (`$1`: whatever regex ran last).
 */
const requestVariables = new Set([
  'args',
  'binary_remote_addr',
  'content_length',
  'content_type',
  'document_uri',
  'host',
  'http2',
  'https',
  'is_args',
  'proxy_protocol_addr',
  'query_string',
  'realip_remote_addr',
  'remote_addr',
  'remote_port',
  'remote_user',
  'request',
  'request_method',
  'request_uri',
  'scheme',
  'server_addr',
  'server_name',
  'server_port',
  'server_protocol',
  'ssl_client_fingerprint',
  'ssl_client_s_dn',
  'ssl_client_serial',
  'ssl_server_name',
  'uri',
]);

/** Prefixed variables: a request header, a query argument, a cookie (names of letters, digits and `_`). */
const requestVariablePrefixes = ['http_', 'arg_', 'cookie_'];

/** ingress-nginx's alphabet for the key (letters, digits, `-`, `_`, `$`, `{`, `}`), read as nginx reads it. */
const hashKeyPart = /\$\{([A-Za-z0-9_]*)\}|\$([A-Za-z0-9_]*)|([A-Za-z0-9_-]+)|(.)/gs;

/** The key is one quoted parameter of `hash`: far below nginx's 4 KB parameter buffer. */
export const maxHashKeyLength = 256;

/** The variable names an `upstream-hash-by` value uses, or what is wrong with it. */
export function hashKeyVariables(value: string): { ok: true; variables: string[] } | { ok: false; problem: string } {
  if (value.length === 0 || value.length > maxHashKeyLength) return { ok: false, problem: `is empty or longer than ${maxHashKeyLength} characters` };
  const variables: string[] = [];
  for (const match of value.matchAll(hashKeyPart)) {
    const [, braced, bare, , other] = match;
    if (other !== undefined) return { ok: false, problem: 'has a character other than letters, digits, "-", "_" and $variables' };
    const name = braced ?? bare;
    if (name === undefined) continue;
    if (!isRequestVariable(name)) return { ok: false, problem: 'names a variable that is not a request variable nginx knows' };
    variables.push(name);
  }
  if (variables.length === 0) return { ok: false, problem: 'names no variable, so every request would hash alike' };
  return { ok: true, variables };
}

function isRequestVariable(name: string): boolean {
  if (requestVariables.has(name)) return true;
  return requestVariablePrefixes.some((prefix) => name.startsWith(prefix) && /^[a-z0-9_]+$/i.test(name.slice(prefix.length)));
}

const hashKey = z
  .string()
  .trim()
  .transform((value, context) => {
    const checked = hashKeyVariables(value);
    if (!checked.ok) {
      context.addIssue({ code: 'custom', message: checked.problem });
      return z.NEVER;
    }
    return value;
  });

/** ingress-nginx's algorithms; `least_conn` is the one its older releases had and stock nginx has. */
export type LoadBalanceAlgorithm = 'round_robin' | 'least_conn' | 'ewma';

const algorithm = z
  .string()
  .trim()
  .pipe(z.enum(['round_robin', 'least_conn', 'ewma']));

export const loadBalancingAnnotations = {
  hashBy: rule<string | undefined>({
    name: 'upstream-hash-by',
    section: 'Load balancing and affinity',
    status: 'supported',
    schema: hashKey,
    defaultValue: undefined,
    accepted: 'nginx request variables ($request_uri, ${http_x_user}, $arg_id, $cookie_session, $binary_remote_addr, ...) joined with letters, digits, "-" and "_"',
    note: '`hash … consistent` over the Service\'s endpoints (`--upstreams endpoints`): request variables (`$request_uri`, `${http_x_user}`, `$arg_id`, `$cookie_…`, `$binary_remote_addr`, ...) joined with letters, digits, `-`, `_`; any other variable is refused. Takes precedence over `load-balance`',
  }),
  algorithm: rule<LoadBalanceAlgorithm | undefined>({
    name: 'load-balance',
    section: 'Load balancing and affinity',
    status: 'differs',
    schema: algorithm,
    defaultValue: undefined,
    defaultWords: '`round_robin`',
    accepted: 'round_robin, least_conn or ewma',
    note: '`round_robin`, or `least_conn` (which older ingress-nginx releases had; needs `--upstreams endpoints`). `ewma` needs Lua: round-robin',
  }),
};
