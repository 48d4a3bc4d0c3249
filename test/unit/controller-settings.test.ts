import { describe, expect, it } from 'vitest';
import type { SourceObject } from '../../src/sources/snapshot.js';
import type { TranslateOptions } from '../../src/translate/options.js';
import { translate } from '../../src/translate/translate.js';
import { configMap, object, service } from '../support/gateway.js';
import { testTranslateOptions } from '../support/options.js';
import { runCli } from '../support/cli.js';

/**
 * What the controller itself decides (issue 38): the spellings of ingress-nginx's parsers, the risk
 * level that follows from what allows snippets, and operator settings that never take the site down.
 */

const controller = 'ingress-nginx/controller';
const options: TranslateOptions = testTranslateOptions({ configMap: controller });

function ingress(name: string, host: string, annotations: Record<string, string> = {}): SourceObject {
  const base = object('networking.k8s.io/v1', 'Ingress', 'web', name, {
    spec: {
      ingressClassName: 'nginx',
      rules: [{ host, http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'app', port: { number: 80 } } } }] } }],
    },
  });
  const full = Object.fromEntries(Object.entries(annotations).map(([key, value]) => [`nginx.ingress.kubernetes.io/${key}`, value]));
  return { ...base, metadata: { ...base.metadata, annotations: full } };
}

const app = service('web', 'app', '10.96.0.10', [{ port: 80 }]);

function run(objects: readonly SourceObject[], extra: Partial<TranslateOptions> = {}) {
  return translate({ objects }, { ...options, ...extra });
}

const served = (result: ReturnType<typeof run>) => result.model.http.virtualHosts.map((host) => host.serverName);

