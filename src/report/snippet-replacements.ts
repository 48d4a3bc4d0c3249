/**
 * For `audit`: every snippet in use (annotations of our Ingresses, keys of the controller ConfigMap),
 * directive by directive, with the annotation or ConfigMap key that does the same where there is one,
 * written out with the snippet's own values. Read from the snapshot, never from nginx.conf.
 */
import { compareStrings } from '../model/order.js';
import type { Snapshot } from '../sources/snapshot.js';
import { catalogEntry, configMapCatalog } from '../translate/ingress/annotations/catalog.js';
import { annotationPrefix } from '../translate/ingress/annotations/rule.js';
import { isSnippetKey } from '../translate/ingress/annotations/snippets.js';

export interface SnippetDirective {
  /** The directive as written, up to its `;`. */
  readonly text: string;
  /** What replaces it, as it would be written (`permanent-redirect: "https://..."`); absent when nothing does. */
  readonly replacement?: string;
  /** What ingress2nginx does with the replacement today (supported, differs, ignored), from the catalog. */
  readonly replacementStatus?: string;
}

export interface SnippetUsage {
  /** `Ingress namespace/name` or `ConfigMap namespace/name`. */
  readonly resource: string;
  /** The annotation (without prefix) or ConfigMap key. */
  readonly snippet: string;
  readonly directives: readonly SnippetDirective[];
}

interface Rule {
  readonly pattern: RegExp;
  /** The replacement for the match, and the catalog name it is looked up by. */
  readonly replace: (match: RegExpExecArray) => { text: string; name: string; configMap?: boolean };
}

