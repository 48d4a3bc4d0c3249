import type { FieldPath } from '../../model/diagnostics.js';
import type { Header, MapBlock } from '../../model/nginx.js';
import type { ExtensionDefinition } from '../settle/claims.js';
import { isDnsHostname, isHeaderName, isHeaderToken, isSafePath, quotedHeaderValue } from '../checks/allowlist.js';
import { isReservedHeader, reservedHeaderText } from '../checks/header-names.js';
import { digestOf, escapeLiteral } from '../settle/extensions.js';
import type { HttpRouteFilter } from './schemas.js';

/**
 * An HTTPRoute rule's filters that change the request and the response (RequestHeaderModifier,
 * ResponseHeaderModifier, URLRewrite) in nginx's terms: request headers for `proxy_set_header`, the
 * `Host` sent, response headers for `add_header … always` and `proxy_hide_header`, a path rewrite. Names
 * are header tokens; values are printable ASCII without `$`, quoted. RequestRedirect is the rule's
 * target of its own (http-routes.ts); RequestMirror is read in http-mirror.ts.
 */

export interface RuleFilters {
  /** `proxy_set_header` name and quoted value; an empty value (`""`) removes the header. */
  readonly requestHeaders: readonly Header[];
  /** `Host` to the backend (URLRewrite hostname), quoted. */
  readonly host?: string;
  readonly responseHeaders: readonly Header[];
  readonly hiddenHeaders: readonly string[];
  readonly rewrite?: PathModifier;
  /** http-level maps the values name (appending to a request header the client may have sent). */
  readonly definitions: readonly ExtensionDefinition[];
}

export type PathModifier = { readonly type: 'ReplaceFullPath'; readonly path: string } | { readonly type: 'ReplacePrefixMatch'; readonly prefix: string };

export interface FilterProblem {
  readonly message: string;
  readonly field: FieldPath;
}

type Result<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly problem: FilterProblem };

/** The filters nginx expresses here; the first problem otherwise. `filters` are the rule's (or a backendRef's), at `at`. */
export function ruleFilters(filters: readonly HttpRouteFilter[], at: FieldPath): Result<RuleFilters> {
  const requestHeaders: Header[] = [];
  const responseHeaders: Header[] = [];
  const hiddenHeaders: string[] = [];
  const definitions: ExtensionDefinition[] = [];
  let host: string | undefined;
  let rewrite: PathModifier | undefined;
  for (const [index, filter] of filters.entries()) {
    const field: FieldPath = [...at, index];
    const spec = filter as Record<string, unknown>;
    if (filter.type === 'RequestHeaderModifier') {
      const modifier = headerModifier(spec.requestHeaderModifier, [...field, 'requestHeaderModifier'], 'request');
      if (!modifier.ok) return modifier;
      for (const { name, value } of modifier.value.set) requestHeaders.push({ name, value });
      for (const { name, value } of modifier.value.add) {
        const appended = appendedHeader(name, value, [...field, 'requestHeaderModifier', 'add'], 'http_');
        if (!appended.ok) return appended;
        requestHeaders.push(appended.value.header);
        definitions.push(appended.value.definition);
      }
      for (const name of modifier.value.remove) requestHeaders.push({ name, value: '""' });
    } else if (filter.type === 'ResponseHeaderModifier') {
      const modifier = headerModifier(spec.responseHeaderModifier, [...field, 'responseHeaderModifier'], 'response');
      if (!modifier.ok) return modifier;
      // nginx adds response headers beside the backend's: each one changed hides the backend's first.
      hiddenHeaders.push(...modifier.value.set.map((h) => h.name), ...modifier.value.add.map((h) => h.name), ...modifier.value.remove);
      responseHeaders.push(...modifier.value.set);
      for (const { name, value } of modifier.value.add) {
        const appended = appendedHeader(name, value, [...field, 'responseHeaderModifier', 'add'], 'upstream_http_');
        if (!appended.ok) return appended;
        responseHeaders.push(appended.value.header);
        definitions.push(appended.value.definition);
      }
    } else if (filter.type === 'URLRewrite') {
      const urlRewrite = (spec.urlRewrite ?? {}) as Record<string, unknown>;
      if (urlRewrite.hostname !== undefined) {
        if (typeof urlRewrite.hostname !== 'string' || !isDnsHostname(urlRewrite.hostname)) return fail('URLRewrite hostname is not a host name', [...field, 'urlRewrite', 'hostname']);
        host = `"${urlRewrite.hostname}"`;
      }
      if (urlRewrite.path !== undefined) {
        const path = pathModifier(urlRewrite.path, [...field, 'urlRewrite', 'path']);
        if (!path.ok) return path;
        rewrite = path.value;
      }
    } else {
      return fail(`filter ${filter.type} is not supported`, [...field, 'type']);
    }
  }
  const duplicate = firstDuplicate(requestHeaders.map((h) => h.name)) ?? firstDuplicate(responseHeaders.filter((h) => hiddenHeaders.includes(h.name)).map((h) => h.name));
  if (duplicate !== undefined) return fail(`header ${duplicate} is modified twice`, at);
  return { ok: true, value: { requestHeaders, ...(host !== undefined && { host }), responseHeaders, hiddenHeaders, ...(rewrite && { rewrite }), definitions } };
}

