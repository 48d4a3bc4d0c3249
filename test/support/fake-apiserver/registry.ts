import { randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { clone, deepEqual, isObject, jsonPatch, mergePatch, strategicMergePatch, type StrategicSchema } from './patch.js';
import { apiVersionOf, RESOURCE_TYPES, toServed, toStored, type ResourceType } from './resources.js';
import { selectableAttributes, selector } from './selectors.js';
import {
  alreadyExists,
  ApiError,
  badRequest,
  conflict,
  expired,
  goQuote,
  invalid,
  notFound,
  success,
  tooLargeResourceVersion,
  unsupportedMediaType,
  type FieldError,
  type JsonObject,
  type JsonValue,
  type Status,
} from './status.js';
import { CompactedError, keyOf, ObjectStore } from './store.js';
import { checkDecodable, decodeProblem, validateEvent, validateEventUpdate, validateLease, validateStatusConditions } from './validation.js';

/**
 * The REST semantics of kube-apiserver's generic registry (k8s.io/apiserver/pkg/registry/generic/
 * registry/store.go) over the ObjectStore: what create, update, patch, delete and list do to
 * objects, shared by the HTTP front and the test-side helpers so both emit the same watch events.
 */

const PATCH_TYPES = {
  json: 'application/json-patch+json',
  merge: 'application/merge-patch+json',
  strategic: 'application/strategic-merge-patch+json',
  apply: 'application/apply-patch+yaml',
} as const;

// patchStrategy:"merge" lists of the built-in kinds served (k8s.io/api struct tags).
const STRATEGIC_SCHEMAS: Record<string, StrategicSchema> = {
  '*': { 'metadata.finalizers': {}, 'metadata.ownerReferences': { mergeKey: 'uid' } },
  services: { 'spec.ports': { mergeKey: 'port' }, 'status.conditions': { mergeKey: 'type' } },
  namespaces: { 'status.conditions': { mergeKey: 'type' } },
};

/** Namespaces every cluster has, and that may not be deleted (pkg/registry/core/namespace). */
const SYSTEM_NAMESPACES = ['default', 'kube-system', 'kube-public'];
const INITIAL_NAMESPACES = [...SYSTEM_NAMESPACES, 'kube-node-lease'];

/** How long a read waits for a resourceVersion the store has not reached (the watch cache's 3 s). */
const FRESHNESS_WAIT_MS = 3000;

export interface ListQuery {
  readonly labelSelector: string | null;
  readonly fieldSelector: string | null;
  readonly limit: number;
  readonly continueToken: string | null;
  readonly resourceVersion: string | null;
  readonly resourceVersionMatch: string | null;
}

interface ContinueToken {
  readonly v: 'meta.k8s.io/v1';
  /** The snapshot the remaining pages come from; -1 = the latest (an "inconsistent" continuation). */
  readonly rv: number;
  readonly start: string;
}

function metadataOf(object: JsonObject): JsonObject {
  if (!isObject(object.metadata)) object.metadata = {};
  return object.metadata as JsonObject;
}

/** metav1.Time: RFC 3339 in UTC with whole seconds. */
function nowTimestamp(): string {
  return new Date().toISOString().replace(/\.\d+Z$/, 'Z');
}

const GENERATE_NAME_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

function randomSuffix(): string {
  return Array.from({ length: 5 }, () => GENERATE_NAME_ALPHABET[Math.floor(Math.random() * GENERATE_NAME_ALPHABET.length)]).join('');
}

/** Base64 of the UTF-8 text, as Secret `stringData` is folded into `data` on write. */
function foldStringData(secret: JsonObject): void {
  if (isObject(secret.stringData)) {
    const data = isObject(secret.data) ? { ...secret.data } : {};
    for (const [key, value] of Object.entries(secret.stringData)) data[key] = Buffer.from(String(value), 'utf8').toString('base64');
    secret.data = data;
  }
  delete secret.stringData;
  if (secret.type === undefined || secret.type === '') secret.type = 'Opaque';
}

function encodeContinue(token: ContinueToken): string {
  return Buffer.from(JSON.stringify(token)).toString('base64url');
}

function decodeContinue(text: string): ContinueToken {
  try {
    const token = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as ContinueToken;
    if (token.v !== 'meta.k8s.io/v1' || typeof token.rv !== 'number' || typeof token.start !== 'string' || token.start === '') throw new Error('bad token');
    return token;
  } catch {
    throw badRequest(`invalid continue token: continue key is not valid: ${text}`);
  }
}

interface WriteOptions {
  readonly subresource?: 'status';
  /** Test-side writes skip the resourceVersion precondition rules of the kind. */
  readonly unconditional?: boolean;
  /** `dryRun=All`: everything up to the write, which is left out; the object is answered as it would be stored. */
  readonly dryRun?: boolean;
}

export class Registry {
  readonly store = new ObjectStore();

  constructor() {
    for (const name of INITIAL_NAMESPACES) {
      this.store.put('namespaces', this.#newNamespace({ metadata: { name } }));
    }
  }

  #newNamespace(namespace: JsonObject): JsonObject {
    const metadata = metadataOf(namespace);
    metadata.uid ??= randomUUID();
    metadata.creationTimestamp ??= nowTimestamp();
    metadata.labels = { ...(isObject(metadata.labels) ? metadata.labels : {}), 'kubernetes.io/metadata.name': String(metadata.name) };
    namespace.spec = { finalizers: ['kubernetes'] };
    namespace.status = { phase: 'Active' };
    return namespace;
  }

  #requireNamespace(type: ResourceType, namespace: string): void {
    if (type.namespaced && !this.store.get('namespaces', '', namespace)) throw notFound({ group: '', resource: 'namespaces' }, namespace);
  }

  get(type: ResourceType, version: string, namespace: string, name: string): JsonObject {
    const stored = this.store.get(type.storage, namespace, name);
    if (!stored) throw notFound(type, name);
    return toServed(type, version, stored, true);
  }

  /** A body's kind/apiVersion must name this type (any served version of its group converts). */
  #checkTypeMeta(type: ResourceType, version: string, body: JsonObject): void {
    const expected = apiVersionOf(type, version);
    const { apiVersion, kind } = body;
    if (apiVersion !== undefined) {
      const group = String(apiVersion).includes('/') ? String(apiVersion).split('/')[0] : '';
      const bodyVersion = String(apiVersion).split('/').pop()!;
      if (group !== type.group || !type.versions.includes(bodyVersion)) {
        throw badRequest(`the API version in the data (${String(apiVersion)}) does not match the expected API version (${expected})`);
      }
    }
    if (kind !== undefined && kind !== type.kind) throw badRequest(`the kind in the data (${String(kind)}) does not match the expected kind (${type.kind})`);
  }

  #validate(type: ResourceType, stored: JsonObject, old: JsonObject | undefined): FieldError[] {
    if (type.storage === 'events') {
      const strict = type.group === 'events.k8s.io';
      return old ? validateEventUpdate(stored, old, strict) : validateEvent(stored, strict);
    }
    if (type.resource === 'leases') return validateLease(stored);
    if (type.custom) return validateStatusConditions(stored);
    return [];
  }

  #throwIfInvalid(type: ResourceType, stored: JsonObject, old: JsonObject | undefined): void {
    const errors = this.#validate(type, stored, old);
    if (errors.length > 0) throw invalid({ group: type.group, kind: type.kind }, String(metadataOf(stored).name ?? ''), errors);
  }

  create(type: ResourceType, version: string, namespace: string, body: JsonObject, options: WriteOptions = {}): JsonObject {
    this.#checkTypeMeta(type, version, body);
    checkDecodable(type, version, body);
    const stored = toStored(type, clone(body));
    const metadata = metadataOf(stored);
    if (type.namespaced) {
      if (metadata.namespace !== undefined && metadata.namespace !== '' && metadata.namespace !== namespace) {
        throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
      }
      metadata.namespace = namespace;
    } else {
      delete metadata.namespace;
    }
    if ((metadata.name === undefined || metadata.name === '') && typeof metadata.generateName === 'string' && metadata.generateName !== '') {
      metadata.name = `${metadata.generateName}${randomSuffix()}`;
    }
    const name = String(metadata.name ?? '');
    if (name === '') {
      throw invalid({ group: type.group, kind: type.kind }, '', [{ type: 'FieldValueRequired', field: 'metadata.name', detail: 'name or generateName is required' }]);
    }
    this.#requireNamespace(type, namespace);
    if (this.store.get(type.storage, type.namespaced ? namespace : '', name)) throw alreadyExists(type, name);

    metadata.uid = randomUUID();
    metadata.creationTimestamp = nowTimestamp();
    delete metadata.resourceVersion;
    delete metadata.deletionTimestamp;
    delete metadata.deletionGracePeriodSeconds;
    if (type.generation === 'none') delete metadata.generation;
    else metadata.generation = 1;
    if (type.hasStatus) {
      // Create cannot set status; built-in kinds start from their zero status.
      if (type.custom) delete stored.status;
      else if (type.resource === 'ingresses' || type.resource === 'services') stored.status = { loadBalancer: {} };
    }
    if (type.resource === 'namespaces') this.#newNamespace(stored);
    if (type.resource === 'secrets') foldStringData(stored);
    this.#throwIfInvalid(type, stored, undefined);
    if (options.dryRun) return toServed(type, version, stored, true);
    return toServed(type, version, this.store.put(type.storage, stored), true);
  }

  /** PUT: replaces the object (or only its status), honouring metadata.resourceVersion as a precondition. */
  update(type: ResourceType, version: string, namespace: string, name: string, body: JsonObject, options: WriteOptions = {}): { object: JsonObject; created: boolean } {
    this.#checkTypeMeta(type, version, body);
    checkDecodable(type, version, body);
    const incoming = toStored(type, clone(body));
    const metadata = metadataOf(incoming);
    if (metadata.name !== undefined && metadata.name !== name) {
      throw badRequest(`the name of the object (${String(metadata.name)}) does not match the name on the URL (${name})`);
    }
    if (type.namespaced && metadata.namespace !== undefined && metadata.namespace !== '' && metadata.namespace !== namespace) {
      throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
    }
    const old = this.store.get(type.storage, type.namespaced ? namespace : '', name);
    if (!old) {
      if (type.allowCreateOnUpdate && options.subresource === undefined) {
        return { object: this.create(type, version, namespace, { ...body, metadata: { ...metadata, name } }, options), created: true };
      }
      throw notFound(type, name);
    }
    const oldMetadata = metadataOf(old);
    const requestedVersion = metadata.resourceVersion;
    if (requestedVersion === undefined || requestedVersion === '') {
      if (!type.allowUnconditionalUpdate && !options.unconditional) {
        throw invalid({ group: type.group, kind: type.kind }, name, [
          { type: 'FieldValueInvalid', field: 'metadata.resourceVersion', badValue: '0x0', detail: 'must be specified for an update' },
        ]);
      }
    } else if (String(requestedVersion) !== oldMetadata.resourceVersion) {
      throw conflict(type, name);
    }

    let next: JsonObject;
    if (options.subresource === 'status') {
      if (type.custom) {
        // The CRD status strategy keeps everything but .status from the stored object.
        next = clone(old);
        if (incoming.status === undefined) delete next.status;
        else next.status = incoming.status;
      } else {
        // Built-in status strategies reset the spec only.
        next = incoming;
        if (old.spec === undefined) delete next.spec;
        else next.spec = clone(old.spec);
      }
    } else {
      next = incoming;
      if (type.hasStatus) {
        if (old.status === undefined) delete next.status;
        else next.status = clone(old.status);
      }
    }
    const nextMetadata = metadataOf(next);
    // System fields are the server's: clients cannot change them with an update.
    for (const field of ['uid', 'creationTimestamp', 'generation', 'namespace', 'name', 'deletionTimestamp']) {
      if (oldMetadata[field] === undefined) delete nextMetadata[field];
      else nextMetadata[field] = oldMetadata[field]!;
    }
    delete nextMetadata.resourceVersion;
    if (type.resource === 'secrets') foldStringData(next);
    if (options.subresource === undefined && type.generation !== 'none') {
      const changed =
        type.generation === 'spec' ? !deepEqual(next.spec, old.spec) : !deepEqual({ ...next, metadata: null }, { ...old, metadata: null });
      if (changed) nextMetadata.generation = Number(oldMetadata.generation ?? 0) + 1;
    }
    this.#throwIfInvalid(type, next, old);
    // An update that changes nothing is not written: no new resourceVersion, no watch event.
    const oldWithoutVersion = clone(old);
    delete metadataOf(oldWithoutVersion).resourceVersion;
    if (deepEqual(next, oldWithoutVersion)) return { object: toServed(type, version, old, true), created: false };
    if (options.dryRun) return { object: toServed(type, version, { ...next, metadata: { ...nextMetadata, resourceVersion: oldMetadata.resourceVersion ?? '' } }, true), created: false };
    return { object: toServed(type, version, this.store.put(type.storage, next), true), created: false };
  }

  #acceptedPatchTypes(type: ResourceType): string[] {
    return type.custom ? [PATCH_TYPES.json, PATCH_TYPES.merge, PATCH_TYPES.apply] : [PATCH_TYPES.json, PATCH_TYPES.merge, PATCH_TYPES.strategic, PATCH_TYPES.apply];
  }

  patch(type: ResourceType, version: string, namespace: string, name: string, contentType: string, patchText: string, options: WriteOptions = {}): JsonObject {
    const accepted = this.#acceptedPatchTypes(type);
    if (!accepted.includes(contentType)) throw unsupportedMediaType(accepted);
    // Server-side apply needs field ownership tracking, which the fake does not have: refuse it loudly.
    if (contentType === PATCH_TYPES.apply) throw unsupportedMediaType(accepted.filter((patchType) => patchType !== PATCH_TYPES.apply));
    let patch: JsonValue;
    try {
      patch = JSON.parse(patchText) as JsonValue;
    } catch (error) {
      throw badRequest(contentType === PATCH_TYPES.merge ? 'Invalid JSON Patch' : `error decoding patch: ${(error as Error).message}`);
    }
    const current = this.store.get(type.storage, type.namespaced ? namespace : '', name);
    if (!current) throw notFound(type, name);
    const served = toServed(type, version, current, true);
    let patched: JsonValue;
    if (contentType === PATCH_TYPES.json) patched = jsonPatch(served, patch);
    else if (contentType === PATCH_TYPES.merge) {
      if (!isObject(patch)) throw badRequest('Invalid JSON Patch');
      patched = mergePatch(served, patch);
    } else patched = strategicMergePatch(served, patch, { ...STRATEGIC_SCHEMAS['*'], ...STRATEGIC_SCHEMAS[type.resource] });
    if (!isObject(patched)) throw invalid({ group: '', kind: '' }, '', [{ type: 'FieldValueInvalid', field: 'patch', badValue: goQuote(JSON.stringify(patched)), detail: 'the patched object is not a JSON object' }]);
    const problem = decodeProblem(type, patched);
    if (problem !== undefined) {
      throw invalid({ group: '', kind: '' }, '', [{ type: 'FieldValueInvalid', field: 'patch', badValue: goQuote(JSON.stringify(patched)), detail: problem }]);
    }
    return this.update(type, version, namespace, name, patched, { ...options, unconditional: true }).object;
  }

  delete(type: ResourceType, version: string, namespace: string, name: string): JsonObject | Status {
    const key = type.namespaced ? namespace : '';
    const current = this.store.get(type.storage, key, name);
    if (!current) throw notFound(type, name);
    if (type.resource === 'namespaces') return toServed(type, version, this.#deleteNamespace(current), true);
    const deleted = this.store.remove(type.storage, key, name)!;
    if (type.returnDeletedObject) return toServed(type, version, deleted, true);
    return success({ name, group: type.group, kind: type.resource, uid: String(metadataOf(deleted).uid ?? '') });
  }

  /** Terminating, then its contents go, then it goes; the real namespace controller takes longer over it. */
  #deleteNamespace(namespace: JsonObject): JsonObject {
    const name = String(metadataOf(namespace).name);
    if (SYSTEM_NAMESPACES.includes(name)) {
      throw new ApiError({
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: `namespaces ${goQuote(name)} is forbidden: this namespace may not be deleted`,
        reason: 'Forbidden',
        details: { name, kind: 'namespaces' },
        code: 403,
      });
    }
    const terminating = clone(namespace);
    metadataOf(terminating).deletionTimestamp = nowTimestamp();
    delete metadataOf(terminating).resourceVersion;
    terminating.status = { phase: 'Terminating' };
    const answer = this.store.put('namespaces', terminating);
    for (const storage of new Set(RESOURCE_TYPES.filter((type) => type.namespaced).map((type) => type.storage))) {
      for (const object of this.store.list(storage, name)) this.store.remove(storage, name, String(metadataOf(object).name));
    }
    this.store.remove('namespaces', '', name);
    return answer;
  }

  /** Removes every object of a storage, oldest key first (as a CRD's deletion does before the CRD goes). */
  deleteAll(storage: string): void {
    for (const object of this.store.list(storage)) {
      const metadata = metadataOf(object);
      this.store.remove(storage, String(metadata.namespace ?? ''), String(metadata.name));
    }
  }

  async #waitForRevision(revision: number): Promise<void> {
    const deadline = Date.now() + FRESHNESS_WAIT_MS;
    while (this.store.revision < revision && Date.now() < deadline) await delay(20);
    if (this.store.revision < revision) throw tooLargeResourceVersion(revision, this.store.revision);
  }

  /** LIST with the resourceVersion, resourceVersionMatch, limit and continue rules of the API. */
  async list(type: ResourceType, version: string, namespace: string | undefined, query: ListQuery): Promise<JsonObject> {
    const matches = selector(type, query.labelSelector, query.fieldSelector);
    const match = query.resourceVersionMatch ?? '';
    const optionErrors: FieldError[] = [];
    if (match !== '' && match !== 'Exact' && match !== 'NotOlderThan') {
      optionErrors.push({ type: 'FieldValueNotSupported', field: 'resourceVersionMatch', badValue: goQuote(match), detail: 'supported values: "Exact", "NotOlderThan", ""' });
    } else if (match !== '' && query.continueToken) {
      optionErrors.push({ type: 'FieldValueForbidden', field: 'resourceVersionMatch', detail: 'resourceVersionMatch is forbidden when continue is provided' });
    } else if (match !== '' && (query.resourceVersion === null || query.resourceVersion === '')) {
      optionErrors.push({ type: 'FieldValueForbidden', field: 'resourceVersionMatch', detail: 'resourceVersionMatch is forbidden unless resourceVersion is provided' });
    } else if (match === 'Exact' && query.resourceVersion === '0') {
      optionErrors.push({ type: 'FieldValueForbidden', field: 'resourceVersionMatch', detail: 'resourceVersionMatch "exact" is forbidden for resourceVersion "0"' });
    }
    if (optionErrors.length > 0) throw invalid({ group: 'meta.k8s.io', kind: 'ListOptions' }, '', optionErrors);

    let requested: number | undefined;
    if (query.resourceVersion !== null && query.resourceVersion !== '') {
      if (!/^\d+$/.test(query.resourceVersion)) throw badRequest(`invalid resource version: strconv.ParseUint: parsing ${goQuote(query.resourceVersion)}: invalid syntax`);
      requested = Number(query.resourceVersion);
    }

    // Which snapshot: undefined = the latest.
    let snapshot: number | undefined;
    let start = '';
    const storageNamespace = type.namespaced ? namespace : undefined;
    if (query.continueToken) {
      if (requested !== undefined && requested !== 0) throw badRequest('specifying resource version is not allowed when using continue');
      const token = decodeContinue(query.continueToken);
      start = token.start;
      if (token.rv > 0) {
        if (token.rv < this.store.compactedRevision) {
          throw expired(
            'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.',
            encodeContinue({ v: 'meta.k8s.io/v1', rv: -1, start }),
          );
        }
        snapshot = token.rv;
      }
    } else if (requested !== undefined && requested > 0) {
      await this.#waitForRevision(requested);
      if (match === 'Exact' || (match === '' && query.limit > 0)) snapshot = requested;
    }

    let objects: JsonObject[];
    try {
      objects = snapshot === undefined ? this.store.list(type.storage, storageNamespace) : this.store.listAt(type.storage, snapshot, storageNamespace);
    } catch (error) {
      if (error instanceof CompactedError) throw expired('The resourceVersion for the provided list is too old.');
      throw error;
    }
    const listRevision = snapshot ?? this.store.revision;
    const selected = objects.filter((object) => {
      if (start !== '' && keyOf(object) < start) return false;
      const { labels, fields } = selectableAttributes(type, object);
      return matches(labels, fields);
    });
    const page = query.limit > 0 ? selected.slice(0, query.limit) : selected;
    const listMetadata: JsonObject = { resourceVersion: String(listRevision) };
    if (page.length < selected.length) {
      const last = page[page.length - 1]!;
      listMetadata.continue = encodeContinue({ v: 'meta.k8s.io/v1', rv: listRevision, start: `${keyOf(last)}\u0000` });
      // The count is only exact without selectors, so the server leaves it out otherwise.
      if (!query.labelSelector && !query.fieldSelector) listMetadata.remainingItemCount = selected.length - page.length;
    }
    return {
      kind: `${type.kind}List`,
      apiVersion: apiVersionOf(type, version),
      metadata: listMetadata,
      // Typed (built-in) lists carry no kind/apiVersion per item; unstructured (CRD) lists do.
      items: page.map((object) => toServed(type, version, object, type.custom)),
    };
  }
}

