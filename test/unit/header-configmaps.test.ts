import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { build } from '../../src/build/build.js';
import type { SourceObject } from '../../src/sources/snapshot.js';
import { quotedHeaderValue } from '../../src/translate/checks/allowlist.js';
import type { TranslateOptions } from '../../src/translate/options.js';
import { translate } from '../../src/translate/translate.js';
import { configMap, object, service } from '../support/gateway.js';
import { checkBuiltFiles, requireNginx } from '../support/nginx.js';
import { testTranslateOptions } from '../support/options.js';

/**
 * The header ConfigMaps: `add-headers`, `proxy-set-headers` and `hide-headers` of the controller
 * ConfigMap, and an Ingress's `custom-headers` with `global-allowed-response-headers`: where they render,
 * what they refuse, and that no value can leave its quoted string.
 */

function ingress(name: string, annotations: Record<string, string>, host = `${name}.example.test`, tls = false): SourceObject {
  const base = object('networking.k8s.io/v1', 'Ingress', 'web', name, {
    spec: {
      ingressClassName: 'nginx',
      ...(tls && { tls: [{ hosts: [host], secretName: 'missing-tls' }] }),
      rules: [{ host, http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'app', port: { number: 80 } } } }] } }],
    },
  });
  const prefixed = Object.fromEntries(Object.entries(annotations).map(([key, value]) => [`nginx.ingress.kubernetes.io/${key}`, value]));
  return { ...base, metadata: { ...base.metadata, annotations: prefixed } };
}

const controller = (data: Record<string, string>) => configMap('infra', 'controller', data);

function buildOf(objects: readonly SourceObject[], extra: Partial<TranslateOptions> = {}) {
  return build({ objects: [service('web', 'app', '10.96.0.10', [{ port: 80 }]), ...objects] }, { ...testTranslateOptions(), configMap: 'infra/controller', ...extra });
}

/** The lines of the location of `host` (its TLS server when it has one). */
function locationOf(conf: string, host: string): string {
  const server = conf.lastIndexOf(`server_name ${host};`);
  const start = conf.indexOf('location / {', server);
  return conf.slice(start, conf.indexOf('\n        }', start));
}

const httpBlock = (conf: string) => conf.slice(conf.indexOf('http {'), conf.indexOf('server {', conf.indexOf('http {')));

describe('quotedHeaderValue', () => {
  it.each([
    ['plain', 'expand', '"plain"'],
    ['DENY; frame "x" \\ y {z}', 'expand', '"DENY; frame \\"x\\" \\\\ y {z}"'],
    ['$host and ${request_id}', 'expand', '"${host} and ${request_id}"'],
    ['$http_x_team-$cookie_session', 'expand', '"${http_x_team}-${cookie_session}"'],
    ['cost: $5 ${x}', 'literal', '"cost: ${i2n_dollar}5 ${i2n_dollar}{x}"'],
  ] as const)('quotes %j (%s)', (value, variables, quoted) => {
    expect(quotedHeaderValue(value, variables, 'i2n_dollar')).toEqual({ ok: true, value: quoted });
  });

  it.each(['a\r\nSet-Cookie: x', 'tab\there', 'é', '$unknown_variable', '$', 'a $ b', '${host', '$i2n_best_host', 'x'.repeat(1025)])('refuses %j from an operator', (value) => {
    expect(quotedHeaderValue(value, 'expand', 'i2n_dollar').ok).toBe(false);
  });
});

