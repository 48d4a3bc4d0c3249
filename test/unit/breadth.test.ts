import { describe, expect, it } from 'vitest';
import { build } from '../../src/build/build.js';
import { parseIngressAnnotations } from '../../src/translate/ingress/annotations/index.js';
import type { SourceObject } from '../../src/sources/snapshot.js';
import type { TranslateOptions } from '../../src/translate/options.js';
import { configMap, object, service } from '../support/gateway.js';
import { locationBusySize } from '../../src/translate/ingress/busy-buffers.js';
import { fastCgiValue } from '../../src/translate/ingress/annotations/fastcgi.js';
import { testTranslateOptions } from '../support/options.js';

/**
 * Decisions of the second round of migration breadth, read from the rendered nginx.conf: how redirects
 * write their target.
 */

function ingress(name: string, host: string, annotations: Record<string, string>, path = '/'): SourceObject {
  const base = object('networking.k8s.io/v1', 'Ingress', 'web', name, {
    spec: { ingressClassName: 'nginx', rules: [{ host, http: { paths: [{ path, pathType: 'Prefix', backend: { service: { name: 'app', port: { number: 80 } } } }] } }] },
  });
  return { ...base, metadata: { ...base.metadata, annotations: Object.fromEntries(Object.entries(annotations).map(([k, v]) => [`nginx.ingress.kubernetes.io/${k}`, v])) } };
}

const app = service('web', 'app', '10.96.0.10', [{ port: 80 }]);

function conf(objects: readonly SourceObject[], extra: Partial<TranslateOptions> = {}): string {
  const result = build({ objects: [app, ...objects] }, { ...testTranslateOptions(), ...extra });
  return result.files.find((f) => f.path === 'nginx.conf')!.contents;
}

/** The TLS server block of `host`. */
function serverOf(text: string, host: string): string {
  const start = text.lastIndexOf(`server_name ${host};`);
  return text.slice(start, text.indexOf('\n    }\n', start));
}

describe('use-port-in-redirects and preserve-trailing-slash', () => {
  it('names the HTTPS port even when it is 443 with use-port-in-redirects, and never otherwise on 443', () => {
    const text = conf(
      [
        ingress('ported', 'ported.example.test', { 'force-ssl-redirect': 'true', 'use-port-in-redirects': 'true' }),
        ingress('plain', 'plain.example.test', { 'force-ssl-redirect': 'true', 'preserve-trailing-slash': 'true' }),
      ],
      { httpsPort: 443 },
    );
    // Each host's plain HTTP: one of them in the shared redirect server, the other (another shape) in its own.
    expect(text).toContain('return 308 https://$host:443$i2n_redirect_uri;');
    expect(text).toContain('return 308 https://$host$request_uri;');
    // Only where the location serves (its TLS server): its plain HTTP only redirects.
    expect(text.match(/port_in_redirect on;/g)).toHaveLength(1);
    expect(serverOf(text, 'plain.example.test')).not.toContain('port_in_redirect');
    expect(text).toContain('    port_in_redirect off;\n');
  });

  it('renders the trimmed URI only when a redirect uses it', () => {
    expect(conf([ingress('plain', 'plain.example.test', { 'force-ssl-redirect': 'true', 'preserve-trailing-slash': 'true' })])).not.toContain('$i2n_redirect_uri');
    expect(conf([ingress('trimmed', 'trimmed.example.test', { 'force-ssl-redirect': 'true' })])).toContain('map $request_uri $i2n_redirect_uri {');
  });
});

describe('connection-proxy-header', () => {
  const parsed = (value: string) => parseIngressAnnotations({ 'nginx.ingress.kubernetes.io/connection-proxy-header': value });

  it.each([['close'], [' keep-alive ']])('accepts %s, as ingress-nginx does', (value) => {
    expect(parsed(value).value.proxy.connectionHeader).toBe(value.trim());
    expect(parsed(value).issues).toEqual([]);
  });

  it.each([['upgrade'], ['close;'], ['Close'], ['$http_connection']])('rejects %s, keeping the default', (value) => {
    expect(parsed(value).value.proxy.connectionHeader).toBeUndefined();
    expect(parsed(value).issues).toEqual([expect.objectContaining({ code: 'annotation-invalid', leavesOut: false })]);
  });

  it('sets the header in the locations of the Ingress, repeating the others nginx would not inherit', () => {
    const text = conf([ingress('closing', 'closing.example.test', { 'connection-proxy-header': 'close' }), ingress('plain', 'plain.example.test', {})]);
    expect(serverOf(text, 'closing.example.test')).toContain('proxy_set_header Connection close;');
    expect(serverOf(text, 'closing.example.test')).toContain('proxy_set_header X-Request-ID $i2n_request_id;');
    expect(serverOf(text, 'plain.example.test')).not.toContain('proxy_set_header');
  });
});

