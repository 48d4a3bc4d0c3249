import { EventEmitter } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import type net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { createCa, issueCertificate } from '../pki.js';
import { Registry, type ListQuery } from './registry.js';
import { apiVersionOf, GATEWAY_API_GROUP, RESOURCE_TYPES, toServed, typeForKind, type ResourceType } from './resources.js';
import { selector } from './selectors.js';
import {
  ApiError,
  badRequest,
  expired,
  injectedFault,
  invalid,
  methodNotSupported,
  pathNotFound,
  tooLargeResourceVersion,
  unauthorized,
  type FieldError,
  type JsonObject,
  type JsonValue,
  type Status,
} from './status.js';
import { CompactedError, type Change } from './store.js';
import { validate, warningHeader, type AdmissionAttributes } from './admission.js';
import { WatchStream, type WatchDescription } from './watch.js';

/**
 * A loopback Kubernetes API server for tests: the REST and watch protocol of kube-apiserver over
 * plain HTTP, for the kinds ingress2nginx reads and writes, with faults on demand and a log of what
 * clients asked. See the protocol notes in registry.ts, watch.ts and validation.ts.
 */

export interface FakeApiServerOptions {
  /**
   * Require `Authorization: Bearer <token>` (401 otherwise). Default: no authentication. Note that
   * client-go (kubectl) sends a kubeconfig token only over TLS: use `tls` with a token for kubectl.
   */
  readonly token?: string;
  /** Serve HTTPS with a certificate from a fresh CA (in the kubeconfig as certificate-authority-data). */
  readonly tls?: boolean;
  /** Default 0: a port the kernel picks. */
  readonly port?: number;
  /** Serve the Gateway API group from the start (as if its CRDs were installed). Default true. */
  readonly gatewayApi?: boolean;
  /** How often a watch with allowWatchBookmarks=true gets a BOOKMARK. Default 60 s, as the real watch cache. */
  readonly bookmarkIntervalMs?: number;
}

export type RequestVerb = 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete' | 'deletecollection' | 'discovery' | 'other';

/** One request as the fake received it. */
export interface ObservedRequest {
  readonly method: string;
  /** Path without the query. */
  readonly path: string;
  readonly query: Readonly<Record<string, string>>;
  readonly contentType: string | undefined;
  readonly accept: string | undefined;
  readonly userAgent: string | undefined;
  /** JSON (or YAML) bodies parsed; other bodies as text; undefined without a body. */
  readonly body: JsonValue | undefined;
  readonly verb: RequestVerb;
  readonly group?: string;
  readonly version?: string;
  readonly resource?: string;
  readonly namespace?: string;
  readonly name?: string;
  readonly subresource?: string;
  /** The HTTP status answered (200 for a watch as soon as its headers went out); undefined while pending. */
  status?: number;
}

export interface FaultSpec {
  /** e.g. 'PATCH'; default any. */
  readonly method?: string;
  /** The request path (no query): a string matches exactly, a RegExp by test. Default any. */
  readonly path?: string | RegExp;
  readonly verb?: RequestVerb;
  /** How many matching requests fail. Default 1. */
  readonly count?: number;
  /** Default 500. */
  readonly status?: number;
  readonly message?: string;
}

export interface HangSpec {
  /** Hang the watches open now. Default true. */
  readonly existing?: boolean;
  /** Hang watches opened from now until release (they get no response headers). Default false. */
  readonly future?: boolean;
  /** Only watches of this resource (plural, e.g. 'ingresses'). Default all. */
  readonly resource?: string;
}

/** Names a stored object for the test-side helpers. */
export interface ObjectRef {
  readonly apiVersion: string;
  readonly kind: string;
  readonly namespace?: string;
  readonly name: string;
}

interface ResourceRequest {
  readonly type: ResourceType;
  readonly version: string;
  readonly namespace: string | undefined;
  readonly name: string | undefined;
  readonly subresource: string | undefined;
  readonly watchPath: boolean;
}

const KUBERNETES_VERSION = { major: '1', minor: '31', gitVersion: 'v1.31.0' };
const MAIN_VERBS = ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'];
const SUBRESOURCE_VERBS = ['get', 'patch', 'update'];