describe('add-headers, proxy-set-headers and hide-headers', () => {
  const headers = {
    'add-headers': 'infra/response-headers',
    'proxy-set-headers': 'infra/request-headers',
    'hide-headers': 'X-Powered-By',
  };
  const objects = [
    controller(headers),
    configMap('infra', 'response-headers', { 'X-Frame-Options': 'DENY', 'X-Served-For': '$host', Server: 'mine', 'X-Bad': 'a\nb' }),
    configMap('infra', 'request-headers', { 'X-Team': 'payments', 'X-Client': '$remote_addr', Host: 'other.example' }),
    ingress('plain', {}),
    ingress('cors', { 'enable-cors': 'true' }),
    ingress('prefixed', { 'x-forwarded-prefix': '/p' }),
  ];

  it('adds response headers on every response at http level, replacing the backend\'s, and request headers to every backend', () => {
    const result = buildOf(objects);
    const http = httpBlock(result.files[0]!.contents);
    expect(http).toContain('    proxy_hide_header X-Frame-Options;\n    grpc_hide_header X-Frame-Options;\n');
    expect(http).toContain('    proxy_hide_header X-Powered-By;\n');
    expect(http).toContain('    add_header X-Frame-Options "DENY" always;\n    add_header X-Served-For "${host}" always;\n');
    expect(http).toContain('    proxy_set_header X-Client "${remote_addr}";\n    proxy_set_header X-Team "payments";\n');
    expect(http).not.toContain('mine');
    expect(http).not.toContain('other.example');
  });

  it('repeats them where a location sets its own (add_header and proxy_set_header are inherited all or nothing)', () => {
    const conf = buildOf(objects).files[0]!.contents;
    expect(locationOf(conf, 'cors.example.test')).toContain('add_header X-Frame-Options "DENY" always;');
    expect(locationOf(conf, 'plain.example.test')).not.toContain('add_header');
    expect(locationOf(conf, 'prefixed.example.test')).toContain('proxy_set_header X-Team "payments";');
    expect(locationOf(conf, 'plain.example.test')).not.toContain('proxy_set_header');
  });

  it("repeats them beside the affinity cookie's Set-Cookie, which is an add_header of the location's own", () => {
    const endpoints = object('discovery.k8s.io/v1', 'EndpointSlice', 'web', 'app-x', { addressType: 'IPv4', ports: [{ port: 8080 }], endpoints: [{ addresses: ['10.1.0.1'] }] }, { labels: { 'kubernetes.io/service-name': 'app' } });
    const conf = buildOf([...objects, endpoints, ingress('sticky', { affinity: 'cookie' })], { upstreams: 'endpoints' }).files[0]!.contents;
    const sticky = locationOf(conf, 'sticky.example.test');
    expect(sticky).toContain('add_header Set-Cookie $i2n_sticky_set_');
    expect(sticky).toContain('add_header X-Frame-Options "DENY" always;');
  });

  it('reports each refused header at its ConfigMap key, and a ConfigMap that is not there', () => {
    const result = buildOf(objects);
    expect(result.diagnostics.filter((d) => d.code === 'header-invalid').map((d) => [d.resource?.name, d.field])).toEqual([
      ['request-headers', 'data.Host'],
      ['response-headers', 'data.Server'],
      ['response-headers', 'data["X-Bad"]'],
    ]);
    const missing = buildOf([controller(headers)]);
    expect(missing.diagnostics.filter((d) => d.code === 'header-configmap-not-found').map((d) => d.field)).toEqual(['data["add-headers"]', 'data["proxy-set-headers"]']);
  });

  it('names the ConfigMaps as the operator\'s, for the cluster mode to follow in any namespace', () => {
    const { references } = translate({ objects }, { ...testTranslateOptions(), configMap: 'infra/controller' });
    expect(references).toEqual([
      { kind: 'ConfigMap', namespace: 'infra', name: 'controller' },
      { kind: 'ConfigMap', namespace: 'infra', name: 'request-headers', operator: true },
      { kind: 'ConfigMap', namespace: 'infra', name: 'response-headers', operator: true },
    ]);
  });

  it('repeats add-headers after HSTS in a TLS server, and nginx loads it all', async () => {
    const nginx = requireNginx();
    const runDir = join(tmpdir(), 'i2n-header-configmaps-run');
    const result = buildOf([...objects, ingress('secure', {}, 'secure.example.test', true)], {
      runDir,
      ...(nginx.streamModuleFile !== undefined && { streamModulePath: nginx.streamModuleFile }),
    });
    const conf = result.files[0]!.contents;
    const tlsServer = conf.slice(conf.lastIndexOf('server_name secure.example.test;'));
    expect(tlsServer).toMatch(/Strict-Transport-Security [^\n]+\n\s+add_header X-Frame-Options "DENY" always;/);
    expect(await checkBuiltFiles(result.files, runDir)).toMatchObject({ ok: true });
  });
});

