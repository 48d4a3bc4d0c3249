import { describe, expect, it } from 'vitest';
import { render } from '../../src/render/render.js';
import type { Snapshot, SourceObject } from '../../src/sources/snapshot.js';
import type { TranslateOptions } from '../../src/translate/options.js';
import { testTranslateOptions } from '../support/options.js';
import { translate } from '../../src/translate/translate.js';

/**
 * `ingress2nginx.dev/backend-proxy-protocol` per nginx version: the front proxies such hosts itself with
 * the PROXY/unix hand-off, a loopback server sends the header with `pass`, and "v2" needs nginx 1.31.4
 * (stream `proxy_protocol v2`). The traffic test is test/integration/backend-proxy-protocol.test.ts.
 */

const options: TranslateOptions = testTranslateOptions({ httpsPort: 8443 });

const service: SourceObject = {
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name: 'mail', namespace: 'mx', annotations: {}, labels: {}, creationTimestamp: '' },
  raw: { spec: { clusterIP: '10.96.3.10', ports: [{ name: 'imaps', port: 993 }] } },
};

function passthrough(name: string, version?: string): SourceObject {
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: {
      name,
      namespace: 'mx',
      annotations: {
        'nginx.ingress.kubernetes.io/ssl-passthrough': 'true',
        ...(version !== undefined && { 'ingress2nginx.dev/backend-proxy-protocol': version }),
      },
      labels: {},
      creationTimestamp: '2026-01-01T00:00:00Z',
    },
    raw: {
      spec: {
        ingressClassName: 'nginx',
        rules: [{ host: `${name}.example.test`, http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'mail', port: { number: 993 } } } }] } }],
      },
    },
  };
}

function run(nginxVersion: string, ...objects: SourceObject[]) {
  const snapshot: Snapshot = { objects: [service, ...objects] };
  return translate(snapshot, { ...options, nginxVersion });
}

describe('PROXY protocol to passthrough backends', () => {
  it('has the PROXY/unix front proxy such a host to the backend itself: one hop, with the header the front sends', () => {
    const { model, diagnostics } = run('1.22.1', passthrough('imap', 'v1'), passthrough('plain'));
    expect(diagnostics.filter((d) => d.severity !== 'info')).toEqual([]);
    const routes = model.stream.frontends[0]?.routes.map((r) => [r.serverName, r.target]);
    expect(routes).toEqual([
      ['imap.example.test', '10.96.3.10:993'],
      ['plain.example.test', 'unix:/run/i2n/passthrough-8443.sock'],
    ]);
    expect(model.stream.proxyProtocolServers).toEqual([]);
    expect(render(model).nginxConf).toContain('        proxy_pass $i2n_route_8443;\n        proxy_protocol on;\n');
  });

  it('passes such a host, with pass, to a loopback server of the port that sends the header', () => {
    const { model, diagnostics } = run('1.26.3', passthrough('imap', 'V1 '));
    expect(diagnostics.filter((d) => d.severity !== 'info')).toEqual([]);
    expect(model.stream.frontends[0]?.routes.map((r) => r.target)).toEqual(['127.0.0.2:8443']);
    expect(model.stream.proxyProtocolServers).toEqual([
      expect.objectContaining({ address: '127.0.0.2:8443', directive: 'on', routes: [expect.objectContaining({ serverName: 'imap.example.test', backend: '10.96.3.10:993' })] }),
    ]);
    expect(render(model).nginxConf).toContain('        listen 127.0.0.2:8443;\n        ssl_preread on;\n        proxy_protocol on;\n');
  });

  it('sends version 2 from nginx 1.31.4 on, from a loopback address of its own', () => {
    const { model, diagnostics } = run('1.31.4', passthrough('imap', 'v1'), passthrough('smtp', 'v2'));
    expect(diagnostics.filter((d) => d.severity !== 'info')).toEqual([]);
    expect(model.stream.proxyProtocolServers.map((s) => [s.address, s.directive, s.routes.map((r) => r.serverName)])).toEqual([
      ['127.0.0.2:8443', 'on', ['imap.example.test']],
      ['127.0.0.3:8443', 'v2', ['smtp.example.test']],
    ]);
    expect(render(model).nginxConf).toContain('        proxy_protocol v2;\n');
  });

  it.each(['1.22.1', '1.26.3', '1.31.3'])('refuses v2 for nginx %s, which writes version 1 only, and leaves the Ingress out', (version) => {
    const { model, diagnostics } = run(version, passthrough('smtp', 'v2'));
    expect(diagnostics.map((d) => [d.severity, d.code])).toEqual([
      ['error', 'backend-proxy-protocol-unsupported'],
      ['error', 'ingress-skipped'],
    ]);
    expect(diagnostics[0]?.message).toContain('nginx 1.31.4 or later');
    expect(model.stream.frontends.flatMap((f) => f.routes)).toEqual([]);
  });
});
