import { z } from 'zod';
import { clusterScopedKinds } from '../sources/files.js';
import type { SourceObject, Snapshot } from '../sources/snapshot.js';
import { isKubernetesName, isNamespaceName } from './checks/allowlist.js';
import type { Diagnostic } from '../model/diagnostics.js';
import { Reporter, resourceName } from './report.js';

/**
 * Structural schemas for the parts of each kind that we read. They check shape only; values that reach
 * nginx are checked against the allow-lists where they are used, so the diagnostic can say what to do.
 */

export const portNumber = z.number().int().min(1).max(65535);

const ingressBackend = z.object({
  service: z
    .object({
      name: z.string().min(1),
      port: z
        .object({ number: portNumber.optional(), name: z.string().min(1).optional() })
        .refine((p) => (p.number === undefined) !== (p.name === undefined), {
          message: 'set exactly one of port.number and port.name',
        }),
    })
    .optional(),
  resource: z.object({ kind: z.string(), name: z.string(), apiGroup: z.string().optional() }).optional(),
});

export type IngressBackend = z.infer<typeof ingressBackend>;

const ingressSchema = z.object({
  spec: z.object({
    ingressClassName: z.string().min(1).optional(),
    defaultBackend: ingressBackend.optional(),
    tls: z
      .array(z.object({ hosts: z.array(z.string()).optional(), secretName: z.string().min(1).optional() }))
      .optional(),
    rules: z
      .array(
        z.object({
          host: z.string().optional(),
          http: z
            .object({
              paths: z.array(
                z.object({
                  path: z.string().optional(),
                  pathType: z.enum(['Exact', 'Prefix', 'ImplementationSpecific']),
                  backend: ingressBackend,
                }),
              ),
            })
            .optional(),
        }),
      )
      .optional(),
  }),
});

export type IngressSpec = z.infer<typeof ingressSchema>['spec'];

const serviceSchema = z.object({
  spec: z
    .object({
      type: z.string().optional(),
      clusterIP: z.string().optional(),
      ipFamilies: z.array(z.string()).optional(),
      externalName: z.string().optional(),
      ports: z
        .array(z.object({ name: z.string().optional(), port: portNumber, protocol: z.string().optional() }))
        .optional(),
    })
    .optional(),
});

export type ServiceSpec = NonNullable<z.infer<typeof serviceSchema>['spec']>;

const stringMap = z.record(z.string(), z.string());

const secretSchema = z.object({
  type: z.string().optional(),
  data: stringMap.nullish(),
  stringData: stringMap.nullish(),
});

const configMapSchema = z.object({ data: stringMap.nullish() });

const endpointSliceSchema = z.object({
  addressType: z.string(),
  endpoints: z
    .array(
      z.object({
        addresses: z.array(z.string()),
        conditions: z.object({ ready: z.boolean().nullish(), serving: z.boolean().nullish(), terminating: z.boolean().nullish() }).nullish(),
      }),
    )
    .nullish(),
  ports: z.array(z.object({ name: z.string().nullish(), port: portNumber.nullish() })).nullish(),
});

export type EndpointSliceSpec = z.infer<typeof endpointSliceSchema>;

/** The label that ties an EndpointSlice to its Service. */
export const serviceNameLabel = 'kubernetes.io/service-name';

const ingressClassSchema = z.object({ spec: z.object({ controller: z.string().optional() }).optional() });

export interface Typed<T> {
  readonly object: SourceObject;
  readonly spec: T;
}

export interface SecretData {
  readonly type: string;
  /** Decoded values (base64 `data` merged with `stringData`, which wins as the API server does). */
  readonly data: ReadonlyMap<string, string>;
}

export interface Resources {
  readonly ingresses: readonly Typed<IngressSpec>[];
  /** Keyed by `namespace/name`. */
  readonly services: ReadonlyMap<string, Typed<ServiceSpec>>;
  readonly secrets: ReadonlyMap<string, Typed<SecretData>>;
  readonly configMaps: ReadonlyMap<string, Typed<Readonly<Record<string, string>>>>;
  /** Keyed by name (cluster-scoped). */
  readonly ingressClasses: ReadonlyMap<string, Typed<{ readonly controller: string }>>;
  /** EndpointSlices by the `namespace/name` of the Service they belong to. */
  readonly endpointSlices: ReadonlyMap<string, readonly Typed<EndpointSliceSpec>[]>;
}

const supportedKinds: Record<string, readonly string[]> = {
  Ingress: ['networking.k8s.io/v1'],
  Service: ['v1'],
  Secret: ['v1'],
  ConfigMap: ['v1'],
  IngressClass: ['networking.k8s.io/v1'],
  EndpointSlice: ['discovery.k8s.io/v1'],
};

export function key(namespace: string, name: string): string {
  return `${namespace}/${name}`;
}

