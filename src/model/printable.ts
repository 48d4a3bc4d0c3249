/**
 * Values shown to people may come from a manifest or the API (a host, an annotation, a file name, nginx's
 * echo of either), so whatever writes them for a terminal or a log makes them printable first.
 */

/**
 * Control characters (a newline in a name would fake a report line) and bidirectional overrides (which
 * reorder what a reviewer sees) as JSON-style escapes.
 */
export function printable(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g, (c) => {
    const escaped = JSON.stringify(c).slice(1, -1);
    return escaped.length > 1 ? escaped : `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;
  });
}

/** Text of several lines (nginx's own output, say): each line made `printable`, the line breaks kept. */
export function printableLines(text: string): string {
  return text.split('\n').map(printable).join('\n');
}
