import type { Snapshot } from '../snapshot.js';
import { ApiError, type ApiClient } from './client.js';
import { customResourceDefinitionKind, watchedKinds, type ApiKind, type WatchedKind } from './kinds.js';
import { Reflector, type RawObject, type ReflectorTiming } from './reflector.js';
import { SnapshotAssembler } from './snapshot.js';

/** A Secret or ConfigMap that something refers to: followed by a watch of its own. */
export interface FollowedObject {
  readonly kind: 'Secret' | 'ConfigMap';
  readonly namespace: string;
  readonly name: string;
  /** Named by the operator (a ConfigMap the controller ConfigMap names): followed in any namespace. */
  readonly operator?: boolean;
}

export interface ClusterSourceOptions {
  readonly client: ApiClient;
  /** Watch namespaced kinds only in these namespaces; all namespaces when empty. */
  readonly namespaces: readonly string[];
  /** `namespace/name` of the controller ConfigMap (`--configmap`): the operator's choice, followed in any namespace. */
  readonly controllerConfigMap?: string;
  /** `namespace/name` of the TCP and UDP services ConfigMaps: the operator's too, followed in any namespace. */
  readonly servicesConfigMaps?: readonly string[];
  /** Watch Namespaces from the start (`--snippet-namespace-selector` reads their labels), not only with the Gateway API. */
  readonly watchNamespaces?: boolean;
  readonly upstreams: 'service' | 'endpoints';
  readonly timing: ReflectorTiming;
  /** How often to look again for the Gateway API CRDs while they are not served. */
  readonly discoveryIntervalMs: number;
  /**
   * Something the watches hold changed: objects of `kind` (empty when more than one kind may have: a
   * watch stopped, the Gateway API found); `modified` is the object of a MODIFIED event.
   */
  readonly onChange: (kind: string, modified?: RawObject) => void;
  readonly onRestart: (kind: string, reason: string, status?: number) => void;
}

const secretKind = watchedKinds.find((k) => k.kind === 'Secret') as WatchedKind;
const configMapKind = watchedKinds.find((k) => k.kind === 'ConfigMap') as WatchedKind;

/**
 * The live half of the sources stage: list+watch of every kind in `watchedKinds` that the options call
 * for, turned into the same Snapshot the file source makes. Secrets are never watched wholesale: TLS
 * Secrets by type, and any other Secret or ConfigMap only while something refers to it (`follow`).
 * The Gateway API kinds are watched once their CRDs are served, looked for again until they are.
 */
export class ClusterSource {
  private readonly reflectors = new Map<string, Reflector>();
  private readonly followed = new Map<string, Reflector>();
  private gatewayApiServed = false;
  /** The first look for the Gateway API has ended (served or not): until then the source is not synced. */
  private gatewayApiLooked = false;
  private discovery: NodeJS.Timeout | undefined;
  private stopped = false;
  private readonly abort = new AbortController();
  private readonly assembler = new SnapshotAssembler();

  constructor(private readonly options: ClusterSourceOptions) {}

  /** Starts the watches and the look for the Gateway API; returns at once (`synced` says when they are in). */
  start(): void {
    for (const kind of watchedKinds) {
      if (kind.when === 'always' || (kind.when === 'endpoints' && this.options.upstreams === 'endpoints')) this.watchKind(kind);
      else if (kind.kind === 'Namespace' && this.options.watchNamespaces) this.watchKind(kind);
    }
    void this.discoverGatewayApi();
  }

  /**
   * Every watch has listed at least once, after the first look for the Gateway API (its kinds count once
   * served). The CRDs do not count: their versions only inform the GatewayClass status, and a cluster
   * that does not let us read them is served all the same.
   */
  synced(): boolean {
    const counted = [...this.reflectors].filter(([key]) => !key.startsWith(`${customResourceDefinitionKind.kind}/`)).map(([, r]) => r);
    return this.gatewayApiLooked && [...counted, ...this.followed.values()].every((r) => r.synced);
  }

  snapshot(): Snapshot {
    return this.assembler.assemble([...this.reflectors.values(), ...this.followed.values()].map((r) => r.store));
  }

  /** The objects of one kind as the API last sent them (each once). */
  objects(kind: string): RawObject[] {
    const found = new Map<string, RawObject>();
    for (const reflector of [...this.reflectors.values(), ...this.followed.values()]) {
      for (const [key, object] of reflector.store) if (object.kind === kind) found.set(key, object);
    }
    return [...found.values()];
  }

  /** Watches restarted so far, over all of them. */
  get restarts(): number {
    return [...this.reflectors.values(), ...this.followed.values()].reduce((sum, r) => sum + r.restarts, 0);
  }

  /** Objects held, by kind, for the resources metric. */
  counts(): Map<string, number> {
    const counts = new Map<string, number>();
    for (const object of this.snapshot().objects) counts.set(object.kind, (counts.get(object.kind) ?? 0) + 1);
    return counts;
  }

