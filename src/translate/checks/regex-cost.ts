/**
 * What a regex from a tenant may cost nginx. PCRE compiles it when nginx loads the config (a regex it
 * refuses fails every tenant's reload) and runs it by backtracking on every request that reaches it, for
 * as long as the subject lets it (a regex that backtracks without bound lets a few clients stall the
 * workers every tenant shares). So a regex passes only when:
 *
 * - its compiled size stays far below PCRE's limits: nesting depth, the size of the program once
 *   repeated groups are copied out, and the product of nested repetition counts are bounded;
 * - matching it takes work linear in the subject. A backtracking matcher does more than linear work only
 *   when it can reach the same place in the subject along two paths of the expression; here that is
 *   ruled out piece by piece:
 *   - the alternatives of a group can never match the same text or a prefix of one another's (`(a|a)`,
 *     `(js|json)`), so at most one of them matches at any place;
 *   - a repetition of variable count either is decided by the next character (what it repeats cannot
 *     start with what may follow it: `[^/]+/`), or is the last thing in the expression that can fail
 *     (`/(.*)`), or it gives back characters one by one, which only one repetition on any path may do
 *     (`.*a.*b$` is quadratic) and never inside another repetition (`(.*a){12}` is of degree 12);
 *   - after a repetition that gives back characters, or anywhere in an expression searched for anywhere
 *     in the subject, a later repetition must be cut short by a character it cannot match that comes in
 *     between, or every place the earlier one stops would scan the same stretch again.
 *
 * The analysis is conservative: it refuses some expressions that would be cheap, never one that is not.
 * The property test in test/property/regex.property.test.ts holds it to a backtracking model and to nginx.
 */
import type { Checked } from './allowlist.js';
import { byteSet, endOfSubject, type CharSet, type RegexNode, type RegexSequence, type RegexTree } from './regex-syntax.js';

/** PCRE allows 250 nested groups; none is needed in a path or a header pattern. */
const maxDepth = 16;
/** PCRE2 (link size 2) compiles programs of up to 64K code units; this estimate is kept far below. */
const maxProgramSize = 16_000;
/** `((a{999}){999}){999}` and the like: the counts of nested repetitions multiplied. */
const maxRepetitionProduct = 1000;

export function checkRegexCost(tree: RegexTree): Checked<true> {
  if (depthOf(tree.branches) > maxDepth) return { ok: false, problem: `nests groups more than ${maxDepth} deep` };
  if (repetitionProduct(tree.branches) > maxRepetitionProduct) {
    return { ok: false, problem: `nests repetitions whose counts multiply to more than ${maxRepetitionProduct} (like (a{100}){100})` };
  }
  if (programSize(tree.branches) > maxProgramSize) {
    return { ok: false, problem: 'is too large once its repeated groups are written out (PCRE would refuse it, or run it slowly)' };
  }
  try {
    for (const branch of tree.branches) {
      const anchored = branch.find((node) => !(node.kind === 'assert' && node.what !== '^'));
      const searched = !(anchored?.kind === 'assert' && anchored.what === '^');
      walk(branch, {
        follow: 0n,
        followSucceeds: true,
        inRepeat: false,
        backtracking: searched ? 'search' : undefined,
        separators: [],
      });
    }
  } catch (error) {
    if (error instanceof CostError) return { ok: false, problem: error.message };
    throw error;
  }
  return { ok: true, value: true };
}

class CostError extends Error {}

// ------------------------------------------------------------------ size

function depthOf(branches: readonly RegexSequence[]): number {
  let depth = 0;
  for (const node of branches.flat()) {
    if (node.kind === 'group') depth = Math.max(depth, 1 + depthOf(node.branches));
    if (node.kind === 'repeat') depth = Math.max(depth, depthOf([[node.body]]));
  }
  return depth;
}

function repetitionProduct(branches: readonly RegexSequence[]): number {
  let product = 1;
  for (const node of branches.flat()) {
    if (node.kind === 'group') product = Math.max(product, repetitionProduct(node.branches));
    if (node.kind === 'repeat') {
      const count = node.max === Infinity ? Math.max(node.min, 1) : node.max;
      product = Math.max(product, count * repetitionProduct([[node.body]]));
    }
  }
  return product;
}

