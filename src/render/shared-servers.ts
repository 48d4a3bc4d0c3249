import type { HttpConfig, HttpUpstream, NginxConfig, VirtualHost } from '../model/nginx.js';
import { withAddedFields } from '../model/objects.js';

/** One server block for every host whose block would be the same but for `server_name`. */
export interface SharedServer {
  /** In the order of `http.virtualHosts` (sorted by name). */
  readonly serverNames: readonly string[];
  /** Everything inside the block after `listen` and `server_name`, as rendered. */
  readonly body: string;
}

/**
 * The plain-HTTP and TLS servers a host heads. A host whose block joined an earlier host's has none of
 * its own, and neither has a host without one (plain HTTP shared, TLS passed through).
 */
export interface HeadedServers {
  readonly plainServer?: SharedServer;
  readonly tlsServer?: SharedServer;
}

/** What the template reads for a host: the host and the servers it heads. */
export interface VirtualHostView extends VirtualHost, HeadedServers {}

/** The bulk of the config, rendered: the hosts' server blocks, the upstream blocks, the shared plain-HTTP servers and the stream section. */
export interface BlockTexts {
  /** The server blocks each host heads, in the order of the hosts (hosts that head none have no text). */
  readonly serverBlocks: readonly string[];
  /** Every upstream block, in order. */
  readonly upstreamBlocks: readonly string[];
  /** The plain-HTTP server that hosts which only redirect share, when there is one. */
  readonly redirectServerBlock: readonly string[];
  /** The plain-HTTP server that hosts which only answer 404 share (an empty text when no host does). */
  readonly notFoundServerBlock: readonly string[];
  /** Everything inside `stream { }`. */
  readonly streamBlock: readonly string[];
}

export interface ServerBodies {
  readonly plain: (host: VirtualHost) => string;
  readonly tls: (host: VirtualHost) => string;
}

type BodyKind = keyof ServerBodies;

/** The blocks made once for all hosts. */
type WholeBlock = 'redirectServer' | 'notFoundServer' | 'stream';

/**
 * Server bodies already rendered: by host object (a host the build kept from the one before, see
 * translate/memo/virtual-host-memo.ts), else by the key of everything they read (`bodyKey`), so hosts that
 * differ only in name render once. One render fills one; the render after it may read the one before.
 */
export class BodyCache {
  private readonly byHost = new Map<VirtualHost, Partial<Record<BodyKind, string>>>();
  /** The bodies rendered, by the sketch of their host (`bodySketch`). */
  private readonly bySketch: Record<BodyKind, Map<string, SketchGroup>> = { plain: new Map(), tls: new Map() };
  private readonly servers = new Map<VirtualHost, { readonly names: string; readonly text: string }>();
  private readonly upstreams = new Map<HttpUpstream, string>();
  private readonly wholeBlocks = new Map<WholeBlock, { readonly input: unknown; readonly text: string }>();

  private before: BodyCache | undefined;

  /** `before`, the last render's, is read but not kept past it: each cache holds one render's worth. */
  constructor(before?: BodyCache) {
    this.before = before;
    if (before) before.before = undefined;
  }

  /** The render is done: what it did not take of the last render's is let go now, not at the next render. */
  rendered(): void {
    this.before = undefined;
  }

  /**
   * The body of `host`, rendered only when neither this render nor the one before has it: for the same
   * host, or for a host with the same key. Keys are made only among hosts with the same sketch, so a
   * host no other resembles (most of them: each has its own backends) costs no key.
   */
  body(kind: BodyKind, host: VirtualHost, renderBody: (host: VirtualHost) => string): string {
    const known = this.byHost.get(host)?.[kind] ?? this.before?.byHost.get(host)?.[kind];
    if (known !== undefined) return this.keep(kind, host, known);
    const sketch = bodySketch(host);
    const here = this.bySketch[kind].get(sketch);
    const before = this.before?.bySketch[kind].get(sketch);
    if (!here && !before) {
      const rendered = flattened(renderBody(host));
      this.bySketch[kind].set(sketch, { keyed: new Map(), unkeyed: [[host, rendered]] });
      return this.keep(kind, host, rendered);
    }
    const key = bodyKey(host);
    const group = here ?? { keyed: new Map(), unkeyed: [] };
    const rendered = keyedBody(group, key) ?? (before && keyedBody(before, key)) ?? flattened(renderBody(host));
    group.keyed.set(key, rendered);
    this.bySketch[kind].set(sketch, group);
    return this.keep(kind, host, rendered);
  }

