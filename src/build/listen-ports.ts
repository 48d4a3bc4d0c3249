import type { NginxConfig } from '../model/nginx.js';
import { compareStrings } from '../model/order.js';

/** A port nginx binds on every address (`listen PORT`), by protocol. */
export interface ListenedPort {
  readonly port: number;
  readonly protocol: 'tcp' | 'udp';
}

/**
 * The ports a config makes nginx bind, sorted: plain HTTP, HTTPS when it is not behind the SNI front (the
 * Ingress ports' and the Gateway listeners' own), the SNI fronts, and the TCP/UDP services. Unix sockets and the loopback addresses that share a front's port
 * are left out: nginx binds nothing more for them that another process could hold.
 */
export function listenedPorts(model: NginxConfig): ListenedPort[] {
  const tcp = [
    model.http.httpPort,
    ...model.http.httpsListeners.filter((l) => /^[0-9]+$/.test(l.address)).map((l) => Number(l.address)),
    ...(model.http.ownPorts ?? []).flatMap((own) => (own.tls ? own.httpsListeners.filter((l) => /^[0-9]+$/.test(l.address)).map((l) => Number(l.address)) : [own.port])),
    ...model.stream.frontends.map((f) => f.port),
    ...model.stream.services.filter((s) => !s.udp).map((s) => s.port),
  ];
  const udp = model.stream.services.filter((s) => s.udp).map((s) => s.port);
  const ports = [...new Set(tcp)].map((port): ListenedPort => ({ port, protocol: 'tcp' }));
  ports.push(...[...new Set(udp)].map((port): ListenedPort => ({ port, protocol: 'udp' })));
  return ports.sort((a, b) => a.port - b.port || compareStrings(a.protocol, b.protocol));
}

const portKey = (port: ListenedPort): string => `${port.protocol}/${port.port}`;

/** The ports of `ports` that `served` does not bind already. */
export function addedPorts(ports: readonly ListenedPort[], served: readonly ListenedPort[]): ListenedPort[] {
  const known = new Set(served.map(portKey));
  return ports.filter((p) => !known.has(portKey(p)));
}

/**
 * Why nginx could not load `model` when another process holds one of `busy`: a reload binds every new
 * port and fails with "Address already in use", which `nginx -t` never sees (it binds nothing).
 */
export function busyPortProblem(model: NginxConfig, busy: readonly ListenedPort[]): string | undefined {
  const held = new Set(busy.map(portKey));
  const clash = listenedPorts(model).find((p) => held.has(portKey(p)));
  if (!clash) return undefined;
  return `port ${clash.port} (${clash.protocol}) is in use by another process in the Pod: nginx's reload cannot bind it (Address already in use), which nginx -t does not check`;
}
