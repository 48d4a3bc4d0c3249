import { readFile } from 'node:fs/promises';
import { isAlias, isMap, isNode, isScalar, isSeq, LineCounter, parseDocument, type Document } from 'yaml';
import type { Diagnostic, FieldPath } from '../model/diagnostics.js';
import { splitYamlDocuments, type YamlDocumentText } from './files.js';
import type { Snapshot, SourceObject } from './snapshot.js';

interface ParsedDocument {
  readonly source: YamlDocumentText;
  readonly document: Document;
  readonly lineCounter: LineCounter;
}

/**
 * Moves diagnostics that carry a field `path` from the start of their document to the line and
 * column of that field (or of its deepest existing ancestor). Only documents with such diagnostics
 * are parsed again, each once, with the position-keeping `yaml` parser.
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
  const documentsByFile = new Map<string, Promise<Map<number, YamlDocumentText> | undefined>>();
  const parsedDocuments = new Map<YamlDocumentText, ParsedDocument | undefined>();
  let objectsByOrigin: Map<string, SourceObject[]> | undefined;

  const documentsOf = (file: string): Promise<Map<number, YamlDocumentText> | undefined> => {
    let documents = documentsByFile.get(file);
    if (!documents) {
      documents = readText(file).then(
        (text) => new Map(Array.from(splitYamlDocuments(text), (document) => [document.line, document])),
        // The file is gone or unreadable now: keep the document-level position.
        () => undefined,
      );
      documentsByFile.set(file, documents);
    }
    return documents;
  };

  const parsed = (source: YamlDocumentText): ParsedDocument | undefined => {
    if (!parsedDocuments.has(source)) parsedDocuments.set(source, parse(source));
    return parsedDocuments.get(source);
  };

  const refined: Diagnostic[] = [];
  for (const diagnostic of diagnostics) {
    const { path, file, line } = diagnostic;
    const source = path && file !== undefined && line !== undefined ? (await documentsOf(file))?.get(line) : undefined;
    if (!path || !file || !source) {
      refined.push(diagnostic);
      continue;
    }
    objectsByOrigin ??= indexByOrigin(snapshot);
    const listIndex = findObject(objectsByOrigin, diagnostic)?.origin?.listIndex;
    const documentPath = listIndex === undefined ? path : ['items', listIndex, ...path];
    const entry = parsed(source);
    const offset = entry && locateSafely(entry.document, documentPath);
    if (!entry || offset === undefined) {
      refined.push(diagnostic);
      continue;
    }
    const position = entry.lineCounter.linePos(offset);
    refined.push({ ...diagnostic, line: source.textLine + position.line - 1, column: position.col });
  }
  return refined;
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
