/**
 * Regular expressions from annotations (`use-regex` paths, `canary-by-header-pattern`,
 * `auth-tls-match-cn`) reach nginx inside double quotes, where PCRE compiles them when nginx loads the
 * config and runs them on every request that reaches them. ingress-nginx checked them against a
 * character list only, and `auth-tls-match-cn` was the injection of CVE-2025-1097. Here a regex must
 * parse in a small grammar that means the same in PCRE and in JavaScript, over an alphabet without
 * quotes, `;`, `#`, control characters or a backslash that nginx's config parser would eat (`\\`, `\"`,
 * `\'`), so that nothing in it can end the quoted string or the directive and no variable is expanded
 * in it; and it must pass the cost analysis of regex-cost.ts, so that PCRE never refuses it (a regex
 * PCRE rejects would fail the whole config load) and matching it takes work linear in the subject (a
 * regex that backtracks without bound would let one tenant's requests stall the workers every tenant
 * shares).
 *
 * The grammar: literals; `.`; `^`, and `$` at the end of the expression or an alternative; `|`; groups
 * `( )` and `(?: )`; classes `[ ]`, `[^ ]` with ranges and `\d \w \s \D \W \S`; quantifiers
 * `* + ? {n} {n,} {n,m}` (n, m ≤ 1000), optionally lazy (`?`); escapes `\d \D \w \W \s \S \b \B`
 * and a backslash before punctuation; `(?i)` at the very start.
 */
import type { Checked } from './allowlist.js';
import { checkRegexCost } from './regex-cost.js';
import {
  byteSet,
  classEscapeSet,
  complement,
  dotSet,
  foldCase,
  rangeSet,
  type CharSet,
  type RegexNode,
  type RegexSequence,
  type RegexTree,
} from './regex-syntax.js';

export interface RegexAlphabet {
  /** Characters that stand for themselves (besides escaped punctuation). */
  readonly literals: RegExp;
  readonly maxLength: number;
  /** Whether `(?i)` may open the expression. */
  readonly caseFlag: boolean;
  /** nginx gets the expression behind a `^` (a location); else it is searched for anywhere in the subject. */
  readonly anchored: boolean;
  /** nginx matches it without regard to case (`~*`). */
  readonly caseless: boolean;
}

const classEscapes = new Set(['d', 'D', 'w', 'W', 's', 'S']);
const assertionEscapes = new Set(['b', 'B']);
/** Punctuation a backslash may escape; `\\`, `\"` and `\'` are not here, nginx's parser rewrites them. */
const escapablePunctuation = new Set([...'.^$|?*+()[]{}/-:@!&%,=~_']);
const maxRepeat = 1000;

/** Paths: the Ingress path characters (no space), plus the regex syntax; nginx gets `^` + the path. */
export const pathRegexAlphabet: RegexAlphabet = { literals: /[A-Za-z0-9._~%!&,=:@/-]/, maxLength: 1024, caseFlag: false, anchored: true, caseless: true };
/** Header values and certificate subjects: also spaces; searched for anywhere in the value. */
export const textRegexAlphabet: RegexAlphabet = { literals: /[A-Za-z0-9._~%!&,=:@/ <>-]/, maxLength: 256, caseFlag: true, anchored: false, caseless: false };

export interface RegexInfo {
  /** Capturing groups, for `rewrite-target`'s `$1`…`$9`. */
  readonly capturingGroups: number;
}

class RegexSyntaxError extends Error {}

