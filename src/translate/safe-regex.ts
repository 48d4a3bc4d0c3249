/**
 * Regular expressions from annotations (`use-regex` paths, `canary-by-header-pattern`,
 * `auth-tls-match-cn`) reach nginx inside double quotes, where PCRE compiles them when nginx loads the
 * config. ingress-nginx checked them against a character list only, and `auth-tls-match-cn` was the
 * injection of CVE-2025-1097. Here a regex must parse in a small grammar that means the same in PCRE and
 * in JavaScript, over an alphabet without quotes, `;`, `#`, control characters or a backslash that nginx's
 * config parser would eat (`\\`, `\"`, `\'`), so:
 * - nothing in it can end the quoted string or the directive, and no variable is expanded in it;
 * - nginx never refuses it (a regex PCRE rejects would fail the whole config load);
 * - no repetition is nested inside another unbounded repetition, the usual cause of exponential
 *   backtracking (`(a+)+`), which would let one tenant's regex stall the workers every tenant shares.
 *
 * The grammar: literals; `.`; `^`, and `$` at the end of the expression or an alternative; `|`; groups `( )` and `(?: )`; classes `[ ]`, `[^ ]` with ranges
 * and `\d \w \s \D \W \S`; quantifiers `* + ? {n} {n,} {n,m}` (n, m ≤ 1000), optionally lazy (`?`);
 * escapes `\d \D \w \W \s \S \b \B` and a backslash before punctuation; `(?i)` at the very start.
 */
import type { Checked } from './allowlist.js';

export interface RegexAlphabet {
  /** Characters that stand for themselves (besides escaped punctuation). */
  readonly literals: RegExp;
  readonly maxLength: number;
  /** Whether `(?i)` may open the expression. */
  readonly caseFlag: boolean;
}

const classEscapes = new Set(['d', 'D', 'w', 'W', 's', 'S']);
const assertionEscapes = new Set(['b', 'B']);
/** Punctuation a backslash may escape; `\\`, `\"` and `\'` are not here, nginx's parser rewrites them. */
const escapablePunctuation = new Set([...'.^$|?*+()[]{}/-:@!&%,=~_']);
const maxRepeat = 1000;

/** Paths: the Ingress path characters (no space), plus the regex syntax. */
export const pathRegexAlphabet: RegexAlphabet = { literals: /[A-Za-z0-9._~%!&,=:@/-]/, maxLength: 1024, caseFlag: false };
/** Header values and certificate subjects: also spaces. */
export const textRegexAlphabet: RegexAlphabet = { literals: /[A-Za-z0-9._~%!&,=:@/ <>-]/, maxLength: 256, caseFlag: true };

export interface RegexInfo {
  /** Capturing groups, for `rewrite-target`'s `$1`…`$9`. */
  readonly capturingGroups: number;
}

class RegexSyntaxError extends Error {}

interface Piece {
  /** The piece repeats without bound (it holds `*`, `+` or `{n,}`). */
  readonly unbounded: boolean;
}

/** Parses `source` in the grammar above; says where and why when it does not. */
export function checkSafeRegex(source: string, alphabet: RegexAlphabet): Checked<RegexInfo> {
  if (source.length === 0) return { ok: false, problem: 'is empty' };
  if (source.length > alphabet.maxLength) return { ok: false, problem: `is longer than ${alphabet.maxLength} characters` };
  const parser = new Parser(source, alphabet);
  try {
    parser.parse();
  } catch (error) {
    if (error instanceof RegexSyntaxError) return { ok: false, problem: error.message };
    throw error;
  }
  // The grammar is a common subset; JavaScript compiling it too is a second opinion on balance and ranges.
  try {
    new RegExp(source.startsWith('(?i)') ? source.slice(4) : source);
  } catch {
    return { ok: false, problem: 'is not a valid regular expression' };
  }
  return { ok: true, value: { capturingGroups: parser.capturingGroups } };
}

class Parser {
  private position = 0;
  capturingGroups = 0;

  constructor(
    private readonly source: string,
    private readonly alphabet: RegexAlphabet,
  ) {}

  parse(): void {
    if (this.source.startsWith('(?i)')) {
      if (!this.alphabet.caseFlag) this.fail('uses (?i), which is not accepted here');
      this.position = 4;
    }
    this.alternation();
    if (this.position < this.source.length) this.fail(`has an unmatched ")" at position ${this.position + 1}`);
  }

  private fail(problem: string): never {
    throw new RegexSyntaxError(problem);
  }

  private peek(): string | undefined {
    return this.source[this.position];
  }

  private alternation(): Piece {
    let unbounded = this.sequence().unbounded;
    while (this.peek() === '|') {
      this.position++;
      unbounded = this.sequence().unbounded || unbounded;
    }
    return { unbounded };
  }

  private sequence(): Piece {
    let unbounded = false;
    for (;;) {
      const next = this.peek();
      if (next === undefined || next === '|' || next === ')') return { unbounded };
      const atom = this.atom();
      const quantifier = this.quantifier();
      if (quantifier !== 'none') {
        if (!atom.quantifiable) this.fail(`repeats something that cannot be repeated at position ${this.position}`);
        if (quantifier === 'unbounded' && atom.unbounded) {
          this.fail('nests one unbounded repetition inside another (like (a+)+), which can take exponential time to match');
        }
      }
      unbounded = unbounded || atom.unbounded || quantifier === 'unbounded';
    }
  }

