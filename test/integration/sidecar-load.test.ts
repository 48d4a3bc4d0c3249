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

describe('the TLS port changes hands under load', () => {
  it('moves from the http servers to the SNI front and back without losing a terminated connection', async () => {
    // Without a passthrough host the http servers listen on the TLS port themselves; the first one puts
    // the SNI front there, and removing it takes the front away again, each by a reload.
    const cluster = await FakeApiServer.start({ tls: true, token: 'switch', bookmarkIntervalMs: 500 });
    const kubeconfig = await cluster.writeKubeconfig();
    try {
      const ca = await createCa(await mkdtemp(join(tmpdir(), 'i2n-switch-')), 'Switch CA');
      const [site, tunnel] = await Promise.all([
        issueCertificate(ca, { commonName: 'site.example.test', sans: ['site.example.test'] }),
        issueCertificate(ca, { commonName: 'tunnel.example.test', sans: ['tunnel.example.test'] }),
      ]);
      const web = await startHttpBackend('site');
      const tls = await startTlsBackend({ name: 'tunnel', cert: tunnel.certPem, key: tunnel.keyPem });
      peers.push(web, tls);
      cluster.create(namespace('switch'));
      cluster.create(service('switch', 'site', web));
      cluster.create(service('switch', 'tunnel', tls));
      cluster.create(tlsSecret('switch', 'site-tls', site));
      cluster.create(ingress('switch', 'site', 'site.example.test', { service: 'site', port: web.port }, { tlsSecret: 'site-tls' }));
      const sidecar = await startSidecar({ api: cluster, kubeconfig });
      await eventually(() => sidecar.probe('/readyz'), (s) => s === 200);
      await settled(sidecar);

      let terminated = 0;
      const failures: string[] = [];
      let running = true;
      const terminatedClient = async () => {
        while (running) {
          try {
            const response = await httpsGet({ port: sidecar.httpsPort, servername: 'site.example.test', path: '/switch', ca: ca.certPem });
            if (response.status !== 200 || parseEcho(response.body).backend !== 'site') failures.push(`status ${response.status}`);
            else terminated++;
          } catch (error) {
            failures.push((error as Error).message);
          }
        }
      };
      const load = Array.from({ length: clientsPerHost }, terminatedClient);
      const tunnelAnswer = async () => (await tlsProbe({ port: sidecar.httpsPort, servername: 'tunnel.example.test', ca: ca.certPem })).data;
      const passthrough = () =>
        ingress('switch', 'tunnel', 'tunnel.example.test', { service: 'tunnel', port: tls.port }, { annotations: { 'nginx.ingress.kubernetes.io/ssl-passthrough': 'true' } });
      for (let round = 0; round < 3; round++) {
        cluster.create(passthrough());
        expect(await eventually(tunnelAnswer, (data) => data.startsWith('hello from tunnel'))).toBe('hello from tunnel sni=tunnel.example.test\n');
        cluster.delete({ apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', namespace: 'switch', name: 'tunnel' });
        expect(await eventually(tunnelAnswer, (data) => !data.startsWith('hello from tunnel'))).not.toContain('hello from tunnel');
      }
      running = false;
      await Promise.all(load);

      expect(failures).toEqual([]);
      expect(terminated).toBeGreaterThan(6 * clientsPerHost);
      expect(await sidecar.metric('ingress2nginx_reloads_total', { result: 'failure' })).toBe(0);
      await sidecar.stop();
    } finally {
      await cluster.close();
    }
  });
});
