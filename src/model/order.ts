/** Plain code-unit order, independent of locale: the one string order for deterministic output. */
export function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
