import yaml from 'js-yaml';

/**
 * One YAML document loaded with js-yaml, within limits that js-yaml does not have. Its parser recurses once
 * per nesting level (and so overflows the stack), and it resolves an alias to the anchored object itself:
 * a few KB of anchors can stand for gigabytes once anything walks the result, and a `<<` merge copies
 * every key of its source while parsing.
 */

export const yamlLimits = {
  /**
   * Nodes from the root to the deepest leaf, aliases expanded (js-yaml counts one more for a flow collection
   * at the root). CRDs with big schemas reach about 60. From the CLI, the `yaml` parser that finds positions
   * (positions.ts) overflows the stack at about 800 levels in flow style and 950 in block style, js-yaml at
   * about 1,800 and 3,000.
   */
  depth: 256,
  /** References to an anchored mapping or sequence (a `<<` merge is one); scalars are bounded by size. */
  aliases: 10_000,
  /**
   * How much aliases may add to a document, in the units of `expansionProblem` (about one per character).
   * A document costs about what it would cost written out; at this limit an Ingress of a few hundred bytes
   * that stands for 7,700 paths takes about a second and 50 MB to render.
   */
  aliasExpansion: 500_000,
} as const;

export interface YamlProblem {
  readonly code: 'yaml-syntax' | 'yaml-too-deep' | 'yaml-alias-limit' | 'yaml-alias-cycle';
  readonly message: string;
  /** 0-based line and column in the document's text, when known. */
  readonly mark?: { readonly line: number; readonly column: number };
}

export type YamlLoad = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly problem: YamlProblem };

/**
 * YAML 1.2 core schema (JSON types; `yes`/`on` stay strings, timestamps stay strings as in the
 * Kubernetes API) plus `<<` merge keys, which kubectl accepts.
 */
const manifestSchema = yaml.CORE_SCHEMA.extend({
  // js-yaml merges a key whose resolved tag is `merge`; its own merge type is not in the typings.
  implicit: [new yaml.Type('tag:yaml.org,2002:merge', { kind: 'scalar', resolve: (data) => data === '<<' })],
});

/**
 * Documents without aliases (nearly all) are loaded once; a document that may have one is loaded first
 * without merging, measured, and loaded for real only when it is within the limits.
 */
export function loadYamlDocument(text: string): YamlLoad {
  if (mayHaveAlias(text)) {
    const unmerged = loadWithinDepth(text, unmergedSchema());
    if (!unmerged.ok) return unmerged;
    const problem = expansionProblem(unmerged.value, text.length);
    if (problem) return { ok: false, problem };
  }
  const loaded = loadWithinDepth(text, manifestSchema);
  if (loaded.ok) ownStrings(loaded.value);
  return loaded;
}

/**
 * Gives every long string in `value` (loaded just now, so ours to change) its own copy of its characters.
 * js-yaml reads a scalar as a slice of the document's text, which is a slice of its file's, and V8 keeps a
 * slice's whole parent alive: one name or certificate kept its file's text in memory for the whole run
 * (34 MB of the bench input's 44 MB of YAML). V8 slices strings of 13 characters and more; shorter ones
 * are copies already.
 */
function ownStrings(value: unknown): void {
  if (typeof value !== 'object' || value === null) return;
  const record = value as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    const item = record[key];
    // A one-character prefix makes a joined string that slice() copies flat; the copy is all it keeps.
    if (typeof item === 'string') {
      if (item.length >= 13) record[key] = (' ' + item).slice(1);
    } else ownStrings(item);
  }
}

/**
 * False only when js-yaml cannot read an alias in `text`. An alias is `*` and at least one name character
 * where a node starts: at the start, after white space, or after `[`, `{`, `,` or `:`. A `*` after a letter,
 * digit, quote, dot, slash or another `*` continues a scalar or a name (`"*.example.com"`, `.*`, `/*`), so
 * those cost nothing here; any other `*` before a name character sends the document down the careful path.
 */
export function mayHaveAlias(text: string): boolean {
  for (let at = text.indexOf('*'); at !== -1; at = text.indexOf('*', at + 1)) {
    if (isAliasNameCharacter(text.charCodeAt(at + 1)) && !continuesScalar(text.charCodeAt(at - 1))) return true;
  }
  return false;
}

/** Not the end, white space, a line break or a flow indicator (js-yaml's `readAlias`). */
function isAliasNameCharacter(code: number): boolean {
  return !Number.isNaN(code) && code !== 0x20 && code !== 0x09 && code !== 0x0a && code !== 0x0d && !isFlowIndicator(code);
}

function isFlowIndicator(code: number): boolean {
  return code === 0x2c /* , */ || code === 0x5b /* [ */ || code === 0x5d /* ] */ || code === 0x7b /* { */ || code === 0x7d; /* } */
}

function continuesScalar(code: number): boolean {
  return (
    (code >= 0x30 && code <= 0x39) ||
    (code >= 0x41 && code <= 0x5a) ||
    (code >= 0x61 && code <= 0x7a) ||
    code === 0x22 /* " */ ||
    code === 0x27 /* ' */ ||
    code === 0x2e /* . */ ||
    code === 0x2f /* / */ ||
    code === 0x2a /* * */
  );
}

/** Thrown from js-yaml's node listener to stop it one level past the limit, before its recursion goes deeper. */
class TooDeep extends Error {
  constructor(readonly mark: { readonly line: number; readonly column: number }) {
    super('too deep');
  }
}

