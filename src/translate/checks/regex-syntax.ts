/**
 * The syntax tree of the safe regex grammar (safe-regex.ts) and the character sets its atoms match, as
 * PCRE matches them in nginx (bytes, no UTF mode; `.` is every byte but newline). The cost analysis
 * (regex-cost.ts) and the tests' backtracking model work on this tree.
 */

/** A set of bytes as a bit field; bit 256 stands for the end of the subject. */
export type CharSet = bigint;

export const endOfSubject: CharSet = 1n << 256n;
const allBytes: CharSet = (1n << 256n) - 1n;

export type RegexNode =
  | { readonly kind: 'set'; readonly chars: CharSet }
  /** `^`, `$`, `\b`, `\B`: match no character, and may fail. */
  | { readonly kind: 'assert'; readonly what: '^' | '$' | 'b' | 'B' }
  | { readonly kind: 'group'; readonly branches: readonly RegexSequence[]; readonly capturing: boolean }
  | { readonly kind: 'repeat'; readonly body: RegexNode; readonly min: number; readonly max: number; readonly lazy: boolean };

export type RegexSequence = readonly RegexNode[];

/** A whole expression: its top-level alternatives, and whether it opened with `(?i)`. */
export interface RegexTree {
  readonly branches: readonly RegexSequence[];
  readonly caseless: boolean;
}

export function byteSet(...characters: string[]): CharSet {
  let set = 0n;
  for (const character of characters) set |= 1n << BigInt(character.charCodeAt(0));
  return set;
}

export function rangeSet(from: string, to: string): CharSet {
  let set = 0n;
  for (let code = from.charCodeAt(0); code <= to.charCodeAt(0); code++) set |= 1n << BigInt(code);
  return set;
}

export function complement(set: CharSet): CharSet {
  return allBytes & ~set;
}

const digits = rangeSet('0', '9');
const wordCharacters = digits | rangeSet('a', 'z') | rangeSet('A', 'Z') | byteSet('_');
/** PCRE's `\s`: space, tab, newline, vertical tab, form feed, carriage return. */
const spaces = byteSet(' ', '\t', '\n', '\v', '\f', '\r');

export const dotSet: CharSet = complement(byteSet('\n'));

/** The set of a class escape (`d D w W s S`). */
export function classEscapeSet(letter: string): CharSet {
  const base = { d: digits, w: wordCharacters, s: spaces }[letter.toLowerCase() as 'd' | 'w' | 's'];
  return letter === letter.toLowerCase() ? base : complement(base);
}

/** The set with both cases of every letter in it. */
export function foldCase(set: CharSet): CharSet {
  let folded = set;
  for (let code = 65; code <= 90; code++) {
    const upper = 1n << BigInt(code);
    const lower = 1n << BigInt(code + 32);
    if ((set & (upper | lower)) !== 0n) folded |= upper | lower;
  }
  return folded;
}

/** Whether a byte is in the set. */
export function hasByte(set: CharSet, code: number): boolean {
  return ((set >> BigInt(code)) & 1n) === 1n;
}

/** The bytes of a set, in order (the end-of-subject bit is left out). */
export function bytesOf(set: CharSet): number[] {
  const bytes: number[] = [];
  for (let code = 0; code < 256; code++) if (hasByte(set, code)) bytes.push(code);
  return bytes;
}
