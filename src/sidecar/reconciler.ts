import { checkConfig, type NginxCheck } from '../apply/check.js';
import { stageBuild } from '../build/staged-build.js';
import type { CommitResult, OutputFolder } from '../apply/write.js';
import type { Diagnostic } from '../model/diagnostics.js';
import { build, newBuildMemo, type BuildMemo, type BuildResult } from '../build/build.js';
import type { Snapshot, SourceObject } from '../sources/snapshot.js';
import { objectId, type TranslateOptions } from '../translate/options.js';
import type { Reference } from '../translate/secrets/secret-files.js';
import { ChangeCoalescer } from './coalesce.js';
import { changedKeys, controllerConfigMapIn, errorsAt, settingsVerdict, withControllerConfigMap } from './settings-guard.js';
import type { Logger } from './log.js';
import type { Metrics } from './metrics.js';
import { waitForGeneration, type NginxDriver } from './nginx.js';
import { addedPorts, listenedPorts, type ListenedPort } from '../build/listen-ports.js';
import { portsInUse } from './port-probe.js';

/** What the reconciler reads the cluster through (the cluster source, or a test's stand-in). */
export interface SnapshotSource {
  synced(): boolean;
  snapshot(): Snapshot;
  follow(references: readonly Reference[]): void;
  counts(): Map<string, number>;
}

export interface ReconcilerOptions {
  readonly source: SnapshotSource;
  /** Everything `render` takes; `now` and `quarantine` are set per round. */
  readonly translate: Omit<TranslateOptions, 'now' | 'quarantine'>;
  readonly folder: OutputFolder;
  readonly nginxBin: string;
  readonly driver: NginxDriver;
  readonly metrics: Metrics;
  readonly log: Logger;
  /** A burst of changes is one round: the round starts this long after the last change... */
  readonly debounceMs: number;
  /** ...but no later than this after the first one. */
  readonly maxDelayMs: number;
  /** How long nginx may take to serve a new generation after the reload signal. */
  readonly reloadTimeoutMs: number;
  /** After every round that built something (applied or not): status, Events. */
  readonly afterRound: (round: Round) => Promise<void>;
  /** Just before nginx is told to load `result`: its workers may log requests under it from then on. */
  readonly beforeReload?: (result: BuildResult) => void;
}

export interface Round {
  readonly result: BuildResult;
  readonly diagnostics: readonly Diagnostic[];
  /** nginx serves `result` (now, or already before this round). */
  readonly applied: boolean;
  /** nginx's words when the config was refused or the reload did not take. */
  readonly failure?: string;
}

/** Milliseconds each step of a round took, for the log line of a served change (and the bench). */
interface Phases {
  /** From the first change of the burst to the start of the round: the debounce, and a round still running. */
  waitedMs: number;
  buildMs: number;
  /** Staging and `nginx -t` (with any quarantine search); 0 when nginx was reloaded without a check first. */
  checkMs: number;
  writeMs: number;
  reloadMs: number;
}

interface ReloadOutcome {
  readonly ok: boolean;
  readonly ms: number;
  /** `nginx -t` of the folder, run when the new generation was slow to come: it says whether nginx refused it. */
  readonly check?: NginxCheck;
}

/** A controller ConfigMap a round built with, and the errors at its keys then (settings-guard.ts). */
interface ServedSettings {
  readonly configMap: SourceObject;
  readonly errors: ReadonlySet<string>;
}

/**
 * The sync loop: coalesce changes, build, skip when the bytes are what nginx already serves, otherwise
 * write, reload and confirm that nginx serves the new generation.
 *
 * While the last reload took, a change is written and reloaded at once: nginx's master checks the new
 * config itself and keeps serving the old one when it refuses it, so a separate `nginx -t` first would
 * only parse the whole config twice. A reload that does not take is diagnosed with `nginx -t`, the
 * resources nginx rejects are searched out and left out (build/quarantine.ts), and the rest is
 * reloaded. The first config, and every config after a reload that failed, is checked before it is
 * written. nginx never runs on a half-written folder, and one bad resource never stops the others'
 * changes.
 */

