import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sameJsonText, sameValue, withAddedFields, withFields } from './objects.js';

describe('withFields', () => {
  it('gives what a spread gives: the same keys in the same order, the fields winning', () => {
    const base: { modifier: string; path: string; proxy: { upstream: string }; servedBy?: string; comment?: string } = {
      modifier: '',
      path: '/api',
      proxy: { upstream: 'web' },
      servedBy: 'old',
    };
    const made = withFields(base, { servedBy: '/', comment: 'c' });
    const spread = { ...base, servedBy: '/', comment: 'c' };
    expect(made).toEqual(spread);
    expect(Object.keys(made)).toEqual(Object.keys(spread));
    expect(made.proxy).toBe(base.proxy);
  });

  it('leaves the base object as it was', () => {
    const base = { path: '/' };
    const made = withFields(base, { path: '/x' });
    expect(base).toEqual({ path: '/' });
    expect(made).not.toBe(base);
  });

  it('skips fields given as a false condition, as a spread of one does', () => {
    const base: { path: string; rewrite?: { target: string } } = { path: '/' };
    const rewrite = undefined as { target: string } | undefined;
    expect(Object.keys(withFields(base, { ...(rewrite && { rewrite }) }))).toEqual(['path']);
  });
});

describe('withAddedFields', () => {
  it('gives what a spread gives with fields the base does not have', () => {
    const base = { upstream: 'web', port: 80 };
    const made = withAddedFields(base, { weight: 1, port: 443 });
    const spread = { ...base, weight: 1, port: 443 };
    expect(made).toEqual(spread);
    expect(Object.keys(made)).toEqual(Object.keys(spread));
    expect(base).toEqual({ upstream: 'web', port: 80 });
  });
});

describe('sameValue', () => {
  it('compares plain data deeply, whatever the key order', () => {
    expect(sameValue({ a: [1, { b: 'x' }], c: null }, { c: null, a: [1, { b: 'x' }] })).toBe(true);
    expect(sameValue({ a: [1, { b: 'x' }] }, { a: [1, { b: 'y' }] })).toBe(false);
    expect(sameValue([1, 2], [1, 2, 3])).toBe(false);
    expect(sameValue({ a: 1 }, { a: 1, b: 2 })).toBe(false);
    expect(sameValue({ a: undefined }, { b: undefined })).toBe(false);
    expect(sameValue([], {})).toBe(false);
    expect(sameValue(null, {})).toBe(false);
    expect(sameValue('1', 1)).toBe(false);
  });

  it('does not look into a part both share', () => {
    const shared = { get deep(): never { throw new Error('looked into'); } };
    expect(sameValue({ a: 1, shared }, { a: 1, shared })).toBe(true);
  });
});

describe('sameJsonText', () => {
  it('agrees with comparing what JSON.stringify writes', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.jsonValue(), (a, b) => {
        expect(sameJsonText(a, b)).toBe(JSON.stringify(a) === JSON.stringify(b));
        expect(sameJsonText(a, structuredClone(a))).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it('counts key order and leaves out keys set to undefined, as JSON.stringify does', () => {
    expect(sameJsonText({ a: 1, b: [{ c: 'x' }] }, { a: 1, b: [{ c: 'x', d: undefined }] })).toBe(true);
    expect(sameJsonText({ a: 1, b: 2 }, { b: 2, a: 1 })).toBe(false);
    expect(sameJsonText({ a: 1 }, { a: '1' })).toBe(false);
    expect(sameJsonText([1, 2], { 0: 1, 1: 2 })).toBe(false);
  });

  it('leaves out the skipped keys of the two objects only', () => {
    const skip = new Set(['path']);
    expect(sameJsonText({ path: '/a', proxy: { upstream: 'web' } }, { path: '/b', proxy: { upstream: 'web' } }, skip)).toBe(true);
    expect(sameJsonText({ proxy: { path: '/a' } }, { proxy: { path: '/b' } }, skip)).toBe(false);
  });
});