/** An object's kind, namespace and name: what no two objects of one input may share. */
function objectId(object: SourceObject): string {
  return `${object.kind}/${object.metadata.namespace}/${object.metadata.name}`;
}

/** What indexing one object gives: where it goes, and what it was found to be. */
type Indexed =
  | { readonly kind: 'Ingress'; readonly typed: Typed<IngressSpec> }
  | { readonly kind: 'Service'; readonly id: string; readonly typed: Typed<ServiceSpec> }
  | { readonly kind: 'Secret'; readonly id: string; readonly typed: Typed<SecretData> }
  | { readonly kind: 'ConfigMap'; readonly id: string; readonly typed: Typed<Readonly<Record<string, string>>> }
  | { readonly kind: 'EndpointSlice'; readonly id: string; readonly typed: Typed<EndpointSliceSpec> }
  | { readonly kind: 'IngressClass'; readonly id: string; readonly typed: Typed<{ readonly controller: string }> };

/**
 * Each object's index entry and diagnostics, by object (the cluster source keeps an object while it is
 * unchanged): a build after one change validates the changed objects only, and an unchanged object's
 * typed value is the same object as before, which the claim memo compares by. The cluster mode keeps one.
 */
export class IndexMemo {
  private readonly entries = new WeakMap<SourceObject, IndexEntry>();
  private readonly ids = new WeakMap<SourceObject, string>();
  /** The objects of the last index (a copy), what they were indexed into, and what indexing them reported. */
  private last: { readonly objects: readonly SourceObject[]; readonly resources: Resources; readonly diagnostics: readonly Diagnostic[] } | undefined;
  /** The last input `withoutDuplicates` found without a duplicate (a copy). */
  private unique: readonly SourceObject[] | undefined;

  /** `objectId`, made once per object: the same string again is cheaper to look up. */
  id(object: SourceObject): string {
    let id = this.ids.get(object);
    if (id === undefined) this.ids.set(object, (id = objectId(object)));
    return id;
  }

  indexed(object: SourceObject, report: Reporter): Indexed | undefined {
    const entry = this.entry(object);
    report.diagnostics.push(...entry.diagnostics);
    return entry.indexed;
  }

  private entry(object: SourceObject): IndexEntry {
    let entry = this.entries.get(object);
    if (entry === undefined) {
      const own = new Reporter();
      entry = { indexed: indexOne(object, own), diagnostics: own.diagnostics };
      this.entries.set(object, entry);
    }
    return entry;
  }

  /** After a whole index: what the next build's `patched` starts from. */
  remember(objects: readonly SourceObject[], resources: Resources, diagnostics: readonly Diagnostic[]): void {
    this.last = { objects: [...objects], resources, diagnostics };
  }

  /**
   * Whether `objects` have the ids of the last input found without a duplicate, each at the same place
   * (an object edited in place keeps its id): then they have none either. Counting 22,000 ids again was
   * 6 ms of a one-Ingress rebuild at 10,000 Ingresses.
   */
  sameIdsAsUnique(objects: readonly SourceObject[]): boolean {
    const last = this.unique;
    if (last === undefined || last.length !== objects.length) return false;
    for (let i = 0; i < objects.length; i++) if (objects[i] !== last[i] && this.id(objects[i]!) !== this.id(last[i]!)) return false;
    this.unique = [...objects];
    return true;
  }

  /** After a whole count of ids: what the next build's `sameIdsAsUnique` starts from. */
  rememberIds(objects: readonly SourceObject[], unique: boolean): void {
    this.unique = unique ? [...objects] : undefined;
  }

  /**
   * The index of `objects` made from the last one, when they are its objects but for a few edited in
   * place: each new one at the place of an old one of the same kind and key, neither reported anything,
   * and none is an EndpointSlice (several share a key). Only the collections they are in are made anew
   * (an unchanged one is the same Map, which `ResourceChanges` then passes over); keys keep their order,
   * so the result is the one indexing them all gives. Indexing 22,000 objects again was 8-10 ms of a
   * one-Ingress rebuild at 10,000 Ingresses.
   */
  patched(objects: readonly SourceObject[], report: Reporter): Resources | undefined {
    const last = this.last;
    if (last === undefined || last.objects.length !== objects.length) return undefined;
    const edits: { readonly before: Indexed; readonly after: Indexed }[] = [];
    for (let i = 0; i < objects.length; i++) {
      if (objects[i] === last.objects[i]) continue;
      const before = this.entries.get(last.objects[i]!);
      const after = this.entry(objects[i]!);
      if (!before?.indexed || !after.indexed || before.diagnostics.length > 0 || after.diagnostics.length > 0) return undefined;
      if (before.indexed.kind !== after.indexed.kind || before.indexed.kind === 'EndpointSlice' || keyOf(before.indexed) !== keyOf(after.indexed)) return undefined;
      if (edits.length === maxPatchedEdits) return undefined;
      edits.push({ before: before.indexed, after: after.indexed });
    }
    const resources = edits.reduce(withEdit, last.resources);
    report.diagnostics.push(...last.diagnostics);
    this.last = { objects: [...objects], resources, diagnostics: last.diagnostics };
    return resources;
  }
}

