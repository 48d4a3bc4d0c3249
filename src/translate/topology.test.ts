import { describe, expect, it } from 'vitest';
import type { Location, VirtualHost } from '../model/nginx.js';
import { atLeast, nginxFeatures } from './nginx-version.js';
import { sharePlainHttpServers } from './dataplane/redirect-server.js';
import { shareSslContexts } from './dataplane/ssl-contexts.js';
import { hashSizes } from './settle/sni.js';
import { keepalivePerUpstream } from './dataplane/data-plane.js';

const redirect = (path: string): Location => ({ modifier: '', path, comment: path, plainHttp: { redirect: true, serve: false } });
const acme = (upstream: string, extra: Record<string, unknown> = {}): Location => ({
  modifier: '',
  path: '/.well-known/acme-challenge/',
  comment: 'acme',
  plainHttp: { redirect: false, serve: true },
  plainHttpOnly: true,
  proxy: { upstream, grpc: false, module: 'proxy', scheme: 'http', pass: `http://${upstream}`, host: '$i2n_best_host', httpVersion: '1.1', headers: [], inheritsRequestHeaders: true, interceptErrors: false, ...extra },
});
const notFound: Location = { modifier: '', path: '/', comment: 'none', plainHttp: { redirect: false, serve: true }, returnStatus: 404 };
const host = (serverName: string, locations: Location[], certificate = `tls/${serverName}.pem`): VirtualHost => ({
  serverName,
  tls: { certificate, certificateKey: certificate },
  hsts: true,
  locations,
});

describe('nginx generations', () => {
  it('uses pass from 1.25.5 on, the http2 directive from 1.25.1 on, resolving upstream servers from 1.27.3 on, and PROXY protocol v2 to backends from 1.31.4 on', () => {
    expect(nginxFeatures('1.22.1')).toEqual({ streamPass: false, http2Directive: false, proxyProtocolV2: false, upstreamResolve: false });
    expect(nginxFeatures('1.25.4')).toEqual({ streamPass: false, http2Directive: true, proxyProtocolV2: false, upstreamResolve: false });
    expect(nginxFeatures('1.25.5')).toEqual({ streamPass: true, http2Directive: true, proxyProtocolV2: false, upstreamResolve: false });
    expect(nginxFeatures('1.27.2')).toEqual({ streamPass: true, http2Directive: true, proxyProtocolV2: false, upstreamResolve: false });
    expect(nginxFeatures('1.27.3')).toEqual({ streamPass: true, http2Directive: true, proxyProtocolV2: false, upstreamResolve: true });
    expect(nginxFeatures('1.30.0')).toEqual({ streamPass: true, http2Directive: true, proxyProtocolV2: false, upstreamResolve: true });
    expect(nginxFeatures('1.31.4')).toEqual({ streamPass: true, http2Directive: true, proxyProtocolV2: true, upstreamResolve: true });
    expect(atLeast('1.100.0', '1.25.5')).toBe(true);
    expect(atLeast('1.9.9', '1.25.5')).toBe(false);
  });
});

describe('shared plain-HTTP servers', () => {
  it('puts hosts that only redirect (ACME aside) into one server, with their ACME upstreams', () => {
    const shared = sharePlainHttpServers([
      host('a.example.test', [redirect('/'), redirect('/api'), acme('web_a_80')]),
      host('b.example.test', [redirect('/'), acme('web_b_80')]),
    ]);
    expect(shared.virtualHosts.every((h) => h.plainHttpShared)).toBe(true);
    expect(shared.redirectServer?.serverNames).toEqual(['a.example.test', 'b.example.test']);
    expect(shared.redirectServer?.acmeUpstreams).toEqual([
      { mapKey: 'a.example.test', upstream: 'web_a_80' },
      { mapKey: 'b.example.test', upstream: 'web_b_80' },
    ]);
  });

  it('keeps a server of its own for a host that serves any path over plain HTTP, or whose ACME proxy is more than plain', () => {
    const served: Location = { ...redirect('/api'), plainHttp: { redirect: false, serve: true } };
    const shared = sharePlainHttpServers([
      host('served.example.test', [redirect('/'), served, acme('web_a_80')]),
      host('grpc.example.test', [redirect('/'), acme('web_g_80', { grpc: true, module: 'grpc', scheme: 'grpc', pass: 'grpc://web_g_80' })]),
      host('resolved.example.test', [redirect('/'), acme('web_r_80', { resolve: 'web.example.test:80', pass: 'http://$i2n_backend' })]),
      host('default-redirect.example.test', [redirect('/'), acme('web_d_80', { tuning: { redirect: 'default' } })]),
      host('no-root.example.test', [redirect('/api'), notFound]),
      host('no-acme.example.test', [redirect('/')]),
    ]);
    expect(shared.virtualHosts.filter((h) => h.plainHttpShared)).toEqual([]);
    expect(shared.redirectServer).toBeUndefined();
  });

  it('shares the ACME settings most such hosts have; a host with other settings keeps its own server', () => {
    const shared = sharePlainHttpServers([
      host('a.example.test', [redirect('/'), acme('web_a_80')]),
      host('b.example.test', [redirect('/'), acme('web_b_80')]),
      host('tuned.example.test', [redirect('/'), acme('web_t_80', { tuning: { readTimeout: '5s' } })]),
    ]);
    expect(shared.redirectServer?.serverNames).toEqual(['a.example.test', 'b.example.test']);
    expect(shared.redirectServer?.locations[1]?.proxy).toMatchObject({ upstream: '$i2n_acme_upstream', pass: 'http://$i2n_acme_upstream', host: '$i2n_best_host' });
    expect(shared.virtualHosts.map((h) => h.plainHttpShared ?? false)).toEqual([true, true, false]);
  });

  it('puts hosts whose plain HTTP is only a 404 into one server', () => {
    const shared = sharePlainHttpServers([host('vault.example.test', [notFound]), host('db.example.test', [notFound, redirect('/x')])]);
    expect(shared.notFoundServerNames).toEqual(['vault.example.test']);
    expect(shared.virtualHosts.map((h) => h.plainHttpShared ?? false)).toEqual([true, false]);
  });
});

