import { ApiError, type ApiClient } from '../sources/cluster/client.js';
import { leaseKind, collectionPath, objectPath } from '../sources/cluster/kinds.js';

export interface LeaderElectionOptions {
  readonly client: ApiClient;
  readonly namespace: string;
  readonly name: string;
  /** Unique per process: a host name alone can collide (two containers, a restarted Pod). */
  readonly identity: string;
  readonly leaseDurationSeconds: number;
  /** How often to try to acquire or renew. */
  readonly retryPeriodMs: number;
  /** A leader that could not renew for this long steps down. */
  readonly renewDeadlineMs: number;
  readonly onChange: (leader: boolean) => void;
  readonly onError: (message: string) => void;
}

interface LeaseSpec {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
}

interface Lease {
  metadata: { name: string; namespace: string; resourceVersion?: string };
  spec?: LeaseSpec;
}

/** MicroTime as the API server wants it in Leases and Events: exactly six fractional digits. */
export function microTime(date: Date): string {
  return date.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

/**
 * Leader election on a `coordination.k8s.io/v1` Lease, as client-go does it: the holder renews every
 * retry period with optimistic concurrency (a stale resourceVersion is a 409 and a lost race); another
 * replica takes the Lease once it has seen no renewal for the lease duration, measured on its own clock
 * (clocks of different nodes are not compared). On stop the leader gives the Lease up at once.
 */
export class LeaderElection {
  private leader = false;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private lastRenew = 0;
  /** The other holder's record as last seen, and when we first saw it unchanged. */
  private observed: { record: string; since: number } | undefined;

  constructor(private readonly options: LeaderElectionOptions) {}

  get isLeader(): boolean {
    return this.leader;
  }

  start(): void {
    void this.tick();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    if (!this.leader) return;
    this.setLeader(false);
    try {
      const lease = await this.get();
      if (lease?.spec?.holderIdentity !== this.options.identity) return;
      const now = microTime(new Date());
      await this.put({ ...lease, spec: { ...lease.spec, holderIdentity: '', leaseDurationSeconds: 1, renewTime: now } });
    } catch (error) {
      this.options.onError(`could not release the leader Lease: ${(error as Error).message}`);
    }
  }

  private async tick(): Promise<void> {
    if (this.stopped) return;
    try {
      await this.tryAcquireOrRenew();
    } catch (error) {
      this.options.onError(`leader election: ${(error as Error).message}`);
    }
    if (this.leader && Date.now() - this.lastRenew > this.options.renewDeadlineMs) {
      this.options.onError(`could not renew the leader Lease for ${this.options.renewDeadlineMs} ms; stepping down`);
      this.setLeader(false);
    }
    if (this.stopped) return;
    this.timer = setTimeout(() => void this.tick(), this.options.retryPeriodMs * (this.leader ? 1 : 1 + Math.random() / 5));
    this.timer.unref();
  }

  private async tryAcquireOrRenew(): Promise<void> {
    const { identity, leaseDurationSeconds } = this.options;
    const now = new Date();
    const lease = await this.get();
    if (!lease) {
      const created = await this.create({
        metadata: { name: this.options.name, namespace: this.options.namespace },
        spec: { holderIdentity: identity, leaseDurationSeconds, acquireTime: microTime(now), renewTime: microTime(now), leaseTransitions: 0 },
      });
      if (created) this.renewed();
      return;
    }
    const spec = lease.spec ?? {};
    if (spec.holderIdentity === identity) {
      if (await this.put({ ...lease, spec: { ...spec, leaseDurationSeconds, renewTime: microTime(now) } })) this.renewed();
      return;
    }
    const record = `${spec.holderIdentity ?? ''}|${spec.renewTime ?? ''}|${spec.leaseDurationSeconds ?? ''}`;
    if (this.observed?.record !== record) this.observed = { record, since: Date.now() };
    const held = (spec.holderIdentity ?? '') !== '';
    const expired = Date.now() - this.observed.since > (spec.leaseDurationSeconds ?? leaseDurationSeconds) * 1000;
    if (this.leader) this.setLeader(false);
    if (held && !expired) return;
    const taken = await this.put({
      ...lease,
      spec: {
        holderIdentity: identity,
        leaseDurationSeconds,
        acquireTime: microTime(now),
        renewTime: microTime(now),
        leaseTransitions: (spec.leaseTransitions ?? 0) + 1,
      },
    });
    if (taken) this.renewed();
  }

  private renewed(): void {
    this.lastRenew = Date.now();
    if (!this.leader) this.setLeader(true);
  }

  private setLeader(leader: boolean): void {
    this.leader = leader;
    this.options.onChange(leader);
  }

  private async get(): Promise<Lease | undefined> {
    try {
      return await this.options.client.request<Lease>('GET', objectPath(leaseKind, this.options.namespace, this.options.name));
    } catch (error) {
      if (error instanceof ApiError && error.status === 404) return undefined;
      throw error;
    }
  }

  /** Creates the Lease; false when another replica created it first (409). */
  private async create(lease: Lease): Promise<boolean> {
    try {
      await this.options.client.request('POST', collectionPath(leaseKind, this.options.namespace), {
        body: { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', ...lease },
      });
      return true;
    } catch (error) {
      if (error instanceof ApiError && error.status === 409) return false;
      throw error;
    }
  }

  /** Replaces the Lease at the resourceVersion we read; false when another write came first (409). */
  private async put(lease: Lease): Promise<boolean> {
    try {
      await this.options.client.request('PUT', objectPath(leaseKind, this.options.namespace, this.options.name), {
        body: { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', ...lease },
      });
      return true;
    } catch (error) {
      if (error instanceof ApiError && error.status === 409) return false;
      throw error;
    }
  }
}