function groupVersionsOf(group: string): string[] {
  const versions: string[] = [];
  for (const type of RESOURCE_TYPES) if (type.group === group) for (const version of type.versions) if (!versions.includes(version)) versions.push(version);
  return versions;
}

function parseBody(text: string, contentType: string | undefined): JsonValue | undefined {
  if (text === '') return undefined;
  try {
    return contentType?.includes('yaml') ? (parseYaml(text) as JsonValue) : (JSON.parse(text) as JsonValue);
  } catch {
    return text;
  }
}

function readBody(request: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

export class FakeApiServer {
  readonly #registry = new Registry();
  readonly #server: http.Server | https.Server;
  readonly #options: FakeApiServerOptions;
  readonly #sockets = new Set<net.Socket>();
  readonly #watches = new Set<WatchStream>();
  readonly #requests: ObservedRequest[] = [];
  readonly #faults: (FaultSpec & { remaining: number })[] = [];
  readonly #futureHangs = new Set<HangSpec>();
  /** Watches each future-hang rule caught, so its release lets them go. */
  readonly #hungByRule = new Map<HangSpec, WatchStream[]>();
  readonly #servedGroups = new Set<string>();
  readonly #ticks = new EventEmitter();
  #port = 0;
  #bookmarkIntervalMs: number;
  #nextWatchId = 1;
  /** Holds the CA and server certificate (with `tls`) and the default kubeconfig; removed on close. */
  readonly #dir: string;
  readonly #caPem: string | undefined;

  private constructor(options: FakeApiServerOptions, dir: string, tls: { cert: string; key: string; caPem: string } | undefined) {
    this.#dir = dir;
    this.#caPem = tls?.caPem;
    this.#options = options;
    this.#bookmarkIntervalMs = options.bookmarkIntervalMs ?? 60_000;
    this.#ticks.setMaxListeners(0);
    for (const type of RESOURCE_TYPES) if (type.group !== GATEWAY_API_GROUP || options.gatewayApi !== false) this.#servedGroups.add(type.group);
    this.#registry.store.onChange((change) => this.#onChange(change));
    const handler = (request: http.IncomingMessage, response: http.ServerResponse) => void this.#handle(request, response);
    this.#server = tls ? https.createServer({ cert: tls.cert, key: tls.key }, handler) : http.createServer(handler);
    // With TLS the raw TCP socket is what refuseConnections must cut.
    this.#server.on('connection', (socket) => {
      this.#sockets.add(socket);
      socket.on('close', () => this.#sockets.delete(socket));
    });
  }

  static async start(options: FakeApiServerOptions = {}): Promise<FakeApiServer> {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'fake-apiserver-'));
    let tls: { cert: string; key: string; caPem: string } | undefined;
    if (options.tls) {
      const ca = await createCa(dir, 'fake-apiserver-ca');
      const certificate = await issueCertificate(ca, { commonName: 'kube-apiserver', sans: ['127.0.0.1', 'localhost'] });
      tls = { cert: certificate.certPem, key: certificate.keyPem, caPem: ca.certPem };
    }
    const server = new FakeApiServer(options, dir, tls);
    await server.#listen(options.port ?? 0);
    return server;
  }

  #listen(port: number): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#server.once('error', reject);
      this.#server.listen({ port, host: '127.0.0.1' }, () => {
        this.#server.off('error', reject);
        const address = this.#server.address();
        this.#port = typeof address === 'object' && address !== null ? address.port : port;
        resolve();
      });
    });
  }

  get port(): number {
    return this.#port;
  }

  get url(): string {
    return `${this.#caPem === undefined ? 'http' : 'https'}://127.0.0.1:${this.#port}`;
  }

  /** The CA that signed the server certificate (with `tls`). */
  get caPem(): string | undefined {
    return this.#caPem;
  }

  /** The current resourceVersion (the last write's), as a number. */
  get resourceVersion(): number {
    return this.#registry.store.revision;
  }

  /** Writes a kubeconfig (server URL, token) for clients; default file in a temp folder removed on close. */
  async writeKubeconfig(file?: string): Promise<string> {
    const target = file ?? path.join(this.#dir, 'kubeconfig');
    const user = this.#options.token === undefined ? ' {}' : `\n    token: ${JSON.stringify(this.#options.token)}`;
    await writeFile(
      target,
      [
        'apiVersion: v1',
        'kind: Config',
        'clusters:',
        '- name: fake',
        '  cluster:',
        `    server: ${this.url}`,
        ...(this.#caPem === undefined ? [] : [`    certificate-authority-data: ${Buffer.from(this.#caPem).toString('base64')}`]),
        'contexts:',
        '- name: fake',
        '  context:',
        '    cluster: fake',
        '    user: fake',
        '    namespace: default',
        'current-context: fake',
        'users:',
        '- name: fake',
        `  user:${user}`,
        '',
      ].join('\n'),
    );
    return target;
  }

  async close(): Promise<void> {
    for (const watch of [...this.#watches]) watch.drop();
    await new Promise<void>((resolve) => {
      this.#server.close(() => resolve());
      for (const socket of this.#sockets) socket.destroy();
    });
    await rm(this.#dir, { recursive: true, force: true });
  }

  // ---- Faults -------------------------------------------------------------------------------

  /** The next `count` requests matching `spec` answer `status` (default 500) with a Status body. */
  failNext(spec: FaultSpec = {}): void {
    this.#faults.push({ ...spec, remaining: spec.count ?? 1 });
  }

  /** Stops listening and cuts every open connection (watches included): new connections are refused. */
  refuseConnections(): Promise<void> {
    return new Promise((resolve) => {
      for (const watch of [...this.#watches]) watch.drop();
      this.#server.close(() => resolve());
      for (const socket of this.#sockets) socket.destroy();
    });
  }

  /** Listens again, on the same port. */
  acceptConnections(): Promise<void> {
    return this.#listen(this.#port);
  }

  /**
   * Open and/or future watch streams go silent (connection open, nothing sent, no bookmarks, no
   * timeout) until the returned function is called; what they missed is then sent in order.
   */
  hangWatches(spec: HangSpec = {}): () => void {
    const matches = (watch: WatchStream) => spec.resource === undefined || watch.type.resource === spec.resource;
    const hungNow = spec.existing === false ? [] : [...this.#watches].filter((watch) => matches(watch) && !watch.hung);
    for (const watch of hungNow) watch.hang();
    if (spec.future) this.#futureHangs.add(spec);
    const hungLater: WatchStream[] = [];
    this.#hungByRule.set(spec, hungLater);
    this.#tick();
    return () => {
      this.#futureHangs.delete(spec);
      for (const watch of [...hungNow, ...hungLater]) watch.release();
      this.#hungByRule.delete(spec);
      this.#tick();
    };
  }

  /** Destroys the sockets of open watch streams (all, or of one resource); returns how many. */
  dropWatches(resource?: string): number {
    const dropped = [...this.#watches].filter((watch) => resource === undefined || watch.type.resource === resource);
    for (const watch of dropped) watch.drop();
    return dropped.length;
  }

  /** Forgets history up to `resourceVersion` (default: now): watches and lists from older versions get 410. */
  compact(resourceVersion?: number): void {
    this.#registry.store.compact(resourceVersion);
  }

  setBookmarkInterval(milliseconds: number): void {
    this.#bookmarkIntervalMs = milliseconds;
  }

  // ---- Served groups ------------------------------------------------------------------------

  /** As if the group's CRDs were deleted: its objects go (DELETED events), its watches end, discovery drops it. */
  removeGroup(group: string = GATEWAY_API_GROUP): void {
    if (!this.#servedGroups.has(group)) return;
    for (const storage of new Set(RESOURCE_TYPES.filter((type) => type.group === group).map((type) => type.storage))) this.#registry.deleteAll(storage);
    this.#servedGroups.delete(group);
    for (const watch of [...this.#watches]) if (watch.type.group === group) watch.end();
    this.#tick();
  }

  /** As if the group's CRDs were installed (again): served, empty. */
  addGroup(group: string = GATEWAY_API_GROUP): void {
    if (!RESOURCE_TYPES.some((type) => type.group === group)) throw new Error(`the fake knows no API group ${group}`);
    this.#servedGroups.add(group);
    this.#tick();
  }

  isServed(group: string): boolean {
    return this.#servedGroups.has(group);
  }

  // ---- Observation --------------------------------------------------------------------------

  /** Requests so far, oldest first, optionally filtered. */
  requests(filter: (request: ObservedRequest) => boolean = () => true): ObservedRequest[] {
    return this.#requests.filter(filter);
  }

  clearRequests(): void {
    this.#requests.length = 0;
  }

  openWatches(): WatchDescription[] {
    return [...this.#watches].map((watch) => watch.describe());
  }

  /**
   * Resolves with the first truthy value `check` returns, evaluated now, after every store change,
   * request and watch opening or closing, and every 25 ms (for conditions on what clients saw);
   * rejects after `timeoutMs` (default 10 s).
   */
  waitFor<T>(check: () => T | undefined | null | false, timeoutMs = 10_000): Promise<T> {
    return new Promise((resolve, reject) => {
      const evaluate = () => {
        let value: T | undefined | null | false;
        try {
          value = check();
        } catch (error) {
          finish();
          reject(error as Error);
          return;
        }
        if (value !== undefined && value !== null && value !== false) {
          finish();
          resolve(value);
        }
      };
      const timer = setTimeout(() => {
        finish();
        reject(new Error(`fake API server: condition not met within ${timeoutMs} ms`));
      }, timeoutMs);
      const poll = setInterval(evaluate, 25);
      const finish = () => {
        clearTimeout(timer);
        clearInterval(poll);
        this.#ticks.off('tick', evaluate);
      };
      this.#ticks.on('tick', evaluate);
      evaluate();
    });
  }

  #tick(): void {
    this.#ticks.emit('tick');
  }

  // ---- Test-side store access (same rules and watch events as the API) ------------------------

  #typeOf(apiVersion: string, kind: string): { type: ResourceType; version: string } {
    const found = typeForKind(apiVersion, kind);
    if (!found) throw new Error(`the fake serves no ${kind} in ${apiVersion}`);
    if (!this.#servedGroups.has(found.type.group)) throw pathNotFound();
    return found;
  }

  #namespaceOf(type: ResourceType, namespace: string | undefined): string {
    return type.namespaced ? namespace ?? 'default' : '';
  }

  get(ref: ObjectRef): JsonObject | undefined {
    const { type, version } = this.#typeOf(ref.apiVersion, ref.kind);
    const stored = this.#registry.store.get(type.storage, this.#namespaceOf(type, ref.namespace), ref.name);
    return stored && toServed(type, version, stored, true);
  }

  list(apiVersion: string, kind: string, namespace?: string): JsonObject[] {
    const { type, version } = this.#typeOf(apiVersion, kind);
    return this.#registry.store.list(type.storage, type.namespaced ? namespace : undefined).map((stored) => toServed(type, version, stored, true));
  }

  /** Creates like a POST (status dropped where there is a status subresource); throws ApiError. */
  create(object: JsonObject): JsonObject {
    const { type, version } = this.#typeOf(String(object.apiVersion), String(object.kind));
    const metadata = (object.metadata ?? {}) as JsonObject;
    return this.#registry.create(type, version, this.#namespaceOf(type, metadata.namespace as string | undefined), object);
  }

  /** Replaces like a PUT, without needing metadata.resourceVersion (a stale one still conflicts). */
  update(object: JsonObject): JsonObject {
    return this.#put(object, undefined);
  }

  /** Replaces `.status` like a PUT to `/status`. */
  updateStatus(object: JsonObject): JsonObject {
    return this.#put(object, 'status');
  }

  #put(object: JsonObject, subresource: 'status' | undefined): JsonObject {
    const { type, version } = this.#typeOf(String(object.apiVersion), String(object.kind));
    const metadata = (object.metadata ?? {}) as JsonObject;
    return this.#registry.update(type, version, this.#namespaceOf(type, metadata.namespace as string | undefined), String(metadata.name), object, {
      subresource,
      unconditional: true,
    }).object;
  }

  delete(ref: ObjectRef): void {
    const { type, version } = this.#typeOf(ref.apiVersion, ref.kind);
    this.#registry.delete(type, version, this.#namespaceOf(type, ref.namespace), ref.name);
  }

  // ---- HTTP ---------------------------------------------------------------------------------

  #onChange(change: Change): void {
    for (const watch of this.#watches) watch.deliver(change);
    this.#tick();
  }

  #resolve(segments: string[]): ResourceRequest | 'discovery' | undefined {
    let group: string;
    let version: string;
    let rest: string[];
    if (segments[0] === 'api') {
      if (segments.length <= 2) return segments.length === 1 || segments[1] === 'v1' ? 'discovery' : undefined;
      [group, version, rest] = ['', segments[1]!, segments.slice(2)];
    } else if (segments[0] === 'apis') {
      if (segments.length <= 3) return segments.length === 1 || this.#servedGroups.has(segments[1]!) ? 'discovery' : undefined;
      [group, version, rest] = [segments[1]!, segments[2]!, segments.slice(3)];
    } else {
      return undefined;
    }
    if (!this.#servedGroups.has(group)) return undefined;
    const watchPath = rest[0] === 'watch';
    if (watchPath) rest = rest.slice(1);
    // RequestInfo: namespaces/<ns>/<resource>/... unless what follows is a namespace subresource.
    let namespace: string | undefined;
    if (rest[0] === 'namespaces' && rest.length > 1) {
      namespace = rest[1];
      if (rest.length > 2 && rest[2] !== 'status' && rest[2] !== 'finalize') rest = rest.slice(2);
    }
    const [resource, name, subresource, ...extra] = rest;
    const type = RESOURCE_TYPES.find((candidate) => candidate.group === group && candidate.resource === resource && candidate.versions.includes(version));
    if (!type || extra.length > 0) return undefined;
    if (subresource !== undefined && !(subresource === 'status' && type.hasStatus)) return undefined;
    if (type.resource === 'namespaces') return { type, version, namespace: undefined, name, subresource, watchPath };
    if (!type.namespaced && namespace !== undefined) return undefined;
    return { type, version, namespace, name, subresource, watchPath };
  }

  async #handle(request: http.IncomingMessage, response: http.ServerResponse): Promise<void> {
    const url = new URL(request.url ?? '/', 'http://fake');
    const query = Object.fromEntries(url.searchParams);
    const contentType = request.headers['content-type']?.split(';')[0]?.trim();
    const text = await readBody(request);
    const segments = url.pathname.split('/').filter((segment) => segment !== '');
    const resolved = this.#resolve(segments);
    const isWatch = (resolved !== undefined && resolved !== 'discovery' && (resolved.watchPath || query.watch === 'true' || query.watch === '1'));
    const observed: ObservedRequest = {
      method: request.method ?? 'GET',
      path: url.pathname,
      query,
      contentType,
      accept: request.headers.accept,
      userAgent: request.headers['user-agent'],
      body: parseBody(text, contentType),
      verb: this.#verbOf(request.method ?? 'GET', resolved, isWatch),
      ...(resolved !== undefined && resolved !== 'discovery'
        ? {
            group: resolved.type.group,
            version: resolved.version,
            resource: resolved.type.resource,
            ...(resolved.namespace === undefined ? {} : { namespace: resolved.namespace }),
            ...(resolved.name === undefined ? {} : { name: resolved.name }),
            ...(resolved.subresource === undefined ? {} : { subresource: resolved.subresource }),
          }
        : {}),
    };
    this.#requests.push(observed);
    const answer = (code: number, body: unknown, warnings: readonly string[] = []) => {
      observed.status = code;
      response.writeHead(code, { 'Content-Type': 'application/json', ...(warnings.length > 0 && { Warning: warnings.map(warningHeader) }) });
      response.end(JSON.stringify(body));
      this.#tick();
    };
    this.#tick();

    if (this.#options.token !== undefined && request.headers.authorization !== `Bearer ${this.#options.token}`) {
      answer(401, unauthorized().status);
      return;
    }
    const fault = this.#faults.find(
      (candidate) =>
        candidate.remaining > 0 &&
        (candidate.method === undefined || candidate.method === request.method) &&
        (candidate.verb === undefined || candidate.verb === observed.verb) &&
        (candidate.path === undefined || (typeof candidate.path === 'string' ? candidate.path === url.pathname : candidate.path.test(url.pathname))),
    );
    if (fault) {
      fault.remaining--;
      const status = injectedFault(fault.status ?? 500, fault.message);
      answer(status.code ?? 500, status);
      return;
    }

    try {
      if (url.pathname === '/version' || url.pathname === '/version/') {
        answer(200, { ...KUBERNETES_VERSION, gitCommit: '0000000000000000000000000000000000000000', gitTreeState: 'clean', buildDate: '2024-08-13T07:28:49Z', goVersion: 'go1.22.5', compiler: 'gc', platform: 'linux/amd64' });
      } else if (['/healthz', '/readyz', '/livez'].includes(url.pathname)) {
        observed.status = 200;
        response.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8' });
        response.end('ok');
      } else if (resolved === 'discovery') {
        answer(200, this.#discovery(segments));
      } else if (resolved === undefined) {
        throw pathNotFound();
      } else if (isWatch && request.method === 'GET') {
        await this.#watch(resolved, url.searchParams, response, observed);
      } else {
        const [code, body, warnings] = await this.#serve(resolved, request.method ?? 'GET', url.searchParams, contentType, text);
        answer(code, body, warnings);
      }
    } catch (error) {
      if (error instanceof ApiError) answer(error.status.code ?? 500, error.status);
      else answer(500, injectedFault(500, `Internal error occurred: ${(error as Error).message}`));
    }
  }

  #verbOf(method: string, resolved: ResourceRequest | 'discovery' | undefined, isWatch: boolean): RequestVerb {
    if (resolved === 'discovery') return 'discovery';
    if (resolved === undefined) return 'other';
    if (isWatch) return 'watch';
    switch (method) {
      case 'GET':
        return resolved.name === undefined ? 'list' : 'get';
      case 'POST':
        return 'create';
      case 'PUT':
        return 'update';
      case 'PATCH':
        return 'patch';
      case 'DELETE':
        return resolved.name === undefined ? 'deletecollection' : 'delete';
      default:
        return 'other';
    }
  }

  #discovery(segments: string[]): JsonObject {
    const served = (group: string) => this.#servedGroups.has(group);
    const groupEntry = (group: string): JsonObject => {
      const versions = groupVersionsOf(group).map((version) => ({ groupVersion: `${group}/${version}`, version }));
      return { name: group, versions, preferredVersion: versions[0]! };
    };
    if (segments[0] === 'api' && segments.length === 1) {
      return { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: `127.0.0.1:${this.#port}` }] };
    }
    if (segments[0] === 'apis' && segments.length === 1) {
      const groups = [...new Set(RESOURCE_TYPES.map((type) => type.group))].filter((group) => group !== '' && served(group));
      return { kind: 'APIGroupList', apiVersion: 'v1', groups: groups.map(groupEntry) };
    }
    if (segments[0] === 'apis' && segments.length === 2) return { kind: 'APIGroup', apiVersion: 'v1', ...groupEntry(segments[1]!) };
    const [group, version] = segments[0] === 'api' ? ['', segments[1]!] : [segments[1]!, segments[2]!];
    const types = RESOURCE_TYPES.filter((type) => type.group === group && type.versions.includes(version));
    if (types.length === 0) throw pathNotFound();
    const resources: JsonObject[] = [];
    for (const type of types) {
      resources.push({
        name: type.resource,
        singularName: type.singular,
        namespaced: type.namespaced,
        kind: type.kind,
        verbs: MAIN_VERBS,
        ...(type.shortNames.length > 0 ? { shortNames: [...type.shortNames] } : {}),
        ...(type.categories.length > 0 ? { categories: [...type.categories] } : {}),
      });
      if (type.hasStatus) resources.push({ name: `${type.resource}/status`, singularName: '', namespaced: type.namespaced, kind: type.kind, verbs: SUBRESOURCE_VERBS });
    }
    return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: apiVersionOf(types[0]!, version), resources };
  }

  #bodyObject(text: string, contentType: string | undefined): JsonObject {
    const body = parseBody(text, contentType);
    if (body === null || typeof body !== 'object' || Array.isArray(body)) {
      throw badRequest(`couldn't get version/kind; json parse error: ${text === '' ? 'unexpected end of JSON input' : 'invalid character'}`);
    }
    return body;
  }

  /**
   * A write: done once as a dry run, the result sent to the validating webhooks that match, and then,
   * unless the request is itself a dry run (`dryRun=All`), done for real. Resolves with the webhooks' warnings.
   */
  async #admitted<T>(
    target: ResourceRequest,
    operation: AdmissionAttributes['operation'],
    write: (options: { dryRun?: boolean }) => T,
    objectOf: (result: T) => JsonObject | undefined,
    dryRun: boolean,
  ): Promise<[T, string[]]> {
    const { type, version, subresource } = target;
    const namespace = target.namespace ?? '';
    const candidate = write({ dryRun: true });
    const object = objectOf(candidate);
    const name = target.name ?? String((object?.['metadata'] as JsonObject | undefined)?.['name'] ?? '');
    let oldObject: JsonObject | undefined;
    if (operation !== 'CREATE') {
      try {
        oldObject = this.#registry.get(type, version, namespace, name);
      } catch {
        oldObject = undefined;
      }
    }
    const namespaceType = typeForKind('v1', 'Namespace')!.type;
    const labelsOf = (ns: JsonObject | undefined) => ((ns?.['metadata'] as JsonObject | undefined)?.['labels'] ?? {}) as Record<string, string>;
    let namespaceLabels: Record<string, string> | undefined;
    if (type.resource === 'namespaces') namespaceLabels = labelsOf(object ?? oldObject);
    else if (type.namespaced) {
      try {
        namespaceLabels = labelsOf(this.#registry.get(namespaceType, 'v1', '', namespace));
      } catch {
        namespaceLabels = {};
      }
    }
    const configurations = this.#registry.store.list('validatingwebhookconfigurations');
    const attributes: AdmissionAttributes = {
      type,
      version,
      operation,
      namespace,
      name,
      ...(subresource !== undefined && { subresource }),
      ...(operation !== 'DELETE' && object && { object }),
      ...(oldObject && { oldObject }),
      dryRun,
    };
    const warnings = await validate(configurations, attributes, namespaceLabels);
    return [dryRun ? candidate : write({}), warnings];
  }

  async #serve(target: ResourceRequest, method: string, params: URLSearchParams, contentType: string | undefined, text: string): Promise<[number, unknown, string[]?]> {
    const { type, version, name, subresource } = target;
    const namespace = target.namespace ?? '';
    if (type.namespaced && target.namespace === undefined && name !== undefined) throw pathNotFound();
    const status = subresource === 'status' ? ({ subresource: 'status' } as const) : {};
    const dryRun = params.get('dryRun') === 'All';
    switch (method) {
      case 'GET':
        if (name !== undefined) return [200, this.#registry.get(type, version, namespace, name)];
        return [200, await this.#registry.list(type, version, type.namespaced ? target.namespace : undefined, this.#listQuery(params))];
      case 'POST': {
        if (name !== undefined || (type.namespaced && target.namespace === undefined)) throw methodNotSupported(type, 'create');
        const body = this.#bodyObject(text, contentType);
        const [object, warnings] = await this.#admitted(target, 'CREATE', (options) => this.#registry.create(type, version, namespace, body, options), (o) => o, dryRun);
        return [201, object, warnings];
      }
      case 'PUT': {
        if (name === undefined) throw methodNotSupported(type, 'update');
        const body = this.#bodyObject(text, contentType);
        const [{ object, created }, warnings] = await this.#admitted(target, 'UPDATE', (options) => this.#registry.update(type, version, namespace, name, body, { ...status, ...options }), (o) => o.object, dryRun);
        return [created ? 201 : 200, object, warnings];
      }
      case 'PATCH': {
        if (name === undefined) throw methodNotSupported(type, 'patch');
        const [object, warnings] = await this.#admitted(target, 'UPDATE', (options) => this.#registry.patch(type, version, namespace, name, contentType ?? '', text, { ...status, ...options }), (o) => o, dryRun);
        return [200, object, warnings];
      }
      case 'DELETE': {
        if (name === undefined || subresource !== undefined) throw methodNotSupported(type, name === undefined ? 'deletecollection' : 'delete');
        const remove = (options: { dryRun?: boolean }) => (options.dryRun ? this.#registry.get(type, version, namespace, name) : this.#registry.delete(type, version, namespace, name));
        const [object, warnings] = await this.#admitted(target, 'DELETE', remove, () => undefined, dryRun);
        return [200, object, warnings];
      }
      default:
        throw methodNotSupported(type, method.toLowerCase());
    }
  }

  #listQuery(params: URLSearchParams): ListQuery {
    const limit = Number(params.get('limit') ?? 0);
    return {
      labelSelector: params.get('labelSelector'),
      fieldSelector: params.get('fieldSelector'),
      limit: Number.isInteger(limit) && limit > 0 ? limit : 0,
      continueToken: params.get('continue'),
      resourceVersion: params.get('resourceVersion'),
      resourceVersionMatch: params.get('resourceVersionMatch'),
    };
  }

  async #watch(target: ResourceRequest, params: URLSearchParams, response: http.ServerResponse, observed: ObservedRequest): Promise<void> {
    const { type, version } = target;
    // The legacy /watch/.../<name> path watches one object, as fieldSelector=metadata.name=<name> does.
    let fieldSelector = params.get('fieldSelector');
    if (target.name !== undefined) fieldSelector = [fieldSelector, `metadata.name=${target.name}`].filter(Boolean).join(',');
    const matches = selector(type, params.get('labelSelector'), fieldSelector);
    const namespace = type.namespaced ? target.namespace : undefined;
    const rawVersion = params.get('resourceVersion') ?? '';
    if (rawVersion !== '' && !/^\d+$/.test(rawVersion)) throw badRequest(`invalid resource version: strconv.ParseUint: parsing "${rawVersion}": invalid syntax`);
    // Streaming lists (KEP-3157): the current state as ADDED, then a BOOKMARK marking its end.
    const sendInitialEvents = params.get('sendInitialEvents') === 'true';
    const allowBookmarks = params.get('allowWatchBookmarks') === 'true';
    if (sendInitialEvents) {
      const errors: FieldError[] = [];
      if (params.get('resourceVersionMatch') !== 'NotOlderThan') {
        errors.push({ type: 'FieldValueForbidden', field: 'resourceVersionMatch', detail: 'sendInitialEvents requires setting resourceVersionMatch to NotOlderThan' });
      }
      if (!allowBookmarks) errors.push({ type: 'FieldValueForbidden', field: 'allowWatchBookmarks', detail: 'sendInitialEvents requires setting allowWatchBookmarks to true' });
      if (errors.length > 0) throw invalid({ group: 'meta.k8s.io', kind: 'ListOptions' }, '', errors);
    }
    const timeoutText = params.get('timeoutSeconds');
    const timeoutSeconds = timeoutText === null ? undefined : Number(timeoutText);
    const since = rawVersion === '' ? 0 : Number(rawVersion);

    // A resourceVersion the store has not reached yet: the watch cache waits a little for it.
    const deadline = Date.now() + 3000;
    while (since > this.#registry.store.revision && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));

    const hung = [...this.#futureHangs].some((spec) => spec.resource === undefined || spec.resource === type.resource);
    const stream = new WatchStream(this.#nextWatchId++, type, version, namespace, matches, response, hung, (closed) => {
      this.#watches.delete(closed);
      this.#tick();
    });
    for (const [spec, list] of this.#hungByRule) if (this.#futureHangs.has(spec) && (spec.resource === undefined || spec.resource === type.resource)) list.push(stream);

    // Errors found after the watch was accepted travel as an ERROR event on a 200 stream (cacher.Watch).
    let failure: Status | undefined;
    let replay: Change[] = [];
    if (since > this.#registry.store.revision) {
      failure = tooLargeResourceVersion(since, this.#registry.store.revision).status;
    } else if (since > 0 && !sendInitialEvents) {
      try {
        replay = this.#registry.store.changesSince(since);
      } catch (error) {
        if (!(error instanceof CompactedError)) throw error;
        failure = expired(`too old resource version: ${since} (${error.compactedRevision})`).status;
      }
    }
    observed.status = 200;
    this.#watches.add(stream);
    stream.start(failure === undefined ? timeoutSeconds : undefined, allowBookmarks ? this.#bookmarkIntervalMs : undefined);
    if (failure !== undefined) {
      stream.send('ERROR', failure);
      stream.end();
      return;
    }
    stream.onBookmarkDue = () => stream.sendBookmark(this.#registry.store.revision);
    if (rawVersion === '' || since === 0 || sendInitialEvents) {
      // "Get state and start at most recent": every current object as ADDED first.
      for (const stored of this.#registry.store.list(type.storage, namespace)) {
        stream.deliver({ revision: this.#registry.store.revision, storage: type.storage, type: 'ADDED', object: stored, previous: undefined });
      }
      if (sendInitialEvents) stream.sendBookmark(this.#registry.store.revision, { 'k8s.io/initial-events-end': 'true' });
    } else {
      for (const change of replay) stream.deliver(change);
    }
    this.#tick();
  }
}