describe('SSL contexts', () => {
  const defaultTls = { certificate: 'tls/default.pem', certificateKey: 'tls/default.pem' };
  const hosts = (count: number) => Array.from({ length: count }, (_, i) => host(`h${i}.example.test`, [notFound]));

  it('lets hosts with the default certificate keep the default server context, and the others their own', () => {
    const { virtualHosts, certificateMap } = shareSslContexts([host('d.example.test', [notFound], 'tls/default.pem'), ...hosts(2)], defaultTls, false);
    expect(virtualHosts.map((h) => h.sharesDefaultTls ?? false)).toEqual([true, false, false]);
    expect(certificateMap).toBeUndefined();
  });

  it('chooses every certificate per handshake by SNI when asked to', () => {
    const { virtualHosts, certificateMap } = shareSslContexts(hosts(3), defaultTls, true);
    expect(virtualHosts.every((h) => h.sharesDefaultTls)).toBe(true);
    expect(certificateMap?.entries).toHaveLength(3);
    expect(certificateMap?.entries[0]).toEqual({ mapKey: 'h0.example.test', file: 'tls/h0.example.test.pem' });
    expect(certificateMap?.defaultFile).toBe('tls/default.pem');
  });

  it('gives a host that asks for client certificates its own context, per handshake too', () => {
    const verifying: VirtualHost = { ...host('mtls.example.test', [notFound], 'tls/default.pem'), clientCertificate: { caFile: 'ca/x.pem', verify: 'optional_no_ca', depth: 1 } };
    for (const perHandshake of [false, true]) {
      const { virtualHosts, certificateMap } = shareSslContexts([verifying, ...hosts(1)], defaultTls, perHandshake);
      expect(virtualHosts[0]?.sharesDefaultTls).toBeUndefined();
      expect(certificateMap?.entries.map((e) => e.mapKey) ?? []).not.toContain('mtls.example.test');
    }
  });

  it('never without a default certificate (ssl-reject-handshake)', () => {
    const { virtualHosts, certificateMap } = shareSslContexts(hosts(3), undefined, true);
    expect(virtualHosts.some((h) => h.sharesDefaultTls)).toBe(false);
    expect(certificateMap).toBeUndefined();
  });
});

describe('sizes', () => {
  it('sizes hash buckets for four of the longest names, and the table for four slots per name', () => {
    expect(hashSizes([])).toEqual({ bucketSize: 64, maxSize: 1024 });
    // 8 + 48 bytes per entry of a 43-character name, four of them: 224, rounded up to 256.
    expect(hashSizes(['a'.repeat(43)])).toEqual({ bucketSize: 256, maxSize: 1024 });
    expect(hashSizes(Array.from({ length: 10_000 }, (_, i) => `h${i}`)).maxSize).toBe(65_536);
  });

  it('shares the keepalive cache out past 100 upstream blocks, never below 16', () => {
    expect(keepalivePerUpstream(320, 1)).toBe(320);
    expect(keepalivePerUpstream(320, 100)).toBe(320);
    expect(keepalivePerUpstream(320, 200)).toBe(160);
    expect(keepalivePerUpstream(320, 6666)).toBe(16);
    expect(keepalivePerUpstream(8, 6666)).toBe(8);
    expect(keepalivePerUpstream(0, 6666)).toBe(0);
  });
});
