import { describe, expect, it } from 'vitest';
import { ChangeCoalescer } from './coalesce.js';

// Times are plain numbers passed in (ms): no clock is read.
describe('ChangeCoalescer', () => {
  it('starts the round for a lone change after a quiet period at once', () => {
    const coalescer = new ChangeCoalescer(100, 1000);
    expect(coalescer.changed(50_000, true)).toBe(0);
    expect(coalescer.started(50_000)).toBe(50_000);
    // Quiet again for a window: the next lone change does not wait either.
    expect(coalescer.changed(50_200, true)).toBe(0);
  });

  it('puts changes that come before the round due at once into it', () => {
    const coalescer = new ChangeCoalescer(100, 1000);
    expect(coalescer.changed(0, true)).toBe(0);
    expect(coalescer.changed(0, false)).toBeUndefined();
    expect(coalescer.changed(1, false)).toBeUndefined();
    expect(coalescer.started(1)).toBe(0);
  });

  it('coalesces what follows within the window, up to the maximum delay after its first change', () => {
    const coalescer = new ChangeCoalescer(100, 1000);
    expect(coalescer.changed(0, true)).toBe(0);
    coalescer.started(0);
    // The round is running; changes keep coming every 50 ms.
    expect(coalescer.changed(10, false)).toBe(100);
    expect(coalescer.changed(60, false)).toBe(100);
    expect(coalescer.changed(960, false)).toBe(50);
    expect(coalescer.changed(1010, false)).toBe(0);
    expect(coalescer.started(1010)).toBe(10);
  });

  it('does not start at once when the last change was within the window, even with nothing scheduled', () => {
    const coalescer = new ChangeCoalescer(100, 1000);
    expect(coalescer.changed(0, true)).toBe(0);
    coalescer.started(0);
    expect(coalescer.changed(40, true)).toBe(100);
    expect(coalescer.changed(90, false)).toBe(100);
    expect(coalescer.started(190)).toBe(40);
  });
});