const quoted = (value: string) => JSON.stringify(value.replace(/^["']|["']$/g, ''));
const seconds = (value: string) => value.replace(/s$/, '');

const rules: readonly Rule[] = [
  { pattern: /^more_set_headers\s+["']?([^:"']+):\s*([^"']*)["']?$/, replace: (m) => ({ text: `custom-headers: a ConfigMap with ${quoted(`${m[1]}: ${m[2]}`)}`, name: 'custom-headers' }) },
  { pattern: /^proxy_set_header\s+(\S+)\s+(.+)$/, replace: (m) => ({ text: `proxy-set-headers: a ConfigMap with ${quoted(`${m[1]}: ${m[2]}`)}`, name: 'proxy-set-headers', configMap: true }) },
  { pattern: /^add_header\s+(\S+)\s+(.+?)(\s+always)?$/, replace: (m) => ({ text: `add-headers: a ConfigMap with ${quoted(`${m[1]}: ${m[2]}`)}`, name: 'add-headers', configMap: true }) },
  { pattern: /^(?:more_clear_headers|proxy_hide_header)\s+["']?([^"'\s]+)["']?$/, replace: (m) => ({ text: `hide-headers: ${quoted(m[1]!)} in the controller ConfigMap`, name: 'hide-headers', configMap: true }) },
  { pattern: /^proxy_cookie_domain\s+(\S+)\s+(\S+)$/, replace: (m) => ({ text: `proxy-cookie-domain: ${quoted(`${m[1]} ${m[2]}`)}`, name: 'proxy-cookie-domain' }) },
  { pattern: /^proxy_cookie_path\s+(\S+)\s+(\S+)$/, replace: (m) => ({ text: `proxy-cookie-path: ${quoted(`${m[1]} ${m[2]}`)}`, name: 'proxy-cookie-path' }) },
  { pattern: /^large_client_header_buffers\s+(\d+)\s+(\S+)$/, replace: (m) => ({ text: `large-client-header-buffers: ${quoted(`${m[1]} ${m[2]}`)} in the controller ConfigMap`, name: 'large-client-header-buffers', configMap: true }) },
  { pattern: /^return\s+(301|308)\s+(\S+)$/, replace: (m) => ({ text: `permanent-redirect: ${quoted(m[2]!)}${m[1] === '308' ? ', permanent-redirect-code: "308"' : ''}`, name: 'permanent-redirect' }) },
  { pattern: /^return\s+(302|307)\s+(\S+)$/, replace: (m) => ({ text: `temporal-redirect: ${quoted(m[2]!)}${m[1] === '307' ? ', temporal-redirect-code: "307"' : ''}`, name: 'temporal-redirect' }) },
  { pattern: /^rewrite\s+\S+\s+(\S+)\s+permanent$/, replace: (m) => ({ text: `permanent-redirect: ${quoted(m[1]!)}`, name: 'permanent-redirect' }) },
  { pattern: /^rewrite\s+\S+\s+(\S+)\s+redirect$/, replace: (m) => ({ text: `temporal-redirect: ${quoted(m[1]!)}`, name: 'temporal-redirect' }) },
  { pattern: /^client_max_body_size\s+(\S+)$/, replace: (m) => ({ text: `proxy-body-size: ${quoted(m[1]!)}`, name: 'proxy-body-size' }) },
  { pattern: /^proxy_read_timeout\s+(\d+)s?$/, replace: (m) => ({ text: `proxy-read-timeout: ${quoted(seconds(m[1]!))}`, name: 'proxy-read-timeout' }) },
  { pattern: /^proxy_send_timeout\s+(\d+)s?$/, replace: (m) => ({ text: `proxy-send-timeout: ${quoted(seconds(m[1]!))}`, name: 'proxy-send-timeout' }) },
  { pattern: /^proxy_connect_timeout\s+(\d+)s?$/, replace: (m) => ({ text: `proxy-connect-timeout: ${quoted(seconds(m[1]!))}`, name: 'proxy-connect-timeout' }) },
  { pattern: /^proxy_buffering\s+(on|off)$/, replace: (m) => ({ text: `proxy-buffering: ${quoted(m[1]!)}`, name: 'proxy-buffering' }) },
  { pattern: /^proxy_buffer_size\s+(\S+)$/, replace: (m) => ({ text: `proxy-buffer-size: ${quoted(m[1]!)}`, name: 'proxy-buffer-size' }) },
  { pattern: /^proxy_request_buffering\s+(on|off)$/, replace: (m) => ({ text: `proxy-request-buffering: ${quoted(m[1]!)}`, name: 'proxy-request-buffering' }) },
  { pattern: /^allow\s+(\S+)$/, replace: (m) => ({ text: `whitelist-source-range: ${quoted(m[1]!)}`, name: 'whitelist-source-range' }) },
  { pattern: /^deny\s+(\S+)$/, replace: (m) => ({ text: m[1] === 'all' ? 'whitelist-source-range (denies every other address)' : `denylist-source-range: ${quoted(m[1]!)}`, name: m[1] === 'all' ? 'whitelist-source-range' : 'denylist-source-range' }) },
  { pattern: /^gzip\s+on$/, replace: () => ({ text: 'use-gzip: "true" in the controller ConfigMap', name: 'use-gzip', configMap: true }) },
  { pattern: /^access_log\s+off$/, replace: () => ({ text: 'enable-access-log: "false"', name: 'enable-access-log' }) },
  { pattern: /^rewrite_log\s+on$/, replace: () => ({ text: 'enable-rewrite-log: "true"', name: 'enable-rewrite-log' }) },
  { pattern: /^limit_rate\s+(\d+)k$/, replace: (m) => ({ text: `limit-rate: ${quoted(m[1]!)}`, name: 'limit-rate' }) },
];

/** The directives of a snippet, split at `;` outside quotes and braces' bodies kept whole. */
export function snippetDirectives(text: string): string[] {
  const directives: string[] = [];
  let current = '';
  let depth = 0;
  let quote: string | undefined;
  let comment = false;
  for (const ch of text) {
    if (comment) {
      comment = ch !== '\n';
      continue;
    }
    if (quote === undefined && ch === '#' && /(^|\s)$/.test(current)) {
      comment = true;
      continue;
    }
    current += ch;
    if (quote !== undefined) {
      if (ch === quote) quote = undefined;
    } else if (ch === '"' || ch === "'") quote = ch;
    else if (ch === '{') depth++;
    else if (ch === '}' && --depth === 0) {
      directives.push(current.trim());
      current = '';
    } else if (ch === ';' && depth === 0) {
      directives.push(current.slice(0, -1).trim());
      current = '';
    }
  }
  if (current.trim() !== '') directives.push(current.trim());
  return directives.filter((d) => d !== '').map((d) => d.replace(/\s+/g, ' '));
}

export function replacementOf(directive: string): Pick<SnippetDirective, 'replacement' | 'replacementStatus'> {
  for (const rule of rules) {
    const match = rule.pattern.exec(directive);
    if (!match) continue;
    const { text, name, configMap } = rule.replace(match);
    const status = configMap ? configMapCatalog.find((e) => e.key === name)?.status : catalogEntry(name)?.status;
    return { replacement: text, replacementStatus: status === undefined ? 'not yet read by ingress2nginx' : status };
  }
  return {};
}

export function snippetUsages(snapshot: Snapshot, ingresses: ReadonlySet<string>, configMap: string | undefined): SnippetUsage[] {
  const usages: SnippetUsage[] = [];
  const add = (resource: string, snippet: string, text: string) =>
    usages.push({ resource, snippet, directives: snippetDirectives(text).map((d) => ({ text: d, ...replacementOf(d) })) });
  for (const object of snapshot.objects) {
    const id = `${object.metadata.namespace}/${object.metadata.name}`;
    if (object.kind === 'Ingress' && ingresses.has(id)) {
      for (const [key, value] of Object.entries(object.metadata.annotations)) {
        if (key.startsWith(annotationPrefix) && isSnippetKey(key.slice(annotationPrefix.length))) add(`Ingress ${id}`, key.slice(annotationPrefix.length), value);
      }
    } else if (object.kind === 'ConfigMap' && id === configMap) {
      const data = (object.raw['data'] ?? {}) as Record<string, unknown>;
      for (const [key, value] of Object.entries(data)) if (isSnippetKey(key) && typeof value === 'string') add(`ConfigMap ${id}`, key, value);
    }
  }
  return usages.sort((a, b) => compareStrings(a.resource, b.resource) || compareStrings(a.snippet, b.snippet));
}
