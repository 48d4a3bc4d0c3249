import type { Snapshot } from '../snapshot.js';
import { ClusterAccessError } from './access-error.js';
import type { ApiClient } from './client.js';
import { defaultReflectorTiming } from './reflector.js';
import { ClusterSource, type FollowedObject } from './source.js';

export interface ReadClusterOptions {
  readonly client: ApiClient;
  /** List namespaced kinds only in these namespaces; all namespaces when empty. */
  readonly namespaces: readonly string[];
  readonly upstreams: 'service' | 'endpoints';
  /** List Namespaces too (`--snippet-namespace-selector` reads their labels). */
  readonly watchNamespaces?: boolean;
  /** The Secrets and ConfigMaps the listed objects refer to: the translate stage knows which. */
  readonly references: (snapshot: Snapshot) => readonly FollowedObject[];
  /** How long lists may keep failing (the API down, a watch cut) before the read gives up. */
  readonly timeoutMs: number;
}

/** Statuses a retry does not change: no credentials, or no permission to list. */
const finalStatuses: ReadonlySet<number> = new Set([401, 403]);

const pollMs = 20;

/**
 * One look at the cluster for a command that reads it once (`audit --cluster`): lists every kind the
 * cluster mode watches, then the Secrets and ConfigMaps those objects refer to, and stops. It reads the
 * way the cluster mode does (list, then watch), so the cluster mode's RBAC is what it needs. Missing
 * permissions fail at once; failed lists are retried until `timeoutMs`, then reported with the API's
 * last word per kind. Gateway API discovery is asked once: the client must give it `timeoutMs` too.
 */
export async function readClusterOnce(options: ReadClusterOptions): Promise<Snapshot> {
  const problems = new Map<string, { reason: string; status?: number }>();
  const source = new ClusterSource({
    client: options.client,
    namespaces: options.namespaces,
    upstreams: options.upstreams,
    ...(options.watchNamespaces !== undefined && { watchNamespaces: options.watchNamespaces }),
    timing: defaultReflectorTiming,
    discoveryIntervalMs: options.timeoutMs,
    onChange: () => undefined,
    onRestart: (kind, reason, status) => problems.set(kind, { reason, ...(status !== undefined && { status }) }),
  });
  const deadline = Date.now() + options.timeoutMs;
  const untilSynced = async (): Promise<void> => {
    while (!source.synced()) {
      const refused = [...problems].filter(([, p]) => p.status !== undefined && finalStatuses.has(p.status));
      if (refused.length > 0) throw new ClusterAccessError(`the API refused access: ${describe(refused)}`);
      if (Date.now() > deadline) throw new ClusterAccessError(`the cluster could not be read within ${options.timeoutMs} ms: ${describe([...problems]) || 'no answer'}`);
      await new Promise((resolve) => setTimeout(resolve, pollMs));
    }
  };
  try {
    await source.start();
    const discovery = problems.get('GatewayAPI');
    if (discovery) throw new ClusterAccessError(`the API did not say whether it serves the Gateway API: ${discovery.reason}`);
    await untilSynced();
    source.follow(options.references(source.snapshot()));
    await untilSynced();
    return source.snapshot();
  } finally {
    await source.stop();
  }
}

function describe(problems: readonly (readonly [string, { readonly reason: string }])[]): string {
  // The reflector's own words end with when it would try again; this read does not.
  return problems.map(([kind, p]) => `${kind}: ${p.reason.replace(/; retrying in \d+ ms$/, '')}`).join('; ');
}