function fail(message: string, field: FieldPath): { ok: false; problem: FilterProblem } {
  return { ok: false, problem: { message, field } };
}

function firstDuplicate(names: readonly string[]): string | undefined {
  const seen = new Set<string>();
  for (const name of names.map((n) => n.toLowerCase())) {
    if (seen.has(name)) return name;
    seen.add(name);
  }
  return undefined;
}

interface HeaderModifier {
  readonly set: readonly Header[];
  readonly add: readonly Header[];
  readonly remove: readonly string[];
}

/**
 * `set`, `add` and `remove` of a header modifier: names as tokens and none that frames the message
 * (checks/header-names.ts), values quoted (no `$`: no variable is expanded).
 */
function headerModifier(raw: unknown, at: FieldPath, direction: 'request' | 'response'): Result<HeaderModifier> {
  const spec = (raw ?? {}) as { set?: unknown; add?: unknown; remove?: unknown };
  const lists: Record<'set' | 'add', Header[]> = { set: [], add: [] };
  for (const kind of ['set', 'add'] as const) {
    const entries = spec[kind] ?? [];
    if (!Array.isArray(entries) || entries.length > 16) return fail(`${kind} must be a list of at most 16 headers`, [...at, kind]);
    for (const [index, entry] of entries.entries()) {
      const { name, value } = (entry ?? {}) as { name?: unknown; value?: unknown };
      if (typeof name !== 'string' || !isHeaderToken(name)) return fail('header name is not an HTTP token', [...at, kind, index, 'name']);
      if (isReservedHeader(name, direction)) return fail(`header ${name} ${reservedHeaderText}`, [...at, kind, index, 'name']);
      if (typeof value !== 'string' || value.includes('$')) return fail(`header ${name} value must be text without "$"`, [...at, kind, index, 'value']);
      const quoted = quotedHeaderValue(value, 'literal', 'unused');
      if (!quoted.ok) return fail(`header ${name} value ${quoted.problem}`, [...at, kind, index, 'value']);
      lists[kind].push({ name, value: quoted.value });
    }
  }
  const remove = spec.remove ?? [];
  if (!Array.isArray(remove) || remove.length > 16) return fail('remove must be a list of at most 16 header names', [...at, 'remove']);
  for (const [index, name] of remove.entries()) {
    if (typeof name !== 'string' || !isHeaderToken(name)) return fail('header name is not an HTTP token', [...at, 'remove', index]);
    if (isReservedHeader(name, direction)) return fail(`header ${name} ${reservedHeaderText}`, [...at, 'remove', index]);
  }
  return { ok: true, value: { set: lists.set, add: lists.add, remove: remove as string[] } };
}

