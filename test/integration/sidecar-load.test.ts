import { mkdtemp } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { defaultRunTiming } from '../../src/sidecar/run.js';
import { FakeApiServer, type JsonObject } from '../support/fake-apiserver.js';
import { httpGet, httpsGet, parseEcho, startHttpBackend, startTlsBackend, tlsProbe, type Peer } from '../support/peers.js';
import { createCa, issueCertificate, type CertificateAuthority } from '../support/pki.js';
import { eventually, ingress, namespace, service, settled, startSidecar, stopAllSidecars, tlsSecret, type RunningSidecar } from '../support/sidecar.js';

/**
 * Reloads under load: many short TLS connections, passthrough and terminated, run without pause while
 * the sidecar applies change after change. nginx hands its listening sockets to the new workers and
 * lets the old ones finish, so no connection may fail. The time from each API write to the new host
 * answering is printed (median and max), not asserted.
 */

const reloadsWanted = 20;
const clientsPerHost = 4;

const peers: Peer[] = [];
const clusters: FakeApiServer[] = [];

afterAll(async () => {
  await stopAllSidecars();
  await Promise.all(peers.map((p) => p.close()));
  await Promise.all(clusters.map((c) => c.close()));
});

interface Site {
  readonly api: FakeApiServer;
  readonly sidecar: RunningSidecar;
  readonly ca: CertificateAuthority;
  readonly web: Peer;
  /** The passthrough Ingress of tunnel.example.test, new each time, to create when the test wants it. */
  readonly tunnelIngress: () => JsonObject;
}

/**
 * A cluster with site.example.test (terminated, to an HTTP backend) and, when `withTunnel`,
 * tunnel.example.test (passthrough, to a TLS backend), and a sidecar serving it.
 */
async function siteCluster(name: string, withTunnel: boolean): Promise<Site> {
  const api = await FakeApiServer.start({ tls: true, token: name, bookmarkIntervalMs: 500 });
  clusters.push(api);
  const kubeconfig = await api.writeKubeconfig();
  const ca = await createCa(await mkdtemp(join(tmpdir(), `i2n-${name}-`)), `${name} CA`);
  const [site, tunnel] = await Promise.all([
    issueCertificate(ca, { commonName: 'site.example.test', sans: ['site.example.test'] }),
    issueCertificate(ca, { commonName: 'tunnel.example.test', sans: ['tunnel.example.test'] }),
  ]);
  const web = await startHttpBackend('site');
  const tls = await startTlsBackend({ name: 'tunnel', cert: tunnel.certPem, key: tunnel.keyPem });
  peers.push(web, tls);
  api.create(namespace(name));
  api.create(service(name, 'site', web));
  api.create(service(name, 'tunnel', tls));
  api.create(tlsSecret(name, 'site-tls', site));
  api.create(ingress(name, 'site', 'site.example.test', { service: 'site', port: web.port }, { tlsSecret: 'site-tls' }));
  const tunnelIngress = () =>
    ingress(name, 'tunnel', 'tunnel.example.test', { service: 'tunnel', port: tls.port }, { annotations: { 'nginx.ingress.kubernetes.io/ssl-passthrough': 'true' } });
  if (withTunnel) api.create(tunnelIngress());
  // The debounce of production, so that the figure printed is the one a user gets.
  const sidecar = await startSidecar({ api, kubeconfig, timing: { debounceMs: defaultRunTiming.debounceMs, maxDelayMs: defaultRunTiming.maxDelayMs } });
  await eventually(() => sidecar.probe('/readyz'), (s) => s === 200);
  await settled(sidecar);
  return { api, sidecar, ca, web, tunnelIngress };
}

/** The host answers over plain HTTP from the site backend: the change that created it is served. */
async function answers(sidecar: RunningSidecar, host: string): Promise<boolean> {
  const response = await httpGet({ port: sidecar.httpPort, host }).catch(() => undefined);
  return response?.status === 200;
}

function printFigures(changeToServed: readonly number[], counts: { terminated: number; passthrough: number }, failed: number): void {
  const sorted = [...changeToServed].sort((a, b) => a - b);
  const median = sorted.length % 2 === 1 ? sorted[(sorted.length - 1) / 2]! : (sorted[sorted.length / 2 - 1]! + sorted[sorted.length / 2]!) / 2;
  console.log(
    `change to served under continuous TLS load, ${sorted.length} changes: median ${median.toFixed(0)} ms, max ${sorted.at(-1)!.toFixed(0)} ms; ` +
      `${counts.terminated} terminated and ${counts.passthrough} passthrough connections served, ${failed} failed (load average ${loadavg()[0]!.toFixed(1)})`,
  );
}

