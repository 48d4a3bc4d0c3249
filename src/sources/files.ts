import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import {
  compareDiagnostics,
  formatFieldPath,
  type Diagnostic,
  type FieldPath,
  type ResourceRef,
} from '../model/diagnostics.js';
import type { ObjectMeta, Origin, SourceObject, SourceResult } from './snapshot.js';
import { compareStrings } from '../model/order.js';
import { loadYamlDocument, type YamlProblem } from './yaml-load.js';

/** A usage failure (missing or unreadable input): the CLI exits with code 2, no diagnostics. */
export class InputError extends Error {
  override name = 'InputError';
}

/** Kinds whose objects have no namespace; for all others `metadata.namespace` defaults to `default`. */
export const clusterScopedKinds: ReadonlySet<string> = new Set([
  'APIService',
  'ClusterIssuer',
  'ClusterRole',
  'ClusterRoleBinding',
  'CustomResourceDefinition',
  'GatewayClass',
  'IngressClass',
  'MutatingWebhookConfiguration',
  'Namespace',
  'Node',
  'PersistentVolume',
  'PriorityClass',
  'RuntimeClass',
  'StorageClass',
  'ValidatingWebhookConfiguration',
]);

export const stdinName = '<stdin>';

export interface FileSourceResult extends SourceResult {
  /** Reads a source's text again (for refinePositions): `<stdin>` from memory, files from disk. */
  readonly readText: (file: string) => Promise<string>;
  /** The files read, in order (`<stdin>` included when `-` was given). */
  readonly files: readonly string[];
}

/**
 * Reads files, directories (recursively: `.yaml`, `.yml`, `.json`, sorted by path, dot-directories
 * skipped) and `-` (stdin). Problems inside the inputs become diagnostics; a missing input throws
 * InputError.
 */
export async function readInputs(
  inputs: readonly string[],
  opts: { stdin?: NodeJS.ReadableStream } = {},
): Promise<FileSourceResult> {
  const objects: SourceObject[] = [];
  const diagnostics: Diagnostic[] = [];
  const files: string[] = [];
  let stdinText: string | undefined;

  for (const input of inputs) {
    if (input === '-') {
      if (stdinText !== undefined) throw new InputError('stdin (-) is given more than once');
      stdinText = await readStream(opts.stdin ?? process.stdin);
      files.push(stdinName);
      parseText(stdinText, stdinName, objects, diagnostics);
      continue;
    }
    for (const file of await expandInput(input)) {
      files.push(file);
      parseText(await readInputFile(file), file, objects, diagnostics);
    }
  }

  const readText = async (file: string): Promise<string> =>
    file === stdinName && stdinText !== undefined ? stdinText : readFile(file, 'utf8');
  return { snapshot: { objects }, diagnostics: diagnostics.sort(compareDiagnostics), readText, files };
}

const manifestExtensions = new Set(['.yaml', '.yml', '.json']);

/** The files an input names: itself if it is a file (any extension), else the manifests under it. */
async function expandInput(input: string): Promise<string[]> {
  const stats = await stat(input).catch((err: NodeJS.ErrnoException) => {
    throw new InputError(err.code === 'ENOENT' ? `${input}: no such file or directory` : `${input}: ${err.message}`);
  });
  if (!stats.isDirectory()) return [input];
  const files: string[] = [];
  await collectManifests(input, files);
  return files.sort(compareStrings);
}

/**
 * Symlinked files are taken (a mounted ConfigMap is a directory of symlinks into a `..data` dot-directory),
 * symlinked directories are not walked, so there are no cycles.
 */
async function collectManifests(dir: string, files: string[]): Promise<void> {
  const entries = await readdir(dir, { withFileTypes: true }).catch((err: Error) => {
    throw new InputError(`${dir}: ${err.message}`);
  });
  for (const entry of entries) {
    const entryPath = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (!entry.name.startsWith('.')) await collectManifests(entryPath, files);
    } else if (manifestExtensions.has(path.extname(entry.name).toLowerCase())) {
      if (entry.isFile() || (entry.isSymbolicLink() && (await isFileBehindLink(entryPath)))) files.push(entryPath);
    }
  }
}

