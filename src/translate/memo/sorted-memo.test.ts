import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { mergeSorted, SortedMemo } from './sorted-memo.js';
import { compareUpstreamNames } from '../upstream-names.js';

describe('sorted from the last build', () => {
  it('gives what a sort of the whole set gives, after any sequence of sets', () => {
    // Few letters, so that sets overlap and names share their readable part (from the fourth character).
    const name = fc.stringMatching(/^[ab]{2}_[a-c]{1,3}$/);
    fc.assert(
      fc.property(fc.array(fc.uniqueArray(name, { maxLength: 12 }), { minLength: 1, maxLength: 8 }), (sets) => {
        const memo = new SortedMemo(compareUpstreamNames);
        for (const names of sets) expect(memo.sorted(new Set(names))).toEqual([...names].sort(compareUpstreamNames));
      }),
    );
  });

  it('merges two sorted lists', () => {
    const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
    expect(mergeSorted(['a', 'c', 'e'], ['b', 'f'], compare)).toEqual(['a', 'b', 'c', 'e', 'f']);
    expect(mergeSorted([], ['b'], compare)).toEqual(['b']);
    expect(mergeSorted(['a'], [], compare)).toEqual(['a']);
  });

  it('orders upstream names by their readable part, then by the whole name', () => {
    expect(['zz_web_b_80', 'aa_web_c_80', 'qq_web_b_80'].sort(compareUpstreamNames)).toEqual(['qq_web_b_80', 'zz_web_b_80', 'aa_web_c_80']);
  });
});
