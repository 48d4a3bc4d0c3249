import type { ResolvedBackend } from '../backends.js';

/**
 * What the auth services' own upstream blocks (`auth-keepalive`) may keep. nginx allocates each block's
 * whole connection cache when it loads the config (about 150 bytes a connection, in the master and in
 * every config a reload holds beside it), and every distinct `auth-keepalive-*` triple is a block: 300
 * Ingresses asking for 10,000 connections with distinct timeouts made `nginx -t` take 468 MB. As the
 * general keepalive is shared out past a count of blocks (`keepalivePerUpstream`), the auth blocks of
 * one namespace (the auth Service's) share one budget, and all namespaces together share another.
 */

/** Connections the auth blocks of one namespace keep together: one block at the annotation's maximum. */
export const authKeepalivePerNamespace = 10_000;
/** Connections all auth blocks keep together (a hundred blocks at ingress-nginx's default of 320). */
export const authKeepaliveTotal = 32_000;

/**
 * The `keepalive` of each auth block by upstream name: what its annotation asks for while its namespace's
 * blocks fit their budget and all fit the total, else scaled down alike (never below 1, which keeps the
 * connection reuse the annotation asks for).
 */
export function authKeepaliveShares(backends: readonly ResolvedBackend[]): ReadonlyMap<string, number> {
  const byNamespace = new Map<string, ResolvedBackend[]>();
  for (const backend of backends) {
    if (backend.keepalive === undefined) continue;
    const list = byNamespace.get(backend.service.namespace) ?? [];
    list.push(backend);
    byNamespace.set(backend.service.namespace, list);
  }
  const wanted = new Map<string, number>();
  for (const list of byNamespace.values()) {
    for (const [name, count] of sharedOut(list, authKeepalivePerNamespace)) wanted.set(name, count);
  }
  const sum = [...wanted.values()].reduce((total, count) => total + count, 0);
  if (sum <= authKeepaliveTotal) return wanted;
  const shares = new Map<string, number>();
  for (const [name, count] of wanted) shares.set(name, Math.max(1, Math.floor((count * authKeepaliveTotal) / sum)));
  return shares;
}

/** Each block's ask, scaled down alike when together they ask for more than `budget`. */
function sharedOut(list: readonly ResolvedBackend[], budget: number): Map<string, number> {
  const asks = list.map((backend) => [backend.upstream, backend.keepalive?.keepalive ?? 0] as const);
  const sum = asks.reduce((total, [, count]) => total + count, 0);
  const scaled = asks.map(([name, count]) => [name, sum <= budget ? count : Math.max(1, Math.floor((count * budget) / sum))] as const);
  return new Map(scaled);
}