/**
 * `add` appends to what the client (or the backend) sent, comma-separated (`a` then `a,b`): a map of
 * that header gives the value, the added one alone when none was sent.
 */
function appendedHeader(name: string, quoted: string, at: FieldPath, prefix: 'http_' | 'upstream_http_'): Result<{ header: Header; definition: ExtensionDefinition }> {
  if (!isHeaderName(name)) return fail(`header ${name}: nginx reads only names of letters, digits and "-", so it cannot append to it`, at);
  const source = `$${prefix}${name.toLowerCase().replaceAll('-', '_')}`;
  const variable = `i2n_add_${digestOf(source, quoted)}`;
  const block: MapBlock = {
    comment: `${name} with ${quoted} appended`,
    source,
    variable,
    entries: [{ key: '""', value: quoted }],
    defaultValue: `"\${${source.slice(1)}},${quoted.slice(1)}`,
  };
  return { ok: true, value: { header: { name, value: `$${variable}` }, definition: { reference: variable, blocks: { maps: [block] } } } };
}

function pathModifier(raw: unknown, at: FieldPath): Result<PathModifier> {
  const spec = (raw ?? {}) as { type?: unknown; replaceFullPath?: unknown; replacePrefixMatch?: unknown };
  if (spec.type === 'ReplaceFullPath') {
    if (typeof spec.replaceFullPath !== 'string' || !isSafePath(spec.replaceFullPath)) return fail('replaceFullPath must be a path in the path characters', [...at, 'replaceFullPath']);
    return { ok: true, value: { type: 'ReplaceFullPath', path: spec.replaceFullPath } };
  }
  if (spec.type === 'ReplacePrefixMatch') {
    if (typeof spec.replacePrefixMatch !== 'string' || !isSafePath(spec.replacePrefixMatch)) return fail('replacePrefixMatch must be a path in the path characters', [...at, 'replacePrefixMatch']);
    return { ok: true, value: { type: 'ReplacePrefixMatch', prefix: spec.replacePrefixMatch } };
  }
  return fail(`path modifier type ${JSON.stringify(spec.type)} is not ReplaceFullPath or ReplacePrefixMatch`, [...at, 'type']);
}

/**
 * The path a request to `matched` (a PathPrefix match, or any path for ReplaceFullPath) gets: a regex
 * over the URI and its replacement, `$1` the rest after the prefix. The Gateway API's examples: `/foo`
 * replaced by `/xyz` makes `/foo/bar` `/xyz/bar`; replaced by `/`, `/foo/bar` becomes `/bar`.
 */
export function rewrittenPath(modifier: PathModifier, matched: string): { regex: string; target: string } {
  if (modifier.type === 'ReplaceFullPath') return { regex: '^', target: modifier.path };
  const prefix = escapeLiteral(matched.replace(/\/+$/, ''));
  const replacement = modifier.prefix.replace(/\/+$/, '');
  if (replacement === '') return { regex: `^${prefix}/?(.*)$`, target: '/$1' };
  return { regex: `^${prefix}(/.*)?$`, target: `${replacement}$1` };
}

/**
 * `rewrittenPath` over the raw request URI, query included (`$request_uri`, still percent-encoded, so
 * no byte of it ends a header line): the path after the prefix is `$1`, the query `$2`. A raw URI that
 * spells the prefix encoded does not match and is redirected as it came.
 */
export function redirectedRequestUri(modifier: PathModifier & { type: 'ReplacePrefixMatch' }, matched: string): { regex: string; target: string } {
  const prefix = escapeLiteral(matched.replace(/\/+$/, ''));
  const replacement = modifier.prefix.replace(/\/+$/, '');
  if (replacement === '') return { regex: `^${prefix}/?([^?]*)(\\?.*)?$`, target: '/$1$2' };
  return { regex: `^${prefix}(/[^?]*)?(\\?.*)?$`, target: `${replacement}$1$2` };
}
