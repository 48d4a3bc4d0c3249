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
 * Kinds whose objects can be left out on their own, in the order the search adds them back. First what
 * others attach to and cannot render without (an Ingress without its Service answers 503; a TLSRoute
 * without its Gateway renders nothing), so that a route is not blamed for what its parent does. Then the routing resources. Last what they only refer to and do without
 * when it is missing (a host falls back to the default certificate, a policy without its CA closes its
 * share): so a bad Secret is found as the Secret, not as the Ingress that uses it.
 */
const quarantineOrder = ['Service', 'Gateway', 'Ingress', 'TLSRoute', 'BackendTLSPolicy', 'Secret', 'ConfigMap'] as const;

/** Enough for a handful of bad resources; a config that needs more is failing for another reason. */
const maxQuarantined = 16;

/**
 * Build, check, and when the check fails find the resources that make it fail and build again without
 * them, so one tenant's bad resource never stops everyone else's config from loading. Allow-lists catch
 * what we know nginx refuses; this is the defence in depth for what they miss.
 *
 * The search is deterministic: over the candidates R (in `quarantineOrder`, then namespace/name, so
 * input order does not matter) it finds the shortest prefix of R whose build fails and leaves out the
 * last resource of that prefix, which is one the failure needs (with the rest of the prefix in). That
 * takes 1 + ceil(log2 |R|) checks per culprit, plus 2 in all: the build with no candidate at all, and
 * the final one. When even the build with no candidate fails (a bad ConfigMap or flag), the failure is
 * not a tenant's, and it is returned as it is. `first` is the build with `options`, when the caller has
 * made it already.
 */
export async function buildChecked(snapshot: Snapshot, options: TranslateOptions, check: BuildCheck, first?: BuildResult): Promise<CheckedBuild> {
  const quarantined = new Map(options.quarantine ?? []);
  const attempt = async (excluded: ReadonlyMap<string, string>, built?: BuildResult) => {
    const result = built ?? build(snapshot, { ...options, quarantine: excluded });
    return { result, check: await check(result) };
  };

  let current = await attempt(quarantined, first);
  if (current.check.ok) return { ...current, quarantined };
  const candidates = quarantineCandidates(snapshot, options).filter((id) => !quarantined.has(id));
  const withOnly = (included: readonly string[], prefix: number) =>
    new Map([...quarantined, ...included.slice(prefix).map((id) => [id, ''] as const)]);
  if (candidates.length === 0 || !(await attempt(withOnly(candidates, 0))).check.ok) return { ...current, quarantined };

  // Candidates [0, passing) of `remaining` are known to pass together (with the rest left out).
  let passing = 0;
  while (!current.check.ok && quarantined.size < maxQuarantined) {
    const remaining = candidates.filter((id) => !quarantined.has(id));
    // Only a check that gives different answers for the same config gets here; the search needs one that does not.
    if (passing >= remaining.length) break;
    // Invariant: including remaining[0, low) passes, including remaining[0, high) fails.
    let low = passing;
    let high = remaining.length;
    let failure = current.check.output;
    while (high - low > 1) {
      const middle = (low + high) >>> 1;
      const probe = await attempt(withOnly(remaining, middle));
      if (probe.check.ok) {
        low = middle;
      } else {
        high = middle;
        failure = probe.check.output;
      }
    }
    quarantined.set(remaining[low] as string, nginxMessage(failure));
    // The passing prefix stays the same without the culprit: the next search starts after it.
    passing = low;
    current = await attempt(quarantined);
  }
  return { ...current, quarantined };
}

/** Objects of the kinds in `quarantineOrder`, by `objectId`, sorted; the controller ConfigMap is not a tenant's. */
function quarantineCandidates(snapshot: Snapshot, options: TranslateOptions): string[] {
  const ids = new Set<string>();
  for (const object of snapshot.objects) {
    if (!(quarantineOrder as readonly string[]).includes(object.kind)) continue;
    if (object.kind === 'ConfigMap' && `${object.metadata.namespace}/${object.metadata.name}` === options.configMap) continue;
    ids.add(objectId(object));
  }
  return [...ids].sort(compareCandidates);
}

function compareCandidates(a: string, b: string): number {
  const rank = (id: string) => quarantineOrder.indexOf(id.slice(0, id.indexOf('/')) as (typeof quarantineOrder)[number]);
  return rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0);
}

/**
 * nginx's own complaint, the same on every run: the first `[emerg]` line (else the first line), without
 * nginx's time stamp and process id (printed once the config's `error_log` is read) and without the
 * `in FILE:LINE` of the throw-away config it was found in.
 */
export function nginxMessage(output: string): string {
  const lines = output.split('\n').map((l) => l.trim()).filter(Boolean);
  const line = lines.find((l) => l.includes('[emerg]')) ?? lines[0] ?? 'nginx -t failed';
  return line
    .replace(/^nginx: /, '')
    .replace(/^\d{4}\/\d\d\/\d\d \d\d:\d\d:\d\d (\[\w+\]) \d+#\d+: (\*\d+ )?/, '$1 ')
    .replace(/ in \S+:\d+$/, '');
}
