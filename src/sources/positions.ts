import { readFile } from 'node:fs/promises';
import { isAlias, isMap, isNode, isScalar, isSeq, LineCounter, parseDocument, type Document } from 'yaml';
import type { Diagnostic, FieldPath } from '../model/diagnostics.js';
import { splitYamlDocuments, type YamlDocumentText } from './files.js';
import type { Snapshot, SourceObject } from './snapshot.js';
import { withFields } from '../model/objects.js';

interface ParsedDocument {
  readonly source: YamlDocumentText;
  readonly document: Document;
  readonly lineCounter: LineCounter;
}

/**
 * Moves diagnostics that carry a field `path` from the start of their document to the line and
 * column of that field (or of its deepest existing ancestor). A path through block mappings written
 * the usual way is found from the lines alone; otherwise the document is parsed again, once, with the
 * position-keeping `yaml` parser (0.4 ms a document: a second for the 3,000 passthrough Ingresses of
 * the bench input, each with an info diagnostic).
 *
 * A diagnostic is matched to its document by `file` + `line` (the document's `Origin.line`). Its
 * path is relative to the SourceObject it is about (matched by `resource`; for a List item the
 * `items[i]` prefix is added), or relative to the document when there is no such object.
 */
export async function refinePositions(
  diagnostics: readonly Diagnostic[],
  snapshot: Snapshot,
  readText: (file: string) => Promise<string> = (file) => readFile(file, 'utf8'),
): Promise<Diagnostic[]> {
  let objectsByOrigin: Map<string, SourceObject[]> | undefined;
  const refined: Diagnostic[] = [...diagnostics];
  // One file at a time, so that only its text and documents are held, not those of every file with a diagnostic.
  for (const [file, located] of locatedByFile(diagnostics)) {
    const documents = await readText(file).then(
      (text) => new Map(Array.from(splitYamlDocuments(text), (document) => [document.line, document])),
      // The file is gone or unreadable now: keep the document-level position.
      () => undefined,
    );
    if (!documents) continue;
    const parsedDocuments = new Map<YamlDocumentText, ParsedDocument | undefined>();
    const parsed = (source: YamlDocumentText): ParsedDocument | undefined => {
      if (!parsedDocuments.has(source)) parsedDocuments.set(source, parse(source));
      return parsedDocuments.get(source);
    };
    for (const { index, path, line } of located) {
      const diagnostic = diagnostics[index] as Diagnostic;
      const source = documents.get(line);
      if (!source) continue;
      objectsByOrigin ??= indexByOrigin(snapshot);
      const listIndex = findObject(objectsByOrigin, diagnostic)?.origin?.listIndex;
      const documentPath = listIndex === undefined ? path : ['items', listIndex, ...path];
      const plain = locateInBlockMappings(source.text, documentPath);
      if (plain) {
        refined[index] = withFields(diagnostic, { line: source.textLine + plain.line - 1, column: plain.column });
        continue;
      }
      const entry = parsed(source);
      const offset = entry && locateSafely(entry.document, documentPath);
      if (!entry || offset === undefined) continue;
      const position = entry.lineCounter.linePos(offset);
      refined[index] = withFields(diagnostic, { line: source.textLine + position.line - 1, column: position.col });
    }
  }
  return refined;
}

interface Located {
  /** Of the diagnostic in the list given. */
  readonly index: number;
  readonly path: FieldPath;
  readonly line: number;
}

/** The diagnostics that have a field path, a file and a line, by file. */
function locatedByFile(diagnostics: readonly Diagnostic[]): Map<string, Located[]> {
  const byFile = new Map<string, Located[]>();
  for (const [index, { path, file, line }] of diagnostics.entries()) {
    if (!path || !file || line === undefined) continue;
    const located = byFile.get(file);
    if (located) located.push({ index, path, line });
    else byFile.set(file, [{ index, path, line }]);
  }
  return byFile;
}

function originKey(file: string, line: number): string {
  return `${line}:${file}`;
}

function indexByOrigin(snapshot: Snapshot): Map<string, SourceObject[]> {
  const index = new Map<string, SourceObject[]>();
  for (const object of snapshot.objects) {
    if (!object.origin) continue;
    const key = originKey(object.origin.file, object.origin.line);
    const objects = index.get(key);
    if (objects) objects.push(object);
    else index.set(key, [object]);
  }
  return index;
}

function findObject(index: Map<string, SourceObject[]>, diagnostic: Diagnostic): SourceObject | undefined {
  const { resource, file, line } = diagnostic;
  if (!resource || file === undefined || line === undefined) return undefined;
  return index
    .get(originKey(file, line))
    ?.find(
      (object) =>
        object.kind === resource.kind &&
        object.metadata.name === resource.name &&
        (resource.namespace === undefined || resource.namespace === object.metadata.namespace),
    );
}