  /**
   * Follows exactly these referenced Secrets and ConfigMaps: starts watches for new ones, stops the rest.
   * With `namespaces`, a reference outside them opens no watch (only the operator's ConfigMaps may be elsewhere).
   */
  follow(objects: readonly FollowedObject[]): void {
    const { namespaces, controllerConfigMap, servicesConfigMaps = [] } = this.options;
    const operators = new Set([controllerConfigMap, ...servicesConfigMaps]);
    const readable = (o: FollowedObject) =>
      namespaces.length === 0 || namespaces.includes(o.namespace) || (o.kind === 'ConfigMap' && (o.operator === true || operators.has(`${o.namespace}/${o.name}`)));
    const wanted = new Map(objects.filter(readable).map((o) => [`${o.kind}/${o.namespace}/${o.name}`, o]));
    for (const [key, reflector] of this.followed) {
      if (wanted.has(key)) continue;
      this.followed.delete(key);
      void reflector.stop();
      this.options.onChange(key.slice(0, key.indexOf('/')));
    }
    for (const [key, object] of wanted) {
      if (this.followed.has(key)) continue;
      const reflector = this.reflector(object.kind === 'Secret' ? secretKind : configMapKind, object.namespace, `metadata.name=${object.name}`);
      this.followed.set(key, reflector);
      reflector.start();
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.abort.abort();
    clearTimeout(this.discovery);
    await Promise.all([...this.reflectors.values(), ...this.followed.values()].map((r) => r.stop()));
  }

  private watchKind(kind: WatchedKind): void {
    const fieldSelector = kind.kind === 'Secret' ? 'type=kubernetes.io/tls' : undefined;
    const scopes = kind.namespaced && this.options.namespaces.length > 0 ? this.options.namespaces : [undefined];
    for (const namespace of scopes) {
      const reflector = this.reflector(kind, namespace, fieldSelector);
      this.reflectors.set(`${kind.kind}/${kind.version}/${namespace ?? ''}`, reflector);
      reflector.start();
    }
  }

  private watchCustomResourceDefinition(name: string): void {
    const reflector = this.reflector(customResourceDefinitionKind, undefined, `metadata.name=${name}`);
    this.reflectors.set(`${customResourceDefinitionKind.kind}/${name}`, reflector);
    reflector.start();
  }

  private reflector(kind: ApiKind, namespace: string | undefined, fieldSelector: string | undefined): Reflector {
    return new Reflector({
      client: this.options.client,
      kind,
      ...(namespace !== undefined && { namespace }),
      ...(fieldSelector !== undefined && { fieldSelector }),
      timing: this.options.timing,
      onChange: (modified) => this.options.onChange(kind.kind, modified),
      onRestart: (reason, status) => this.options.onRestart(kind.kind, reason, status),
    });
  }

  /**
   * Starts the Gateway API watches (and Namespaces, for `allowedRoutes` selectors) when the group is
   * served, each kind in the first of its versions that is; otherwise looks again later.
   */
  private async discoverGatewayApi(): Promise<void> {
    if (this.stopped || this.gatewayApiServed) return;
    const gatewayKinds = watchedKinds.filter((k) => k.when === 'gateway-api');
    const served = new Map<string, Set<string>>();
    try {
      for (const version of new Set(gatewayKinds.flatMap((k) => (k.group === '' ? [] : k.versions)))) {
        const resources = await this.servedResources(`/apis/gateway.networking.k8s.io/${version}`);
        if (resources) served.set(version, resources);
      }
    } catch (error) {
      if (this.stopped) return;
      this.options.onRestart('GatewayAPI', `discovery failed: ${(error as Error).message}`, error instanceof ApiError ? error.status : undefined);
    }
    if (this.stopped) return;
    const chosen = gatewayKinds
      .filter((k) => k.group !== '')
      .map((k) => ({ kind: k, version: k.versions.find((v) => served.get(v)?.has(k.plural)) }));
    if (chosen.some((c) => c.version !== undefined)) {
      this.gatewayApiServed = true;
      for (const { kind, version } of chosen) if (version !== undefined) this.watchKind({ ...kind, version });
      for (const { kind } of chosen) this.watchCustomResourceDefinition(`${kind.plural}.${kind.group}`);
      for (const kind of gatewayKinds.filter((k) => k.group === '' && !(k.kind === 'Namespace' && this.options.watchNamespaces))) this.watchKind(kind);
      this.gatewayApiLooked = true;
      this.options.onChange('');
      return;
    }
    if (!this.gatewayApiLooked) {
      this.gatewayApiLooked = true;
      this.options.onChange('');
    }
    this.discovery = setTimeout(() => void this.discoverGatewayApi(), this.options.discoveryIntervalMs);
    this.discovery.unref();
  }

  private async servedResources(path: string): Promise<Set<string> | undefined> {
    try {
      const list = await this.options.client.request<{ resources?: { name?: string }[] }>('GET', path, { signal: this.abort.signal });
      return new Set((list.resources ?? []).map((r) => r.name ?? ''));
    } catch (error) {
      if (error instanceof ApiError && error.status === 404) return undefined;
      throw error;
    }
  }
}
