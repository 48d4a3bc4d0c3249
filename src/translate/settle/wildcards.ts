/**
 * A wildcard `*.suffix` covers a name with at least one more label in front of the suffix, and a
 * narrower wildcard under it, never itself: the one meaning every front end and report uses (nginx's
 * SNI map prefers the longest match, so a covered name needs an entry of its own; a listener's
 * wildcard takes a route's name under it).
 */
export function wildcardCovers(wildcard: string, name: string): boolean {
  const suffix = wildcard.slice(1);
  const rest = name.startsWith('*.') ? name.slice(1) : `.${name}`;
  return rest.length > suffix.length && rest.endsWith(suffix);
}
