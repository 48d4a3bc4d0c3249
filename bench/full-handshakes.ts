import { connect } from 'node:tls';

/**
 * Child of the data-plane bench: full TLS handshakes with SNI, none resumed (no session is offered),
 * on `connections` connections at a time for `seconds`; prints `{"handshakes":N,"errors":M,"durationUs":D}`.
 * `openssl s_time -new` would do it, but the OpenSSL 3.0 of Debian 12 has no `-servername` for it.
 *
 *   node dist/bench/full-handshakes.js PORT HOST SECONDS CONNECTIONS
 */
const [port, host, seconds, connections] = process.argv.slice(2);
const started = performance.now();
const until = started + Number(seconds) * 1000;
let handshakes = 0;
let errors = 0;

function handshake(): Promise<void> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port: Number(port), servername: host, rejectUnauthorized: false }, () => {
      handshakes++;
      socket.destroy();
      resolve();
    });
    socket.once('error', () => {
      errors++;
      resolve();
    });
  });
}

async function loop(): Promise<void> {
  while (performance.now() < until) await handshake();
}

await Promise.all(Array.from({ length: Number(connections) }, loop));
process.stdout.write(`${JSON.stringify({ handshakes, errors, durationUs: (performance.now() - started) * 1000 })}\n`);
