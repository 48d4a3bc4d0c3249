import { describe, expect, it } from 'vitest';
import type { NginxConfig, VirtualHost } from '../model/nginx.js';
import { BodyCache, serverTexts, shareServers, type HeadedServers, type ServerBodies, type VirtualHostView } from './shared-servers.js';

const tls = { certificate: 'tls/shop_twins.pem', certificateKey: 'tls/shop_twins.pem' };

function host(serverName: string, fields: Partial<VirtualHost> = {}): VirtualHost {
  return { serverName, tls, hsts: true, locations: [], ...fields };
}

function config(virtualHosts: VirtualHost[]): NginxConfig {
  return { http: { virtualHosts, upstreams: [] } } as unknown as NginxConfig;
}

/**
 * Bodies as the template would render them, by a body per host name. The bodies are also written into
 * the hosts (as the template renders a host's own fields, never its name), and every rendering is counted.
 */
function bodies(): ServerBodies & { rendered: string[] } {
  const rendered: string[] = [];
  const field = (h: VirtualHost, index: number) => (h.locations[index] as unknown as { body: string } | undefined)?.body ?? '';
  return {
    rendered,
    plain: (h) => (rendered.push(`plain ${h.serverName}`), field(h, 0)),
    tls: (h) => (rendered.push(`tls ${h.serverName}`), field(h, 1)),
  };
}

/** Hosts whose fields carry the bodies `bodies` reads back. */
function hostsWith(plain: Record<string, string>, secure: Record<string, string>, names: readonly string[]): VirtualHost[] {
  const location = (body: string | undefined) => ({ body: body ?? '' }) as unknown as VirtualHost['locations'][number];
  return names.map((name) => host(name, { locations: [location(plain[name]), location(secure[name])] }));
}

/** Each host's name with the servers `shareServers` says it heads. */
function withServers(model: NginxConfig, rendering: ServerBodies): (HeadedServers & { serverName: string })[] {
  return shareServers(model, rendering).map((headed, i) => ({ serverName: model.http.virtualHosts[i]!.serverName, ...headed }));
}

describe('shareServers', () => {
  it('gives hosts whose bodies are the same one server, headed by the first, and leaves the rest their own', () => {
    const plain = { 'a.test': 'plain /', 'b.test': 'plain /', 'c.test': 'plain /', 'd.test': 'plain /other' };
    const secure = { 'a.test': 'tls /', 'b.test': 'tls /other', 'c.test': 'tls /', 'd.test': 'tls /other' };
    const view = withServers(config(hostsWith(plain, secure, ['a.test', 'b.test', 'c.test', 'd.test'])), bodies());
    expect(view.map((h) => [h.serverName, h.plainServer, h.tlsServer])).toEqual([
      ['a.test', { serverNames: ['a.test', 'b.test', 'c.test'], body: 'plain /' }, { serverNames: ['a.test', 'c.test'], body: 'tls /' }],
      ['b.test', undefined, { serverNames: ['b.test', 'd.test'], body: 'tls /other' }],
      ['c.test', undefined, undefined],
      ['d.test', { serverNames: ['d.test'], body: 'plain /other' }, undefined],
    ]);
  });

  it('renders no plain-HTTP server for a host whose plain HTTP is shared, and no TLS server for a passthrough host', () => {
    const { tls: _, ...passthrough } = host('p.test');
    const view = withServers(config([host('a.test', { plainHttpShared: true }), passthrough]), bodies());
    expect(view.map((h) => [h.serverName, h.plainServer?.serverNames, h.tlsServer?.serverNames])).toEqual([
      ['a.test', undefined, ['a.test']],
      ['p.test', ['p.test'], undefined],
    ]);
  });

  it('keeps a body that reads its first server name to its host: $server_name and server_name_in_redirect do', () => {
    const redirects = '        server_name_in_redirect on;\n';
    const variable = '            return 200 ${server_name};\n';
    const plain = { 'a.test': redirects, 'b.test': redirects };
    const secure = { 'a.test': variable, 'b.test': variable };
    const view = withServers(config(hostsWith(plain, secure, ['a.test', 'b.test'])), bodies());
    expect(view.map((h) => [h.plainServer?.serverNames, h.tlsServer?.serverNames])).toEqual([
      [['a.test'], ['a.test']],
      [['b.test'], ['b.test']],
    ]);
  });

  it('shares a body that names other server names: the SNI sent to a backend, a path', () => {
    const backendSni = '        location /server_name/ {\n            proxy_ssl_server_name on;\n            proxy_ssl_name $ssl_server_name;\n        }\n';
    const secure = { 'a.test': backendSni, 'b.test': backendSni };
    const view = withServers(config(hostsWith({}, secure, ['a.test', 'b.test'])), bodies());
    expect(view.map((h) => h.tlsServer?.serverNames)).toEqual([['a.test', 'b.test'], undefined]);
  });

  it('renders the bodies of hosts that differ only by name once: the aliases of an Ingress cost one rendering', () => {
    const names = Array.from({ length: 50 }, (_, i) => `alias-${i}.test`);
    const same = Object.fromEntries(names.map((name) => [name, 'body']));
    const rendering = bodies();
    const view = withServers(config(hostsWith(same, same, names)), rendering);
    expect(view[0]?.tlsServer?.serverNames).toEqual(names);
    expect(rendering.rendered).toEqual(['plain alias-0.test', 'tls alias-0.test']);
  });

  it('leaves the model as it was', () => {
    const model = config([host('a.test'), host('b.test')]);
    shareServers(model, bodies());
    expect(model.http.virtualHosts.map((h) => Object.keys(h))).toEqual([Object.keys(host('a.test')), Object.keys(host('b.test'))]);
  });

  it('writes a host\'s blocks again when their names change, though the host is the same object', () => {
    const [a, b] = hostsWith({ 'a.test': 'plain /', 'b.test': 'plain /' }, { 'a.test': 'tls /', 'b.test': 'tls /' }, ['a.test', 'b.test']) as [VirtualHost, VirtualHost];
    const written: string[] = [];
    const servers = (h: VirtualHostView) => (written.push(h.serverName), `${h.plainServer?.serverNames.join(',')} | ${h.tlsServer?.serverNames.join(',')}`);
    const texts = (model: NginxConfig, cache: BodyCache) => serverTexts(model, shareServers(model, bodies(), cache), servers, cache);
    const first = new BodyCache();
    expect(texts(config([a]), first)).toEqual(['a.test | a.test']);
    const second = new BodyCache(first);
    expect(texts(config([a]), second)).toEqual(['a.test | a.test']);
    expect(written).toEqual(['a.test']);
    // b.test has the same bodies, so it joins a.test's blocks: a.test is the same object, its blocks are not.
    expect(texts(config([a, b]), new BodyCache(second))).toEqual(['a.test,b.test | a.test,b.test']);
  });
});
