import type { Snapshot } from '../sources/snapshot.js';
import { build, type BuildResult } from '../render/build.js';
import { objectId, type TranslateOptions } from '../translate/options.js';
import type { NginxCheck } from './check.js';

/** Runs `nginx -t` (or an equivalent) on a build's files. */
export type BuildCheck = (result: BuildResult) => Promise<NginxCheck>;

export interface CheckedBuild {
  /** The last build: the one that passed, or the full one when the failure could not be attributed. */
  readonly result: BuildResult;
  readonly check: NginxCheck;
  /** Resources left out because nginx rejected the config with them, by `Kind/namespace/name`. */
  readonly quarantined: ReadonlyMap<string, string>;
}

/**
 * Kinds whose objects a tenant creates and that can be left out on their own, in the order the search
 * adds them back: routing resources first, then what they refer to. With that order a bad Secret is
 * found as the Secret (its hosts fall back to the default certificate), not as the Ingress that uses it.
 */
const quarantineOrder = ['Ingress', 'TLSRoute', 'Gateway', 'BackendTLSPolicy', 'Service', 'Secret', 'ConfigMap'] as const;

/** Enough for a handful of bad resources; a config that needs more is failing for another reason. */
const maxQuarantined = 16;

/**
 * Build, check, and when the check fails find the resources that make it fail and build again without
 * them, so one tenant's bad resource never stops everyone else's config from loading. Allow-lists catch
 * what we know nginx refuses; this is the defence in depth for what they miss.
 *
 * The search is deterministic: with the failing resources R (in `quarantineOrder`, then namespace/name),
 * it finds the shortest prefix of R whose build fails and leaves out the last resource of that prefix;
 * about log2(|R|) checks per culprit. If the build fails even without any of R (a bad ConfigMap or
 * flag), the failure is not a tenant's, and it is returned as it is.
 */
export async function buildChecked(snapshot: Snapshot, options: TranslateOptions, check: BuildCheck): Promise<CheckedBuild> {
  const controllerConfigMap = options.configMap;
  const candidates = snapshot.objects
    .filter((o) => (quarantineOrder as readonly string[]).includes(o.kind))
    .filter((o) => !(o.kind === 'ConfigMap' && `${o.metadata.namespace}/${o.metadata.name}` === controllerConfigMap))
    .map((o) => objectId(o))
    .filter((id, index, ids) => ids.indexOf(id) === index)
    .sort(compareCandidates);

  const quarantined = new Map(options.quarantine ?? []);
  const attempt = async (excluded: ReadonlyMap<string, string>) => {
    const result = build(snapshot, { ...options, quarantine: excluded });
    return { result, check: await check(result) };
  };

  let current = await attempt(quarantined);
  while (!current.check.ok && quarantined.size < maxQuarantined) {
    const remaining = candidates.filter((id) => !quarantined.has(id));
    const without = (included: number) => new Map([...quarantined, ...remaining.slice(included).map((id) => [id, ''] as const)]);
    if (remaining.length === 0 || !(await attempt(without(0))).check.ok) break;
    // Invariant: including remaining[0, low) passes, including remaining[0, high) fails.
    let low = 0;
    let high = remaining.length;
    let failure = current.check.output;
    while (high - low > 1) {
      const middle = (low + high) >>> 1;
      const probe = await attempt(without(middle));
      if (probe.check.ok) {
        low = middle;
      } else {
        high = middle;
        failure = probe.check.output;
      }
    }
    quarantined.set(remaining[high - 1] as string, nginxMessage(failure));
    current = await attempt(quarantined);
  }
  return { ...current, quarantined };
}

function compareCandidates(a: string, b: string): number {
  const rank = (id: string) => quarantineOrder.indexOf(id.slice(0, id.indexOf('/')) as (typeof quarantineOrder)[number]);
  return rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0);
}

/**
 * nginx's own complaint, without the `in FILE:LINE` of the throw-away config it was found in: the
 * first `[emerg]` line, else the first line.
 */
export function nginxMessage(output: string): string {
  const lines = output.split('\n').map((l) => l.trim()).filter(Boolean);
  const line = lines.find((l) => l.includes('[emerg]')) ?? lines[0] ?? 'nginx -t failed';
  return line.replace(/^nginx: /, '').replace(/ in \S+:\d+$/, '');
}
