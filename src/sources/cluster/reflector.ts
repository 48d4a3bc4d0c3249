import { setTimeout as delay } from 'node:timers/promises';
import { ApiError, type ApiClient, type WatchEvent } from './client.js';
import { apiVersionOf, collectionPath, type ApiKind } from './kinds.js';

/** A raw object as the API server sends it, with `kind` and `apiVersion` always present. */
export type RawObject = Record<string, unknown> & {
  readonly kind: string;
  readonly apiVersion: string;
  readonly metadata: { readonly name: string; readonly namespace?: string; readonly resourceVersion?: string };
};

export interface ReflectorTiming {
  /** `timeoutSeconds` asked of the server per watch, jittered up to twice this (spreads relists). */
  readonly watchTimeoutSeconds: number;
  /**
   * A watch with no event, not even a bookmark, for this long is presumed dead and started again from
   * the last resourceVersion; a second one in a row that stays silent leads to a list. The API server
   * sends a bookmark about every minute to a watch that asks for them.
   */
  readonly idleTimeoutMs: number;
  /** A full list this often, whatever the watch says: the last resort against a missed event. */
  readonly relistIntervalMs: number;
  readonly backoffInitialMs: number;
  readonly backoffMaxMs: number;
  /** Items per LIST page. */
  readonly pageSize: number;
}

export const defaultReflectorTiming: ReflectorTiming = {
  watchTimeoutSeconds: 300,
  idleTimeoutMs: 90_000,
  relistIntervalMs: 30 * 60_000,
  backoffInitialMs: 500,
  backoffMaxMs: 30_000,
  pageSize: 500,
};

export interface ReflectorOptions {
  readonly client: ApiClient;
  readonly kind: ApiKind;
  /** Only this namespace (namespaced kinds); every namespace when absent. */
  readonly namespace?: string;
  readonly fieldSelector?: string;
  readonly labelSelector?: string;
  readonly timing: ReflectorTiming;
  /**
   * Called after the store changed (an event, or a list that differs from what was held); with the
   * object of a MODIFIED event, so that the caller can tell its own status writes coming back.
   */
  readonly onChange: (modified?: RawObject) => void;
  /** Called when the watch had to be restarted, with why; for metrics and the log. */
  /** `status`: the API's HTTP status when the API answered with an error. */
  readonly onRestart: (reason: string, status?: number) => void;
}

class Expired extends Error {}
class Silent extends Error {}

/**
 * List, then watch from the list's resourceVersion, for one kind (and namespace, and selector), keeping
 * a store of the objects. It never gives up: a watch that ends is resumed from the last resourceVersion
 * seen (events or bookmarks), one that fails is retried with exponential backoff and jitter, one that
 * stays silent too long is cut and resumed, a 410 (as an HTTP status or an ERROR event) leads to a full
 * relist, and so does a timer. A relist replaces the store, so deletions made while the watch was down
 * are noticed. Until the first list succeeds the store is empty and `synced` is false.
 */
export class Reflector {
  readonly store = new Map<string, RawObject>();
  synced = false;
  /** `Date.now()` of the last answer from the server (list page, event or bookmark). */
  lastContact = 0;
  restarts = 0;
  private resourceVersion = '';
  private lastList = 0;
  private stopped = false;
  private readonly abort = new AbortController();
  private running: Promise<void> | undefined;

  constructor(private readonly options: ReflectorOptions) {}

  get description(): string {
    const { kind, namespace, fieldSelector } = this.options;
    return `${kind.kind}${namespace ? ` in ${namespace}` : ''}${fieldSelector ? ` (${fieldSelector})` : ''}`;
  }

  start(): void {
    this.running ??= this.loop();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.abort.abort();
    await this.running;
  }

  private async loop(): Promise<void> {
    let backoff = this.options.timing.backoffInitialMs;
    let needList = true;
    let silentInARow = 0;
    while (!this.stopped) {
      try {
        if (needList || Date.now() - this.lastList > this.options.timing.relistIntervalMs) {
          await this.list();
          needList = false;
        }
        await this.watchOnce();
        backoff = this.options.timing.backoffInitialMs;
        silentInARow = 0;
      } catch (error) {
        if (this.stopped) break;
        this.restarts++;
        if (error instanceof Expired) {
          needList = true;
          this.options.onRestart('resourceVersion expired (410): listing again');
          continue;
        }
        silentInARow = error instanceof Silent ? silentInARow + 1 : 0;
        // A server whose new watches stay silent too may never send events again: the list does not depend on them.
        if (silentInARow >= 2) needList = true;
        const reason = error instanceof Silent ? error.message : `${(error as Error).message}; retrying in ${Math.round(backoff)} ms`;
        this.options.onRestart(reason, error instanceof ApiError ? error.status : undefined);
        if (!(error instanceof Silent)) {
          await delay(backoff * (0.5 + Math.random() / 2), undefined, { signal: this.abort.signal }).catch(() => undefined);
          backoff = Math.min(backoff * 2, this.options.timing.backoffMaxMs);
        }
        // Without a resourceVersion to resume from (the list never succeeded), list again.
        if (this.resourceVersion === '') needList = true;
      }
    }
  }

  private query(): Record<string, string | undefined> {
    return { fieldSelector: this.options.fieldSelector, labelSelector: this.options.labelSelector };
  }

