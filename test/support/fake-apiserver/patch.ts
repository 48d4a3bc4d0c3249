import { badRequest, patchNotApplicable, type JsonObject, type JsonValue } from './status.js';

/**
 * The three patch formats kube-apiserver applies to the served (versioned) JSON of an object:
 * JSON merge patch (RFC 7386), JSON patch (RFC 6902) and strategic merge patch
 * (k8s.io/apimachinery/pkg/util/strategicpatch), the last only for built-in kinds.
 */

export function isObject(value: JsonValue | undefined): value is JsonObject {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

export function deepEqual(a: JsonValue | undefined, b: JsonValue | undefined): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((item, index) => deepEqual(item, b[index]));
  if (isObject(a) && isObject(b)) {
    const keys = Object.keys(a).filter((key) => a[key] !== undefined);
    return keys.length === Object.keys(b).filter((key) => b[key] !== undefined).length && keys.every((key) => deepEqual(a[key], b[key]));
  }
  return false;
}

export function clone<T extends JsonValue>(value: T): T {
  return structuredClone(value);
}

export function mergePatch(target: JsonValue, patch: JsonValue): JsonValue {
  if (!isObject(patch)) return clone(patch);
  const result: JsonObject = isObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = mergePatch(result[key] ?? null, value);
  }
  return result;
}

