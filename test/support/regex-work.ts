import { bytesOf, hasByte, type CharSet, type RegexNode, type RegexSequence, type RegexTree } from '../../src/translate/checks/regex-syntax.js';

/**
 * A plain backtracking matcher for the safe regex grammar, the way PCRE runs a regex without its
 * optimisations (no start-character or required-character checks, no auto-possessive repeats), that
 * counts its steps: the work nginx may do for one subject, as a number and not as a time. Repetitions
 * are written out as PCRE writes out repeated groups; an unbounded repetition stops after an iteration
 * that matched nothing, as PCRE's does. An expression that does not start with `^` is tried at every
 * position of the subject, as nginx's searches (map keys, `!~`) are.
 */

type Instruction =
  | { readonly op: 'char'; readonly set: CharSet }
  | { readonly op: 'assert'; readonly what: '^' | '$' | 'b' | 'B' }
  /** Try `first`, and `second` when that fails. */
  | { op: 'split'; first: number; second: number }
  | { op: 'jump'; to: number }
  /** Remember the position at the start of an iteration… */
  | { readonly op: 'mark'; readonly register: number }
  /** …and fail an iteration that consumed nothing. */
  | { readonly op: 'progress'; readonly register: number }
  | { readonly op: 'match' };

export interface RegexProgram {
  readonly instructions: readonly Instruction[];
  readonly registers: number;
}

export function compileProgram(tree: RegexTree): RegexProgram {
  const instructions: Instruction[] = [];
  let registers = 0;
  const emitAlternatives = (branches: readonly RegexSequence[]) => {
    const jumps: { op: 'jump'; to: number }[] = [];
    branches.forEach((branch, index) => {
      const last = index === branches.length - 1;
      const split = last ? undefined : { op: 'split' as const, first: instructions.length + 1, second: -1 };
      if (split) instructions.push(split);
      for (const node of branch) emit(node);
      if (!last) {
        const jump = { op: 'jump' as const, to: -1 };
        instructions.push(jump);
        jumps.push(jump);
        split!.second = instructions.length;
      }
    });
    for (const jump of jumps) jump.to = instructions.length;
  };
  const optional = (body: RegexNode, lazy: boolean, loop: boolean) => {
    const split = { op: 'split' as const, first: -1, second: -1 };
    const start = instructions.length;
    instructions.push(split);
    const register = loop ? registers++ : -1;
    if (loop) instructions.push({ op: 'mark', register });
    const bodyStart = instructions.length;
    emit(body);
    if (loop) {
      instructions.push({ op: 'progress', register });
      instructions.push({ op: 'jump', to: start });
    }
    const exit = instructions.length;
    const enter = loop ? bodyStart - 1 : bodyStart;
    split.first = lazy ? exit : enter;
    split.second = lazy ? enter : exit;
    return split;
  };
  const emit = (node: RegexNode): void => {
    switch (node.kind) {
      case 'set':
        instructions.push({ op: 'char', set: node.chars });
        return;
      case 'assert':
        instructions.push({ op: 'assert', what: node.what });
        return;
      case 'group':
        emitAlternatives(node.branches);
        return;
      case 'repeat': {
        for (let i = 0; i < node.min; i++) emit(node.body);
        if (node.max === Infinity) {
          optional(node.body, node.lazy, true);
          return;
        }
        // x{0,3} as (x(x(x)?)?)?: every optional copy exits to the same place.
        const splits = [];
        for (let i = node.min; i < node.max; i++) splits.push(optional(node.body, node.lazy, false));
        const exit = instructions.length;
        for (const split of splits) {
          if (node.lazy) split.first = exit;
          else split.second = exit;
        }
      }
    }
  };
  emitAlternatives(tree.branches);
  instructions.push({ op: 'match' });
  return { instructions, registers };
}

const isWord = (byte: number | undefined) =>
  byte !== undefined && ((byte >= 48 && byte <= 57) || (byte >= 65 && byte <= 90) || (byte >= 97 && byte <= 122) || byte === 95);

/**
 * Runs the program on `subject` from every start position (only while `^` can hold, for an anchored
 * one), and returns whether it matched and the steps taken; gives up (`exceeded`) beyond `limit` steps.
 */