  private async list(): Promise<void> {
    const { client, kind, timing } = this.options;
    const items: RawObject[] = [];
    let continueToken: string | undefined;
    let resourceVersion = '';
    do {
      let page: { metadata?: { resourceVersion?: string; continue?: string }; items?: Record<string, unknown>[] };
      try {
        page = await client.request('GET', collectionPath(kind, this.options.namespace), {
          query: { ...this.query(), limit: timing.pageSize, continue: continueToken },
          signal: this.abort.signal,
        });
      } catch (error) {
        // An expired continue token: start the list over.
        if (error instanceof ApiError && error.status === 410) throw new Expired(error.message);
        throw error;
      }
      this.lastContact = Date.now();
      // LIST items carry no kind or apiVersion; watch events do. Fill them in, the same for both.
      for (const item of page.items ?? []) items.push(slimmed(listItem(item, kind)));
      resourceVersion = page.metadata?.resourceVersion ?? resourceVersion;
      continueToken = page.metadata?.continue || undefined;
    } while (continueToken !== undefined);

    const next = new Map(items.map((item) => [keyOf(item), item]));
    const changed = next.size !== this.store.size || [...next].some(([key, item]) => this.store.get(key)?.metadata.resourceVersion !== item.metadata.resourceVersion);
    this.store.clear();
    for (const [key, item] of next) this.store.set(key, item);
    this.resourceVersion = resourceVersion;
    this.lastList = Date.now();
    const firstSync = !this.synced;
    this.synced = true;
    if (changed || firstSync) this.options.onChange();
  }

  private async watchOnce(): Promise<void> {
    const { client, kind, timing } = this.options;
    const timeoutSeconds = Math.round(timing.watchTimeoutSeconds * (1 + Math.random()));
    const stream = new AbortController();
    const onStop = () => stream.abort();
    this.abort.signal.addEventListener('abort', onStop);
    let silent: Silent | undefined;
    let watchdog: NodeJS.Timeout | undefined;
    const arm = () => {
      clearTimeout(watchdog);
      watchdog = setTimeout(() => {
        silent = new Silent(`no event or bookmark for ${timing.idleTimeoutMs} ms: the watch is presumed dead and restarted`);
        stream.abort();
      }, Math.min(timing.idleTimeoutMs, (timeoutSeconds + 30) * 1000));
    };
    arm();
    try {
      await client.watch(collectionPath(kind, this.options.namespace), {
        query: { ...this.query(), resourceVersion: this.resourceVersion, allowWatchBookmarks: true, timeoutSeconds },
        signal: stream.signal,
        // A server that does not even answer the watch is as dead as one that stops talking.
        timeoutMs: timing.idleTimeoutMs,
        onEvent: (event) => {
          this.lastContact = Date.now();
          arm();
          this.apply(event);
        },
      });
    } catch (error) {
      if (silent) throw silent;
      if (error instanceof ApiError && error.status === 410) throw new Expired(error.message);
      throw error;
    } finally {
      clearTimeout(watchdog);
      this.abort.signal.removeEventListener('abort', onStop);
    }
  }

  private apply(event: WatchEvent): void {
    const object = slimmed(event.object as RawObject);
    const resourceVersion = object.metadata?.resourceVersion;
    switch (event.type) {
      case 'ERROR': {
        const status = event.object as { code?: number; message?: string };
        if (status.code === 410) throw new Expired(status.message ?? 'too old resource version');
        throw new Error(`the watch sent an error: ${status.code ?? ''} ${status.message ?? ''}`.trim());
      }
      case 'BOOKMARK':
        break;
      case 'ADDED':
        this.store.set(keyOf(object), object);
        this.options.onChange();
        break;
      case 'MODIFIED':
        this.store.set(keyOf(object), object);
        this.options.onChange(object);
        break;
      case 'DELETED':
        this.store.delete(keyOf(object));
        this.options.onChange();
        break;
    }
    if (resourceVersion) this.resourceVersion = resourceVersion;
  }
}

const lastApplied = 'kubectl.kubernetes.io/last-applied-configuration';

/**
 * A LIST item with the kind and apiVersion of the list (LIST items carry none; watch events do). The
 * two come first, in the order the API server writes them in a watch event, so that objects from both
 * have one shape: a literal that starts with a spread would give every object a hidden class of its own
 * in Node 20, and translate reads thousands of them (see `withFields`).
 */
export function listItem(item: Readonly<Record<string, unknown>>, kind: Pick<ApiKind, 'kind' | 'group' | 'version'>): RawObject {
  const { kind: _kind, apiVersion: _apiVersion, ...fields } = item;
  return { kind: kind.kind, apiVersion: apiVersionOf(kind), ...fields } as RawObject;
}

/**
 * The object without what no stage reads and what is often most of it: `managedFields` and kubectl's
 * copy of the whole last applied manifest. With thousands of objects held, that is much of the memory.
 * Built field by field, never as a literal that starts with a spread (see `listItem`).
 */
export function slimmed(object: RawObject): RawObject {
  const metadata = object.metadata as (Record<string, unknown> & { annotations?: Record<string, string> }) | undefined;
  if (!metadata || metadata['managedFields'] === undefined && metadata.annotations?.[lastApplied] === undefined) return object;
  const { managedFields: _managedFields, ...slimMetadata } = metadata;
  if (metadata.annotations) {
    const { [lastApplied]: _lastApplied, ...annotations } = metadata.annotations;
    slimMetadata.annotations = annotations;
  }
  const { kind, apiVersion, metadata: _metadata, ...fields } = object;
  return { kind, apiVersion, metadata: slimMetadata, ...fields } as RawObject;
}

function keyOf(object: RawObject): string {
  return `${object.metadata.namespace ?? ''}/${object.metadata.name}`;
}
