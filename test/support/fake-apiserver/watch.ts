import type http from 'node:http';
import { apiVersionOf, toServed, type ResourceType } from './resources.js';
import { selectableAttributes, type Selector } from './selectors.js';
import type { JsonObject, Status } from './status.js';
import type { Change } from './store.js';

/**
 * One open watch stream: newline-delimited JSON events on a chunked 200 response, filtered the
 * way the watch cache filters them (cacheWatcher.convertToWatchEvent): an object entering the
 * selection is ADDED, leaving it is DELETED (its previous state, at the change's resourceVersion).
 */

type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

export interface WatchDescription {
  readonly id: number;
  readonly group: string;
  readonly version: string;
  readonly resource: string;
  /** Undefined for a watch across all namespaces (or of a cluster-scoped kind). */
  readonly namespace: string | undefined;
  /** Silent until released (see FakeApiServer.hangWatches). */
  readonly hung: boolean;
}

export class WatchStream {
  #hung: boolean;
  #headersSent = false;
  #closed = false;
  /** Lines held back while hung, written in order on release. */
  #pending: string[] = [];
  /** Set when the stream should have ended while it was hung. */
  #endWhenReleased = false;
  #bookmarkTimer: NodeJS.Timeout | undefined;
  #timeoutTimer: NodeJS.Timeout | undefined;

  constructor(
    readonly id: number,
    readonly type: ResourceType,
    readonly version: string,
    readonly namespace: string | undefined,
    readonly matches: Selector,
    readonly response: http.ServerResponse,
    hung: boolean,
    private readonly onClosed: (stream: WatchStream) => void,
  ) {
    this.#hung = hung;
    response.on('close', () => this.#finish());
  }

  describe(): WatchDescription {
    return { id: this.id, group: this.type.group, version: this.version, resource: this.type.resource, namespace: this.namespace, hung: this.#hung };
  }

  get hung(): boolean {
    return this.#hung;
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Headers go out at once (as kube-apiserver flushes them), unless the stream starts hung. */
  start(timeoutSeconds: number | undefined, bookmarkIntervalMs: number | undefined): void {
    if (!this.#hung) this.#sendHeaders();
    if (timeoutSeconds !== undefined) {
      this.#timeoutTimer = setTimeout(() => this.end(), timeoutSeconds * 1000);
    }
    if (bookmarkIntervalMs !== undefined) {
      this.#bookmarkTimer = setInterval(() => this.onBookmarkDue?.(), bookmarkIntervalMs);
    }
  }

  /** Called on each bookmark tick; the server supplies the current resourceVersion. */
  onBookmarkDue: (() => void) | undefined;

  #sendHeaders(): void {
    if (this.#headersSent || this.#closed) return;
    this.#headersSent = true;
    this.response.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private' });
    this.response.flushHeaders();
  }

  #write(line: string): void {
    if (this.#closed) return;
    if (this.#hung) this.#pending.push(line);
    else this.response.write(line);
  }

  send(type: WatchEventType, object: JsonObject | Status): void {
    this.#write(`${JSON.stringify({ type, object })}\n`);
  }

  /**
   * A BOOKMARK carries only kind, apiVersion and the resourceVersion (and the annotation that ends
   * the initial events of a streaming list). A hung stream skips periodic ones.
   */
  sendBookmark(resourceVersion: number, annotations?: Record<string, string>): void {
    if ((this.#hung && annotations === undefined) || this.#closed) return;
    const metadata: JsonObject = { resourceVersion: String(resourceVersion), ...(annotations ? { annotations } : {}) };
    this.send('BOOKMARK', { kind: this.type.kind, apiVersion: apiVersionOf(this.type, this.version), metadata });
  }

  /** The event this watcher sees for a store change, if any. */
  deliver(change: Change): void {
    if (change.storage !== this.type.storage) return;
    const passes = (object: JsonObject | undefined): boolean => {
      if (object === undefined) return false;
      const { labels, fields } = selectableAttributes(this.type, object);
      if (this.namespace !== undefined && this.type.namespaced && fields['metadata.namespace'] !== this.namespace) return false;
      return this.matches(labels, fields);
    };
    const currentPasses = change.type !== 'DELETED' && passes(change.object);
    const previousPasses = passes(change.previous);
    if (currentPasses) {
      this.send(previousPasses ? 'MODIFIED' : 'ADDED', toServed(this.type, this.version, change.object, true));
    } else if (previousPasses) {
      const gone = structuredClone(change.previous!);
      gone.metadata = { ...(gone.metadata as JsonObject), resourceVersion: String(change.revision) };
      this.send('DELETED', toServed(this.type, this.version, gone, true));
    }
  }

  hang(): void {
    this.#hung = true;
  }

  release(): void {
    if (!this.#hung) return;
    this.#hung = false;
    this.#sendHeaders();
    for (const line of this.#pending.splice(0)) this.response.write(line);
    if (this.#endWhenReleased) this.end();
  }

  /** Ends the stream cleanly (the terminating zero-length chunk), as at timeoutSeconds. */
  end(): void {
    if (this.#closed) return;
    if (this.#hung) {
      this.#endWhenReleased = true;
      return;
    }
    this.#sendHeaders();
    this.response.end();
    this.#finish();
  }

  /** Cuts the connection mid-stream: no terminating chunk. */
  drop(): void {
    this.response.socket?.destroy();
    this.#finish();
  }

  #finish(): void {
    if (this.#closed) return;
    this.#closed = true;
    clearTimeout(this.#timeoutTimer);
    clearInterval(this.#bookmarkTimer);
    this.onClosed(this);
  }
}