function loadWithinDepth(text: string, schema: yaml.Schema): YamlLoad {
  let depth = 0;
  try {
    const value = yaml.load(text, {
      schema,
      // js-yaml opens every node, collections before their entries, and closes it once read.
      listener: (event, state) => {
        if (event === 'close') depth--;
        else if (++depth > yamlLimits.depth) throw new TooDeep({ line: state.line, column: state.position - state.lineStart });
      },
    });
    return { ok: true, value };
  } catch (error) {
    if (error instanceof TooDeep) {
      return { ok: false, problem: { code: 'yaml-too-deep', message: tooDeepMessage(''), mark: error.mark } };
    }
    return { ok: false, problem: syntaxProblem(error) };
  }
}

function tooDeepMessage(how: string): string {
  return `the document is nested more than ${yamlLimits.depth} levels deep${how}; that is the most ingress2nginx reads`;
}

function syntaxProblem(error: unknown): YamlProblem {
  // The typings promise a mark, but js-yaml throws some errors without one.
  const mark = error instanceof yaml.YAMLException ? (error.mark as yaml.Mark | undefined) : undefined;
  if (error instanceof yaml.YAMLException && mark) {
    return { code: 'yaml-syntax', message: `invalid YAML: ${error.reason}`, mark: { line: mark.line, column: mark.column } };
  }
  return { code: 'yaml-syntax', message: `invalid YAML: ${error instanceof Error ? error.message : String(error)}` };
}

/**
 * The manifest schema without merging: each `<<` becomes an ordinary key of its own, so that every merge
 * source stays in the result to be measured, and no keys are copied. The key cannot collide with another
 * `<<` key, and a document that spells one of these keys out gets a duplicate-key error, never a miss.
 */
function unmergedSchema(): yaml.Schema {
  let merges = 0;
  return yaml.CORE_SCHEMA.extend({
    implicit: [
      new yaml.Type('tag:ingress2nginx,2025:unmerged', { kind: 'scalar', resolve: (data) => data === '<<', construct: () => `<<\u0000${merges++}` }),
    ],
  });
}

interface Shape {
  /** Nodes from this one to its deepest leaf, aliases expanded. */
  readonly height: number;
  /** Expanded size of the subtree (see `expansionProblem`). */
  readonly size: number;
}

interface Frame extends Shape {
  readonly node: object;
  /** Undefined for a sequence. */
  readonly keys: readonly string[] | undefined;
  next: number;
  height: number;
  size: number;
}

/**
 * Measures js-yaml's result as the tree it stands for, where an alias is a second reference to the same
 * object (an alias of a scalar is a copy of the string, and is measured as one). Each object is walked once,
 * with an explicit stack; another reference to it adds its measured shape. The expanded size counts one per
 * node and per entry plus the length of every string and key, so that a document without aliases measures
 * about its own length.
 */
function expansionProblem(root: unknown, textLength: number): YamlProblem | undefined {
  if (!isObject(root)) return undefined;
  const sizeLimit = textLength + yamlLimits.aliasExpansion;
  const shapes = new Map<object, Shape>();
  const open = new Set<object>();
  const frames: Frame[] = [];
  let aliases = 0;
  let expandedSize = 0;
  const enter = (node: object): void => {
    open.add(node);
    frames.push({ node, keys: Array.isArray(node) ? undefined : Object.keys(node), next: 0, height: 1, size: 1 });
    expandedSize += 1;
  };
  enter(root);

  while (frames.length > 0) {
    const frame = frames[frames.length - 1] as Frame;
    if (frames.length + frame.height - 1 > yamlLimits.depth) {
      return { code: 'yaml-too-deep', message: tooDeepMessage(' once its aliases are expanded') };
    }
    if (expandedSize > sizeLimit) {
      return {
        code: 'yaml-alias-limit',
        message: `the document's aliases expand it by more than ${formatCount(yamlLimits.aliasExpansion)} characters, the most ingress2nginx reads (an alias bomb?); write the values out or use fewer aliases`,
      };
    }
    if (aliases > yamlLimits.aliases) {
      return {
        code: 'yaml-alias-limit',
        message: `the document has more than ${formatCount(yamlLimits.aliases)} aliases of mappings and sequences, the most ingress2nginx reads; write the values out or use fewer aliases`,
      };
    }

    const { node, keys } = frame;
    if (frame.next === (keys ?? (node as unknown[])).length) {
      frames.pop();
      open.delete(node);
      shapes.set(node, { height: frame.height, size: frame.size });
      const parent = frames[frames.length - 1];
      if (parent) addChild(parent, frame);
      continue;
    }
    const key = keys?.[frame.next];
    const child: unknown = key === undefined ? (node as unknown[])[frame.next] : (node as Record<string, unknown>)[key];
    frame.next++;
    const entrySize = 1 + (key?.length ?? 0);
    frame.size += entrySize;
    expandedSize += entrySize;
    if (!isObject(child)) {
      const leaf = { height: 1, size: typeof child === 'string' ? Math.max(1, child.length) : 1 };
      addChild(frame, leaf);
      expandedSize += leaf.size;
      continue;
    }
    if (open.has(child)) {
      return { code: 'yaml-alias-cycle', message: 'an alias in the document refers to a node that contains it, so the document never ends' };
    }
    const shape = shapes.get(child);
    if (shape === undefined) {
      enter(child);
      continue;
    }
    aliases++;
    addChild(frame, shape);
    expandedSize += shape.size;
  }
  return undefined;
}

function addChild(frame: Frame, child: Shape): void {
  frame.height = Math.max(frame.height, child.height + 1);
  frame.size += child.size;
}

function formatCount(count: number): string {
  return count.toLocaleString('en-US');
}

function isObject(value: unknown): value is object {
  return typeof value === 'object' && value !== null;
}