  /** The server blocks `host` heads, named `names`, rendered only when neither this render nor the one before has them. */
  serverText(host: VirtualHost, names: string, renderServers: () => string): string {
    const known = this.before?.servers.get(host);
    const text = known !== undefined && known.names === names ? known.text : flattened(renderServers());
    this.servers.set(host, { names, text });
    return text;
  }

  /**
   * A block made once for all hosts (`WholeBlock`), rendered only when the render before did not render
   * it from the same input (`same`); what else it reads of the config is in the bodies' context, with
   * which the cache begins anew (`RenderMemo`).
   */
  wholeBlockText<T>(block: WholeBlock, input: T, same: (a: T, b: T) => boolean, renderBlock: () => string): string {
    const known = this.before?.wholeBlocks.get(block);
    const text = known !== undefined && same(known.input as T, input) ? known.text : flattened(renderBlock());
    this.wholeBlocks.set(block, { input, text });
    return text;
  }

  /** The block of `upstream` (the same object while it is unchanged), rendered only when the render before did not. */
  upstreamText(upstream: HttpUpstream, renderUpstream: () => string): string {
    const text = this.before?.upstreams.get(upstream) ?? flattened(renderUpstream());
    this.upstreams.set(upstream, text);
    return text;
  }

  private keep(kind: BodyKind, host: VirtualHost, body: string): string {
    const bodies = this.byHost.get(host);
    if (bodies) bodies[kind] = body;
    else this.byHost.set(host, { [kind]: body });
    return body;
  }
}

/**
 * Hosts whose server blocks render to the same bytes share one, listing all their names. For TLS that is
 * one SSL context, and one load of the certificate per reload, instead of one per host: an Ingress that
 * names several hosts with the same paths and one certificate for them all is common, and every SSL
 * context costs nginx about half a millisecond at each reload (docs/performance.md, "Config that loads fast at scale").
 * Comparing the rendered bytes, not the model, makes the rule exact: nginx answers each name as it did
 * from a block of its own. What tells the names of one block apart is its first name, which
 * `$server_name` and `server_name_in_redirect on` use (and the error log names): no template writes
 * either today, and a body that ever does keeps its block to itself.
 */
export function shareServers(model: NginxConfig, bodies: ServerBodies, cache: BodyCache = new BodyCache()): HeadedServers[] {
  const plainByBody = new Map<string, ServerGroup>();
  const tlsByBody = new Map<string, ServerGroup>();
  return model.http.virtualHosts.map((host): HeadedServers => {
    const body = (kind: BodyKind) => cache.body(kind, host, bodies[kind]);
    const plainServer = host.plainHttpShared ? undefined : serverHeadedBy(host.serverName, body('plain'), plainByBody);
    const tlsServer = host.tls ? serverHeadedBy(host.serverName, body('tls'), tlsByBody) : undefined;
    return { plainServer, tlsServer };
  });
}

/** Bodies rendered for hosts with one sketch: by key, and those whose hosts' keys were not needed yet. */
interface SketchGroup {
  readonly keyed: Map<string, string>;
  unkeyed: (readonly [VirtualHost, string])[];
}

/** The body rendered for a host with `key` in `group`, making the keys its other hosts have not made yet. */
function keyedBody(group: SketchGroup, key: string): string | undefined {
  for (const [host, body] of group.unkeyed) group.keyed.set(bodyKey(host), body);
  group.unkeyed = [];
  return group.keyed.get(key);
}

/**
 * A few things of a host that its key holds too, cheap to read: hosts with the same key have the same
 * sketch, so a host whose sketch no other host has needs no key. Hosts that share bodies are aliases of
 * one Ingress, with its certificate and backends; most others differ in a backend already.
 */
function bodySketch(host: VirtualHost): string {
  let sketch = host.tls?.certificate ?? '';
  for (const location of host.locations) sketch += `\0${location.proxy?.upstream ?? ''}`;
  return sketch;
}

/**
 * Everything of a host its server bodies can read: all but its name (no body template reads it) and
 * provenance (no template reads it). Hosts with the same key render the same bodies, so each body is
 * rendered once however many names share it: the aliases of an Ingress cost one rendering, not one each.
 */
