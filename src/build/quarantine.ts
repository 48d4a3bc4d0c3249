import type { Snapshot } from '../sources/snapshot.js';
import { build, type BuildResult } from './build.js';
import { objectId, type TranslateOptions } from '../translate/options.js';
import { fileStem } from '../translate/secrets/secret-files.js';
import { goBool } from '../translate/checks/allowlist.js';
import type { NginxCheck } from '../apply/check.js';

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
 * without its Gateway renders nothing), so that a route is not blamed for what its parent does. Then the
 * routing resources, canaries after the Ingresses they split. Last what they only refer to and do
 * without when it is missing (a host falls back to the default certificate, a policy without its CA
 * closes its share): so a bad Secret is found as the Secret, not as the Ingress that uses it.
 */
const quarantineOrder = ['Service', 'Gateway', 'Ingress', 'canary', 'TLSRoute', 'HTTPRoute', 'GRPCRoute', 'BackendTLSPolicy', 'Secret', 'ConfigMap'] as const;

/** Kinds others refer to: blamed only when nginx names their own file, else the resource that uses them is. */
const referencedKinds: ReadonlySet<string> = new Set(['Secret', 'ConfigMap']);

/**
 * Resources of one namespace that the search finds one by one; past that, the namespace's resources not
 * yet known to pass are left out together, so that no tenant can make the search (and everyone's
 * reload) as long as it likes.
 */
export const searchesPerNamespace = 8;

/** How the message of a resource left out without a search of its own begins. */
const notChecked = 'not checked: ';

/**
 * Build, check, and when the check fails find the resources that make it fail and build again without
 * them, so one tenant's bad resource never stops everyone else's config from loading. Allow-lists catch
 * what we know nginx refuses; this is the defence in depth for what they miss.
 *
 * The search is deterministic: over the candidates R, in an order where blame follows ownership
 * (`candidateOrder`), it finds the shortest prefix of R whose build fails and leaves out the last
 * resource of that prefix, which is one the failure needs (with the rest of the prefix in): the newer
 * of two that fail together, never the one that was serving. When that is a Secret or ConfigMap that
 * nginx does not name, the failure comes from a setting of whoever uses it (a regex beside a CA), and the
 * user it fails with is found the same way and left out instead. That takes 1 + ceil(log2 |R|) checks
 * per culprit (twice that for a shared one), plus 2 in all: the build with no candidate at all, and the
 * final one. When even the build with no candidate fails (a bad ConfigMap or flag), the failure is not a
 * tenant's, and it is returned as it is. `first` is the build with `options`, when the caller has made
 * it already; `serving` the resources of the config nginx serves now, unchanged since.
 */
export async function buildChecked(
  snapshot: Snapshot,
  options: TranslateOptions,
  check: BuildCheck,
  first?: BuildResult,
  serving: ReadonlySet<string> = new Set(),
): Promise<CheckedBuild> {
  // Left out unchecked last time: checked again now (the namespace's culprits may be fixed).
  const quarantined = new Map([...(options.quarantine ?? [])].filter(([, message]) => !message.startsWith(notChecked)));
  const attempt = async (excluded: ReadonlyMap<string, string>, built?: BuildResult) => {
    const result = built ?? build(snapshot, { ...options, quarantine: excluded });
    return { result, check: await check(result) };
  };
  /** Whether the build with only `included` of the candidates (and nothing already quarantined) passes. */
  const passesWith = async (included: readonly string[]) => {
    const only = new Set(included);
    const probe = await attempt(new Map([...quarantined, ...candidates.filter((id) => !only.has(id)).map((id) => [id, ''] as const)]));
    return probe.check;
  };

  let current = await attempt(quarantined, first);
  if (current.check.ok) return { ...current, quarantined };
  const candidates = candidateOrder(snapshot, options, serving).filter((id) => !quarantined.has(id));
  if (candidates.length === 0 || !(await passesWith([])).ok) return { ...current, quarantined };

  const culprits = new Map<string, number>();
  // Candidates [0, passing) of `remaining` are known to pass together (with the rest left out).
  let passing = 0;
  while (!current.check.ok) {
    const remaining = candidates.filter((id) => !quarantined.has(id));
    // Only a check that gives different answers for the same config gets here; the search needs one that does not.
    if (passing >= remaining.length) break;
    const found = await shortestFailingPrefix(remaining, passing, current.check.output, (count) => passesWith(remaining.slice(0, count)));
    let blamed = found.index;
    let failure = found.failure;
    const culprit = remaining[found.index]!;
    if (referencedKinds.has(kindOf(culprit)) && !namesFileOf(failure, culprit) && (await passesWith([culprit])).ok) {
      const user = await shortestFailingPrefix(remaining, 0, failure, (count) => passesWith([...remaining.slice(0, count), culprit]), found.index);
      if (user.index < found.index) {
        blamed = user.index;
        failure = user.failure;
      }
    }
    const id = remaining[blamed]!;
    quarantined.set(id, nginxMessage(failure));
    const namespace = namespaceOf(id);
    culprits.set(namespace, (culprits.get(namespace) ?? 0) + 1);
    if (culprits.get(namespace)! > searchesPerNamespace) {
      const unchecked = remaining.slice(blamed + 1).filter((other) => namespaceOf(other) === namespace && !quarantined.has(other));
      for (const other of unchecked) {
        quarantined.set(other, `${notChecked}nginx refused more than ${searchesPerNamespace} resources of namespace ${namespace}; the last: ${nginxMessage(failure)}`);
      }
    }
    // The passing prefix stays the same without the culprit: the next search starts after it.
    passing = blamed;
    current = await attempt(quarantined);
  }
  return { ...current, quarantined };
}