/** PCRE's program size, roughly: a class is a 32-byte bitmap, a repeated group is copied out. */
function programSize(branches: readonly RegexSequence[]): number {
  return branches.reduce((sum, branch) => sum + 3 + branch.reduce((total, node) => total + nodeSize(node), 0), 0);
}

function nodeSize(node: RegexNode): number {
  switch (node.kind) {
    case 'set':
      return isOneLetter(node.chars) ? 2 : 34;
    case 'assert':
      return 1;
    case 'group':
      return 6 + programSize(node.branches);
    case 'repeat': {
      const body = nodeSize(node.body);
      if (node.body.kind === 'set') return body + 4;
      const copies = node.max === Infinity ? Math.max(node.min, 1) + 1 : Math.max(node.max, 1);
      return copies * (body + 6);
    }
  }
}

/** One character, or one letter in both cases: PCRE compiles it as a character, not as a class. */
function isOneLetter(set: CharSet): boolean {
  const single = (bits: CharSet) => bits !== 0n && (bits & (bits - 1n)) === 0n;
  return single(set) || single(set & (set - 1n));
}

// ------------------------------------------------------------------ backtracking

interface Context {
  /** What the next character (or the end of the subject) may be after the sequence being walked. */
  readonly follow: CharSet;
  /** Whatever follows the sequence matches the empty string, unconditionally: nothing there can fail. */
  readonly followSucceeds: boolean;
  /** Inside what a repetition of up to 2 or more repeats. */
  readonly inRepeat: boolean;
  /** The nearest place before on this path that gives back characters: a repetition, or the search for a start. */
  readonly backtracking: 'search' | 'repetition' | undefined;
  /** Characters of the single-character pieces passed since then, each a set every match goes through. */
  readonly separators: readonly CharSet[];
}

interface Leaving {
  readonly backtracking: Context['backtracking'];
  readonly separators: readonly CharSet[];
}

function walk(sequence: RegexSequence, context: Context): Leaving {
  let state: Leaving = { backtracking: context.backtracking, separators: context.separators };
  sequence.forEach((node, index) => {
    const rest = sequence.slice(index + 1);
    const restFirst = firstOf(rest);
    const follow = restFirst.chars | (restFirst.passable ? context.follow : 0n);
    const followSucceeds = context.followSucceeds && rest.every(matchesEmpty);
    const here: Context = { ...context, ...state, follow, followSucceeds };
    if (node.kind === 'set') state = { ...state, separators: [...state.separators, node.chars] };
    else if (node.kind === 'group') state = walkGroup(node.branches, here);
    else if (node.kind === 'repeat') state = walkRepeat(node, here);
  });
  return state;
}

function walkGroup(branches: readonly RegexSequence[], context: Context): Leaving {
  for (let i = 0; i < branches.length; i++) {
    for (let j = i + 1; j < branches.length; j++) {
      if (!distinguishable(branches[i]!, branches[j]!)) {
        throw new CostError('has alternatives that can match the same text, or one the start of another (like (a|a) or (js|json)), so each can be tried again at every place; start each alternative differently (js(on)?)');
      }
    }
  }
  const leavings = branches.map((branch) => walk(branch, context));
  if (leavings.length === 1) return leavings[0]!;
  // Which alternative matched is not known after the group: a repetition in any of them may give back
  // characters, and only the separators before the group are sure to have been passed.
  const backtracking = leavings.find((l) => l.backtracking !== context.backtracking)?.backtracking ?? context.backtracking;
  return { backtracking, separators: backtracking === context.backtracking ? context.separators : [] };
}

function walkRepeat(node: Extract<RegexNode, { kind: 'repeat' }>, context: Context): Leaving {
  const repeats = node.max >= 2;
  const bodyFirst = firstOf([node.body]).chars;
  walk([node.body], {
    ...context,
    follow: (repeats ? bodyFirst : 0n) | context.follow,
    followSucceeds: context.followSucceeds && node.min <= 1,
    inRepeat: context.inRepeat || repeats,
  });
  if (node.max === node.min) return { backtracking: context.backtracking, separators: context.separators };
  // Decided by the next character: nothing the body starts with may follow the repetition.
  const decided = (bodyFirst & context.follow) === 0n;
  if (context.inRepeat && !decided) {
    throw new CostError('repeats, inside another repetition, something that can end at more than one place (like (.*a){12} or (a?)*), which multiplies the work by the subject\'s length for each level');
  }
  if (context.followSucceeds) return { backtracking: context.backtracking, separators: context.separators };
  if (context.backtracking !== undefined) {
    const consumed = charactersOf(node.body);
    if (!context.separators.some((separator) => (separator & consumed) === 0n)) throw rescanned(context.backtracking);
  }
  if (!decided) return { backtracking: 'repetition', separators: [] };
  return { backtracking: context.backtracking, separators: context.separators };
}