export function countSteps(program: RegexProgram, subject: Uint8Array, limit: number): { matched: boolean; steps: number; exceeded: boolean } {
  const code = program.instructions;
  let steps = 0;
  for (let start = 0; start <= subject.length; start++) {
    const stack: { pc: number; pos: number; registers: number[] }[] = [{ pc: 0, pos: start, registers: new Array<number>(program.registers).fill(-1) }];
    while (stack.length > 0) {
      let { pc, pos, registers } = stack.pop()!;
      for (;;) {
        if (++steps > limit) return { matched: false, steps, exceeded: true };
        const instruction = code[pc]!;
        let ok = true;
        switch (instruction.op) {
          case 'char':
            ok = pos < subject.length && hasByte(instruction.set, subject[pos]!);
            if (ok) pos++;
            pc++;
            break;
          case 'assert':
            ok = assertionHolds(instruction.what, subject, pos);
            pc++;
            break;
          case 'split':
            stack.push({ pc: instruction.second, pos, registers: [...registers] });
            pc = instruction.first;
            break;
          case 'jump':
            pc = instruction.to;
            break;
          case 'mark':
            registers = [...registers];
            registers[instruction.register] = pos;
            pc++;
            break;
          case 'progress':
            ok = registers[instruction.register] !== pos;
            pc++;
            break;
          case 'match':
            return { matched: true, steps, exceeded: false };
        }
        if (!ok) break;
      }
    }
  }
  return { matched: false, steps, exceeded: false };
}

function assertionHolds(what: '^' | '$' | 'b' | 'B', subject: Uint8Array, pos: number): boolean {
  switch (what) {
    case '^':
      return pos === 0;
    case '$':
      return pos === subject.length || (pos === subject.length - 1 && subject[pos] === 10);
    case 'b':
    case 'B':
      return (isWord(subject[pos - 1]) !== isWord(subject[pos])) === (what === 'b');
  }
}

/** Every character set in the expression, for building subjects out of what it matches. */
export function setsOf(tree: RegexTree): CharSet[] {
  const sets: CharSet[] = [];
  const visit = (node: RegexNode): void => {
    if (node.kind === 'set') sets.push(node.chars);
    if (node.kind === 'group') node.branches.flat().forEach(visit);
    if (node.kind === 'repeat') visit(node.body);
  };
  tree.branches.flat().forEach(visit);
  return sets;
}

/** A deterministic source of choices (mulberry32), so that a failing subject can be built again from its seed. */
export function choices(seed: number): (count: number) => number {
  let state = seed >>> 0;
  return (count) => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (((t ^ (t >>> 14)) >>> 0) % count);
  };
}

/**
 * A subject of `length` bytes that keeps the matcher busy: a walk through the expression that takes
 * every repetition many times and prefers bytes several of its sets share (where the paths of a
 * backtracking match overlap), cut or padded to length, and ended by a byte that makes it fail late.
 */
export function adversarialSubject(tree: RegexTree, length: number, pick: (count: number) => number): Uint8Array {
  const sets = setsOf(tree);
  const shared = (set: CharSet): number => {
    const bytes = bytesOf(set).filter((byte) => byte !== 10 || pick(4) === 0);
    if (bytes.length === 0) return 120;
    const scored = bytes.map((byte) => ({ byte, score: sets.filter((s) => hasByte(s, byte)).length }));
    const best = Math.max(...scored.map((s) => s.score));
    const top = scored.filter((s) => s.score === best || pick(3) === 0);
    return top[pick(top.length)]!.byte;
  };
  const out: number[] = [];
  const walkNode = (node: RegexNode, budget: number): void => {
    if (out.length >= length) return;
    switch (node.kind) {
      case 'set':
        out.push(shared(node.chars));
        return;
      case 'assert':
        return;
      case 'group': {
        const branch = node.branches[pick(node.branches.length)]!;
        for (const n of branch) walkNode(n, budget);
        return;
      }
      case 'repeat': {
        const extra = node.max === Infinity ? budget : node.max - node.min;
        const times = node.min + (pick(4) === 0 ? pick(extra + 1) : extra);
        for (let i = 0; i < times && out.length < length; i++) walkNode(node.body, Math.max(1, budget >> 2));
      }
    }
  };
  let rounds = 0;
  while (out.length < length && rounds++ < 64) {
    const branch = tree.branches[pick(tree.branches.length)]!;
    for (const node of branch) walkNode(node, length);
  }
  const subject = out.slice(0, length - 1);
  // A byte no set has, or one that ends a line: the match fails only after everything was tried.
  const outside = [33, 10, 0, 255].find((byte) => !sets.some((s) => hasByte(s, byte))) ?? 10;
  subject.push(pick(2) === 0 ? outside : shared(sets[pick(sets.length)] ?? 0n));
  return Uint8Array.from(subject);
}