describe('spellings ingress-nginx accepts', () => {
  it('renders an Ingress with proxy-ssl-verify: "false", as off, with an info', () => {
    const result = run([app, ingress('tls-backend', 'a.example.test', { 'backend-protocol': 'HTTPS', 'proxy-ssl-verify': 'false' })]);
    expect(served(result)).toEqual(['a.example.test']);
    expect(result.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    expect(result.diagnostics.find((d) => d.code === 'annotation-spelling')).toMatchObject({ severity: 'info', field: 'metadata.annotations["nginx.ingress.kubernetes.io/proxy-ssl-verify"]' });
  });
});

describe('the risk level follows what allows snippets', () => {
  const snippet = { 'configuration-snippet': 'add_header X-Snippet yes;' };

  it('refuses a configuration-snippet when the ConfigMap allows snippets without a risk level, naming the level', () => {
    const result = run([app, configMap('ingress-nginx', 'controller', { 'allow-snippet-annotations': 'true' }), ingress('snippet', 'a.example.test', snippet)]);
    expect(served(result)).toEqual([]);
    const refused = result.diagnostics.find((d) => d.code === 'snippet-refused');
    expect(refused?.message).toContain('annotations-risk-level');
    expect(refused?.message).toContain('"High"');
  });

  it('allows it with annotations-risk-level: Critical, or with --allow-snippet-annotations', () => {
    const critical = run([app, configMap('ingress-nginx', 'controller', { 'allow-snippet-annotations': 'true', 'annotations-risk-level': 'Critical' }), ingress('snippet', 'a.example.test', snippet)]);
    expect(served(critical)).toEqual(['a.example.test']);
    const flag = run([app, ingress('snippet', 'a.example.test', snippet)], { snippets: { allow: true } });
    expect(served(flag)).toEqual(['a.example.test']);
  });

  it('keeps a level the ConfigMap sets, with the flag too', () => {
    const result = run([app, configMap('ingress-nginx', 'controller', { 'annotations-risk-level': 'High' }), ingress('snippet', 'a.example.test', snippet)], { snippets: { allow: true } });
    expect(served(result)).toEqual([]);
  });
});

describe('the controller default backend', () => {
  const fallback = service('ingress-nginx', 'fallback', '10.96.0.30', [{ port: 8080 }]);
  const location = (result: ReturnType<typeof run>, host: string) => result.model.http.virtualHosts.find((h) => h.serverName === host)?.locations.find((l) => l.path === '/');

  it('takes what no Ingress path matches, and the ConfigMap\'s custom-http-errors', () => {
    const result = run([app, fallback, configMap('ingress-nginx', 'controller', { 'custom-http-errors': '503, 404' }), ingress('app', 'a.example.test')], { defaultBackendService: 'ingress-nginx/fallback' });
    expect(result.model.http.defaultServer.locations.find((l) => l.path === '/')?.proxy?.upstream).toContain('ingress-nginx_fallback_8080');
    expect(result.model.http.controllerErrorPages?.pages.map((page) => page.code)).toEqual([404, 503]);
    expect(location(result, 'a.example.test')?.behaviour?.variables.map((v) => v.name)).toContain('i2n_namespace');
    expect(result.diagnostics.filter((d) => d.severity !== 'info')).toEqual([]);
  });

  it('without the flag: nginx\'s 404, and a warning at the ConfigMap key that custom-http-errors does nothing', () => {
    const result = run([app, configMap('ingress-nginx', 'controller', { 'custom-http-errors': '503' }), ingress('app', 'a.example.test', {})]);
    expect(result.model.http.defaultServer.locations.find((l) => l.path === '/')?.returnStatus).toBe(404);
    expect(result.model.http.controllerErrorPages).toBeUndefined();
    expect(result.diagnostics.find((d) => d.code === 'custom-http-errors-without-default-backend')).toMatchObject({ severity: 'warning', field: 'data["custom-http-errors"]' });
  });

  it('a Service it cannot use is an error, and the 404 stays', () => {
    const result = run([app, ingress('app', 'a.example.test')], { defaultBackendService: 'ingress-nginx/missing' });
    expect(result.model.http.defaultServer.locations.find((l) => l.path === '/')?.returnStatus).toBe(404);
    expect(result.diagnostics.find((d) => d.code === 'default-backend-service-unresolved')?.severity).toBe('error');
  });
});

describe('a bad global-auth-url: said once, at the key, and never open', () => {
  const hosts = ['a.example.test', 'b.example.test', 'c.example.test'];
  const guarded = hosts.map((host, i) => ingress(`app-${i}`, host));
  const rootOf = (result: ReturnType<typeof run>, host: string) => result.model.http.virtualHosts.find((h) => h.serverName === host)?.locations.find((l) => l.path === '/');

  it.each([
    ['a target nginx may not reach', 'http://127.0.0.1:9000/check', 'global-auth-url-unusable'],
    ['a value that is no URL', 'not a url', 'configmap-invalid'],
  ])('%s: one error at data["global-auth-url"], every guarded host answers 503, none is left out', (_, url, code) => {
    const result = run([app, configMap('ingress-nginx', 'controller', { 'global-auth-url': url }), ...guarded]);
    expect(served(result)).toEqual(hosts);
    for (const host of hosts) expect(rootOf(result, host)).toMatchObject({ returnStatus: 503 });
    const errors = result.diagnostics.filter((d) => d.severity === 'error');
    expect(errors.map((d) => [d.code, d.resource?.kind, d.field])).toEqual([[code, 'ConfigMap', 'data["global-auth-url"]']]);
    expect(errors[0]?.message).toContain('503');
  });

  it('leaves an Ingress that opts out with enable-global-auth: "false" served', () => {
    const result = run([app, configMap('ingress-nginx', 'controller', { 'global-auth-url': 'http://127.0.0.1:9000/check' }), ingress('open', 'open.example.test', { 'enable-global-auth': 'false' })]);
    expect(rootOf(result, 'open.example.test')?.proxy).toBeDefined();
  });

  it('reads an empty global-auth-url as unset, as ingress-nginx does', () => {
    const result = run([app, configMap('ingress-nginx', 'controller', { 'global-auth-url': '' }), ...guarded]);
    expect(result.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    expect(rootOf(result, 'a.example.test')?.proxy).toBeDefined();
  });
});

describe('validate with a bad global-auth-url', () => {
  const manifests = [
    'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: controller, namespace: ingress-nginx}\ndata: {global-auth-url: "http://127.0.0.1:9/check"}',
    'apiVersion: v1\nkind: Service\nmetadata: {name: app, namespace: web}\nspec: {clusterIP: 10.96.0.10, ports: [{port: 80}]}',
    ...['a', 'b'].map((name) => `apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: ${name}, namespace: web}\nspec:\n  ingressClassName: nginx\n  rules: [{host: ${name}.example.test, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: app, port: {number: 80}}}}]}}]`),
  ].join('\n---\n');

  it('exits 1 with one error, at the ConfigMap key', async () => {
    const result = await runCli(['validate', '-f', '-', '--configmap', 'ingress-nginx/controller', '--format', 'json'], { stdin: manifests });
    expect(result.exitCode).toBe(1);
    const diagnostics = (JSON.parse(result.stdout) as { diagnostics: { severity: string; code: string; field?: string }[] }).diagnostics;
    expect(diagnostics.filter((d) => d.severity === 'error').map((d) => [d.code, d.field])).toEqual([['global-auth-url-unusable', 'data["global-auth-url"]']]);
  });
});
