import type { BuildResult } from '../render/build.js';
import { ApiError, type ApiClient } from '../sources/cluster/client.js';
import { objectPath, watchedKinds, type WatchedKind } from '../sources/cluster/kinds.js';
import type { RawObject } from '../sources/cluster/reflector.js';
import type { ResourceStatus } from '../translate/gateway/index.js';
import type { Logger } from './log.js';
import { desiredIngressStatus, desiredStatus, type LoadBalancerIngress } from './status.js';

export interface StatusWriterOptions {
  readonly client: ApiClient;
  readonly controllerName: string;
  readonly log: Logger;
  /** The watched objects of a kind, as the API last sent them. */
  readonly objects: (kind: string) => readonly RawObject[];
}

/**
 * Writes what status.ts computes, and only what changed, the way kinds.ts says: Ingress load-balancer
 * addresses and Gateway status by merge patch (they are ours alone), TLSRoute parents and
 * BackendTLSPolicy ancestors by a replace at the resourceVersion we read (other controllers own entries
 * of those lists; a 409 means one wrote meanwhile, and its watch event brings another round).
 */
export class StatusWriter {
  constructor(private readonly options: StatusWriterOptions) {}

  async write(result: BuildResult, applied: boolean, addresses: readonly LoadBalancerIngress[], now: Date): Promise<number> {
    let writes = 0;
    const ours = new Set(result.ingresses.map((i) => `${i.namespace}/${i.name}`));
    for (const ingress of this.options.objects('Ingress')) {
      const id = `${ingress.metadata.namespace}/${ingress.metadata.name}`;
      const status = desiredIngressStatus(ingress, ours.has(id), addresses);
      if (status && (await this.patch(ingress, { status: { loadBalancer: status['loadBalancer'] } }))) writes++;
    }
    const statuses = new Map(result.statuses.map((s) => [`${s.kind}/${s.namespace}/${s.name}`, s]));
    const ctx = { controllerName: this.options.controllerName, now, applied, addresses };
    for (const kind of ['Gateway', 'TLSRoute', 'BackendTLSPolicy'] as const) {
      for (const object of this.options.objects(kind)) {
        const desired: ResourceStatus | undefined = statuses.get(`${kind}/${object.metadata.namespace}/${object.metadata.name}`);
        const next = desiredStatus(kind, object, desired, ctx);
        if (!next) continue;
        const written = kindOf(object).statusWrite === 'patch' ? await this.patch(object, { status: next }) : await this.replace(object, next);
        if (written) writes++;
      }
    }
    return writes;
  }

  private async patch(object: RawObject, body: unknown): Promise<boolean> {
    return this.send(object, 'PATCH', body, 'application/merge-patch+json');
  }

  private async replace(object: RawObject, status: unknown): Promise<boolean> {
    return this.send(object, 'PUT', { ...object, status }, 'application/json');
  }

  private async send(object: RawObject, method: string, body: unknown, contentType: string): Promise<boolean> {
    const path = `${objectPath(kindOf(object), object.metadata.namespace ?? '', object.metadata.name)}/status`;
    try {
      await this.options.client.request(method, path, { body, contentType });
      return true;
    } catch (error) {
      if (error instanceof ApiError && (error.status === 409 || error.status === 404)) return false;
      this.options.log.warn('could not write status', { object: `${object.kind} ${object.metadata.namespace}/${object.metadata.name}`, error: (error as Error).message });
      return false;
    }
  }
}

/** The watched kind of an object, in the version it was read in. */
function kindOf(object: RawObject): WatchedKind {
  const known = watchedKinds.find((k) => k.kind === object.kind);
  if (!known) throw new Error(`not a watched kind: ${object.kind}`);
  const slash = object.apiVersion.lastIndexOf('/');
  return { ...known, version: slash === -1 ? object.apiVersion : object.apiVersion.slice(slash + 1) };
}