  private atom(): Piece & { readonly quantifiable: boolean } {
    const character = this.peek()!;
    const at = this.position + 1;
    switch (character) {
      case '(': {
        this.position++;
        if (this.source.startsWith('?:', this.position)) this.position += 2;
        else if (this.peek() === '?') this.fail(`uses a group form other than (?:…) at position ${at}`);
        else this.capturingGroups++;
        const inner = this.alternation();
        if (this.peek() !== ')') this.fail(`has an unclosed "(" at position ${at}`);
        this.position++;
        return { unbounded: inner.unbounded, quantifiable: true };
      }
      case '[':
        this.characterClass();
        return { unbounded: false, quantifiable: true };
      case '^':
        this.position++;
        return { unbounded: false, quantifiable: false };
      case '$':
        // Only where an end anchor can mean something: last, or before "|" or ")". "$name" anywhere else
        // can never match, and reads like the nginx variable it is not.
        this.position++;
        if (this.position < this.source.length && !/^[|)]/.test(this.source[this.position]!)) {
          this.fail(`has "$" at position ${at} where it can only end the expression or an alternative`);
        }
        return { unbounded: false, quantifiable: false };
      case '.':
        this.position++;
        return { unbounded: false, quantifiable: true };
      case '\\': {
        const escaped = this.escape(false);
        return { unbounded: false, quantifiable: !assertionEscapes.has(escaped) };
      }
      case '*':
      case '+':
      case '?':
      case '{':
        return this.fail(`has a repetition with nothing to repeat at position ${at}`);
      case '}':
      case ']':
        return this.fail(`has an unmatched "${character}" at position ${at}`);
      default:
        this.literal(character, at);
        this.position++;
        return { unbounded: false, quantifiable: true };
    }
  }

  private literal(character: string, at: number): void {
    if (!this.alphabet.literals.test(character)) {
      this.fail(`contains a character that is not accepted here at position ${at}`);
    }
  }

  /** After the backslash: returns the escaped character. `inClass`: `\b` means nothing there. */
  private escape(inClass: boolean): string {
    const next = this.source[this.position + 1];
    const at = this.position + 1;
    if (next === undefined) this.fail('ends with a backslash');
    if (classEscapes.has(next) || (!inClass && assertionEscapes.has(next)) || escapablePunctuation.has(next)) {
      this.position += 2;
      return next;
    }
    return this.fail(`has an escape that is not accepted here (\\${/[\x21-\x7e]/.test(next) ? next : '…'}) at position ${at}`);
  }

  /** `none`, `bounded` (`?`, `{n}`, `{n,m}`) or `unbounded` (`*`, `+`, `{n,}`); a lazy `?` may follow. */
  private quantifier(): 'none' | 'bounded' | 'unbounded' {
    const character = this.peek();
    let kind: 'none' | 'bounded' | 'unbounded' = 'none';
    if (character === '*' || character === '+') {
      this.position++;
      kind = 'unbounded';
    } else if (character === '?') {
      this.position++;
      kind = 'bounded';
    } else if (character === '{') {
      const match = /^\{(\d{1,4})(,(\d{1,4})?)?\}/.exec(this.source.slice(this.position));
      if (!match) this.fail(`has a "{" that is not a repetition like {2} or {1,3} at position ${this.position + 1}`);
      const min = Number(match[1]);
      const max = match[3] === undefined ? undefined : Number(match[3]);
      if (min > maxRepeat || (max !== undefined && (max > maxRepeat || max < min))) {
        this.fail(`has a repetition count out of order or above ${maxRepeat}`);
      }
      this.position += match[0].length;
      kind = match[2] !== undefined && max === undefined ? 'unbounded' : 'bounded';
    }
    if (kind !== 'none' && this.peek() === '?') this.position++;
    if (kind !== 'none' && /^[*+?{]/.test(this.peek() ?? '')) this.fail(`repeats a repetition at position ${this.position + 1}`);
    return kind;
  }

  private characterClass(): void {
    const start = this.position + 1;
    this.position++;
    if (this.peek() === '^') this.position++;
    let items = 0;
    let previous: string | undefined;
    for (;;) {
      const character = this.peek();
      if (character === undefined) this.fail(`has an unclosed "[" at position ${start}`);
      if (character === ']' && items > 0) {
        this.position++;
        return;
      }
      if (character === '[') this.fail(`has a "[" inside a class at position ${this.position + 1} (POSIX classes are not accepted)`);
      let single: string | undefined;
      if (character === '\\') {
        const escaped = this.escape(true);
        single = classEscapes.has(escaped) ? undefined : escaped;
      } else {
        if (character !== ']' && character !== '^' && character !== '$' && !/[|?*+(){}.]/.test(character)) {
          this.literal(character, this.position + 1);
        } else if (character === ']') {
          this.fail(`has an empty class at position ${start}`);
        }
        single = character;
        this.position++;
      }
      // A range: the previous single character, "-", and the next one that is not "]".
      if (single === '-' && previous !== undefined && this.peek() !== ']') {
        const end = this.peek() === '\\' ? this.source[this.position + 1] : this.peek();
        if (end === undefined) this.fail(`has an unclosed "[" at position ${start}`);
        if (this.peek() === '\\') {
          if (classEscapes.has(end)) this.fail(`has a range ending in a class escape at position ${this.position + 1}`);
          this.escape(true);
        } else {
          this.literal(end, this.position + 1);
          this.position++;
        }
        if (end < previous) this.fail(`has a range out of order (${previous}-${end})`);
        previous = undefined;
      } else {
        previous = single;
      }
      items++;
    }
  }
}
