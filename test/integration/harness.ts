import { X509Certificate } from 'node:crypto';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { stringify } from 'yaml';
import { runCli, type CliRun } from '../support/cli.js';
import { createNginxPrefix, requireNginx, startNginx, stopAllNginx, type RunningNginx } from '../support/nginx.js';
import { collectResponse, summarizePeerCertificate, type HttpResponse, type Peer, type PeerCertificateSummary } from '../support/peers.js';
import { freePorts } from '../support/ports.js';

/**
 * Shared setup for the integration suites: manifests whose Services point at real backends on
 * 127.0.0.1, `render` through the CLI in-process, and the rendered nginx.conf started as a real nginx.
 * Everything a suite starts or creates is registered here and undone by `cleanUp` (an `afterAll`).
 */

const temporaryDirs: string[] = [];
const peers: Peer[] = [];

/** A new temp directory, world-traversable (0755): nginx workers run as `nobody` when tests run as root. */
export async function temporaryDir(name = 'i2n-it-'): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), name));
  await chmod(dir, 0o755);
  temporaryDirs.push(dir);
  return dir;
}

/** Registers a backend so that `cleanUp` closes it. */
export async function startPeer<T extends Peer>(started: Promise<T>): Promise<T> {
  const peer = await started;
  peers.push(peer);
  return peer;
}

/** Stops every nginx, closes every backend and removes every temp directory of this test file. */
export async function cleanUp(): Promise<void> {
  await stopAllNginx();
  await Promise.all(peers.splice(0).map((peer) => peer.close()));
  await Promise.all(temporaryDirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
}

/** SHA-256 fingerprint of a PEM certificate, in the form Node reports for a peer certificate. */
export function fingerprint(certPem: string): string {
  return new X509Certificate(certPem).fingerprint256;
}

// ---------------------------------------------------------------------------------------- manifests

export interface BackendRef {
  /** Service name, in the Ingress's namespace. */
  readonly service: string;
  readonly port: number;
}

export interface PathSpec {
  readonly path: string;
  readonly pathType: 'Exact' | 'Prefix' | 'ImplementationSpecific';
  readonly backend: BackendRef;
}

export interface IngressRule {
  readonly host?: string;
  readonly paths: readonly PathSpec[];
}

export interface IngressInput {
  readonly namespace: string;
  readonly name: string;
  /** Keys without the `nginx.ingress.kubernetes.io/` prefix. */
  readonly annotations?: Readonly<Record<string, string>>;
  readonly tls?: readonly { readonly hosts: readonly string[]; readonly secretName?: string }[];
  readonly rules?: readonly IngressRule[];
  readonly defaultBackend?: BackendRef;
}

function backendYaml(ref: BackendRef): object {
  return { service: { name: ref.service, port: { number: ref.port } } };
}

/**
 * A Service whose ClusterIP is 127.0.0.1 and whose port is the backend's own port, so the rendered
 * upstream is `127.0.0.1:<port>` — the real backend listening there.
 */
export function serviceManifest(namespace: string, name: string, backend: Peer): string {
  return stringify({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace },
    spec: { clusterIP: '127.0.0.1', ports: [{ name: 'main', port: backend.port, protocol: 'TCP' }] },
  });
}

export function ingressManifest(input: IngressInput): string {
  const annotations = Object.fromEntries(
    Object.entries(input.annotations ?? {}).map(([key, value]) => [`nginx.ingress.kubernetes.io/${key}`, value]),
  );
  return stringify({
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: { name: input.name, namespace: input.namespace, ...(input.annotations && { annotations }) },
    spec: {
      ingressClassName: 'nginx',
      ...(input.defaultBackend && { defaultBackend: backendYaml(input.defaultBackend) }),
      ...(input.tls && { tls: input.tls }),
      ...(input.rules && {
        rules: input.rules.map((rule) => ({
          ...(rule.host !== undefined && { host: rule.host }),
          http: {
            paths: rule.paths.map((p) => ({ path: p.path, pathType: p.pathType, backend: backendYaml(p.backend) })),
          },
        })),
      }),
    },
  });
}

export function configMapManifest(namespace: string, name: string, data: Readonly<Record<string, string>>): string {
  return stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace }, data });
}

/** Joins YAML documents into one multi-document stream. */
export function documents(...yamlDocuments: readonly string[]): string {
  return yamlDocuments.map((document) => `---\n${document.trimEnd()}\n`).join('');
}

// ------------------------------------------------------------------------------ render and start

/** Where one rendered configuration lives, and the ports nginx serves it on. */
export interface Target {
  readonly inputDir: string;
  readonly outDir: string;
  /** Short absolute dir (0755) for pid, unix sockets and temp files: `--run-dir`. */
  readonly runDir: string;
  readonly prefix: string;
  readonly httpPort: number;
  readonly httpsPort: number;
  /** `outDir/nginx.conf`. */
  readonly conf: string;
}