/**
 * The index `i` in [from, end) such that including the first `i` candidates passes and the first
 * `i + 1` fail (the first `from` are known to pass, the first `end` to fail with `failure`), by
 * bisection; with nginx's output for the failing side.
 */
async function shortestFailingPrefix(
  candidates: readonly string[],
  from: number,
  failure: string,
  passesWith: (count: number) => Promise<{ ok: boolean; output: string }>,
  end = candidates.length,
): Promise<{ index: number; failure: string }> {
  // Invariant: including candidates[0, low) passes, including candidates[0, high) fails.
  let low = from;
  let high = end;
  let output = failure;
  while (high - low > 1) {
    const middle = (low + high) >>> 1;
    const probe = await passesWith(middle);
    if (probe.ok) {
      low = middle;
    } else {
      high = middle;
      output = probe.output;
    }
  }
  return { index: low, failure: output };
}

/**
 * Objects of the kinds in `quarantineOrder` by `objectId`, in the order the search adds them back: by
 * kind, then what nginx serves now before what it does not, then the older before the newer (a
 * resource without a creation time last), then namespace/name. The controller ConfigMap is not a
 * tenant's.
 */
function candidateOrder(snapshot: Snapshot, options: TranslateOptions, serving: ReadonlySet<string>): string[] {
  const keys = new Map<string, readonly [number, number, number, string]>();
  for (const object of snapshot.objects) {
    const kind = object.kind === 'Ingress' && isCanary(object) ? 'canary' : object.kind;
    const rank = (quarantineOrder as readonly string[]).indexOf(kind);
    if (rank === -1) continue;
    if (object.kind === 'ConfigMap' && `${object.metadata.namespace}/${object.metadata.name}` === options.configMap) continue;
    const id = objectId(object);
    const created = Date.parse(object.metadata.creationTimestamp ?? '');
    keys.set(id, [rank, serving.has(id) ? 0 : 1, Number.isNaN(created) ? Infinity : created, id]);
  }
  const compare = (a: readonly [number, number, number, string], b: readonly [number, number, number, string]) =>
    a[0] - b[0] || a[1] - b[1] || (a[2] === b[2] ? 0 : a[2] < b[2] ? -1 : 1) || (a[3] < b[3] ? -1 : a[3] > b[3] ? 1 : 0);
  return [...keys].sort(([, a], [, b]) => compare(a, b)).map(([id]) => id);
}

function isCanary(object: Snapshot['objects'][number]): boolean {
  return goBool.safeParse(object.metadata.annotations['nginx.ingress.kubernetes.io/canary'] ?? 'false').data === true;
}

function kindOf(id: string): string {
  return id.slice(0, id.indexOf('/'));
}

function namespaceOf(id: string): string {
  return id.split('/')[1] ?? '';
}

/** Whether nginx's output names a file written from the Secret or ConfigMap `id` (secrets.ts names them). */
function namesFileOf(output: string, id: string): boolean {
  const [kind = '', namespace = '', name = ''] = id.split('/');
  const stem = fileStem(kind === 'ConfigMap' ? 'configmap_' : '', { namespace, name });
  return output.split(/[\s"'(]+/).some((word) => word.split('/').pop()?.startsWith(`${stem}.`));
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
