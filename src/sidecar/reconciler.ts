import { stageBuild } from '../apply/staged-build.js';
import type { CommitResult, OutputFolder } from '../apply/write.js';
import type { Diagnostic } from '../model/diagnostics.js';
import { build, type BuildResult } from '../render/build.js';
import type { Snapshot } from '../sources/snapshot.js';
import { objectId, type TranslateOptions } from '../translate/options.js';
import { referencedObjects, type Reference } from '../translate/references.js';
import type { Logger } from './log.js';
import type { Metrics } from './metrics.js';
import { waitForGeneration, type NginxDriver } from './nginx.js';

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
}

export interface Round {
  readonly result: BuildResult;
  readonly diagnostics: readonly Diagnostic[];
  /** nginx serves `result` (now, or already before this round). */
  readonly applied: boolean;
  /** nginx's words when the config was refused or the reload did not take. */
  readonly failure?: string;
}

interface Applied {
  readonly generation: string;
}

/**
 * The sync loop: coalesce changes, build (leaving out what nginx rejects), skip when the bytes are what
 * nginx already serves, otherwise write, reload and confirm that nginx serves the new generation;
 * when it does not, put the last good files back and reload them. nginx never runs on a half-written
 * folder, and one bad resource never stops the others' changes.
 */
export class Reconciler {
  private timer: NodeJS.Timeout | undefined;
  private firstPending = 0;
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = false;
  private applied: Applied | undefined;
  /** nginx has served a generation of ours: rounds that build the same bytes need no reload. */
  private serving = false;
  /**
   * The last build that could not be applied (nginx -t refused it, or nginx did not take the reload),
   * by the generation of its first build: the same resources again are not tried again (that would
   * mean another search and another failed reload on every unrelated event), a change is.
   */
  private refused: { generation: string; failure: string } | undefined;
  /** Resources nginx rejected, kept out while they stay at the same resourceVersion. */
  private quarantine = new Map<string, { resourceVersion: string; message: string }>();
  rounds = 0;