export async function createTarget(): Promise<Target> {
  requireNginx();
  const work = await temporaryDir('i2n-it-');
  const inputDir = path.join(work, 'in');
  const outDir = path.join(work, 'out');
  await mkdir(inputDir, { mode: 0o755 });
  // Unix socket paths must stay under 107 bytes: a short run dir straight under /tmp.
  const runDir = await mkdtemp('/tmp/i2n-');
  await chmod(runDir, 0o755);
  temporaryDirs.push(runDir);
  const prefix = await createNginxPrefix();
  temporaryDirs.push(prefix);
  const [httpPort, httpsPort] = (await freePorts(2)) as [number, number];
  return { inputDir, outDir, runDir, prefix, httpPort, httpsPort, conf: path.join(outDir, 'nginx.conf') };
}

/**
 * Writes `manifests` as the only input file and runs
 * `render -f IN -o OUT --http-port --https-port --run-dir --stream-module …` plus `extraArgs`.
 */
export async function renderInto(target: Target, manifests: string, extraArgs: readonly string[] = []): Promise<CliRun> {
  await writeFile(path.join(target.inputDir, 'manifests.yaml'), manifests);
  const result = await runCli(
    [
      'render',
      '-f', target.inputDir,
      '-o', target.outDir,
      '--http-port', String(target.httpPort),
      '--https-port', String(target.httpsPort),
      '--run-dir', target.runDir,
      '--stream-module', requireNginx().streamModuleFile ?? 'none',
      '--nginx-version', requireNginx().version,
      ...extraArgs,
    ],
  );
  await chmod(target.outDir, 0o755).catch(() => undefined);
  return result;
}

export function startTarget(target: Target): Promise<RunningNginx> {
  return startNginx({ prefix: target.prefix, conf: target.conf, ports: [target.httpPort, target.httpsPort] });
}

// ------------------------------------------------------------------- PROXY protocol from outside

/** A PROXY protocol v1 header as an outer load balancer sends it. */
export function proxyV1Header(source: string, destination: string, sourcePort: number, destinationPort: number): string {
  return `PROXY TCP4 ${source} ${destination} ${sourcePort} ${destinationPort}\r\n`;
}

/** Connects to 127.0.0.1:`port`, writes `header` in the clear, then starts TLS on the same socket. */
function tlsAfterHeader(
  options: { port: number; header: string; servername?: string; ca?: string },
  done: (error: Error | null, socket?: tls.TLSSocket) => void,
): void {
  const raw = net.connect({ host: '127.0.0.1', port: options.port });
  raw.once('error', (error) => done(error));
  raw.once('connect', () => {
    raw.write(options.header, () => {
      const secure = tls.connect({ socket: raw, servername: options.servername, ca: options.ca, rejectUnauthorized: false });
      secure.once('secureConnect', () => done(null, secure));
      secure.once('error', (error) => done(error));
    });
  });
}

/** HTTPS GET (HTTP/1.1, SNI and Host = `servername`) on a connection that first carries `header`. */
export function httpsGetAfterHeader(options: {
  port: number;
  header: string;
  servername: string;
  path?: string;
}): Promise<HttpResponse> {
  return collectResponse(
    http.request({
      path: options.path ?? '/',
      headers: { host: options.servername, connection: 'close' },
      createConnection: (_opts: unknown, created: (error: Error | null, socket: net.Socket) => void) => {
        tlsAfterHeader(options, (error, socket) => created(error, socket as net.Socket));
        return undefined;
      },
    } as http.RequestOptions),
  );
}

/** TLS on a connection that first carries `header`; resolves with the first line the server sends. */
export function tlsLineAfterHeader(options: {
  port: number;
  header: string;
  servername: string;
}): Promise<{ peerCertificate: PeerCertificateSummary | undefined; line: string }> {
  return new Promise((resolve, reject) => {
    tlsAfterHeader(options, (error, socket) => {
      if (error || !socket) {
        reject(error ?? new Error('no socket'));
        return;
      }
      const peerCertificate = summarizePeerCertificate(socket.getPeerCertificate());
      let received = '';
      socket.setEncoding('utf8');
      socket.on('data', (chunk: string) => {
        received += chunk;
        const newline = received.indexOf('\n');
        if (newline >= 0) {
          socket.destroy();
          resolve({ peerCertificate, line: received.slice(0, newline + 1) });
        }
      });
      socket.once('error', reject);
      socket.once('close', () => resolve({ peerCertificate, line: received }));
    });
  });
}

/** Awaits an object of promises, keeping its keys: `{ a: Promise<A> }` → `{ a: A }`. */
export async function settle<T extends Record<string, Promise<unknown>>>(promises: T): Promise<{ [K in keyof T]: Awaited<T[K]> }> {
  const entries = await Promise.all(Object.entries(promises).map(async ([key, promise]) => [key, await promise] as const));
  return Object.fromEntries(entries) as { [K in keyof T]: Awaited<T[K]> };
}