export class Reconciler {
  private timer: NodeJS.Timeout | undefined;
  private readonly coalescer: ChangeCoalescer;
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = false;
  /** Cuts the waits of a round in flight when the process stops. */
  private readonly stopping = new AbortController();
  private applied: { readonly generation: string } | undefined;
  /** Each round's build reuses the claims of unchanged Ingresses and what the round before rendered (most hosts render the same bytes). */
  private readonly memo: BuildMemo = newBuildMemo();
  /** nginx has served a generation of ours: rounds that build the same bytes need no reload. */
  private serving = false;
  /** The last reload took: the next change is reloaded without a check first. */
  private lastReloadTook = false;
  /** How long the last reload that took needed; a reload much slower than that is checked meanwhile. */
  private lastReloadMs = 1000;
  /**
   * The last build that could not be applied (nginx refused it, or did not take the reload), by the
   * generation of its first build: the same resources again are not tried again (that would mean another
   * search and another failed reload on every unrelated event), a change is.
   */
  private refused: { generation: string; failure: string } | undefined;
  /**
   * The resources of the config nginx serves, with their resourceVersion: a quarantine search never
   * blames one that has not changed since for a newcomer's failure.
   */
  private servedVersions = new Map<string, string>();
  /** The ports the config nginx serves binds; unknown for a config adopted at start until a round builds it again. */
  private servedPorts: readonly ListenedPort[] | undefined;
  /** Resources nginx rejected, kept out while they stay at the same resourceVersion. */
  private quarantine = new Map<string, { resourceVersion: string; message: string }>();
  /** The controller ConfigMap nginx serves the settings of, and the errors at its keys then (settings-guard.ts). */
  private lastGoodSettings: ServedSettings | undefined;
  /** The same, of the round in flight: the last good ones once nginx serves it. */
  private roundSettings: ServedSettings | undefined;
  /** Errors reported in the log by the last round, so that each is logged when it appears, not every round. */
  private loggedErrors = new Set<string>();
  rounds = 0;

  constructor(private readonly options: ReconcilerOptions) {
    this.coalescer = new ChangeCoalescer(options.debounceMs, options.maxDelayMs);
  }

  /** True once nginx serves a config built from a full sync. */
  get ready(): boolean {
    return this.applied !== undefined && this.serving && this.rounds > 0;
  }

  /**
   * The generation the output folder held when we started (a restart of the sidecar), and whether nginx
   * serves it: no reload when the first round builds the same bytes.
   */
  adopt(generation: string, served: boolean): void {
    this.applied = { generation };
    this.serving = served;
    this.lastReloadTook = served;
  }

