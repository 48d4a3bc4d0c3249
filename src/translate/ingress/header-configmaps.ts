/**
 * Headers from ConfigMaps of header name → value, as ingress-nginx reads them. The controller
 * ConfigMap's `add-headers` (response headers on every response) and `proxy-set-headers` (request
 * headers to every backend) name the operator's ConfigMaps, whose values may use nginx variables, as in
 * ingress-nginx. An Ingress's `custom-headers` names a tenant's, whose `$` stays a literal `$` (as
 * ingress-nginx escapes it) and whose names must be in `global-allowed-response-headers`.
 */
import type { Header } from '../../model/nginx.js';
import { compareStrings } from '../../model/order.js';
import type { SourceObject } from '../../sources/snapshot.js';
import { isHeaderToken, quotedHeaderValue, quoteKey } from '../checks/allowlist.js';
import { isReservedHeader, reservedHeaderText } from '../checks/header-names.js';
import type { Reporter } from '../report.js';
import type { Resources } from '../resources.js';
import type { NamespacedName } from './annotations/references.js';
import type { ControllerSettings } from './configmap.js';
import { literalDollarVariable } from '../settle/extensions.js';

/** Response headers nginx writes itself beside the framing ones: `add_header` would send a second one beside it, never replace it. */
const ownResponseHeaders = new Set(['date', 'server']);

/** Request headers every proxied request already carries (requestHeaders.hbs) beside the framing ones: a second one would be sent beside ours. */
const ownRequestHeaders = new Set([
  'x-forwarded-for',
  'x-forwarded-host',
  'x-forwarded-port',
  'x-forwarded-proto',
  'x-forwarded-scheme',
  'x-real-ip',
  'x-request-id',
  'x-scheme',
]);

export interface HeaderDefaults {
  /** `add-headers`: added to every response, replacing the backend's header of the same name. */
  readonly response: readonly Header[];
  /** Hidden from every backend response: `hide-headers`, and the names `add-headers` replaces. */
  readonly hidden: readonly string[];
  /** `proxy-set-headers`: sent to every backend. */
  readonly request: readonly Header[];
  /** `global-allowed-response-headers`: the only names a `custom-headers` ConfigMap may set (exact case, as ingress-nginx compares). */
  readonly allowedResponseHeaders: ReadonlySet<string>;
  /** The ConfigMaps named, which the cluster mode follows. */
  readonly configMaps: readonly NamespacedName[];
}

export interface HeaderEntries {
  readonly headers: Header[];
  readonly problems: { readonly key: string; readonly problem: string }[];
}

/**
 * The entries of a ConfigMap of headers, sorted by name, each checked: a token for a name, not one nginx
 * or we set already, a value of printable ASCII (`$` as `variables` says), no name twice in any case.
 */
export function headerEntries(data: Readonly<Record<string, string>>, direction: 'response' | 'request', variables: 'expand' | 'literal'): HeaderEntries {
  const headers: Header[] = [];
  const problems: { key: string; problem: string }[] = [];
  const seen = new Set<string>();
  const reserved = direction === 'response' ? ownResponseHeaders : ownRequestHeaders;
  for (const key of Object.keys(data).sort(compareStrings)) {
    const lower = key.toLowerCase();
    const value = quotedHeaderValue(data[key] ?? '', variables, literalDollarVariable);
    let problem: string | undefined;
    if (!isHeaderToken(key)) problem = 'is not a header name (an RFC 9110 token starting with a letter or digit)';
    else if (isReservedHeader(key, direction)) problem = reservedHeaderText;
    else if (reserved.has(lower)) problem = direction === 'response' ? 'is a header nginx writes itself, which cannot be replaced' : 'is a header ingress2nginx already sends to every backend (see the ConfigMap keys that set it)';
    else if (seen.has(lower)) problem = 'is set twice (header names are case-insensitive)';
    else if (!value.ok) problem = `has a value that ${value.problem}`;
    if (problem !== undefined || !value.ok) {
      problems.push({ key, problem: `header ${quoteKey(key)} ${problem ?? ''}` });
      continue;
    }
    seen.add(lower);
    headers.push({ name: key, value: value.value });
  }
  return { headers, problems };
}

/** The controller ConfigMap's header settings, with the ConfigMaps they name read and checked. */
export function headerDefaults(settings: ControllerSettings, resources: Resources, controller: SourceObject | undefined, report: Reporter): HeaderDefaults {
  const operatorHeaders = (ref: NamespacedName | undefined, key: string, direction: 'response' | 'request'): Header[] => {
    if (ref === undefined) return [];
    const configMap = resources.configMaps.get(`${ref.namespace}/${ref.name}`);
    if (!configMap) {
      report.warning('header-configmap-not-found', controller, `ConfigMap ${ref.namespace}/${ref.name} (${key}) is not in the input; no headers from it`, ['data', key]);
      return [];
    }
    const entries = headerEntries(configMap.spec, direction, 'expand');
    for (const { key: entry, problem } of entries.problems) {
      report.error('header-invalid', configMap.object, `${problem} (named by ${key}); this header is left out`, ['data', entry]);
    }
    return entries.headers;
  };
  const response = operatorHeaders(settings.addHeaders, 'add-headers', 'response');
  const hidden = new Map([...settings.hideHeaders, ...response.map((header) => header.name)].map((name) => [name.toLowerCase(), name]));
  return {
    response,
    hidden: [...hidden.values()].sort(compareStrings),
    request: operatorHeaders(settings.proxySetHeaders, 'proxy-set-headers', 'request'),
    allowedResponseHeaders: new Set(settings.globalAllowedResponseHeaders),
    configMaps: [settings.addHeaders, settings.proxySetHeaders].filter((ref): ref is NamespacedName => ref !== undefined),
  };
}

/** No ConfigMap of headers: what a build without the controller ConfigMap uses. */
export const noHeaderDefaults: HeaderDefaults = { response: [], hidden: [], request: [], allowedResponseHeaders: new Set(), configMaps: [] };