interface IndexEntry {
  readonly indexed: Indexed | undefined;
  readonly diagnostics: readonly Diagnostic[];
}

/** More edits than this at once index everything again: a patch copies a collection per edit. */
const maxPatchedEdits = 16;

function keyOf(indexed: Indexed): string {
  return indexed.kind === 'Ingress' ? '' : indexed.id;
}

/** `resources` with `edit.before` replaced by `edit.after`, both of one kind and key. */
function withEdit(resources: Resources, edit: { readonly before: Indexed; readonly after: Indexed }): Resources {
  const replaced = <T>(map: ReadonlyMap<string, T>, id: string, typed: T) => new Map(map).set(id, typed);
  const { before, after } = edit;
  switch (after.kind) {
    case 'Ingress':
      return { ...resources, ingresses: resources.ingresses.map((typed) => (typed === before.typed ? after.typed : typed)) };
    case 'Service':
      return { ...resources, services: replaced(resources.services, after.id, after.typed) };
    case 'Secret':
      return { ...resources, secrets: replaced(resources.secrets, after.id, after.typed) };
    case 'ConfigMap':
      return { ...resources, configMaps: replaced(resources.configMaps, after.id, after.typed) };
    case 'IngressClass':
      return { ...resources, ingressClasses: replaced(resources.ingressClasses, after.id, after.typed) };
    case 'EndpointSlice':
      return resources;
  }
}

/** Sorts objects into typed collections; malformed ones are reported and left out. */
export function indexResources(snapshot: Snapshot, report: Reporter, memo?: IndexMemo): Resources {
  const patched = memo?.patched(snapshot.objects, report);
  if (patched) return patched;
  const reported = report.diagnostics.length;
  const ingresses: Typed<IngressSpec>[] = [];
  const services = new Map<string, Typed<ServiceSpec>>();
  const secrets = new Map<string, Typed<SecretData>>();
  const configMaps = new Map<string, Typed<Readonly<Record<string, string>>>>();
  const ingressClasses = new Map<string, Typed<{ readonly controller: string }>>();
  const endpointSlices = new Map<string, Typed<EndpointSliceSpec>[]>();

  for (const object of snapshot.objects) {
    const indexed = memo ? memo.indexed(object, report) : indexOne(object, report);
    switch (indexed?.kind) {
      case 'Ingress':
        ingresses.push(indexed.typed);
        break;
      case 'Service':
        services.set(indexed.id, indexed.typed);
        break;
      case 'Secret':
        secrets.set(indexed.id, indexed.typed);
        break;
      case 'ConfigMap':
        configMaps.set(indexed.id, indexed.typed);
        break;
      case 'EndpointSlice':
        endpointSlices.set(indexed.id, [...(endpointSlices.get(indexed.id) ?? []), indexed.typed]);
        break;
      case 'IngressClass':
        ingressClasses.set(indexed.id, indexed.typed);
        break;
    }
  }
  const resources = { ingresses, services, secrets, configMaps, ingressClasses, endpointSlices };
  memo?.remember(snapshot.objects, resources, report.diagnostics.slice(reported));
  return resources;
}

function indexOne(object: SourceObject, report: Reporter): Indexed | undefined {
  const versions = supportedKinds[object.kind];
  if (!versions) {
    report.info('kind-ignored', object, `${object.apiVersion} ${object.kind} is not an input of ingress2nginx; ignored`);
    return undefined;
  }
  if (!hasSupportedVersion(object, versions, report) || !hasValidName(object, report)) return undefined;
  const id = key(object.metadata.namespace, object.metadata.name);
  switch (object.kind) {
    case 'Ingress': {
      const spec = parseWith(ingressSchema, object, report);
      return spec && { kind: 'Ingress', typed: { object, spec: spec.spec } };
    }
    case 'Service': {
      const spec = parseWith(serviceSchema, object, report);
      return spec && { kind: 'Service', id, typed: { object, spec: spec.spec ?? {} } };
    }
    case 'Secret': {
      const secret = parseWith(secretSchema, object, report);
      if (!secret) return undefined;
      const data = decodeSecretData(object, secret.data ?? {}, secret.stringData ?? {}, report);
      return { kind: 'Secret', id, typed: { object, spec: { type: secret.type ?? 'Opaque', data } } };
    }
    case 'ConfigMap': {
      const configMap = parseWith(configMapSchema, object, report);
      return configMap && { kind: 'ConfigMap', id, typed: { object, spec: configMap.data ?? {} } };
    }
    case 'EndpointSlice': {
      const slice = parseWith(endpointSliceSchema, object, report);
      const service = object.metadata.labels[serviceNameLabel];
      return slice && service !== undefined ? { kind: 'EndpointSlice', id: key(object.metadata.namespace, service), typed: { object, spec: slice } } : undefined;
    }
    case 'IngressClass': {
      const ingressClass = parseWith(ingressClassSchema, object, report);
      return ingressClass && { kind: 'IngressClass', id: object.metadata.name, typed: { object, spec: { controller: ingressClass.spec?.controller ?? '' } } };
    }
  }
  return undefined;
}