  /** A change happened: run a round at once after a quiet period, else soon, coalescing with others (coalesce.ts). */
  schedule(): void {
    if (this.stopped) return;
    const idle = this.timer === undefined && this.running === undefined;
    // Until the first build the watches are still listing: every round before it is a no-op, and the
    // first config is built as soon as they have synced.
    const wait = this.rounds === 0 ? (this.timer === undefined ? 0 : undefined) : this.coalescer.changed(Date.now(), idle);
    if (wait === undefined) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.run(this.coalescer.started(Date.now()));
    }, wait);
  }

  /** Stops scheduling, cuts the waits of the round in flight and waits for it to end. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.stopping.abort();
    await this.running;
  }

  private async run(since: number): Promise<void> {
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.round(since)
      .catch((error: Error) => {
        if (!this.stopped) this.options.log.error('sync failed', { error: error.stack ?? error.message });
      })
      .finally(() => {
        this.running = undefined;
        if (this.again && !this.stopped) {
          this.again = false;
          void this.run(Date.now());
        }
      });
    await this.running;
  }

  private async round(since: number): Promise<void> {
    const { source, log, metrics } = this.options;
    if (!source.synced()) {
      log.debug('waiting for the watches to sync');
      return;
    }
    const watched = source.snapshot();
    for (const [kind, count] of source.counts()) metrics.resources.set({ kind }, count);
    this.rounds++;

    const started = performance.now();
    const phases: Phases = { waitedMs: Math.max(0, Date.now() - since), buildMs: 0, checkMs: 0, writeMs: 0, reloadMs: 0 };
    const options: TranslateOptions = { ...this.options.translate, now: new Date(), quarantine: this.keptQuarantine(watched) };
    const { snapshot, result: first } = this.guardedBuild(watched, options);
    phases.buildMs = performance.now() - started;
    // Follow what the build read; a Secret only now referenced must be in before the build is served.
    source.follow(first.references);
    if (!source.synced()) {
      log.debug('waiting for the watches of newly referenced objects to sync');
      return;
    }
    if (first.generation === this.applied?.generation && this.serving) {
      metrics.renderDuration.observe(phases.buildMs / 1000);
      this.refused = undefined;
      this.servedPorts = listenedPorts(first.model);
      await this.finish({ result: first, diagnostics: first.diagnostics, applied: true });
      return;
    }
    if (first.generation === this.refused?.generation) {
      metrics.renderDuration.observe(phases.buildMs / 1000);
      await this.finish({ result: first, diagnostics: first.diagnostics, applied: false, failure: this.refused.failure });
      return;
    }

    let reloadFailed: ReloadOutcome | undefined;
    if (this.serving && this.lastReloadTook) {
      metrics.renderDuration.observe(phases.buildMs / 1000);
      reloadFailed = await this.reloadFirst(snapshot, first, phases);
      if (!reloadFailed || this.stopped) return;
    }
    const busy = reloadFailed ? await this.busyPorts(first) : [];
    await this.checkedRound(snapshot, options, first, phases, reloadFailed, busy);
  }

  /**
   * Writes the build and reloads nginx without a check first. Returns nothing when nginx serves it,
   * else the failed reload, with the files put back as they were.
   */
  private async reloadFirst(snapshot: Snapshot, result: BuildResult, phases: Phases): Promise<ReloadOutcome | undefined> {
    const { folder, log, metrics } = this.options;
    const writing = performance.now();
    const commit = await folder.commit(await folder.stage(result.files, { complete: false }), { keepPrevious: true });
    phases.writeMs = performance.now() - writing;
    this.options.beforeReload?.(result);
    const reload = await this.reloadTo(result.generation, result.model.controlSocket, true);
    if (this.stopped) return undefined;
    phases.reloadMs = reload.ms;
    if (reload.ok) {
      await this.served(snapshot, result, commit, phases, new Map());
      return undefined;
    }
    metrics.reloaded(false);
    this.lastReloadTook = false;
    log.warn('nginx did not take the reload; checking the config with nginx -t', {
      generation: result.generation,
      ...(reload.check && { nginx: reload.check.output }),
    });
    // A config nginx refused is not in its memory: only the files need to go back. One it may still be
    // loading is replaced by the last good one again.
    if (reload.check && !reload.check.ok) await folder.restorePrevious(commit);
    else await this.restore(commit, result.model.controlSocket);
    return reload;
  }

  /**
   * Stages the build, checks it with `nginx -t` (leaving out what nginx rejects), then writes and
   * reloads it. After a reload-first that failed (`reloadFailed`), a config that passes the check
   * unchanged is not reloaded again: nginx refused it for a reason the check cannot see. A config that
   * binds one of `busyPorts` fails the check too, so what asks for a port another process holds is
   * searched out and left out; a reload that fails after the check looks for such ports once.
   */
  private async checkedRound(
    snapshot: Snapshot,
    options: TranslateOptions,
    first: BuildResult,
    phases: Phases,
    reloadFailed: ReloadOutcome | undefined,
    busyPorts: readonly ListenedPort[] = [],
  ): Promise<void> {
    const { folder, log, metrics } = this.options;
    const checking = performance.now();
    const built = await stageBuild(folder, snapshot, options, this.options.nginxBin, {
      first,
      serving: unchangedSinceServed(this.servedVersions, snapshot),
      signal: this.stopping.signal,
      busyPorts,
    });
    phases.checkMs = performance.now() - checking;
    if (this.stopped) return;
    if (!reloadFailed) metrics.renderDuration.observe((phases.buildMs + phases.checkMs) / 1000);
    this.rememberQuarantine(snapshot, built.quarantined);
    const { result, staged } = built;

    if (!staged) {
      if (!reloadFailed) metrics.reloaded(false);
      const failure = built.nginx?.output ?? 'nginx -t failed';
      this.refused = { generation: first.generation, failure };
      log.error('nginx -t refused the config; nginx keeps serving the last good one', { nginx: failure });
      await this.finish({ result, diagnostics: result.diagnostics, applied: false, failure });
      return;
    }
    if (result.generation === this.applied?.generation && this.serving) {
      await folder.discard(staged);
      if (built.rejected) await folder.discard(built.rejected);
      await this.finish({ result, diagnostics: result.diagnostics, applied: true });
      return;
    }
    if (reloadFailed && result.generation === first.generation) {
      await folder.discard(staged);
      const failure = `nginx did not serve generation ${first.generation} within ${Math.round(reloadFailed.ms)} ms of the reload, though nginx -t accepts it (a port in use? see nginx's log)`;
      this.refused = { generation: first.generation, failure };
      log.error(`${failure}; nginx keeps serving the last good config`, { generation: first.generation });
      await this.finish({ result, diagnostics: result.diagnostics, applied: false, failure });
      return;
    }

    // The files this replaces are kept (hard links, not copies) until nginx serves the new ones.
    const writing = performance.now();
    const commit = await folder.commit(staged, { keepPrevious: true });
    phases.writeMs = performance.now() - writing;
    if (built.rejected) await folder.keepRejected(built.rejected);
    this.options.beforeReload?.(result);
    const reload = await this.reloadTo(result.generation, result.model.controlSocket, false);
    if (this.stopped) return;
    phases.reloadMs = reload.ms;
    if (reload.ok) {
      await this.served(snapshot, result, commit, phases, built.quarantined);
      return;
    }
    if (!reloadFailed) metrics.reloaded(false);
    this.lastReloadTook = false;
    const failure = `nginx did not serve generation ${result.generation} within ${this.options.reloadTimeoutMs} ms of the reload (see its log)`;
    this.refused = { generation: first.generation, failure };
    log.error(`${failure}; restoring the last good config`, { generation: result.generation });
    await this.restore(commit, result.model.controlSocket);
    if (busyPorts.length === 0 && !this.stopped) {
      const busy = await this.busyPorts(result);
      if (busy.length > 0) return this.checkedRound(snapshot, options, first, phases, reload, busy);
    }
    await this.finish({ result, diagnostics: result.diagnostics, applied: false, failure });
  }

  /**
   * The ports `result` binds anew that another process in the Pod holds: the usual reason a reload fails
   * though `nginx -t` passed (it never binds). Ports nginx binds already are not probed; while it serves
   * a config whose ports are not known (adopted at start), none is.
   */
  private async busyPorts(result: BuildResult): Promise<ListenedPort[]> {
    if (this.serving && this.servedPorts === undefined) return [];
    const busy = await portsInUse(addedPorts(listenedPorts(result.model), this.servedPorts ?? []));
    if (busy.length > 0) {
      this.options.log.warn('the config binds ports another process holds; leaving out what asks for them', { ports: busy.map((p) => `${p.port}/${p.protocol}`) });
    }
    return busy;
  }

  /** nginx serves `result`: forget the files it replaced, count and log it. */
  private async served(
    snapshot: Snapshot,
    result: BuildResult,
    commit: CommitResult,
    phases: Phases,
    quarantined: ReadonlyMap<string, string>,
  ): Promise<void> {
    const { folder, log, metrics } = this.options;
    await folder.dropPrevious(commit);
    this.applied = { generation: result.generation };
    this.servedPorts = listenedPorts(result.model);
    this.servedVersions = servedVersions(snapshot, this.quarantine);
    this.refused = undefined;
    this.lastReloadTook = true;
    metrics.reloaded(true);
    log.info('nginx serves the new config', {
      generation: result.generation,
      written: commit.written.length,
      removed: commit.removed.length,
      ...Object.fromEntries(Object.entries(phases).map(([phase, ms]) => [phase, Math.round(ms)])),
      quarantined: [...quarantined.keys()],
    });
    await this.finish({ result, diagnostics: result.diagnostics, applied: true });
  }

  /**
   * The round's build (settings-guard.ts): with the controller ConfigMap as watched, unless its change
   * since the last good one is refused; then with the last good one, the refusal added to its diagnostics.
   */
  private guardedBuild(watched: Snapshot, options: TranslateOptions): { snapshot: Snapshot; result: BuildResult } {
    const { metrics } = this.options;
    const built = build(watched, options, this.memo);
    const id = this.options.translate.configMap;
    const current = id === undefined ? undefined : controllerConfigMapIn(watched, id);
    const last = this.lastGoodSettings;
    this.roundSettings = current && { configMap: current, errors: errorsAt(built.diagnostics, current) };
    metrics.settingsRejected.reset();
    if (!current || !last || changedKeys(last.configMap, current).length === 0) return { snapshot: watched, result: built };
    const withLastGood = withControllerConfigMap(watched, last.configMap);
    let fallback: BuildResult | undefined;
    const fallbackBuild = () => (fallback ??= build(withLastGood, options, this.memo));
    const verdict = settingsVerdict(built.diagnostics, () => fallbackBuild().diagnostics, { current, lastGood: last.configMap, lastGoodErrors: last.errors });
    if (verdict.rejected.length === 0) return { snapshot: watched, result: built };
    for (const { key } of verdict.rejected) metrics.settingsRejected.set({ key }, 1);
    this.roundSettings = last;
    const served = fallbackBuild();
    return { snapshot: withLastGood, result: { ...served, diagnostics: [...served.diagnostics, ...verdict.rejected.map((r) => r.diagnostic)] } };
  }

  private async finish(round: Round): Promise<void> {
    if (round.applied && this.roundSettings) this.lastGoodSettings = this.roundSettings;
    const counts = { error: 0, warning: 0, info: 0 };
    for (const d of round.diagnostics) counts[d.severity]++;
    for (const [severity, count] of Object.entries(counts)) this.options.metrics.diagnostics.set({ severity }, count);
    if (round.applied) this.options.metrics.setCertificates(round.result.certificates);
    this.logNewErrors(round.diagnostics);
    await this.options.afterRound(round);
  }

  /**
   * One log line for each error on a resource when it first appears: the resource is left out, or
   * served other than as written (the message says which), and nginx-rejected means quarantined.
   */
  private logNewErrors(diagnostics: readonly Diagnostic[]): void {
    const now = new Set<string>();
    for (const diagnostic of diagnostics) {
      if (diagnostic.severity !== 'error' || !diagnostic.resource) continue;
      const { kind, namespace, name } = diagnostic.resource;
      const resource = `${kind} ${namespace ? `${namespace}/` : ''}${name}`;
      const key = `${resource}\u0000${diagnostic.code}\u0000${diagnostic.field ?? ''}\u0000${diagnostic.message}`;
      now.add(key);
      if (this.loggedErrors.has(key)) continue;
      const fields = { resource, code: diagnostic.code, ...(diagnostic.field !== undefined && { field: diagnostic.field }), message: diagnostic.message };
      if (diagnostic.code === 'nginx-rejected') this.options.log.error('quarantined: nginx rejects this resource, it is left out', fields);
      else this.options.log.warn('not served as written', fields);
    }
    this.loggedErrors = now;
  }

  /**
   * Has nginx load the folder (start or signal it) and waits until it serves `generation`. With
   * `diagnose`, a generation that is slow to come (four times the last reload, at least 2 s: a check
   * started early would only slow a reload that is merely slow) is checked with `nginx -t` meanwhile: a
   * config nginx refuses ends the wait at once.
   */
  private async reloadTo(generation: string, controlSocket: string, diagnose: boolean): Promise<ReloadOutcome> {
    const started = performance.now();
    await this.options.driver.load().catch((error: Error) => this.options.log.error('could not signal nginx', { error: error.message }));
    this.options.log.debug('nginx asked to load the config', { generation });
    const waiting = new AbortController();
    const onStop = () => waiting.abort();
    this.stopping.signal.addEventListener('abort', onStop);
    let check: NginxCheck | undefined;
    const diagnosis = diagnose
      ? setTimeout(() => {
          this.options.log.debug('the new generation is slow to come; checking the config with nginx -t', { generation });
          checkConfig(this.options.folder.dir, this.options.translate.runDir, this.options.nginxBin).then(
            (result) => {
              check = result;
              if (!result.ok) waiting.abort();
            },
            (error: Error) => this.options.log.warn('could not run nginx -t', { error: error.message }),
          );
        }, Math.max(2000, 4 * this.lastReloadMs))
      : undefined;
    try {
      const { ok, served } = await waitForGeneration(controlSocket, generation, this.options.reloadTimeoutMs, waiting.signal);
      const ms = performance.now() - started;
      if (ok) {
        this.serving = true;
        this.lastReloadMs = ms;
        this.options.metrics.reloadDuration.observe(ms / 1000);
      } else if (!this.stopped) {
        this.options.log.warn('nginx does not serve the generation it was asked to load', { wanted: generation, served: served ?? 'nothing' });
      }
      return { ok, ms, ...(check && { check }) };
    } finally {
      clearTimeout(diagnosis);
      this.stopping.signal.removeEventListener('abort', onStop);
    }
  }

  /** Puts the files the commit replaced back and has nginx load them again. */
  private async restore(commit: CommitResult, controlSocket: string): Promise<void> {
    await this.options.folder.restorePrevious(commit);
    if (!this.applied) return;
    const back = await this.reloadTo(this.applied.generation, controlSocket, false);
    if (!back.ok && !this.stopped) this.options.log.error('nginx does not serve the restored config either', { generation: this.applied.generation });
  }

  /** Quarantined resources that have not changed since: left out again without another search. */
  private keptQuarantine(snapshot: Snapshot): Map<string, string> {
    const kept = new Map<string, string>();
    for (const object of snapshot.objects) {
      const entry = this.quarantine.get(objectId(object));
      if (entry && entry.resourceVersion === (object.metadata.resourceVersion ?? '')) kept.set(objectId(object), entry.message);
    }
    return kept;
  }

  private rememberQuarantine(snapshot: Snapshot, quarantined: ReadonlyMap<string, string>): void {
    const versions = new Map(snapshot.objects.map((o) => [objectId(o), o.metadata.resourceVersion ?? '']));
    this.quarantine = new Map([...quarantined].map(([id, message]) => [id, { resourceVersion: versions.get(id) ?? '', message }]));
  }
}

/** The resourceVersion of every resource of `snapshot` that nginx serves: all but the quarantined. */
export function servedVersions(snapshot: Snapshot, quarantined: ReadonlyMap<string, unknown>): Map<string, string> {
  return new Map(snapshot.objects.filter((o) => !quarantined.has(objectId(o))).map((o) => [objectId(o), o.metadata.resourceVersion ?? '']));
}

/** The resources of `snapshot` that nginx serves now at the same version (`servedVersions` of the config it serves). */
export function unchangedSinceServed(served: ReadonlyMap<string, string>, snapshot: Snapshot): Set<string> {
  const unchanged = new Set<string>();
  for (const object of snapshot.objects) {
    const id = objectId(object);
    if (served.get(id) === (object.metadata.resourceVersion ?? '')) unchanged.add(id);
  }
  return unchanged;
}
