import type { Diagnostic } from '../../model/diagnostics.js';
import type { SourceObject } from '../../sources/snapshot.js';
import type { ResolvedBackend } from '../backends.js';
import { Reporter } from '../report.js';
import type { IngressSpec, Resources, Typed } from '../resources.js';
import type { ResourceChangeCache, ResourceMapKind } from '../resource-changes.js';
import type { SecretEffects } from '../secrets.js';
import type { IngressContext, IngressContribution } from './claims.js';
import { HttpExtensionRegistry } from './extensions.js';
import { translateIngress } from './ingress.js';
import { SnippetRegistry } from './snippets.js';

/**
 * One Ingress's claims as a value: its contribution, and what making it produced besides (diagnostics,
 * the backends it resolved, the http-level groups and snippets it defined, the files its Secrets would
 * become). Nothing shared is touched while it is made; the build takes these in, Ingress by Ingress.
 */
export interface IngressClaimValue {
  readonly contribution: IngressContribution;
  readonly diagnostics: readonly Diagnostic[];
  readonly backends: ReadonlyMap<string, ResolvedBackend>;
  readonly extensions: HttpExtensionRegistry;
  readonly snippets: SnippetRegistry;
  readonly secrets: SecretEffects;
}

/** What every Ingress of a build reads alike; each claim value gets its own report, backends, extensions and snippets. */
export type SharedIngressContext = Omit<IngressContext, 'report' | 'backends' | 'extensions' | 'snippets'>;

export function ingressClaimValue(ingress: Typed<IngressSpec>, shared: SharedIngressContext, resources: Resources = shared.resources): IngressClaimValue {
  const report = new Reporter();
  const backends = new Map<string, ResolvedBackend>();
  const extensions = new HttpExtensionRegistry();
  const snippets = new SnippetRegistry();
  const { value: contribution, effects } = shared.secrets.recording(() =>
    translateIngress(ingress, { ...shared, resources, report, backends, extensions, snippets }),
  );
  return { contribution, diagnostics: report.diagnostics, backends, extensions, snippets, secrets: effects };
}

/** One read of the resources: a key of one kind (or all of it), and the objects found, compared by identity. */
interface Read {
  readonly kind: ResourceMapKind | 'ingresses';
  readonly key?: string;
  readonly identity: unknown;
}

/** The objects a value of the resources stands for: the parsed objects are new each build, the raw ones are not. */
function identityOf(value: unknown): unknown {
  if (value === undefined) return undefined;
  if (Array.isArray(value)) return value.map(identityOf);
  return (value as Typed<unknown>).object.raw;
}

function sameIdentity(a: unknown, b: unknown): boolean {
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((item, i) => sameIdentity(item, b[i]));
  return a === b;
}

function identityNow(resources: Resources, read: Read): unknown {
  if (read.kind === 'ingresses') return identityOf(resources.ingresses);
  const map: ReadonlyMap<string, unknown> = resources[read.kind];
  return read.key === undefined ? [...map].map(([key, value]) => [key, identityOf(value)]) : identityOf(map.get(read.key));
}

/** `resources` as the front end sees it, with every read written down. */
function tracking(resources: Resources): { resources: Resources; reads: Read[] } {
  const reads: Read[] = [];
  // An Ingress reads its Services' keys about three times each; one read of a key stands for all (the
  // resources do not change during a build), so the check before reuse compares each key once.
  const keysRead = new Set<string>();
  const track = <V>(kind: ResourceMapKind, map: ReadonlyMap<string, V>): ReadonlyMap<string, V> => {
    const all = () => reads.push({ kind, identity: identityNow(resources, { kind, identity: undefined }) });
    const one = (key: string) => {
      const read = `${kind}\0${key}`;
      if (keysRead.has(read)) return;
      keysRead.add(read);
      reads.push({ kind, key, identity: identityOf(map.get(key)) });
    };
    return {
      get: (key) => (one(key), map.get(key)),
      has: (key) => (one(key), map.has(key)),
      get size() {
        all();
        return map.size;
      },
      forEach: (callback, thisArg?: unknown) => (all(), map.forEach(callback, thisArg)),
      entries: () => (all(), map.entries()),
      keys: () => (all(), map.keys()),
      values: () => (all(), map.values()),
      [Symbol.iterator]: () => (all(), map[Symbol.iterator]()),
    };
  };
  return {
    reads,
    resources: {
      get ingresses() {
        reads.push({ kind: 'ingresses', identity: identityOf(resources.ingresses) });
        return resources.ingresses;
      },
      services: track('services', resources.services),
      secrets: track('secrets', resources.secrets),
      configMaps: track('configMaps', resources.configMaps),
      ingressClasses: track('ingressClasses', resources.ingressClasses),
      endpointSlices: track('endpointSlices', resources.endpointSlices),
    },
  };
}

interface Entry {
  readonly value: IngressClaimValue;
  readonly reads: readonly Read[];
}

/**
 * Claim values of the last build, by Ingress object (the cluster source keeps an object while it is
 * unchanged): one is used again while every object it read is the same object, its certificates are as
 * valid as they were, and the context of the build (`begin`) is the same. The cluster mode keeps one
 * across builds, so a build after one change makes the claims of the changed Ingresses only. Entries of
 * Ingresses the last build did not see are let go.
 */
export class IngressClaimMemo {
  private last = new Map<SourceObject, Entry>();
  private context: readonly unknown[] = [];
  /** The resources the entries of `last` hold for. */
  private resources: Resources | undefined;

  constructor(private readonly changes: ResourceChangeCache) {}

  /**
   * Starts a build of `resources` whose shared context comes from `context` (values and objects, compared
   * by identity); returns its claim maker.
   */
  begin(context: readonly unknown[], resources: Resources): (ingress: Typed<IngressSpec>, shared: SharedIngressContext) => IngressClaimValue {
    const last = sameIdentity(context, this.context) ? this.last : new Map<SourceObject, Entry>();
    const changes = this.changes.between(this.resources, resources);
    const next = new Map<SourceObject, Entry>();
    this.context = context;
    this.last = next;
    this.resources = resources;
    // A key read holds while it did not change; the rest (all Ingresses, a whole kind) is compared again.
    const holds = (read: Read) =>
      read.kind !== 'ingresses' && read.key !== undefined ? !changes.changedAt(read.kind, read.key) : sameIdentity(read.identity, identityNow(resources, read));
    return (ingress, shared) => {
      const earlier = last.get(ingress.object);
      if (earlier && earlier.reads.every(holds) && shared.secrets.stillHolds(earlier.value.secrets, changes)) {
        next.set(ingress.object, earlier);
        return earlier.value;
      }
      const tracked = tracking(shared.resources);
      const value = ingressClaimValue(ingress, shared, tracked.resources);
      next.set(ingress.object, { value, reads: tracked.reads });
      return value;
    };
  }
}
