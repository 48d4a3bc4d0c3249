/**
 * When the round for a change starts. A change after a quiet period (nothing changed for a debounce
 * window, no round pending or running) starts one at once: a lone edit should not wait for a window
 * in which nothing else comes. What follows it within the window is coalesced as before: the round
 * starts a window after the last change, but no later than `maxDelayMs` after the first one, so one
 * `kubectl apply` of many objects stays a few reloads. Times are passed in: the decision is pure.
 */
export class ChangeCoalescer {
  private lastChange = Number.NEGATIVE_INFINITY;
  private firstPending: number | undefined;
  private dueAtOnce = false;

  constructor(
    private readonly debounceMs: number,
    private readonly maxDelayMs: number,
  ) {}

  /**
   * A change at `now`; `idle` when no round is scheduled or running. Returns how long to wait before
   * the round, or nothing when a round already due at once will read this change too.
   */
  changed(now: number, idle: boolean): number | undefined {
    const quiet = idle && now - this.lastChange >= this.debounceMs;
    this.lastChange = now;
    if (this.dueAtOnce) return undefined;
    this.firstPending ??= now;
    if (quiet) {
      this.dueAtOnce = true;
      return 0;
    }
    return Math.max(0, Math.min(this.debounceMs, this.firstPending + this.maxDelayMs - now));
  }

  /** The scheduled round starts: returns the time of its first change. */
  started(now: number): number {
    const since = this.firstPending ?? now;
    this.firstPending = undefined;
    this.dueAtOnce = false;
    return since;
  }
}