describe('custom-headers', () => {
  const allowed = controller({ 'global-allowed-response-headers': 'X-Frame-Options,X-Price' });

  it('adds the ConfigMap\'s headers to the Ingress\'s locations, a "$" kept literal, HSTS and add-headers repeated', async () => {
    const nginx = requireNginx();
    const runDir = join(tmpdir(), 'i2n-header-configmaps-run');
    const result = buildOf(
      [
        configMap('infra', 'controller', { 'global-allowed-response-headers': 'X-Frame-Options,X-Price', 'add-headers': 'infra/response-headers' }),
        configMap('infra', 'response-headers', { 'X-Frame-Options': 'DENY', 'X-Global': 'yes' }),
        configMap('web', 'headers', { 'X-Frame-Options': 'SAMEORIGIN', 'X-Price': '$host costs $5' }),
        ingress('custom', { 'custom-headers': 'headers' }),
      ],
      { runDir, ...(nginx.streamModuleFile !== undefined && { streamModulePath: nginx.streamModuleFile }) },
    );
    expect(result.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    const conf = result.files[0]!.contents;
    const location = locationOf(conf, 'custom.example.test');
    expect(location).toContain('add_header X-Global "yes" always;\n            add_header X-Frame-Options "SAMEORIGIN" always;\n            add_header X-Price "${i2n_dollar}host costs ${i2n_dollar}5" always;');
    expect(location).not.toContain('"DENY"');
    expect(location).toContain('proxy_hide_header X-Price;');
    expect(conf).toContain('geo $remote_addr $i2n_dollar {\n        default "$";');
    expect(await checkBuiltFiles(result.files, runDir)).toMatchObject({ ok: true });
  });

  it.each([
    ['a header not in global-allowed-response-headers', { 'X-Other': 'x' }, 'web/headers', 'global-allowed-response-headers'],
    ['a header nginx writes itself', { Server: 'x' }, 'web/headers', 'nginx writes itself'],
    ['a value with a line break', { 'X-Price': 'a\r\nSet-Cookie: b' }, 'web/headers', 'printable ASCII'],
    ['a ConfigMap that is not there', undefined, 'web/absent', 'not in the input'],
    ['a ConfigMap in another namespace', { 'X-Price': '1' }, 'infra/headers', 'another namespace'],
  ])('answers 503 on the Ingress\'s paths for %s, with an error at the annotation', (_, data, reference, words) => {
    const [namespace = '', name = ''] = reference.split('/');
    const result = buildOf([allowed, ...(data ? [configMap(namespace, name, data)] : []), ingress('custom', { 'custom-headers': reference })]);
    const location = locationOf(result.files[0]!.contents, 'custom.example.test');
    expect(location).toContain('return 503;');
    expect(location).not.toContain('proxy_pass');
    const errors = result.diagnostics.filter((d) => d.code === 'custom-headers-denied');
    expect(errors.map((d) => d.field)).toEqual(['metadata.annotations["nginx.ingress.kubernetes.io/custom-headers"]']);
    expect(errors[0]?.message).toContain(words);
  });

  it('is followed by the cluster mode as the Ingress\'s reference', () => {
    const { references } = translate({ objects: [allowed, configMap('web', 'headers', { 'X-Price': '1' }), ingress('custom', { 'custom-headers': 'headers' })] }, { ...testTranslateOptions(), configMap: 'infra/controller' });
    expect(references).toContainEqual({ kind: 'ConfigMap', namespace: 'web', name: 'headers' });
  });
});