function rescanned(earlier: 'search' | 'repetition'): CostError {
  return new CostError(
    earlier === 'search'
      ? 'has a repetition that nothing before it cuts short, in an expression that is searched for anywhere in the subject, so every place a match could start scans the rest again; anchor it with ^, or put a character the repetition cannot match before it'
      : 'has a repetition after one that can end at more than one place (like .*a.*b$), with nothing in between that the later one cannot match, so the later one scans the same characters again for every place the earlier one ends; make the earlier one stop at a character it cannot match ([^/]* instead of .*)',
  );
}

/**
 * Two alternatives that can never both match at one place: walking them side by side, a position
 * where their characters differ comes before either ends or turns variable (then their first
 * characters must differ).
 */
function distinguishable(a: RegexSequence, b: RegexSequence): boolean {
  const left = a.filter((node) => !isTransparent(node));
  const right = b.filter((node) => !isTransparent(node));
  for (let i = 0; ; i++) {
    const x = left[i];
    const y = right[i];
    if (x === undefined || y === undefined) return false;
    const xs = fixedCharacters(x);
    const ys = fixedCharacters(y);
    if (xs === undefined || ys === undefined) {
      const restLeft = firstOf(left.slice(i));
      const restRight = firstOf(right.slice(i));
      return !restLeft.passable && !restRight.passable && (restLeft.chars & restRight.chars) === 0n;
    }
    if ((xs & ys) === 0n) return true;
  }
}

/** `^`, `\b`, `\B`: they consume nothing, and what follows decides the next character. */
function isTransparent(node: RegexNode): boolean {
  return node.kind === 'assert' && node.what !== '$';
}

/** What a one-character piece matches (`$`: a final newline or the end), else undefined. */
function fixedCharacters(node: RegexNode): CharSet | undefined {
  if (node.kind === 'set') return node.chars;
  if (node.kind === 'assert' && node.what === '$') return endAnchorSet;
  return undefined;
}

/** `$` matches at the end of the subject or before a newline that ends it. */
const endAnchorSet = byteSet('\n') | endOfSubject;

/** The characters a match of the sequence may start with; `passable` when it may match none. */
function firstOf(sequence: RegexSequence): { chars: CharSet; passable: boolean } {
  let chars = 0n;
  for (const node of sequence) {
    const first = nodeFirst(node);
    chars |= first.chars;
    if (!first.passable) return { chars, passable: false };
  }
  return { chars, passable: true };
}

function nodeFirst(node: RegexNode): { chars: CharSet; passable: boolean } {
  switch (node.kind) {
    case 'set':
      return { chars: node.chars, passable: false };
    case 'assert':
      return node.what === '$' ? { chars: endAnchorSet, passable: false } : { chars: 0n, passable: true };
    case 'group': {
      const firsts = node.branches.map(firstOf);
      return { chars: firsts.reduce((all, f) => all | f.chars, 0n), passable: firsts.some((f) => f.passable) };
    }
    case 'repeat': {
      const body = nodeFirst(node.body);
      return { chars: body.chars, passable: node.min === 0 || body.passable };
    }
  }
}

/** The node matches the empty string wherever it is tried: it never fails. */
function matchesEmpty(node: RegexNode): boolean {
  if (node.kind === 'repeat') return node.min === 0 || matchesEmpty(node.body);
  if (node.kind === 'group') return node.branches.some((branch) => branch.every(matchesEmpty));
  return false;
}

/** Every character some match of the node consumes. */
function charactersOf(node: RegexNode): CharSet {
  if (node.kind === 'set') return node.chars;
  if (node.kind === 'repeat') return charactersOf(node.body);
  if (node.kind === 'group') return node.branches.flat().reduce((all, n) => all | charactersOf(n), 0n);
  return 0n;
}
