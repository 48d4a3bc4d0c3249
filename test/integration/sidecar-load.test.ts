import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FakeApiServer } from '../support/fake-apiserver.js';
import { httpsGet, parseEcho, startHttpBackend, startTlsBackend, tlsProbe, type Peer } from '../support/peers.js';
import { createCa, issueCertificate } from '../support/pki.js';
import { eventually, ingress, namespace, service, settled, startSidecar, stopAllSidecars, tlsSecret } from '../support/sidecar.js';

/**
 * Reloads under load: many short TLS connections, passthrough and terminated, run without pause while
 * the sidecar applies change after change. nginx hands its listening sockets to the new workers and
 * lets the old ones finish, so no connection may fail.
 */

const reloadsWanted = 20;
const clientsPerHost = 4;

const peers: Peer[] = [];
let api: FakeApiServer | undefined;

afterAll(async () => {
  await stopAllSidecars();
  await Promise.all(peers.map((p) => p.close()));
  await api?.close();
});

describe('continuous TLS load across reloads', () => {
  it(`loses no connection over ${reloadsWanted} reloads`, async () => {
    api = await FakeApiServer.start({ tls: true, token: 'load', bookmarkIntervalMs: 500 });
    const kubeconfig = await api.writeKubeconfig();
    const ca = await createCa(await mkdtemp(join(tmpdir(), 'i2n-load-')), 'Load CA');
    const [site, tunnel] = await Promise.all([
      issueCertificate(ca, { commonName: 'site.example.test', sans: ['site.example.test'] }),
      issueCertificate(ca, { commonName: 'tunnel.example.test', sans: ['tunnel.example.test'] }),
    ]);
    const web = await startHttpBackend('site');
    const tls = await startTlsBackend({ name: 'tunnel', cert: tunnel.certPem, key: tunnel.keyPem });
    peers.push(web, tls);
    api.create(namespace('load'));
    api.create(service('load', 'site', web));
    api.create(service('load', 'tunnel', tls));
    api.create(tlsSecret('load', 'site-tls', site));
    api.create(ingress('load', 'site', 'site.example.test', { service: 'site', port: web.port }, { tlsSecret: 'site-tls' }));
    api.create(
      ingress('load', 'tunnel', 'tunnel.example.test', { service: 'tunnel', port: tls.port }, { annotations: { 'nginx.ingress.kubernetes.io/ssl-passthrough': 'true' } }),
    );
    const sidecar = await startSidecar({ api, kubeconfig });
    await eventually(() => sidecar.probe('/readyz'), (s) => s === 200);
    await settled(sidecar);

    const counts = { terminated: 0, passthrough: 0 };
    const failures: string[] = [];
    let running = true;
    const terminatedClient = async () => {
      while (running) {
        try {
          const response = await httpsGet({ port: sidecar.httpsPort, servername: 'site.example.test', path: '/load', ca: ca.certPem });
          if (response.status !== 200 || parseEcho(response.body).backend !== 'site') failures.push(`terminated: status ${response.status}`);
          else counts.terminated++;
        } catch (error) {
          failures.push(`terminated: ${(error as Error).message}`);
        }
      }
    };
    const passthroughClient = async () => {
      while (running) {
        const probe = await tlsProbe({ port: sidecar.httpsPort, servername: 'tunnel.example.test', ca: ca.certPem });
        if (probe.outcome !== 'connected' || probe.authorized !== true || probe.data !== 'hello from tunnel sni=tunnel.example.test\n') {
          failures.push(`passthrough: ${probe.outcome} ${probe.errorCode ?? ''} ${JSON.stringify(probe.data)}`);
        } else counts.passthrough++;
      }
    };
    const load = [...Array.from({ length: clientsPerHost }, terminatedClient), ...Array.from({ length: clientsPerHost }, passthroughClient)];

    const first = await sidecar.metric('ingress2nginx_reloads_total', { result: 'success' });
    for (let change = 1; change <= reloadsWanted; change++) {
      api.create(ingress('load', `extra-${change}`, `extra-${change}.example.test`, { service: 'site', port: web.port }));
      await eventually(() => sidecar.metric('ingress2nginx_reloads_total', { result: 'success' }), (n) => n >= first + change, 30_000);
    }
    running = false;
    await Promise.all(load);

    expect(await sidecar.metric('ingress2nginx_reloads_total', { result: 'success' })).toBeGreaterThanOrEqual(first + reloadsWanted);
    expect(await sidecar.metric('ingress2nginx_reloads_total', { result: 'failure' })).toBe(0);
    expect(failures).toEqual([]);
    // Enough traffic that a gap at any reload would have been hit.
    expect(counts.terminated).toBeGreaterThan(reloadsWanted * clientsPerHost);
    expect(counts.passthrough).toBeGreaterThan(reloadsWanted * clientsPerHost);
    await sidecar.stop();
  });
});
