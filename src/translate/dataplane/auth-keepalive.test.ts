import { describe, expect, it } from 'vitest';
import type { ResolvedBackend } from '../backends.js';
import { authKeepalivePerNamespace, authKeepaliveShares, authKeepaliveTotal } from './auth-keepalive.js';

/** The auth blocks' keepalive budget (issue 37, defect 6). */

function authBlock(namespace: string, index: number, keepalive: number): ResolvedBackend {
  return {
    upstream: `${namespace}_auth_80_auth-keepalive-${index}`,
    service: { namespace, name: 'auth', port: 80 },
    keepalive: { keepalive, keepaliveDirectives: [] },
  } as unknown as ResolvedBackend;
}

const total = (shares: ReadonlyMap<string, number>) => [...shares.values()].reduce((sum, n) => sum + n, 0);

describe('authKeepaliveShares', () => {
  it('keeps what each block asks for while its namespace fits the budget', () => {
    const shares = authKeepaliveShares([authBlock('a', 1, 32), authBlock('a', 2, 64), authBlock('b', 1, 10_000)]);
    expect([...shares.values()]).toEqual([32, 64, 10_000]);
  });

  it('scales a namespace down to its budget, whatever the other namespaces ask', () => {
    const shares = authKeepaliveShares([...Array.from({ length: 300 }, (_, i) => authBlock('greedy', i, 10_000)), authBlock('modest', 1, 64)]);
    expect(total(new Map([...shares].filter(([name]) => name.startsWith('greedy'))))).toBeLessThanOrEqual(authKeepalivePerNamespace);
    expect(shares.get('modest_auth_80_auth-keepalive-1')).toBe(64);
  });

  it('scales all namespaces down to the total, never below 1 a block', () => {
    const shares = authKeepaliveShares(Array.from({ length: 40 }, (_, i) => authBlock(`ns${i}`, 1, 10_000)));
    expect(total(shares)).toBeLessThanOrEqual(authKeepaliveTotal);
    const tiny = authKeepaliveShares(Array.from({ length: 50_000 }, (_, i) => authBlock('many', i, 1)));
    expect(Math.min(...tiny.values())).toBe(1);
  });

  it('ignores blocks without auth-keepalive', () => {
    expect(authKeepaliveShares([{ upstream: 'x', service: { namespace: 'a', name: 'x', port: 80 } } as unknown as ResolvedBackend]).size).toBe(0);
  });
});
