import type { Diagnostic } from '../../model/diagnostics.js';
import type { SourceObject } from '../../sources/snapshot.js';
import type { ResolvedBackend } from '../backends.js';
import { Reporter } from '../report.js';
import type { IngressSpec, Resources, Typed } from '../resources.js';
import type { ResourceChangeCache, ResourceChanges, ResourceMapKind } from '../memo/resource-changes.js';
import type { SecretEffects } from '../secrets/secret-files.js';
import type { IngressContribution } from '../settle/claims.js';
import type { IngressContext } from './context.js';
import { HttpExtensionRegistry } from '../settle/extensions.js';
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

/** One read of the resources: a key of one kind, all of one kind, or all Ingresses. */
interface Read {
  readonly kind: ResourceMapKind | 'ingresses';
  readonly key?: string;
}

/** Whether what `read` found may have changed. */
function changed(read: Read, changes: ResourceChanges): boolean {
  // No claim reads every Ingress today; one that did is made again on every build.
  if (read.kind === 'ingresses') return true;
  return read.key === undefined ? changes.changedAny(read.kind) : changes.changedAt(read.kind, read.key);
}

/** `resources` as the front end sees it, with every read written down. */
function tracking(resources: Resources): { resources: Resources; reads: Read[] } {
  const reads: Read[] = [];
  // An Ingress reads its Services' keys about three times each; one read of a key stands for all (the
  // resources do not change during a build), so the check before reuse asks about each key once.
  const seen = new Set<string>();
  const read = (kind: Read['kind'], key?: string) => {
    const id = key === undefined ? kind : `${kind}\0${key}`;
    if (seen.has(id)) return;
    seen.add(id);
    reads.push(key === undefined ? { kind } : { kind, key });
  };
  const track = <V>(kind: ResourceMapKind, map: ReadonlyMap<string, V>): ReadonlyMap<string, V> => {
    const all = () => read(kind);
    return {
      get: (key) => (read(kind, key), map.get(key)),
      has: (key) => (read(kind, key), map.has(key)),
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
        read('ingresses');
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
 * unchanged): one is used again while nothing it read changed since the last build (`ResourceChanges`),
 * its certificates are as valid as they were, and the context of the build (`begin`) is the same. The cluster mode keeps one
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
    const sameContext = context.length === this.context.length && context.every((item, i) => item === this.context[i]);
    const last = sameContext ? this.last : new Map<SourceObject, Entry>();
    const changes = this.changes.between(this.resources, resources);
    const next = new Map<SourceObject, Entry>();
    this.context = context;
    this.last = next;
    this.resources = resources;
    return (ingress, shared) => {
      const earlier = last.get(ingress.object);
      if (earlier && earlier.reads.every((read) => !changed(read, changes)) && shared.secrets.stillHolds(earlier.value.secrets, changes)) {
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
