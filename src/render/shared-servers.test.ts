import { describe, expect, it } from 'vitest';
import type { NginxConfig, VirtualHost } from '../model/nginx.js';
import { shareServers, type ServerBodies } from './shared-servers.js';

const tls = { certificate: 'tls/shop_twins.pem', certificateKey: 'tls/shop_twins.pem' };

function host(serverName: string, fields: Partial<VirtualHost> = {}): VirtualHost {
  return { serverName, tls, hsts: true, locations: [], ...fields };
}

function config(virtualHosts: VirtualHost[]): NginxConfig {
  return { http: { virtualHosts } } as unknown as NginxConfig;
}

/** Bodies as the template would render them, by a body name per host. */
function bodies(plain: Record<string, string>, secure: Record<string, string>): ServerBodies {
  return { plain: (h) => plain[h.serverName] ?? '', tls: (h) => secure[h.serverName] ?? '' };
}

describe('shareServers', () => {
  it('gives hosts whose bodies are the same one server, headed by the first, and leaves the rest their own', () => {
    const view = shareServers(config([host('a.test'), host('b.test'), host('c.test'), host('d.test')]), bodies(
      { 'a.test': 'plain /', 'b.test': 'plain /', 'c.test': 'plain /', 'd.test': 'plain /other' },
      { 'a.test': 'tls /', 'b.test': 'tls /other', 'c.test': 'tls /', 'd.test': 'tls /other' },
    ));
    expect(view.http.virtualHosts.map((h) => [h.serverName, h.plainServer, h.tlsServer])).toEqual([
      ['a.test', { serverNames: ['a.test', 'b.test', 'c.test'], body: 'plain /' }, { serverNames: ['a.test', 'c.test'], body: 'tls /' }],
      ['b.test', undefined, { serverNames: ['b.test', 'd.test'], body: 'tls /other' }],
      ['c.test', undefined, undefined],
      ['d.test', { serverNames: ['d.test'], body: 'plain /other' }, undefined],
    ]);
  });

  it('renders no plain-HTTP server for a host whose plain HTTP is shared, and no TLS server for a passthrough host', () => {
    const { tls: _, ...passthrough } = host('p.test');
    const view = shareServers(config([host('a.test', { plainHttpShared: true }), passthrough]), bodies({}, {}));
    expect(view.http.virtualHosts.map((h) => [h.serverName, h.plainServer?.serverNames, h.tlsServer?.serverNames])).toEqual([
      ['a.test', undefined, ['a.test']],
      ['p.test', ['p.test'], undefined],
    ]);
  });

  it('keeps a body that reads its first server name to its host: $server_name and server_name_in_redirect do', () => {
    const redirects = '        server_name_in_redirect on;\n';
    const variable = '            return 200 ${server_name};\n';
    const view = shareServers(config([host('a.test'), host('b.test')]), bodies({ 'a.test': redirects, 'b.test': redirects }, { 'a.test': variable, 'b.test': variable }));
    expect(view.http.virtualHosts.map((h) => [h.plainServer?.serverNames, h.tlsServer?.serverNames])).toEqual([
      [['a.test'], ['a.test']],
      [['b.test'], ['b.test']],
    ]);
  });

  it('shares a body that names other server names: the SNI sent to a backend, a path', () => {
    const backendSni = '        location /server_name/ {\n            proxy_ssl_server_name on;\n            proxy_ssl_name $ssl_server_name;\n        }\n';
    const view = shareServers(config([host('a.test'), host('b.test')]), bodies({}, { 'a.test': backendSni, 'b.test': backendSni }));
    expect(view.http.virtualHosts.map((h) => h.tlsServer?.serverNames)).toEqual([['a.test', 'b.test'], undefined]);
  });

  it('leaves the model as it was', () => {
    const model = config([host('a.test'), host('b.test')]);
    shareServers(model, bodies({}, {}));
    expect(model.http.virtualHosts.map((h) => Object.keys(h))).toEqual([Object.keys(host('a.test')), Object.keys(host('b.test'))]);
  });
});
