/**
 * Every value in a report may come from a manifest (host, path, annotation, file name, certificate
 * subject), so each output form escapes it for its reader: a terminal, markdown on a code host, HTML.
 */

import { printable } from '../model/printable.js';

/**
 * Prose for markdown: every ASCII punctuation character backslash-escaped, so nothing in it becomes
 * markup, raw HTML, an entity, a link, a mention or an issue reference.
 */
export function markdownText(text: string): string {
  return printable(text).replace(/[!-/:-@[-`{-~]/g, (c) => `\\${c}`);
}

/**
 * A value as a markdown code span: shown verbatim, never interpreted. The fence is longer than any run
 * of backticks inside; `|` is escaped because table cells split on it even within code.
 */
export function markdownCode(text: string): string {
  const value = printable(text).replace(/\|/g, '\\|');
  if (value === '') return '';
  const longestRun = Math.max(0, ...(value.match(/`+/g) ?? []).map((run) => run.length));
  const fence = '`'.repeat(longestRun + 1);
  const padded = value.startsWith('`') || value.endsWith('`') || value.startsWith(' ') ? ` ${value} ` : value;
  return `${fence}${padded}${fence}`;
}

const htmlEntities: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text for HTML element content or a quoted attribute value. */
export function htmlText(text: string): string {
  return text.replace(/[&<>"']/g, (c) => htmlEntities[c]!);
}
