import dgram from 'node:dgram';
import net from 'node:net';
import type { ListenedPort } from '../build/listen-ports.js';

/**
 * The ports of `ports` that another process holds: each is bound for a moment on every address, as
 * nginx's `listen PORT` binds it, and only "Address already in use" counts (a port below 1024 that this
 * process may not bind says nothing about nginx, which may).
 */
export async function portsInUse(ports: readonly ListenedPort[]): Promise<ListenedPort[]> {
  const busy: ListenedPort[] = [];
  for (const port of ports) if (await inUse(port)) busy.push(port);
  return busy;
}

function inUse({ port, protocol }: ListenedPort): Promise<boolean> {
  return new Promise((resolve) => {
    const failed = (error: NodeJS.ErrnoException) => resolve(error.code === 'EADDRINUSE');
    if (protocol === 'udp') {
      const socket = dgram.createSocket('udp4');
      socket.once('error', (error) => {
        socket.close();
        failed(error);
      });
      socket.bind({ port, address: '0.0.0.0', exclusive: true }, () => socket.close(() => resolve(false)));
      return;
    }
    const server = net.createServer();
    server.once('error', failed);
    server.listen({ port, host: '0.0.0.0', exclusive: true }, () => server.close(() => resolve(false)));
  });
}
