import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Handlebars from 'handlebars';
import { generationPlaceholder, type HttpConfig, type HttpUpstream, type NginxConfig, type OwnPortServers, type VirtualHost } from '../model/nginx.js';
import { unless } from './helpers.js';
import { BodyCache, blockTexts, serverTexts, shareServers, type BlockTexts, type VirtualHostView } from './shared-servers.js';

/**
 * The rendered main config, as the pieces it is made of; key material travels separately in
 * `model.files`. At 10,000 hosts the config is 10 MB: the build hashes the pieces as they are and joins
 * them once, with the generation in place of `generationPlaceholder` (its own piece).
 */
export class RenderedConfig {
  constructor(readonly pieces: readonly string[]) {}

  /** The whole text, with the placeholder. */
  get nginxConf(): string {
    return this.pieces.join('');
  }
}

/** The blocks of the config, and the servers of the ports Gateway listeners have to themselves. */
type ConfigBlocks = BlockTexts & { readonly ownPortBlocks: readonly string[] };

type HttpBlock = Exclude<keyof ConfigBlocks, 'streamBlock'>;

/** The config as the main template reads it: where the rendered blocks go, a marker each (`configPieces`). */
type NginxConfigFrame = NginxConfig & { readonly streamBlock: string; readonly http: HttpConfig & Record<HttpBlock, string> };

/** What the main template writes where the blocks go: nothing else it writes holds a NUL (allow-lists and `snippetProblem` refuse one). */
const blockMarkers: Record<keyof ConfigBlocks, string> = {
  ownPortBlocks: '\0ownPortBlocks\0',
  serverBlocks: '\0serverBlocks\0',
  upstreamBlocks: '\0upstreamBlocks\0',
  redirectServerBlock: '\0redirectServerBlock\0',
  notFoundServerBlock: '\0notFoundServerBlock\0',
  streamBlock: '\0streamBlock\0',
};
const blockOfMarker = new Map(Object.entries(blockMarkers).map(([block, marker]) => [marker, block as keyof ConfigBlocks]));
const markerOrPlaceholder = new RegExp(`(${[...blockOfMarker.keys(), generationPlaceholder].join('|')})`);

/**
 * The main template's text with the blocks in place of their markers, and the generation placeholder
 * a piece of its own. Joining the blocks into one text for the template, which then became part of a
 * bigger one, copied the 10 MB twice (and hashing it walked the pieces to copy them once more).
 */
function configPieces(frame: string, blocks: ConfigBlocks): string[] {
  const pieces: string[] = [];
  for (const part of frame.split(markerOrPlaceholder)) {
    const block = blockOfMarker.get(part);
    if (block) for (const text of blocks[block]) pieces.push(text);
    else if (part !== '') pieces.push(part);
  }
  return pieces;
}

const compileOptions = { noEscape: true, strict: true } as const;

/** `templates/` of this package, found from this module whether it runs from `src/` or `dist/src/`. */
export function templatesDir(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = join(dir, 'templates');
    if (existsSync(join(candidate, 'nginx.conf.hbs'))) return candidate;
    const parent = dirname(dir);
    if (parent === dir) throw new Error('ingress2nginx: templates/nginx.conf.hbs not found beside the package');
    dir = parent;
  }
}

interface Templates {
  readonly main: Handlebars.TemplateDelegate<NginxConfigFrame>;
  readonly plainServerBody: Handlebars.TemplateDelegate<VirtualHost>;
  readonly tlsServerBody: Handlebars.TemplateDelegate<VirtualHost>;
  readonly virtualHostServers: Handlebars.TemplateDelegate<VirtualHostView>;
  readonly upstreamBlock: Handlebars.TemplateDelegate<HttpUpstream>;
  /** Reads the http config: the redirect server, and the port it listens on. */
  readonly redirectServer: Handlebars.TemplateDelegate<NginxConfig['http']>;
  /** Reads the http config: the 404 server's names, and the port it listens on. */
  readonly notFoundServer: Handlebars.TemplateDelegate<NginxConfig['http']>;
  readonly stream: Handlebars.TemplateDelegate<NginxConfig>;
  /** Reads an own port's http config: its default server. */
  readonly ownPortServers: Handlebars.TemplateDelegate<OwnPortHttp>;
}

/** The http config as an own port's servers read it: the port's fields in place of the Ingress ports'. */
type OwnPortHttp = HttpConfig & OwnPortServers;

let compiled: Templates | undefined;

/**
 * Compiles once, in an isolated Handlebars environment so no other code's helpers or partials can leak
 * in; partials are pre-compiled with the same strict, non-escaping options as the main template. `render`
 * calls the two server-body partials itself, per host, to find the hosts that can share a block, and
 * the partials that write the blocks a host heads, an upstream block, the shared plain-HTTP servers and
 * the stream section (`blockTexts`).
 */
