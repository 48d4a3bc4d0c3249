import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { build } from '../../src/build/build.js';
import { routeTable } from '../../src/report/routes.js';
import { requestLogTables } from '../../src/translate/dataplane/request-log.js';
import { gateway, object, service, tlsSecret, v1 } from '../support/gateway.js';
import { createCa, issueCertificate } from '../support/pki.js';
import { testTranslateOptions } from '../support/options.js';

/**
 * The route table (`routes`, `diff`, the review page) of Gateways on ports of their own: a host name
 * routed on two ports is two rows, each with its port and its own backend, beside the Ingress ports' rows;
 * the request metrics, which count their requests as the Ingress ports' (labels per location); and the
 * certificates served there (their expiry is a metric of the cluster mode).
 */

const route = (name: string, gatewayName: string, backend: string) =>
  object(v1, 'HTTPRoute', 'infra', name, { spec: { parentRefs: [{ name: gatewayName }], hostnames: ['same.example.test'], rules: [{ backendRefs: [{ name: backend, port: 80 }] }] } });

const objects = [
  service('infra', 'one', '10.0.0.1', [{ port: 80 }]),
  service('infra', 'two', '10.0.0.2', [{ port: 80 }]),
  gateway('infra', 'first', [{ name: 'http', port: 8080, protocol: 'HTTP' }]),
  gateway('infra', 'second', [{ name: 'http', port: 8081, protocol: 'HTTP' }]),
  route('on-first', 'first', 'one'),
  route('on-second', 'second', 'two'),
];

describe('route table and request metrics of own ports', () => {
  it('labels the locations of own ports for the request metrics, and their hosts are known to them', () => {
    const { model } = build({ objects }, testTranslateOptions({ requestLog: '/tmp/i2n-requests.log', stubStatus: false }));
    const locations = (model.http.ownPorts ?? []).flatMap((own) => own.virtualHosts.flatMap((host) => host.locations)).filter((l) => l.proxy !== undefined);
    expect(locations.length).toBe(2);
    for (const location of locations) expect(location.logLabels?.route, location.path).toBeDefined();
    const tables = requestLogTables(model);
    expect(tables.hosts).toContain('same.example.test');
    expect([...tables.routes.values()].map((r) => r.service).sort()).toEqual(expect.arrayContaining(['one', 'two']));
  });

  it('lists the routes of each port with that port, and never one port\'s backend on another', () => {
    const result = build({ objects }, testTranslateOptions());
    const rows = routeTable(result).rows.filter((row) => row.host === 'same.example.test');
    expect(rows.map((row) => [row.port, row.mode, row.backends.map((b) => b.service)])).toEqual([
      [8080, 'http', ['infra/one']],
      [8081, 'http', ['infra/two']],
    ]);
  });

  it('names the certificate an HTTPS port of its own serves for a host', async () => {
    const ca = await createCa(await mkdtemp(join(tmpdir(), 'i2n-own-port-')), 'own port CA');
    const certificate = await issueCertificate(ca, { commonName: 'secure.example.test', sans: ['secure.example.test'] });
    const result = build(
      {
        objects: [
          ...objects,
          tlsSecret('infra', 'cert', certificate),
          gateway('infra', 'secure', [{ name: 'https', port: 8443, protocol: 'HTTPS', tls: { certificateRefs: [{ name: 'cert' }] } }]),
          object(v1, 'HTTPRoute', 'infra', 'on-secure', { spec: { parentRefs: [{ name: 'secure' }], hostnames: ['secure.example.test'], rules: [{ backendRefs: [{ name: 'one', port: 80 }] }] } }),
        ],
      },
      testTranslateOptions(),
    );
    expect(result.certificates.map((c) => [c.host, c.subject])).toContainEqual(['secure.example.test', expect.stringContaining('secure.example.test')]);
  });
});
