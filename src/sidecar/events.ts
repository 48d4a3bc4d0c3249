import { createHash } from 'node:crypto';
import type { ApiClient } from '../sources/cluster/client.js';
import { collectionPath, eventKind } from '../sources/cluster/kinds.js';
import { microTime } from './leader.js';
import type { Logger } from './log.js';

export interface EventSubject {
  readonly apiVersion: string;
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
  readonly uid?: string;
}

export interface EventRecorderOptions {
  readonly client: ApiClient;
  readonly controllerName: string;
  /** This process (the leader identity): events.k8s.io requires it. */
  readonly instance: string;
  readonly log: Logger;
  /** The same event (subject, reason, note) again within this window is dropped. */
  readonly dedupeWindowMs: number;
  /** Token bucket: at most `burst` at once, refilled at `perSecond`. */
  readonly burst: number;
  readonly perSecond: number;
}

/** `backend-unresolved` → `BackendUnresolved`: the CamelCase the Event reason field is read in. */
export function eventReason(code: string): string {
  return code.replace(/(^|-)([a-z0-9])/g, (_, __, c: string) => c.toUpperCase()).slice(0, 128);
}

/**
 * `events.k8s.io/v1` Events about resources, deduplicated (the same note on the same resource once per
 * window, whatever how often it is rendered) and rate-limited (a broken cluster must not flood the API
 * server). Failures to record are logged, never thrown: Events are a courtesy.
 */
export class EventRecorder {
  private readonly recent = new Map<string, number>();
  private tokens: number;
  private refilled = Date.now();
  private dropped = 0;

  constructor(private readonly options: EventRecorderOptions) {
    this.tokens = options.burst;
  }

  record(subject: EventSubject, type: 'Normal' | 'Warning', reason: string, action: string, note: string): void {
    const now = Date.now();
    const key = `${subject.kind}/${subject.namespace}/${subject.name}\n${reason}\n${note}`;
    const last = this.recent.get(key);
    if (last !== undefined && now - last < this.options.dedupeWindowMs) return;
    this.refill(now);
    if (this.tokens < 1) {
      this.dropped++;
      return;
    }
    this.tokens--;
    this.recent.set(key, now);
    this.forget(now);
    void this.create(subject, type, reason, action, note, new Date(now));
  }

  /** Events dropped by the rate limit so far. */
  get droppedCount(): number {
    return this.dropped;
  }

  private refill(now: number): void {
    this.tokens = Math.min(this.options.burst, this.tokens + ((now - this.refilled) / 1000) * this.options.perSecond);
    this.refilled = now;
  }

  private forget(now: number): void {
    if (this.recent.size < 10_000) return;
    for (const [key, at] of this.recent) if (now - at >= this.options.dedupeWindowMs) this.recent.delete(key);
  }

  private async create(subject: EventSubject, type: 'Normal' | 'Warning', reason: string, action: string, note: string, now: Date): Promise<void> {
    const namespace = subject.namespace || 'default';
    const suffix = createHash('sha256').update(`${reason}\n${note}\n${now.getTime()}\n${Math.random()}`).digest('hex').slice(0, 16);
    const body = {
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      metadata: { name: `${subject.name.slice(0, 200)}.${suffix}`, namespace },
      eventTime: microTime(now),
      reportingController: this.options.controllerName,
      reportingInstance: this.options.instance.slice(0, 128),
      action,
      reason,
      type,
      regarding: {
        apiVersion: subject.apiVersion,
        kind: subject.kind,
        name: subject.name,
        ...(subject.namespace !== '' && { namespace: subject.namespace }),
        ...(subject.uid !== undefined && { uid: subject.uid }),
      },
      note: Buffer.from(note).subarray(0, 1024).toString('utf8').replace(/\uFFFD$/, ''),
    };
    try {
      await this.options.client.request('POST', collectionPath(eventKind, namespace), { body });
    } catch (error) {
      this.options.log.warn('could not record an Event', { regarding: `${subject.kind} ${namespace}/${subject.name}`, reason, error: (error as Error).message });
    }
  }
}