function templates(): Templates {
  if (compiled) return compiled;
  const handlebars = Handlebars.create();
  handlebars.registerHelper('unless', unless);
  const dir = templatesDir();
  const partialsDir = join(dir, 'partials');
  for (const file of readdirSync(partialsDir).filter((f) => f.endsWith('.hbs')).sort()) {
    const source = readFileSync(join(partialsDir, file), 'utf8');
    handlebars.registerPartial(file.slice(0, -'.hbs'.length), handlebars.compile(source, compileOptions));
  }
  const partial = <Context>(name: string): Handlebars.TemplateDelegate<Context> => {
    const found: unknown = handlebars.partials[name];
    if (typeof found !== 'function') throw new Error(`ingress2nginx: templates/partials/${name}.hbs not found`);
    return found as Handlebars.TemplateDelegate<Context>;
  };
  compiled = {
    main: handlebars.compile<NginxConfigFrame>(readFileSync(join(dir, 'nginx.conf.hbs'), 'utf8'), compileOptions),
    plainServerBody: partial('plainServerBody'),
    tlsServerBody: partial('tlsServerBody'),
    virtualHostServers: partial('virtualHostServers'),
    upstreamBlock: partial('upstreamBlock'),
    redirectServer: partial('redirectServer'),
    notFoundServer: partial('notFoundServer'),
    stream: partial('stream'),
    ownPortServers: partial('ownPortServers'),
  };
  return compiled;
}

/**
 * Server bodies of the last render, for the next one: the cluster mode renders the whole config for
 * every change, and most hosts' blocks come out the same bytes as the round before. A body is found by
 * its host (the same object when the host is unchanged) or by everything it reads (`bodyKey`), and by
 * the config around the hosts, which it can read as `@root` (a change there renders every body again).
 * Key material is not part of that: no template reads it, the config names files by paths, which are the
 * hosts' own. Bodies the last render did not use are let go, so the memo holds one config's worth.
 */
export class RenderMemo {
  private context: string | undefined;
  private last: BodyCache | undefined;

  /** The cache for a render of `model`; what it renders becomes the next render's memo. */
  cache(model: NginxConfig): BodyCache {
    const context = bodyContext(model);
    const next = new BodyCache(context === this.context ? this.last : undefined);
    this.context = context;
    this.last = next;
    return next;
  }
}

/**
 * Parts of the config that only the main template reads: every host's, made for all hosts at once. A
 * change in one host changes them (a name joins the redirect server, an upstream goes), and they are not
 * what a body reads (`render-memo.test.ts` checks the server-body partials never name them).
 */
export const readByMainTemplateOnly = {
  model: ['files', 'stream'],
  http: ['virtualHosts', 'upstreams', 'redirectServer', 'notFoundServerNames', 'certificateMap', 'extensions', 'logging', 'defaultServer', 'ownPorts'],
} as const satisfies { model: readonly (keyof NginxConfig)[]; http: readonly (keyof NginxConfig['http'])[] };

/** What a server body can read of the config around it, as `@root`. */
function bodyContext(model: NginxConfig): string {
  const modelOnly: readonly string[] = readByMainTemplateOnly.model;
  const httpOnly: readonly string[] = readByMainTemplateOnly.http;
  return JSON.stringify(model, function (this: unknown, key, value: unknown) {
    return (this === model && modelOnly.includes(key)) || (this === model.http && httpOnly.includes(key)) ? undefined : value;
  });
}

export function render(model: NginxConfig, memo?: RenderMemo): RenderedConfig {
  const { main, plainServerBody, tlsServerBody, virtualHostServers, upstreamBlock, redirectServer, notFoundServer, stream } = templates();
  // The bodies see the whole config as @root, as they would inside the main template.
  const options = { data: { root: model } };
  const bodies = { plain: (host: VirtualHost) => plainServerBody(host, options), tls: (host: VirtualHost) => tlsServerBody(host, options) };
  const cache = memo?.cache(model) ?? new BodyCache();
  const headed = shareServers(model, bodies, cache);
  const blocks = {
    servers: (host: VirtualHostView) => virtualHostServers(host, options),
    upstream: (upstream: HttpUpstream) => upstreamBlock(upstream, options),
    redirectServer: (http: NginxConfig['http']) => redirectServer(http, options),
    notFoundServer: (http: NginxConfig['http']) => notFoundServer(http, options),
    stream: (config: NginxConfig) => stream(config, options),
  };
  const { streamBlock, ...httpBlocks } = blockMarkers;
  const frame = main({ ...model, streamBlock, http: { ...model.http, ...httpBlocks } });
  const texts = blockTexts(model, headed, blocks, cache);
  cache.rendered();
  const ownPortBlocks = (model.http.ownPorts ?? []).flatMap((own) => ownPortTexts(model, own));
  return new RenderedConfig(configPieces(frame, { ...texts, ownPortBlocks }));
}

/**
 * The servers of one port Gateway listeners have to themselves: the templates of the Ingress ports' with
 * the port's fields in their place (its port, listeners, default server and hosts), and only the servers
 * of its kind (plain HTTP, or TLS). Rendered anew each time: the render memo is the Ingress ports'.
 */
function ownPortTexts(model: NginxConfig, own: OwnPortServers): string[] {
  const { plainServerBody, tlsServerBody, virtualHostServers, ownPortServers } = templates();
  const { certificateMap: _map, redirectServer: _redirect, ownPorts: _own, ...shared } = model.http;
  const http: OwnPortHttp = { ...shared, ...own, httpPort: own.tls ? model.http.httpPort : own.port, notFoundServerNames: [] };
  const portModel: NginxConfig = { ...model, http };
  const options = { data: { root: portModel } };
  const cache = new BodyCache();
  const bodies = { plain: (host: VirtualHost) => plainServerBody(host, options), tls: (host: VirtualHost) => tlsServerBody(host, options) };
  const headed = shareServers(portModel, bodies, cache).map((servers) => (own.tls ? { tlsServer: servers.tlsServer } : { plainServer: servers.plainServer }));
  return [ownPortServers(http, options), ...serverTexts(portModel, headed, (host) => virtualHostServers(host, options), cache)];
}