/** Clients that open one connection after another to each host until `stop`, counting what was served and what failed. */
function load(site: Site, hosts: readonly ('terminated' | 'passthrough')[]) {
  const counts = { terminated: 0, passthrough: 0 };
  const failures: string[] = [];
  let running = true;
  const client = async (kind: 'terminated' | 'passthrough') => {
    while (running) {
      if (kind === 'terminated') {
        try {
          const response = await httpsGet({ port: site.sidecar.httpsPort, servername: 'site.example.test', path: '/load', ca: site.ca.certPem });
          if (response.status !== 200 || parseEcho(response.body).backend !== 'site') failures.push(`terminated: status ${response.status}`);
          else counts.terminated++;
        } catch (error) {
          failures.push(`terminated: ${(error as Error).message}`);
        }
      } else {
        const probe = await tlsProbe({ port: site.sidecar.httpsPort, servername: 'tunnel.example.test', ca: site.ca.certPem });
        if (probe.outcome !== 'connected' || probe.authorized !== true || probe.data !== 'hello from tunnel sni=tunnel.example.test\n') {
          failures.push(`passthrough: ${probe.outcome} ${probe.errorCode ?? ''} ${JSON.stringify(probe.data)}`);
        } else counts.passthrough++;
      }
    }
  };
  const clients = hosts.flatMap((kind) => Array.from({ length: clientsPerHost }, () => client(kind)));
  return {
    counts,
    failures,
    stop: async () => {
      running = false;
      await Promise.all(clients);
    },
  };
}

describe('continuous TLS load across reloads', () => {
  it(`loses no connection over ${reloadsWanted} reloads`, async () => {
    const site = await siteCluster('load', true);
    const { api, sidecar, web } = site;
    const traffic = load(site, ['terminated', 'passthrough']);

    const first = await sidecar.metric('ingress2nginx_reloads_total', { result: 'success' });
    // From the API write to the new host answering: a figure printed, never asserted (timing depends on the machine).
    const changeToServed: number[] = [];
    for (let change = 1; change <= reloadsWanted; change++) {
      const host = `extra-${change}.example.test`;
      const started = performance.now();
      api.create(ingress('load', `extra-${change}`, host, { service: 'site', port: web.port }));
      await eventually(() => answers(sidecar, host), (ok) => ok, 30_000);
      changeToServed.push(performance.now() - started);
      await eventually(() => sidecar.metric('ingress2nginx_reloads_total', { result: 'success' }), (n) => n >= first + change, 30_000);
    }
    await traffic.stop();
    printFigures(changeToServed, traffic.counts, traffic.failures.length);

    expect(await sidecar.metric('ingress2nginx_reloads_total', { result: 'success' })).toBeGreaterThanOrEqual(first + reloadsWanted);
    expect(await sidecar.metric('ingress2nginx_reloads_total', { result: 'failure' })).toBe(0);
    expect(traffic.failures).toEqual([]);
    // Enough traffic that a gap at any reload would have been hit.
    expect(traffic.counts.terminated).toBeGreaterThan(reloadsWanted * clientsPerHost);
    expect(traffic.counts.passthrough).toBeGreaterThan(reloadsWanted * clientsPerHost);
    await sidecar.stop();
  });
});

describe('the TLS port changes hands under load', () => {
  it('moves from the http servers to the SNI front and back without losing a terminated connection', async () => {
    // Without a passthrough host the http servers listen on the TLS port themselves; the first one puts
    // the SNI front there, and removing it takes the front away again, each by a reload.
    const site = await siteCluster('switch', false);
    const { api, sidecar, ca, tunnelIngress } = site;
    const traffic = load(site, ['terminated']);
    const tunnelAnswer = async () => (await tlsProbe({ port: sidecar.httpsPort, servername: 'tunnel.example.test', ca: ca.certPem })).data;
    for (let round = 0; round < 3; round++) {
      api.create(tunnelIngress());
      expect(await eventually(tunnelAnswer, (data) => data.startsWith('hello from tunnel'))).toBe('hello from tunnel sni=tunnel.example.test\n');
      api.delete({ apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', namespace: 'switch', name: 'tunnel' });
      expect(await eventually(tunnelAnswer, (data) => !data.startsWith('hello from tunnel'))).not.toContain('hello from tunnel');
    }
    await traffic.stop();

    expect(traffic.failures).toEqual([]);
    expect(traffic.counts.terminated).toBeGreaterThan(6 * clientsPerHost);
    expect(await sidecar.metric('ingress2nginx_reloads_total', { result: 'failure' })).toBe(0);
    await sidecar.stop();
  });
});