/**
 * The `yaml` parser recurses once per nesting level. Documents that were loaded are within
 * `yamlLimits.depth`, far from where it overflows, but the file may have changed since it was read: a
 * document that cannot be parsed again keeps its document-level position.
 */
function parse(source: YamlDocumentText): ParsedDocument | undefined {
  try {
    const lineCounter = new LineCounter();
    return { source, document: parseDocument(source.text, { lineCounter }), lineCounter };
  } catch {
    return undefined;
  }
}

/** Resolving an alias walks the document recursively, so it can overflow the stack too. */
function locateSafely(document: Document, path: FieldPath): number | undefined {
  try {
    return locate(document, path);
  } catch {
    return undefined;
  }
}

/** Offset of the node at `path`: of the key for a mapping entry, of the item for a sequence entry. */
function locate(document: Document, path: FieldPath): number | undefined {
  let node: unknown = document.contents;
  let offset = rangeStart(node);
  for (const segment of path) {
    if (isAlias(node)) node = node.resolve(document);
    if (isMap(node)) {
      const pair = node.items.find((item) => isScalar(item.key) && String(item.key.value) === String(segment));
      if (!pair) break;
      offset = rangeStart(pair.key) ?? offset;
      node = pair.value;
    } else if (isSeq(node) && typeof segment === 'number') {
      const item: unknown = node.items[segment];
      if (item === undefined) break;
      offset = rangeStart(item) ?? offset;
      node = item;
    } else {
      break;
    }
  }
  return offset;
}

function rangeStart(node: unknown): number | undefined {
  return isNode(node) ? node.range?.[0] : undefined;
}

/**
 * Where the key at `path` is, read from the lines alone, for the way manifests are nearly always
 * written: block mappings, one key per line, keys plain or quoted without escapes, nested mappings
 * indented under their key. The key the yaml parser would find, or undefined whenever anything is
 * less plain (a sequence, a flow collection, an anchor, a tag, a tab, a complex key, a missing key),
 * for the parser to decide. 1-based line and column, relative to `text`.
 */
export function locateInBlockMappings(text: string, path: FieldPath): { line: number; column: number } | undefined {
  if (path.length === 0 || path.some((segment) => typeof segment !== 'string') || text.includes('\t')) return undefined;
  const lines = text.split('\n');
  let parentIndent = -1;
  let from = 0;
  for (const [depth, segment] of path.entries()) {
    const last = depth === path.length - 1;
    let childIndent: number | undefined;
    let found: number | undefined;
    for (let index = from; index < lines.length; index++) {
      const line = (lines[index] as string).replace(/\r$/, '');
      const content = line.trimStart();
      if (content === '' || content.startsWith('#')) continue;
      if (parentIndent < 0 && (line === '---' || line.startsWith('--- ') || line.startsWith('%') || line === '...')) {
        if (line === '---' && childIndent === undefined) continue;
        return undefined;
      }
      const indent = line.length - content.length;
      if (indent <= parentIndent) break;
      childIndent ??= indent;
      if (indent > childIndent) continue;
      if (indent < childIndent) return undefined;
      const entry = mappingEntry(content);
      if (!entry || opensQuotedScalar(entry.rest)) return undefined;
      if (entry.key !== segment) continue;
      if (!last && !/^\s*(#.*)?$/.test(entry.rest)) return undefined;
      found = index;
      break;
    }
    if (found === undefined || childIndent === undefined) return undefined;
    if (last) return { line: found + 1, column: childIndent + 1 };
    parentIndent = childIndent;
    from = found + 1;
  }
  return undefined;
}

/** `key: rest` of one block mapping line, when the key is one whose value is its text; else undefined. */
function mappingEntry(content: string): { key: string; rest: string } | undefined {
  const quoted = /^(?:"([^"\\]*)"|'([^']*)')\s*:(?:\s(.*))?$/.exec(content);
  if (quoted) return { key: quoted[1] ?? quoted[2] ?? '', rest: quoted[3] ?? '' };
  if (/^[-?:,[\]{}#&*!|>'"%@`]/.test(content)) return undefined;
  const colon = /:(?:\s|$)/.exec(content);
  if (!colon) return undefined;
  const key = content.slice(0, colon.index);
  // Keys the parser reads as something other than their text: null, booleans, numbers.
  if (key !== key.trimEnd() || key.includes(' #') || /^(?:~|null|Null|NULL|true|True|TRUE|false|False|FALSE)$|^[-+.\d]/.test(key)) return undefined;
  return { key, rest: content.slice(colon.index + 1) };
}

/** A quoted value that goes on over the next lines, which may then look like keys. */
function opensQuotedScalar(rest: string): boolean {
  const value = rest.trim();
  if (value.startsWith('"')) return !/^"(?:[^"\\]|\\.)*"\s*(?:#.*)?$/.test(value);
  if (value.startsWith("'")) return !/^'(?:[^']|'')*'\s*(?:#.*)?$/.test(value);
  return false;
}