  constructor(private readonly options: ReconcilerOptions) {}

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
  }

  /** A change happened: run a round soon, coalescing with others. */
  schedule(): void {
    if (this.stopped) return;
    const now = Date.now();
    if (this.timer === undefined) this.firstPending = now;
    clearTimeout(this.timer);
    const wait = Math.max(0, Math.min(this.options.debounceMs, this.firstPending + this.options.maxDelayMs - now));
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.run();
    }, wait);
  }

  /** Stops scheduling and waits for the round in flight to finish. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  private async run(): Promise<void> {
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.round()
      .catch((error: Error) => this.options.log.error('sync failed', { error: error.stack ?? error.message }))
      .finally(() => {
        this.running = undefined;
        if (this.again && !this.stopped) {
          this.again = false;
          void this.run();
        }
      });
    await this.running;
  }

  private async round(): Promise<void> {
    const { source, log, metrics } = this.options;
    let snapshot = source.snapshot();
    // Follow what the resources refer to before building: a Secret only now referenced must be in.
    source.follow(referencedObjects(snapshot, this.options.translate));
    if (!source.synced()) {
      log.debug('waiting for the watches to sync');
      return;
    }
    snapshot = source.snapshot();
    for (const [kind, count] of source.counts()) metrics.resources.set({ kind }, count);
    this.rounds++;

    const started = performance.now();
    const options: TranslateOptions = { ...this.options.translate, now: new Date(), quarantine: this.keptQuarantine(snapshot) };
    const first = build(snapshot, options);
    const built0 = performance.now();
    if (first.generation === this.applied?.generation && this.serving) {
      metrics.renderDuration.observe((performance.now() - started) / 1000);
      this.refused = undefined;
      await this.finish({ result: first, diagnostics: first.diagnostics, applied: true });
      return;
    }
    if (first.generation === this.refused?.generation) {
      metrics.renderDuration.observe((performance.now() - started) / 1000);
      await this.finish({ result: first, diagnostics: first.diagnostics, applied: false, failure: this.refused.failure });
      return;
    }

    const built = await stageBuild(this.options.folder, snapshot, options, this.options.nginxBin, first);
    const checked = performance.now();
    metrics.renderDuration.observe((checked - started) / 1000);
    this.rememberQuarantine(snapshot, built.quarantined);
    const { result, staged } = built;

    if (!staged) {
      metrics.reloads.inc({ result: 'failure' });
      const failure = built.nginx?.output ?? 'nginx -t failed';
      this.refused = { generation: first.generation, failure };
      log.error('nginx -t refused the config; nginx keeps serving the last good one', { nginx: failure });
      await this.finish({ result, diagnostics: result.diagnostics, applied: false, failure });
      return;
    }
    if (result.generation === this.applied?.generation && this.serving) {
      await this.options.folder.discard(staged);
      if (built.rejected) await this.options.folder.discard(built.rejected);
      await this.finish({ result, diagnostics: result.diagnostics, applied: true });
      return;
    }

    // The files this replaces are kept (hard links, not copies) until nginx serves the new ones.
    const commit = await this.options.folder.commit(staged, { keepPrevious: true });
    const committed = performance.now();
    if (built.rejected) await this.options.folder.keepRejected(built.rejected);
    const reload = await this.reloadTo(result.generation, result.model.controlSocket);
    if (reload.ok) {
      await this.options.folder.dropPrevious(commit);
      this.applied = { generation: result.generation };
      this.refused = undefined;
      metrics.reloads.inc({ result: 'success' });
      metrics.lastSuccessfulReload.set(Date.now() / 1000);
      log.info('nginx serves the new config', {
        generation: result.generation,
        written: commit.written.length,
        removed: commit.removed.length,
        buildMs: Math.round(built0 - started),
        checkMs: Math.round(checked - built0),
        writeMs: Math.round(committed - checked),
        reloadMs: Math.round(reload.ms),
        quarantined: [...built.quarantined.keys()],
      });
      await this.finish({ result, diagnostics: result.diagnostics, applied: true });
      return;
    }
    metrics.reloads.inc({ result: 'failure' });
    const failure = `nginx did not serve generation ${result.generation} within ${this.options.reloadTimeoutMs} ms of the reload (see its log)`;
    this.refused = { generation: first.generation, failure };
    log.error(`${failure}; restoring the last good config`, { generation: result.generation });
    await this.restore(commit, result.model.controlSocket);
    await this.finish({ result, diagnostics: result.diagnostics, applied: false, failure });
  }

  private async finish(round: Round): Promise<void> {
    const counts = { error: 0, warning: 0, info: 0 };
    for (const d of round.diagnostics) counts[d.severity]++;
    for (const [severity, count] of Object.entries(counts)) this.options.metrics.diagnostics.set({ severity }, count);
    if (round.applied) {
      this.options.metrics.certificateExpiry.reset();
      for (const certificate of round.result.certificates) {
        this.options.metrics.certificateExpiry.set({ host: certificate.host }, (Date.parse(certificate.notAfter) - Date.now()) / 1000);
      }
    }
    await this.options.afterRound(round);
  }

  /** Has nginx load the folder (start or signal it) and waits until it serves `generation`. */
  private async reloadTo(generation: string, controlSocket: string): Promise<{ ok: boolean; ms: number }> {
    const started = performance.now();
    await this.options.driver.load().catch((error: Error) => this.options.log.error('could not signal nginx', { error: error.message }));
    const { ok, served } = await waitForGeneration(controlSocket, generation, this.options.reloadTimeoutMs);
    const ms = performance.now() - started;
    if (!ok) this.options.log.warn('nginx does not serve the generation it was asked to load', { wanted: generation, served: served ?? 'nothing' });
    if (ok) {
      this.serving = true;
      this.options.metrics.reloadDuration.observe(ms / 1000);
    }
    return { ok, ms };
  }

  /** Puts the files the commit replaced back and has nginx load them again. */
  private async restore(commit: CommitResult, controlSocket: string): Promise<void> {
    await this.options.folder.restorePrevious(commit);
    if (!this.applied) return;
    const back = await this.reloadTo(this.applied.generation, controlSocket);
    if (!back.ok) this.options.log.error('nginx does not serve the restored config either', { generation: this.applied.generation });
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
