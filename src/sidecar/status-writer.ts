import type { BuildResult } from '../build/build.js';
import { ApiError, type ApiClient } from '../sources/cluster/client.js';
import { objectPath, watchedKinds, type WatchedKind } from '../sources/cluster/kinds.js';
import type { RawObject } from '../sources/cluster/reflector.js';
import type { ResourceStatus } from '../model/status.js';
import type { Logger } from './log.js';
import { desiredIngressStatus, desiredStatus, type LoadBalancerIngress } from './status.js';

export interface StatusWriterOptions {
  readonly client: ApiClient;
  readonly controllerName: string;
  /** Ingress load-balancer status is ours to write (`--update-status`; off while another controller serves the same Ingresses). */
  readonly ingressStatus: boolean;
  /** `--gateway`: status only of these Gateways and of their entries in routes and policies. */
  readonly servedGateways?: ReadonlySet<string>;
  readonly log: Logger;
  /** The watched objects of a kind, as the API last sent them. */
  readonly objects: (kind: string) => readonly RawObject[];
}

/**
 * Writes what status.ts computes, and only what changed, the way kinds.ts says: Ingress load-balancer
 * addresses, GatewayClass and Gateway status by merge patch (they are ours alone), TLSRoute parents and
 * BackendTLSPolicy ancestors by a replace at the resourceVersion we read (other controllers own entries
 * of those lists; a 409 means one wrote meanwhile, and its watch event brings another round).
 */
export class StatusWriter {
  /**
   * What we last wrote to an object, and the resourceVersion it had then: until the watch brings the
   * object back changed, that is its status, so a round that runs in between writes nothing again.
   * `echo` is the resourceVersion the write gave it: the watch event that brings exactly that back is
   * our own write, not a change.
   */
  private readonly written = new Map<string, { readonly resourceVersion: string; readonly status: unknown; readonly echo?: string }>();

  constructor(private readonly options: StatusWriterOptions) {}

  async write(result: BuildResult, applied: boolean, addresses: readonly LoadBalancerIngress[], now: Date): Promise<number> {
    let writes = 0;
    const seen = new Set<string>();
    const ours = new Set(result.ingresses.map((i) => `${i.namespace}/${i.name}`));
    for (const ingress of this.options.ingressStatus ? this.options.objects('Ingress') : []) {
      seen.add(keyOf(ingress));
      const id = `${ingress.metadata.namespace}/${ingress.metadata.name}`;
      const current = this.asWritten(ingress);
      const status = desiredIngressStatus(current, ours.has(id), addresses);
      if (status && (await this.send(ingress, 'PATCH', { status: { loadBalancer: status['loadBalancer'] } }, status))) writes++;
    }
    const statuses = new Map(result.statuses.map((s) => [`${s.kind}/${s.namespace}/${s.name}`, s]));
    const served = this.options.servedGateways;
    const ctx = { controllerName: this.options.controllerName, now, applied, addresses, ...(served && { servedGateways: served }) };
    for (const kind of ['GatewayClass', 'Gateway', 'TLSRoute', 'HTTPRoute', 'GRPCRoute', 'BackendTLSPolicy'] as const) {
      for (const object of this.options.objects(kind)) {
        seen.add(keyOf(object));
        const desired: ResourceStatus | undefined = statuses.get(`${kind}/${object.metadata.namespace ?? ''}/${object.metadata.name}`);
        const next = desiredStatus(kind, this.asWritten(object), desired, ctx);
        if (!next) continue;
        const body = kindOf(object).statusWrite === 'patch' ? { status: next } : { ...object, status: next };
        if (await this.send(object, kindOf(object).statusWrite === 'patch' ? 'PATCH' : 'PUT', body, next)) writes++;
      }
    }
    for (const key of this.written.keys()) if (!seen.has(key)) this.written.delete(key);
    return writes;
  }

  /**
   * Whether a watched object is what our last status write made of it: its watch event is our write
   * coming back, and a round for it would build the same config again (at 10,000 Ingresses, seconds).
   */
  isEcho(object: RawObject): boolean {
    const written = this.written.get(keyOf(object));
    return written?.echo !== undefined && written.echo === object.metadata.resourceVersion;
  }

  /** The object with the status we wrote to it, while the watch has not brought it back since. */
  private asWritten(object: RawObject): RawObject {
    const written = this.written.get(keyOf(object));
    return written && written.resourceVersion === object.metadata.resourceVersion ? { ...object, status: written.status } : object;
  }

  /** PATCH (a merge patch) or PUT of the status subresource; remembers `status` as written. */
  private async send(object: RawObject, method: 'PATCH' | 'PUT', body: unknown, status: unknown): Promise<boolean> {
    const path = `${objectPath(kindOf(object), object.metadata.namespace ?? '', object.metadata.name)}/status`;
    const contentType = method === 'PATCH' ? 'application/merge-patch+json' : 'application/json';
    try {
      const response = await this.options.client.request<Partial<RawObject>>(method, path, { body, contentType });
      const echo = response.metadata?.resourceVersion;
      this.written.set(keyOf(object), { resourceVersion: object.metadata.resourceVersion ?? '', status, ...(echo !== undefined && { echo }) });
      return true;
    } catch (error) {
      if (error instanceof ApiError && (error.status === 409 || error.status === 404)) return false;
      this.options.log.warn('could not write status', { object: `${object.kind} ${object.metadata.namespace}/${object.metadata.name}`, error: (error as Error).message });
      return false;
    }
  }
}

function keyOf(object: RawObject): string {
  return `${object.kind}/${object.metadata.namespace ?? ''}/${object.metadata.name}`;
}

/** The watched kind of an object, in the version it was read in. */
function kindOf(object: RawObject): WatchedKind {
  const known = watchedKinds.find((k) => k.kind === object.kind);
  if (!known) throw new Error(`not a watched kind: ${object.kind}`);
  const slash = object.apiVersion.lastIndexOf('/');
  return { ...known, version: slash === -1 ? object.apiVersion : object.apiVersion.slice(slash + 1) };
}