async function isFileBehindLink(linkPath: string): Promise<boolean> {
  // Dangling links (e.g. editor lock files) are not inputs.
  const target = await stat(linkPath).catch(() => undefined);
  return target?.isFile() ?? false;
}

async function readInputFile(file: string): Promise<string> {
  return readFile(file, 'utf8').catch((err: Error) => {
    throw new InputError(`${file}: ${err.message}`);
  });
}

async function readStream(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  return Buffer.concat(chunks).toString('utf8');
}

/** One YAML document of a stream, located by lines so that no second parser is needed for positions. */
export interface YamlDocumentText {
  /** The document's text, from the first line of its chunk (comments, directives or `---` included). */
  readonly text: string;
  /** 1-based line on which `text` begins; parser positions are relative to it. */
  readonly textLine: number;
  /** 1-based line of the document's first content; this is `Origin.line` of its resources. */
  readonly line: number;
}

type Marker = 'document-start' | 'document-end' | undefined;

/**
 * Splits a YAML stream into its non-empty documents on `---` / `...` lines. Document markers are only
 * recognised at column 0 and cannot occur inside a scalar, so this agrees with a real YAML parser.
 * A `---` that follows only comments or directives belongs to the same document.
 */
export function* splitYamlDocuments(text: string): Generator<YamlDocumentText> {
  let chunkStart = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  let chunkLine = 1;
  let chunkHasStartMarker = false;
  let lineStart = chunkStart;
  let line = 1;
  for (;;) {
    const newline = text.indexOf('\n', lineStart);
    const lineEnd = newline === -1 ? text.length : newline;
    const marker = markerAt(text, lineStart, lineEnd);
    if (marker === 'document-end') {
      const document = documentIn(text, chunkStart, lineStart, chunkLine);
      if (document) yield document;
      chunkStart = lineEnd + 1;
      chunkLine = line + 1;
      chunkHasStartMarker = false;
    } else if (marker === 'document-start') {
      const document = documentIn(text, chunkStart, lineStart, chunkLine);
      if (document) yield document;
      // Without content or an earlier `---`, the chunk so far is a prologue of this document.
      if (document || chunkHasStartMarker) {
        chunkStart = lineStart;
        chunkLine = line;
      }
      chunkHasStartMarker = true;
    }
    if (newline === -1) break;
    lineStart = newline + 1;
    line++;
  }
  const last = documentIn(text, chunkStart, text.length, chunkLine);
  if (last) yield last;
}

function markerAt(text: string, lineStart: number, lineEnd: number): Marker {
  const first = text.charCodeAt(lineStart);
  if (first !== 0x2d /* - */ && first !== 0x2e /* . */) return undefined;
  if (text.charCodeAt(lineStart + 1) !== first || text.charCodeAt(lineStart + 2) !== first) return undefined;
  const after = lineStart + 3;
  if (after < lineEnd && !isSpace(text.charCodeAt(after))) return undefined;
  return first === 0x2d ? 'document-start' : 'document-end';
}

/** Space, tab or the CR of a CRLF line ending. */
function isSpace(code: number): boolean {
  return code === 0x20 || code === 0x09 || code === 0x0d;
}

/** The document in text[start, end), or undefined if it holds only blank lines, comments and markers. */
function documentIn(text: string, start: number, end: number, startLine: number): YamlDocumentText | undefined {
  let lineStart = start;
  let line = startLine;
  while (lineStart < end) {
    const newline = text.indexOf('\n', lineStart);
    const lineEnd = newline === -1 || newline > end ? end : newline;
    if (isContentLine(text, lineStart, lineEnd)) return { text: text.slice(start, end), textLine: startLine, line };
    lineStart = lineEnd + 1;
    line++;
  }
  return undefined;
}

function isContentLine(text: string, lineStart: number, lineEnd: number): boolean {
  let i = lineStart;
  if (text.charCodeAt(i) === 0x25 /* % */) return false; // a directive
  if (markerAt(text, lineStart, lineEnd) === 'document-start') i += 3;
  while (i < lineEnd && isSpace(text.charCodeAt(i))) i++;
  return i < lineEnd && text.charCodeAt(i) !== 0x23 /* # */;
}