/** Parses `source` in the grammar above and checks its cost; says where and why when it does not pass. */
export function checkSafeRegex(source: string, alphabet: RegexAlphabet): Checked<RegexInfo> {
  if (source.length === 0) return { ok: false, problem: 'is empty' };
  if (source.length > alphabet.maxLength) return { ok: false, problem: `is longer than ${alphabet.maxLength} characters` };
  const parser = new Parser(source, alphabet);
  let tree: RegexTree;
  try {
    tree = parser.parse();
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
  const cost = checkRegexCost(alphabet.anchored ? anchoredTree(tree) : tree);
  if (!cost.ok) return cost;
  return { ok: true, value: { capturingGroups: parser.capturingGroups } };
}

/** The tree of `source` in the grammar, or undefined when it does not parse (for the tests' models). */
export function parseSafeRegex(source: string, alphabet: RegexAlphabet): RegexTree | undefined {
  try {
    const tree = new Parser(source, alphabet).parse();
    return alphabet.anchored ? anchoredTree(tree) : tree;
  } catch (error) {
    if (error instanceof RegexSyntaxError) return undefined;
    throw error;
  }
}

/** The expression as nginx gets it behind `^`: the anchor binds to the first alternative only. */
function anchoredTree(tree: RegexTree): RegexTree {
  const [first = [], ...rest] = tree.branches;
  return { ...tree, branches: [[{ kind: 'assert', what: '^' }, ...first], ...rest] };
}

class Parser {
  private position = 0;
  private caseless: boolean;
  capturingGroups = 0;

  constructor(
    private readonly source: string,
    private readonly alphabet: RegexAlphabet,
  ) {
    this.caseless = alphabet.caseless;
  }

  parse(): RegexTree {
    if (this.source.startsWith('(?i)')) {
      if (!this.alphabet.caseFlag) this.fail('uses (?i), which is not accepted here');
      this.position = 4;
      this.caseless = true;
    }
    const branches = this.alternation();
    if (this.position < this.source.length) this.fail(`has an unmatched ")" at position ${this.position + 1}`);
    return { branches, caseless: this.caseless };
  }

  /** A node for the characters, both cases of each letter when matched without regard to case. */
  private set(chars: CharSet): RegexNode {
    return { kind: 'set', chars: this.caseless ? foldCase(chars) : chars };
  }

  private fail(problem: string): never {
    throw new RegexSyntaxError(problem);
  }

  private peek(): string | undefined {
    return this.source[this.position];
  }

  private alternation(): RegexSequence[] {
    const branches = [this.sequence()];
    while (this.peek() === '|') {
      this.position++;
      branches.push(this.sequence());
    }
    return branches;
  }

  private sequence(): RegexNode[] {
    const nodes: RegexNode[] = [];
    for (;;) {
      const next = this.peek();
      if (next === undefined || next === '|' || next === ')') return nodes;
      const atom = this.atom();
      const quantifier = this.quantifier();
      if (!quantifier) {
        nodes.push(atom);
        continue;
      }
      if (atom.kind === 'assert') this.fail(`repeats something that cannot be repeated at position ${this.position}`);
      if (quantifier.max === Infinity && containsUnbounded(atom)) {
        this.fail('nests one unbounded repetition inside another (like (a+)+), which can take exponential time to match');
      }
      nodes.push({ kind: 'repeat', body: atom, ...quantifier });
    }
  }

  private atom(): RegexNode {
    const character = this.peek()!;
    const at = this.position + 1;
    switch (character) {
      case '(': {
        this.position++;
        let capturing = true;
        if (this.source.startsWith('?:', this.position)) {
          this.position += 2;
          capturing = false;
        } else if (this.peek() === '?') this.fail(`uses a group form other than (?:…) at position ${at}`);
        else this.capturingGroups++;
        const branches = this.alternation();
        if (this.peek() !== ')') this.fail(`has an unclosed "(" at position ${at}`);
        this.position++;
        return { kind: 'group', branches, capturing };
      }
      case '[':
        return this.set(this.characterClass());
      case '^':
        this.position++;
        return { kind: 'assert', what: '^' };
      case '$':
        // Only where an end anchor can mean something: last, or before "|" or ")". "$name" anywhere else
        // can never match, and reads like the nginx variable it is not.
        this.position++;
        if (this.position < this.source.length && !/^[|)]/.test(this.source[this.position]!)) {
          this.fail(`has "$" at position ${at} where it can only end the expression or an alternative`);
        }
        return { kind: 'assert', what: '$' };
      case '.':
        this.position++;
        return this.set(dotSet);
      case '\\': {
        const escaped = this.escape(false);
        if (assertionEscapes.has(escaped)) return { kind: 'assert', what: escaped as 'b' | 'B' };
        return this.set(classEscapes.has(escaped) ? classEscapeSet(escaped) : byteSet(escaped));
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
        return this.set(byteSet(character));
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

  /** `?`, `{n}`, `{n,m}`, `*`, `+` or `{n,}` (max Infinity), a lazy `?` may follow; undefined when none. */
  private quantifier(): { min: number; max: number; lazy: boolean } | undefined {
    const character = this.peek();
    let bounds: { min: number; max: number } | undefined;
    if (character === '*' || character === '+') {
      this.position++;
      bounds = { min: character === '*' ? 0 : 1, max: Infinity };
    } else if (character === '?') {
      this.position++;
      bounds = { min: 0, max: 1 };
    } else if (character === '{') {
      const match = /^\{(\d{1,4})(,(\d{1,4})?)?\}/.exec(this.source.slice(this.position));
      if (!match) this.fail(`has a "{" that is not a repetition like {2} or {1,3} at position ${this.position + 1}`);
      const min = Number(match[1]);
      const max = match[2] === undefined ? min : match[3] === undefined ? Infinity : Number(match[3]);
      if (min > maxRepeat || (max !== Infinity && (max > maxRepeat || max < min))) {
        this.fail(`has a repetition count out of order or above ${maxRepeat}`);
      }
      this.position += match[0].length;
      bounds = { min, max };
    }
    if (!bounds) return undefined;
    let lazy = false;
    if (this.peek() === '?') {
      this.position++;
      lazy = true;
    }
    if (/^[*+?{]/.test(this.peek() ?? '')) this.fail(`repeats a repetition at position ${this.position + 1}`);
    return { ...bounds, lazy };
  }

  private characterClass(): CharSet {
    const start = this.position + 1;
    this.position++;
    const negated = this.peek() === '^';
    if (negated) this.position++;
    let chars = 0n;
    let items = 0;
    let previous: string | undefined;
    for (;;) {
      const character = this.peek();
      if (character === undefined) this.fail(`has an unclosed "[" at position ${start}`);
      if (character === ']' && items > 0) {
        this.position++;
        // Without regard to case, [^a] matches neither a nor A: fold before complementing.
        const folded = this.caseless ? foldCase(chars) : chars;
        return negated ? complement(folded) : folded;
      }
      if (character === '[') this.fail(`has a "[" inside a class at position ${this.position + 1} (POSIX classes are not accepted)`);
      let single: string | undefined;
      if (character === '\\') {
        const escaped = this.escape(true);
        single = classEscapes.has(escaped) ? undefined : escaped;
        chars |= single === undefined ? classEscapeSet(escaped) : byteSet(escaped);
      } else {
        if (character !== ']' && character !== '^' && character !== '$' && !/[|?*+(){}.]/.test(character)) {
          this.literal(character, this.position + 1);
        } else if (character === ']') {
          this.fail(`has an empty class at position ${start}`);
        }
        single = character;
        chars |= byteSet(character);
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
        chars |= rangeSet(previous, end);
        previous = undefined;
      } else {
        previous = single;
      }
      items++;
    }
  }
}

/** Whether a repetition without upper bound is in the node (the node itself included). */
function containsUnbounded(node: RegexNode): boolean {
  if (node.kind === 'repeat') return node.max === Infinity || containsUnbounded(node.body);
  if (node.kind === 'group') return node.branches.some((branch) => branch.some(containsUnbounded));
  return false;
}