/** RFC 6901 pointer → reference tokens. */
function pointerTokens(pointer: string): string[] {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) throw patchNotApplicable();
  return pointer
    .slice(1)
    .split('/')
    .map((token) => token.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function parentOf(document: JsonValue, tokens: string[]): JsonValue {
  let current = document;
  for (const token of tokens.slice(0, -1)) {
    if (Array.isArray(current)) current = current[arrayIndex(token, current.length - 1)]!;
    else if (isObject(current) && token in current) current = current[token]!;
    else throw patchNotApplicable();
  }
  return current;
}

function arrayIndex(token: string, max: number): number {
  if (!/^(0|[1-9]\d*)$/.test(token)) throw patchNotApplicable();
  const index = Number(token);
  if (index > max) throw patchNotApplicable();
  return index;
}

function getAt(document: JsonValue, pointer: string): JsonValue {
  const tokens = pointerTokens(pointer);
  if (tokens.length === 0) return document;
  const parent = parentOf(document, tokens);
  const last = tokens[tokens.length - 1]!;
  if (Array.isArray(parent)) return parent[arrayIndex(last, parent.length - 1)]!;
  if (isObject(parent) && last in parent) return parent[last]!;
  throw patchNotApplicable();
}

function removeAt(document: JsonValue, pointer: string): JsonValue {
  const tokens = pointerTokens(pointer);
  if (tokens.length === 0) throw patchNotApplicable();
  const parent = parentOf(document, tokens);
  const last = tokens[tokens.length - 1]!;
  if (Array.isArray(parent)) return parent.splice(arrayIndex(last, parent.length - 1), 1)[0]!;
  if (isObject(parent) && last in parent) {
    const removed = parent[last]!;
    delete parent[last];
    return removed;
  }
  throw patchNotApplicable();
}

function addAt(document: JsonValue, pointer: string, value: JsonValue): JsonValue {
  const tokens = pointerTokens(pointer);
  if (tokens.length === 0) return value;
  const parent = parentOf(document, tokens);
  const last = tokens[tokens.length - 1]!;
  if (Array.isArray(parent)) {
    if (last === '-') parent.push(value);
    else parent.splice(arrayIndex(last, parent.length), 0, value);
  } else if (isObject(parent)) {
    parent[last] = value;
  } else {
    throw patchNotApplicable();
  }
  return document;
}

export function jsonPatch(target: JsonValue, patch: JsonValue): JsonValue {
  if (!Array.isArray(patch)) throw badRequest('json: cannot unmarshal object into Go value of type jsonpatch.Patch');
  let document = clone(target);
  for (const operation of patch) {
    if (!isObject(operation) || typeof operation.op !== 'string') throw badRequest('Unexpected kind: <nil>');
    const path = typeof operation.path === 'string' ? operation.path : '';
    const from = typeof operation.from === 'string' ? operation.from : '';
    switch (operation.op) {
      case 'add':
        document = addAt(document, path, clone(operation.value ?? null));
        break;
      case 'remove':
        removeAt(document, path);
        break;
      case 'replace':
        removeAt(document, path);
        document = addAt(document, path, clone(operation.value ?? null));
        break;
      case 'move': {
        const moved = removeAt(document, from);
        document = addAt(document, path, moved);
        break;
      }
      case 'copy':
        document = addAt(document, path, clone(getAt(document, from)));
        break;
      case 'test':
        if (!deepEqual(getAt(document, path), operation.value ?? null)) throw patchNotApplicable();
        break;
      default:
        throw patchNotApplicable();
    }
  }
  return document;
}

/** How a list field merges under a strategic merge patch; absent = the list is replaced whole. */
export interface ListMergeStrategy {
  /** Elements that are objects match on this key; primitive lists merge as sets without one. */
  readonly mergeKey?: string;
}

/** `patchStrategy:"merge"` lists of the built-in kinds we serve, by dotted path ("*" = any kind). */
export type StrategicSchema = Readonly<Record<string, ListMergeStrategy>>;

const DIRECTIVE = '$patch';
const RETAIN_KEYS = '$retainKeys';
const SET_ELEMENT_ORDER = '$setElementOrder/';
const DELETE_FROM_PRIMITIVE_LIST = '$deleteFromPrimitiveList/';

function strategicMergeMap(original: JsonObject, patch: JsonObject, schema: StrategicSchema, path: string): JsonObject | undefined {
  const directive = patch[DIRECTIVE];
  if (directive === 'delete') return undefined;
  const { [DIRECTIVE]: _directive, ...patchFields } = patch;
  if (directive === 'replace') return stripDirectives(patchFields) as JsonObject;
  if (directive !== undefined && directive !== 'merge') throw badRequest(`Unknown patch type: ${String(directive)} in map: ${JSON.stringify(patch)}`);

  let result: JsonObject = { ...original };
  const retainKeys = patchFields[RETAIN_KEYS];
  if (Array.isArray(retainKeys)) {
    result = Object.fromEntries(Object.entries(result).filter(([key]) => retainKeys.includes(key)));
  }
  for (const [key, value] of Object.entries(patchFields)) {
    if (key === RETAIN_KEYS || key.startsWith(SET_ELEMENT_ORDER)) continue;
    if (key.startsWith(DELETE_FROM_PRIMITIVE_LIST)) {
      const field = key.slice(DELETE_FROM_PRIMITIVE_LIST.length);
      const current = result[field];
      if (Array.isArray(current) && Array.isArray(value)) result[field] = current.filter((item) => !value.some((gone) => deepEqual(gone, item)));
      continue;
    }
    const childPath = path === '' ? key : `${path}.${key}`;
    if (value === null) {
      delete result[key];
      continue;
    }
    const current = result[key];
    if (isObject(value)) {
      const merged = strategicMergeMap(isObject(current) ? current : {}, value, schema, childPath);
      if (merged === undefined) delete result[key];
      else result[key] = merged;
    } else if (Array.isArray(value) && Array.isArray(current) && schema[childPath] !== undefined) {
      result[key] = strategicMergeList(current, value, schema[childPath]!, schema, childPath);
    } else {
      result[key] = stripDirectives(clone(value));
    }
  }
  return result;
}

function strategicMergeList(original: JsonValue[], patch: JsonValue[], strategy: ListMergeStrategy, schema: StrategicSchema, path: string): JsonValue[] {
  if (patch.some((item) => isObject(item) && item[DIRECTIVE] === 'replace')) {
    return patch.filter((item) => !(isObject(item) && item[DIRECTIVE] === 'replace')).map((item) => stripDirectives(clone(item)));
  }
  const mergeKey = strategy.mergeKey;
  if (mergeKey === undefined) {
    const result = [...original];
    for (const item of patch) if (!result.some((existing) => deepEqual(existing, item))) result.push(clone(item));
    return result;
  }
  const result = original.map((item) => clone(item));
  for (const item of patch) {
    if (!isObject(item)) throw badRequest(`merging an object in json but data type is not struct, instead is: ${typeof item}`);
    const index = result.findIndex((existing) => isObject(existing) && deepEqual(existing[mergeKey], item[mergeKey]));
    if (item[DIRECTIVE] === 'delete') {
      if (index >= 0) result.splice(index, 1);
      continue;
    }
    if (index >= 0) {
      const merged = strategicMergeMap(result[index] as JsonObject, item, schema, path);
      if (merged === undefined) result.splice(index, 1);
      else result[index] = merged;
    } else {
      result.push(stripDirectives(clone(item)));
    }
  }
  return result;
}

function stripDirectives(value: JsonValue): JsonValue {
  if (Array.isArray(value)) return value.map(stripDirectives);
  if (!isObject(value)) return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key]) => key !== DIRECTIVE && key !== RETAIN_KEYS && !key.startsWith(SET_ELEMENT_ORDER) && !key.startsWith(DELETE_FROM_PRIMITIVE_LIST))
      .map(([key, item]) => [key, stripDirectives(item)]),
  );
}

export function strategicMergePatch(target: JsonValue, patch: JsonValue, schema: StrategicSchema): JsonValue {
  if (!isObject(patch)) throw badRequest('json: cannot unmarshal array into Go value of type map[string]interface {}');
  return strategicMergeMap(isObject(target) ? target : {}, patch, schema, '') ?? {};
}
