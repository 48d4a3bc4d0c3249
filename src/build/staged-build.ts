import { resolve } from 'node:path';
import { build, type BuildResult } from './build.js';
import type { Snapshot } from '../sources/snapshot.js';
import type { TranslateOptions } from '../translate/options.js';
import { checkConfig, type NginxCheck } from '../apply/check.js';
import { buildChecked } from './quarantine.js';
import type { OutputFolder, Staged } from '../apply/write.js';
import { busyPortProblem, type ListenedPort } from './listen-ports.js';

export interface StagedBuild {
  readonly result: BuildResult;
  /** The files to commit; none when nginx rejected the config and no resource could be blamed. */
  readonly staged?: Staged;
  /** The outcome of `nginx -t`, when it was run. */
  readonly nginx?: NginxCheck;
  /** A config nginx rejected before quarantine made it pass, to keep as `.i2n-rejected` after the commit. */
  readonly rejected?: Staged;
  /** Resources left out because nginx rejected the config with them. */
  readonly quarantined: ReadonlyMap<string, string>;
}

export interface StageBuildContext {
  /** The build of these options, already made. */
  readonly first?: BuildResult;
  /**
   * The resources (`objectId`) of the config nginx serves now that have not changed since: the search
   * never blames them for a newcomer's failure.
   */
  readonly serving?: ReadonlySet<string>;
  /** Stops a search in progress (the process is stopping): the next check throws. */
  readonly signal?: AbortSignal;
  /**
   * Ports another process holds (a reload failed on them after `nginx -t` passed): a config that binds
   * one fails the check as a config nginx refuses does, so the search leaves out whoever asks for it.
   */
  readonly busyPorts?: readonly ListenedPort[];
}

/**
 * Builds into a staging folder of `folder`, ready to commit. With `nginxBin`, through `buildChecked`:
 * every candidate build is staged and checked there. nginx names the staging folder in its messages;
 * they are rewritten to `.i2n-rejected`, where the config it rejected is kept, so that they point at a
 * file that is still there and read the same on every run. On failure the last build is kept there and
 * nothing is staged for commit. The CLI's `render` and the cluster mode both write this way.
 */
export async function stageBuild(
  folder: OutputFolder,
  snapshot: Snapshot,
  options: TranslateOptions,
  nginxBin: string | undefined,
  { first, serving, signal, busyPorts = [] }: StageBuildContext = {},
): Promise<StagedBuild> {
  if (nginxBin === undefined) {
    const result = first ?? build(snapshot, options);
    return { result, staged: await folder.stage(result.files), quarantined: options.quarantine ?? new Map() };
  }
  // The staging folder of the build checked last, and of the first one nginx rejected (if any).
  const stagings = new Map<BuildResult, Staged>();
  let firstRejected: BuildResult | undefined;
  const { result, check, quarantined } = await buildChecked(
    snapshot,
    options,
    async (candidate) => {
      signal?.throwIfAborted();
      for (const [built, staged] of stagings) {
        if (built === firstRejected) continue;
        await folder.discard(staged);
        stagings.delete(built);
      }
      const staged = await folder.stage(candidate.files);
      stagings.set(candidate, staged);
      const checked = await checkConfig(staged.dir, candidate.model.runDir, nginxBin);
      const busy = checked.ok ? busyPortProblem(candidate.model, busyPorts) : undefined;
      const nginx = busy === undefined ? checked : { ok: false, output: busy };
      if (!nginx.ok) firstRejected ??= candidate;
      return { ok: nginx.ok, output: nginx.output.split(resolve(staged.dir)).join(folder.rejectedDir) };
    },
    first,
    serving,
  );
  const staged = stagings.get(result) ?? (await folder.stage(result.files));
  if (!check.ok) {
    await folder.keepRejected(staged);
    return { result, nginx: check, quarantined };
  }
  const rejected = firstRejected && stagings.get(firstRejected);
  return { result, staged, nginx: check, quarantined, ...(rejected && { rejected }) };
}