function parseText(text: string, file: string, objects: SourceObject[], diagnostics: Diagnostic[]): void {
  for (const document of splitYamlDocuments(text)) {
    const loaded = loadYamlDocument(document.text);
    if (!loaded.ok) {
      diagnostics.push(problemDiagnostic(loaded.problem, file, document));
      continue;
    }
    if (loaded.value === null || loaded.value === undefined) continue;
    collectObjects(loaded.value, { file, line: document.line }, objects, diagnostics);
  }
}

function problemDiagnostic(problem: YamlProblem, file: string, document: YamlDocumentText): Diagnostic {
  const { mark } = problem;
  return {
    severity: 'error',
    code: problem.code,
    file,
    line: mark ? document.textLine + mark.line : document.line,
    ...(mark ? { column: mark.column + 1 } : {}),
    message: `${problem.message}; the document is skipped`,
  };
}

type Mapping = Record<string, unknown>;

function isMapping(value: unknown): value is Mapping {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A document holds one object, or a `kind: List` / `*List` whose items each become an object. */
function collectObjects(value: unknown, origin: Origin, objects: SourceObject[], diagnostics: Diagnostic[]): void {
  if (isMapping(value) && typeof value.kind === 'string' && value.kind.endsWith('List')) {
    if (!Array.isArray(value.items)) {
      diagnostics.push(malformed(origin, [], [{ path: ['items'], problem: `${value.kind} has no list of items` }], value));
      return;
    }
    value.items.forEach((item: unknown, listIndex) => {
      const object = toSourceObject(item, { ...origin, listIndex }, diagnostics);
      if (object) objects.push(object);
    });
    return;
  }
  const object = toSourceObject(value, origin, diagnostics);
  if (object) objects.push(object);
}

interface Problem {
  readonly path: FieldPath;
  readonly problem: string;
}

/**
 * Validates the envelope (apiVersion, kind, metadata) and builds the SourceObject, or reports
 * `resource-malformed` and returns undefined. Paths of diagnostics about a built object are relative
 * to it; a malformed one has no object, so its path is relative to the document (`items[i]` included).
 */
function toSourceObject(value: unknown, origin: Origin, diagnostics: Diagnostic[]): SourceObject | undefined {
  const listPath: FieldPath = origin.listIndex === undefined ? [] : ['items', origin.listIndex];
  if (!isMapping(value)) {
    diagnostics.push(malformed(origin, listPath, [{ path: [], problem: `it is ${describe(value)}, not a mapping` }]));
    return undefined;
  }
  const problems: Problem[] = [];
  const apiVersion = requiredString(value, ['apiVersion'], problems);
  const kind = requiredString(value, ['kind'], problems);
  const metadata = value.metadata;
  let name: string | undefined;
  let namespace = '';
  if (!isMapping(metadata)) {
    problems.push({ path: ['metadata'], problem: metadata === undefined ? 'missing metadata' : 'metadata is not a mapping' });
  } else {
    name = requiredString(metadata, ['metadata', 'name'], problems);
    namespace = optionalString(metadata, ['metadata', 'namespace'], problems) ?? '';
    for (const field of ['annotations', 'labels'] as const) {
      const map = metadata[field];
      if (map !== undefined && map !== null && !isMapping(map)) {
        problems.push({ path: ['metadata', field], problem: `metadata.${field} is not a mapping` });
      }
    }
  }
  if (problems.length > 0 || apiVersion === undefined || kind === undefined || name === undefined || !isMapping(metadata)) {
    diagnostics.push(malformed(origin, listPath, problems, value));
    return undefined;
  }

  namespace = clusterScopedKinds.has(kind) ? '' : namespace || 'default';
  const resource = resourceRef(kind, namespace, name);
  const meta: ObjectMeta = {
    name,
    namespace,
    annotations: stringMap(metadata, 'annotations', origin, resource, diagnostics),
    labels: stringMap(metadata, 'labels', origin, resource, diagnostics),
    creationTimestamp: typeof metadata.creationTimestamp === 'string' ? metadata.creationTimestamp : '',
    ...(typeof metadata.uid === 'string' ? { uid: metadata.uid } : {}),
    ...(typeof metadata.resourceVersion === 'string' ? { resourceVersion: metadata.resourceVersion } : {}),
  };
  return { apiVersion, kind, metadata: meta, raw: value, origin };
}

function requiredString(map: Mapping, path: readonly [...string[], string], problems: Problem[]): string | undefined {
  const key = path[path.length - 1] as string;
  const value = map[key];
  if (typeof value === 'string' && value !== '') return value;
  const field = path.join('.');
  problems.push({ path, problem: value === undefined || value === '' ? `missing ${field}` : `${field} is not a string` });
  return undefined;
}

function optionalString(map: Mapping, path: readonly [...string[], string], problems: Problem[]): string | undefined {
  const value = map[path[path.length - 1] as string];
  if (value === undefined || value === null || typeof value === 'string') return value ?? undefined;
  problems.push({ path, problem: `${path.join('.')} is not a string` });
  return undefined;
}

function malformed(origin: Origin, listPath: FieldPath, problems: readonly Problem[], value?: unknown): Diagnostic {
  const first = problems[0];
  const path = [...listPath, ...(first?.path ?? [])];
  const subject = listPath.length > 0 ? `List item ${formatFieldPath(listPath)}` : 'document';
  const resource = isMapping(value) ? partialRef(value) : undefined;
  return {
    severity: 'error',
    code: 'resource-malformed',
    ...(resource ? { resource } : {}),
    file: origin.file,
    line: origin.line,
    ...(path.length > 0 ? { field: formatFieldPath(path), path } : {}),
    message: `skipped ${subject}: ${problems.map((p) => p.problem).join(', ')}`,
  };
}

/** The resource a malformed object was meant to be, when kind and name can still be told. */
function partialRef(value: Mapping): ResourceRef | undefined {
  const metadata = isMapping(value.metadata) ? value.metadata : {};
  const { kind } = value;
  const { name, namespace } = metadata;
  if (typeof kind !== 'string' || typeof name !== 'string') return undefined;
  return resourceRef(kind, typeof namespace === 'string' ? namespace : '', name);
}

function resourceRef(kind: string, namespace: string, name: string): ResourceRef {
  return namespace === '' ? { kind, name } : { kind, namespace, name };
}

/**
 * Annotations and labels are string maps in the API; a value YAML reads as a bool or number
 * (`ssl-redirect: true`) is reported and dropped, as kubectl would refuse the object.
 */
function stringMap(
  metadata: Mapping,
  field: 'annotations' | 'labels',
  origin: Origin,
  resource: ResourceRef,
  diagnostics: Diagnostic[],
): Record<string, string> {
  const map = metadata[field];
  const result: Record<string, string> = {};
  if (!isMapping(map)) return result;
  for (const [key, value] of Object.entries(map)) {
    if (typeof value === 'string') {
      result[key] = value;
    } else if (value === null) {
      // `key:` with no value: the API server stores an empty string.
      result[key] = '';
    } else {
      const path = ['metadata', field, key];
      const noun = field === 'annotations' ? 'annotation' : 'label';
      const example = typeof value === 'object' ? '' : `, e.g. ${key}: "${String(value)}"`;
      diagnostics.push({
        severity: 'error',
        code: `${noun}-not-string`,
        resource,
        file: origin.file,
        line: origin.line,
        field: formatFieldPath(path),
        path,
        message: `${noun} ${key} is ${describe(value)}, not a string; quote the value${example} (kubectl would refuse it too); the ${noun} is ignored`,
      });
    }
  }
  return result;
}

function describe(value: unknown): string {
  if (Array.isArray(value)) return 'a list';
  if (isMapping(value)) return 'a mapping';
  const text = JSON.stringify(value);
  return text.length > 40 ? `a ${typeof value}` : `the ${typeof value} ${text}`;
}
