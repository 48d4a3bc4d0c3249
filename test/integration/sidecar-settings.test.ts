import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeApiServer, type JsonObject } from '../support/fake-apiserver.js';
import { httpGet, parseEcho, startAuthBackend, startHttpBackend, type Peer } from '../support/peers.js';
import { eventually, ingress, namespace, service, settled, startSidecar, stopAllSidecars, type RunningSidecar } from '../support/sidecar.js';

/**
 * Operator settings fail safe in the cluster mode (issue 38): a controller ConfigMap edit with a
 * global-auth-url nginx may not reach leaves every host served as before, without one failed request,
 * and is said once, in one Event on the ConfigMap, a metric and the log; fixing it applies.
 */

const hosts = ['one.example.test', 'two.example.test', 'three.example.test'];
let api: FakeApiServer;
let sidecar: RunningSidecar;
let auth: Peer;
const peers: Peer[] = [];

const controller = (data: Record<string, string>): JsonObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'controller', namespace: 'ingress-nginx' }, data });

beforeAll(async () => {
  api = await FakeApiServer.start({ tls: true, token: 'settings-test', bookmarkIntervalMs: 500 });
  const kubeconfig = await api.writeKubeconfig();
  for (const ns of ['web', 'ingress-nginx']) api.create(namespace(ns));
  const app = await startHttpBackend('app');
  auth = await startAuthBackend({ setCookie: false });
  peers.push(app, auth);
  api.create(service('web', 'app', app));
  api.create(service('ingress-nginx', 'auth', auth));
  hosts.forEach((host, i) => api.create(ingress('web', `app-${i}`, host, { service: 'app', port: app.port })));
  api.create(controller({ 'hsts-max-age': '600' }));
  sidecar = await startSidecar({ api, kubeconfig, translate: { configMap: 'ingress-nginx/controller' } });
  await eventually(() => sidecar.probe('/readyz'), (s) => s === 200);
  await settled(sidecar);
});

afterAll(async () => {
  await stopAllSidecars();
  await Promise.all(peers.map((p) => p.close()));
  await api.close();
});

async function status(host: string, headers: Record<string, string> = {}): Promise<string> {
  const response = await httpGet({ port: sidecar.httpPort, host, headers }).catch(() => undefined);
  if (!response) return 'no answer';
  return response.status === 200 ? parseEcho(response.body).backend : `status ${response.status}`;
}

const configMapEvents = () =>
  api.list('events.k8s.io/v1', 'Event', 'ingress-nginx').filter((e) => {
    const regarding = e['regarding'] as { kind: string; name: string };
    return regarding.kind === 'ConfigMap' && regarding.name === 'controller';
  });

describe('a controller ConfigMap edit the sidecar refuses', () => {
  it('leaves every host served as before, without one failed request, and says so once', async () => {
    for (const host of hosts) expect(await status(host)).toBe('app');
    const failures: string[] = [];
    let sending = true;
    const traffic = (async () => {
      while (sending) {
        for (const host of hosts) {
          const answer = await status(host);
          if (answer !== 'app') failures.push(`${host}: ${answer}`);
        }
      }
    })();
    api.update(controller({ 'hsts-max-age': '600', 'global-auth-url': 'http://127.0.0.1:9/check' }));
    expect(await eventually(() => sidecar.metric('ingress2nginx_configmap_rejected', { key: 'global-auth-url' }), (n) => n === 1)).toBe(1);
    const events = await eventually(configMapEvents, (list) => list.length > 0);
    // Another change elsewhere runs more rounds with the refusal standing: still one Event.
    api.create(ingress('web', 'later', 'later.example.test', { service: 'app', port: peers[0]!.port }));
    await eventually(() => status('later.example.test'), (b) => b === 'app');
    await settled(sidecar);
    sending = false;
    await traffic;
    expect(failures).toEqual([]);
    expect(events[0]).toMatchObject({ type: 'Warning', reason: 'ConfigmapRejected' });
    expect(String(events[0]!['note'])).toContain('global-auth-url');
    expect(configMapEvents()).toHaveLength(1);
    const logged = sidecar.logs().split('\n').filter((line) => line.includes('"code":"configmap-rejected"'));
    expect(logged).toHaveLength(1);
    expect(logged[0]).toContain('global-auth-url');
  });

  it('applies the fix', async () => {
    api.update(controller({ 'hsts-max-age': '600', 'global-auth-url': `http://auth.ingress-nginx.svc.cluster.local:${auth.port}/check` }));
    for (const host of hosts) expect(await eventually(() => status(host), (b) => b === 'status 401')).toBe('status 401');
    expect(await status(hosts[0]!, { 'x-token': 'good' })).toBe('app');
    expect(await sidecar.metric('ingress2nginx_configmap_rejected', { key: 'global-auth-url' })).toBe(0);
  });
});
