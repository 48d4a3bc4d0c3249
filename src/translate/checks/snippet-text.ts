/**
 * Snippets are raw nginx text that the operator chose to allow; nothing here makes them safe. What this
 * checks is only that a snippet stays inside the block it is put in, read the way nginx's config parser
 * reads tokens (ngx_conf_read_token): braces balance outside quotes and comments, no quote is left open,
 * and it ends after a complete directive. Without that, a location's snippet could close the location and
 * the server and write into another tenant's, where `nginx -t` would find nothing wrong.
 */

/** Longer than any snippet people write by hand; keeps one annotation from growing the config without bound. */
export const snippetMaxLength = 64 * 1024;

const isSpace = (ch: string) => ch === ' ' || ch === '\t' || ch === '\r' || ch === '\n';

export function snippetProblem(text: string): string | undefined {
  if (text.length > snippetMaxLength) return `it is longer than ${snippetMaxLength / 1024} KiB`;
  if (text.includes('\0')) return 'it holds a NUL character';
  let depth = 0;
  let betweenTokens = true;
  let comment = false;
  let escaped = false;
  let quote: string | undefined;
  let afterDollar = false;
  /** The last token ended a directive or a block (or there is none yet). */
  let complete = true;
  for (const ch of text) {
    if (comment) {
      if (ch === '\n') comment = false;
      continue;
    }
    if (escaped) {
      escaped = false;
      continue;
    }
    if (quote !== undefined) {
      if (ch === '\\') escaped = true;
      else if (ch === quote) {
        quote = undefined;
        betweenTokens = true;
      }
      continue;
    }
    if (betweenTokens) {
      if (isSpace(ch)) continue;
      if (ch === '#') {
        comment = true;
        continue;
      }
      if (ch === ';') {
        complete = true;
        continue;
      }
      if (ch === '{' || ch === '}') {
        depth += ch === '{' ? 1 : -1;
        if (depth < 0) return 'it closes a block it did not open: a snippet must stay inside the block it is put in';
        complete = true;
        continue;
      }
      complete = false;
      betweenTokens = false;
      afterDollar = false;
      if (ch === '"' || ch === "'") quote = ch;
      else if (ch === '\\') escaped = true;
      else afterDollar = ch === '$';
      continue;
    }
    // Inside a word: `${name}` is a variable, not a block; space, `;` and `{` end the word.
    if (ch === '{' && afterDollar) continue;
    afterDollar = ch === '$';
    if (ch === '\\') escaped = true;
    else if (isSpace(ch) || ch === ';' || ch === '{') {
      betweenTokens = true;
      if (ch === ';') complete = true;
      if (ch === '{') {
        depth += 1;
        complete = true;
      }
    }
  }
  if (quote !== undefined) return 'it leaves a quoted string open';
  if (depth > 0) return 'it leaves a block open: a snippet must stay inside the block it is put in';
  if (!complete || !betweenTokens) return 'it does not end with a complete directive (";" or "}")';
  return undefined;
}