function bodyKey(host: VirtualHost): string {
  // Without a replacer JSON.stringify takes V8's fast path: with one that dropped the two fields it was
  // 140 ms of a cold render at 10,000 hosts.
  const { serverName: _name, origin: _origin, locations, ...rest } = host;
  return JSON.stringify([rest, locations.map(({ origin: _locationOrigin, ...location }) => location)]);
}

/** A server block being collected: names are added while later hosts join it. */
interface ServerGroup {
  readonly serverNames: string[];
  readonly body: string;
}

/** Reads the first server name of its block. */
const namesItsServer = /\$\{?server_name\b|\bserver_name_in_redirect\b/;

/** The block `serverName` heads, or undefined when it joins the block of an earlier host with the same body. */
function serverHeadedBy(serverName: string, body: string, byBody: Map<string, ServerGroup>): SharedServer | undefined {
  if (namesItsServer.test(body)) return { serverNames: [serverName], body };
  const group = byBody.get(body);
  if (group) {
    group.serverNames.push(serverName);
    return undefined;
  }
  const headed = { serverNames: [serverName], body };
  byBody.set(body, headed);
  return headed;
}

/**
 * `text` as one piece. A rendered text is made of thousands of joined pieces; V8 copies them into one
 * string the first time a character is read, and keeps the copy. A text kept across renders, made one
 * piece when it is made, is not walked piece by piece again each time the whole config is read (hashed,
 * written): at 10,000 hosts that walk was 30 ms of every build.
 */
function flattened(text: string): string {
  text.charCodeAt(0);
  return text;
}

/**
 * The text of the server blocks each host heads, in the order of the hosts (none for a host that heads
 * none). A host whose blocks have the same bodies and names as in the last render has the same text;
 * what a block reads besides its own is in the bodies' context (`RenderMemo`).
 */
export function serverTexts(model: NginxConfig, headed: readonly HeadedServers[], renderServers: (host: VirtualHostView) => string, cache: BodyCache): string[] {
  const texts: string[] = [];
  model.http.virtualHosts.forEach((host, i) => {
    const { plainServer, tlsServer } = headed[i]!;
    if (!plainServer && !tlsServer) return;
    const names = `${plainServer?.serverNames.join(' ') ?? ''}\0${tlsServer?.serverNames.join(' ') ?? ''}`;
    // The host with its servers is made only when its blocks are rendered: most are the last render's.
    texts.push(cache.serverText(host, names, () => renderServers(withAddedFields(host, { ...(plainServer && { plainServer }), ...(tlsServer && { tlsServer }) }))));
  });
  return texts;
}

/**
 * Every host's server blocks, every upstream block, the shared plain-HTTP servers and the stream section,
 * each as its own text: at 10,000 hosts writing them was most of a render, and most are the texts of the
 * last render (`serverTexts`; an upstream, the redirect server and the stream are the same objects while
 * unchanged, the 404 server has the same names). They are not joined here: the config is joined once,
 * from the pieces (render.ts `configPieces`).
 */
export function blockTexts(
  model: NginxConfig,
  headed: readonly HeadedServers[],
  render: {
    readonly servers: (host: VirtualHostView) => string;
    readonly upstream: (upstream: HttpUpstream) => string;
    readonly redirectServer: (http: HttpConfig) => string;
    readonly notFoundServer: (http: HttpConfig) => string;
    readonly stream: (model: NginxConfig) => string;
  },
  cache: BodyCache,
): BlockTexts {
  const { http } = model;
  const redirect = http.redirectServer;
  // The redirect server and the stream are the same objects while unchanged (translate/dataplane/redirect-server.ts
  // `RedirectServerMemo`, translate/dataplane/data-plane.ts `StreamConfigMemo`); the 404 server is its names.
  const identical = <T>(a: T, b: T) => a === b;
  const sameNames = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((name, i) => name === b[i]);
  return {
    serverBlocks: serverTexts(model, headed, render.servers, cache),
    upstreamBlocks: http.upstreams.map((upstream) => cache.upstreamText(upstream, () => render.upstream(upstream))),
    redirectServerBlock: redirect ? [cache.wholeBlockText('redirectServer', redirect, identical, () => render.redirectServer(http))] : [],
    notFoundServerBlock: [cache.wholeBlockText('notFoundServer', http.notFoundServerNames, sameNames, () => render.notFoundServer(http))],
    streamBlock: [cache.wholeBlockText('stream', model.stream, identical, () => render.stream(model))],
  };
}
