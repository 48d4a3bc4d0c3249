import { describe, expect, it } from 'vitest';
import { withAddedFields, withFields } from './objects.js';

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
