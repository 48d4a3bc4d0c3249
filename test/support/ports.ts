import { readFileSync } from 'node:fs';
import net from 'node:net';

/**
 * Ports for servers that cannot be told to bind port 0 (nginx's `listen` needs a number up front).
 *
 * A port is only "free" until someone else binds it. Ports below the kernel's ephemeral range are
 * never handed out as the local port of outgoing connections nor to `listen(0)` callers, so the
 * many client and upstream connections of parallel tests cannot take a port between our check and
 * nginx's bind. When there is no room below the ephemeral range we fall back to `listen(0)`.
 */

const LOWEST_CANDIDATE_PORT = 10_000;

function ephemeralRangeStart(): number | undefined {
  try {
    const [start] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/);
    const port = Number(start);
    return Number.isInteger(port) ? port : undefined;
  } catch {
    return undefined;
  }
}

const candidateEnd = ephemeralRangeStart();
const candidateCount =
  candidateEnd !== undefined && candidateEnd > LOWEST_CANDIDATE_PORT ? candidateEnd - LOWEST_CANDIDATE_PORT : 0;
// A random start keeps concurrent test processes (other forks, other checkouts) apart; the cursor
// then walks forward so one process never hands out the same port twice in a row.
let cursor = Math.floor(Math.random() * Math.max(candidateCount, 1));

/** Binds `port` (0 = any) on all IPv4 addresses, so a port in use on any of them counts as taken. */
function tryBind(port: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(undefined));
    server.listen({ port, host: '0.0.0.0', exclusive: true }, () => {
      const address = server.address();
      const bound = typeof address === 'object' && address !== null ? address.port : undefined;
      server.close(() => resolve(bound));
    });
  });
}

/** A TCP port on which nothing listens right now. */
export async function freePort(): Promise<number> {
  for (let tried = 0; tried < candidateCount; tried++) {
    const port = LOWEST_CANDIDATE_PORT + (cursor % candidateCount);
    cursor++;
    if ((await tryBind(port)) !== undefined) return port;
  }
  const port = await tryBind(0);
  if (port === undefined) throw new Error('could not bind any TCP port on 0.0.0.0');
  return port;
}

/** `count` distinct free TCP ports. */
export async function freePorts(count: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < count) ports.add(await freePort());
  return [...ports];
}