export function hasSupportedVersion(object: SourceObject, versions: readonly string[], report: Reporter): boolean {
  if (versions.includes(object.apiVersion)) return true;
  report.error('api-version-unsupported', object, `${object.kind} ${object.apiVersion} is not supported; use ${versions.join(' or ')}`, [
    'apiVersion',
  ]);
  return false;
}

/**
 * Names end up in upstream names, file names and comments, so they are held to what the API server
 * would have accepted; manifests from files have not been through it.
 */
export function hasValidName(object: SourceObject, report: Reporter): boolean {
  const { name, namespace } = object.metadata;
  const nameIsValid = object.kind === 'Namespace' ? isNamespaceName(name) : isKubernetesName(name);
  if (!nameIsValid) {
    report.error('resource-name-invalid', object, 'metadata.name must be a lowercase DNS-1123 name; the resource is skipped', ['metadata', 'name']);
    return false;
  }
  if (!clusterScopedKinds.has(object.kind) && !isNamespaceName(namespace)) {
    report.error(
      'resource-name-invalid',
      object,
      'metadata.namespace must be a lowercase DNS-1123 label; the resource is skipped',
      ['metadata', 'namespace'],
    );
    return false;
  }
  return true;
}

/** Validates an object's shape; each problem is an error at its field, and the object is skipped. */
export function parseWith<T>(schema: z.ZodType<T>, object: SourceObject, report: Reporter): T | undefined {
  const result = schema.safeParse(object.raw);
  if (result.success) return result.data;
  for (const issue of result.error.issues) {
    report.error(
      'resource-invalid',
      object,
      `${issue.message}; the ${object.kind} is skipped until this is fixed`,
      issue.path.filter((part): part is string | number => typeof part !== 'symbol'),
    );
  }
  return undefined;
}

/**
 * The same object (kind, namespace, name) more than once is a mistake in the input. Keeping "the first
 * one read" would make the output depend on input order, so every copy is left out, each with an error.
 */
export function withoutDuplicates(objects: readonly SourceObject[], report: Reporter, memo?: IndexMemo): SourceObject[] {
  if (memo?.sameIdsAsUnique(objects)) return [...objects];
  const ids = objects.map(memo ? (o) => memo.id(o) : objectId);
  const counts = new Map<string, number>();
  for (const id of ids) counts.set(id, (counts.get(id) ?? 0) + 1);
  const unique = objects.filter((object, i) => {
    const count = counts.get(ids[i]!) ?? 0;
    if (count === 1) return true;
    report.error(
      'resource-duplicate',
      object,
      `${object.kind} ${resourceName(object)} appears ${count} times in the input; every copy is ignored until only one is left`,
    );
    return false;
  });
  memo?.rememberIds(objects, unique.length === objects.length);
  return unique;
}

const base64 = /^[A-Za-z0-9+/]*={0,2}$/;

function decodeSecretData(
  object: SourceObject,
  data: Readonly<Record<string, string>>,
  stringData: Readonly<Record<string, string>>,
  report: Reporter,
): Map<string, string> {
  const decoded = new Map<string, string>();
  for (const [name, value] of Object.entries(data)) {
    const compact = value.replace(/\s+/g, '');
    if (!base64.test(compact) || compact.length % 4 !== 0) {
      report.error('secret-data-invalid', object, `data.${name} is not valid base64`, ['data', name]);
      continue;
    }
    decoded.set(name, Buffer.from(compact, 'base64').toString('utf8'));
  }
  for (const [name, value] of Object.entries(stringData)) decoded.set(name, value);
  return decoded;
}

/** The label the API server puts on every Namespace (immutable, since Kubernetes 1.21). */
const namespaceNameLabel = 'kubernetes.io/metadata.name';

/**
 * Labels of a namespace as a selector sees them: those of the Namespace object in the input, plus the
 * `kubernetes.io/metadata.name` label the API server always sets. A namespace that is not in the input
 * has only that one.
 */
export function namespaceLabels(
  known: ReadonlyMap<string, Readonly<Record<string, string>>>,
  namespace: string,
): Readonly<Record<string, string>> {
  return { ...(known.get(namespace) ?? {}), [namespaceNameLabel]: namespace };
}