describe('proxy-busy-buffers-size', () => {
  const buffers = { size: '4k', number: 4 };

  it('takes a busy size from one buffer to all buffers but one, else the ConfigMap\'s when it fits, else one buffer', () => {
    expect(locationBusySize(buffers, '12k', undefined)).toEqual({ busySize: '12k', annotationUnfit: false });
    expect(locationBusySize(buffers, '4k', '16k')).toEqual({ busySize: '4k', annotationUnfit: false });
    expect(locationBusySize(buffers, '16k', '8k')).toEqual({ annotationUnfit: true });
    expect(locationBusySize(buffers, '2k', undefined)).toEqual({ annotationUnfit: true });
    expect(locationBusySize(buffers, undefined, '16k')).toEqual({ busySize: '4k', annotationUnfit: false });
    expect(locationBusySize({ size: '4k', number: 3 }, undefined, undefined)).toEqual({ busySize: '4k', annotationUnfit: false });
  });

  it('says so at the Ingress and renders what nginx loads; the ConfigMap\'s is checked against its own buffers', () => {
    const objects = [ingress('busy', 'busy.example.test', { 'proxy-busy-buffers-size': '64k' }), ingress('fits', 'fits.example.test', { 'proxy-busy-buffers-size': '8k' })];
    const result = build({ objects: [app, ...objects] }, testTranslateOptions());
    expect(result.diagnostics.filter((d) => d.severity === 'error').map((d) => [d.code, d.resource?.name, String(d.field)])).toEqual([
      ['annotation-invalid', 'busy', expect.stringContaining('proxy-busy-buffers-size')],
    ]);
    const text = result.files[0]!.contents;
    expect(serverOf(text, 'fits.example.test')).toContain('proxy_busy_buffers_size 8k;');
    expect(serverOf(text, 'busy.example.test')).not.toContain('proxy_busy_buffers_size');
    const data = { 'proxy-buffers-number': '8', 'proxy-busy-buffers-size': '24k' };
    const withConfigMap = build({ objects: [app, configMap('infra', 'controller', data), ingress('few', 'few.example.test', { 'proxy-buffers-number': '3' })] }, testTranslateOptions({ configMap: 'infra/controller' }));
    expect(withConfigMap.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    expect(withConfigMap.files[0]!.contents).toContain('    proxy_busy_buffers_size 24k;\n');
    // 24k does not fit three 4k buffers: the location says one buffer.
    expect(serverOf(withConfigMap.files[0]!.contents, 'few.example.test')).toContain('proxy_busy_buffers_size 4k;');
    const unfit = build({ objects: [app, configMap('infra', 'controller', { 'proxy-busy-buffers-size': '16k' })] }, testTranslateOptions({ configMap: 'infra/controller' }));
    expect(unfit.diagnostics.map((d) => d.code)).toContain('configmap-invalid');
    expect(unfit.files[0]!.contents).not.toContain('proxy_busy_buffers_size');
  });
});

describe('service-upstream', () => {
  const slice = object('discovery.k8s.io/v1', 'EndpointSlice', 'web', 'app-1', {
    addressType: 'IPv4',
    ports: [{ port: 8080 }],
    endpoints: [{ addresses: ['10.1.0.5'], conditions: { ready: true } }],
  }, { labels: { 'kubernetes.io/service-name': 'app' } });

  it('reaches the cluster IP in an upstream block of its own with --upstreams endpoints, and says stickiness cannot hold', () => {
    const result = build(
      { objects: [app, slice, ingress('direct', 'direct.example.test', {}), ingress('via-ip', 'via-ip.example.test', { 'service-upstream': 'true', 'upstream-hash-by': '$arg_x' })] },
      testTranslateOptions({ upstreams: 'endpoints' }),
    );
    const upstreams = result.model.http.upstreams.map((u) => [u.name, u.servers.map((s) => s.address)]);
    expect(upstreams).toEqual(expect.arrayContaining([[expect.stringMatching(/_web_app_80$/), ['10.1.0.5:8080']], [expect.stringMatching(/_web_app_80_cluster-ip$/), ['10.96.0.10:80']]]));
    expect(result.diagnostics.filter((d) => d.code === 'balancing-needs-endpoints').map((d) => d.resource?.name)).toEqual(['via-ip']);
  });

  it('changes nothing with --upstreams service', () => {
    const result = build({ objects: [app, ingress('via-ip', 'via-ip.example.test', { 'service-upstream': 'true' })] }, testTranslateOptions());
    expect(result.model.http.upstreams.map((u) => u.name)).toEqual([expect.stringMatching(/_web_app_80$/)]);
  });
});

describe('auth-keepalive', () => {
  const auth = service('web', 'auth', '10.96.0.20', [{ port: 8080 }]);
  const authUrl = 'http://auth.web.svc.cluster.local:8080/check';

  it('gives an auth Service a block of its own with the annotations\' keepalive, as ingress-nginx does', () => {
    const result = build({ objects: [app, auth, ingress('kept', 'kept.example.test', { 'auth-url': authUrl, 'auth-keepalive': '8', 'auth-keepalive-timeout': '30' })] }, testTranslateOptions());
    const text = result.files[0]!.contents;
    expect(text).toMatch(/upstream (\w+_web_auth_8080_auth-keepalive-8-1000-30) \{\n {8}server 10\.96\.0\.20:8080;\n {8}keepalive 8;\n {8}keepalive_requests 1000;\n {8}keepalive_timeout 30s;\n {4}\}/);
    expect(text).toMatch(/proxy_pass http:\/\/\w+_web_auth_8080_auth-keepalive-8-1000-30\/check;/);
  });

  it('leaves keepalive as it is, with a warning, when the requests or timeout are 0 or the target is no Service', () => {
    const off = build({ objects: [app, auth, ingress('off', 'off.example.test', { 'auth-url': authUrl, 'auth-keepalive': '8', 'auth-keepalive-requests': '0' })] }, testTranslateOptions());
    expect(off.diagnostics.map((d) => d.code)).toContain('auth-keepalive-off');
    expect(off.files[0]!.contents).not.toContain('auth-keepalive-');
    const address = build({ objects: [app, ingress('ip', 'ip.example.test', { 'auth-url': 'http://192.0.2.10/check', 'auth-keepalive': '8' })] }, testTranslateOptions());
    expect(address.diagnostics.map((d) => d.code)).toContain('auth-keepalive-unavailable');
  });
});

describe('FastCGI', () => {
  it.each([
    ['/srv/app$fastcgi_script_name', '/srv/app${fastcgi_script_name}'],
    ['${document_root}/index.php', '${document_root}/index.php'],
    ['production', 'production'],
    ['', ''],
  ])('takes the parameter value %j', (value, rendered) => {
    expect(fastCgiValue(value)).toBe(rendered);
  });

  it.each([['a b'], ['x";'], ['$unknown_variable'], ['${host'], ['}'], ['$'], ['a\nb']])('refuses the parameter value %j', (value) => {
    expect(fastCgiValue(value)).toBeUndefined();
  });

  it('renders fastcgi_pass with the standard parameters, the ConfigMap\'s replacing one of the same name, and drops what fastcgi_next_upstream lacks', () => {
    const params = configMap('web', 'params', { SCRIPT_NAME: '/index.php', SCRIPT_FILENAME: '$document_root$fastcgi_script_name' });
    const php = ingress('php', 'php.example.test', { 'backend-protocol': 'fcgi', 'fastcgi-params-configmap': 'params', 'fastcgi-index': 'index.php', 'proxy-next-upstream': 'error http_502' });
    const text = serverOf(conf([params, php]), 'php.example.test');
    expect(text).toContain('fastcgi_pass yt_web_app_80;');
    expect(text).toContain('fastcgi_param SCRIPT_FILENAME "${document_root}${fastcgi_script_name}";');
    expect(text.match(/fastcgi_param SCRIPT_NAME /g)).toHaveLength(1);
    expect(text).toContain('fastcgi_param HTTPS $https if_not_empty;');
    expect(text).toContain('fastcgi_index "index.php";');
    expect(text).toContain('fastcgi_next_upstream error;');
    expect(text).not.toContain('proxy_pass');
  });

  it('denies the paths when a parameter is refused, and warns when the FastCGI annotations come without FCGI', () => {
    const params = configMap('web', 'params', { SCRIPT_FILENAME: '$request_body' });
    const denied = build({ objects: [app, params, ingress('php', 'php.example.test', { 'backend-protocol': 'FCGI', 'fastcgi-params-configmap': 'params' })] }, testTranslateOptions());
    expect(denied.diagnostics.map((d) => d.code)).toContain('fastcgi-params-denied');
    expect(serverOf(denied.files[0]!.contents, 'php.example.test')).toContain('return 503;');
    const ignored = build({ objects: [app, ingress('web', 'web.example.test', { 'fastcgi-index': 'index.php' })] }, testTranslateOptions());
    expect(ignored.diagnostics.map((d) => d.code)).toContain('fastcgi-ignored');
  });
});
