import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { build } from '../../src/build/build.js';
import type { SourceObject } from '../../src/sources/snapshot.js';
import type { TranslateOptions } from '../../src/translate/options.js';
import { configMap, object, service } from '../support/gateway.js';
import { checkBuiltFiles, requireNginx } from '../support/nginx.js';
import { testTranslateOptions } from '../support/options.js';

/** `enable-access-log`, `enable-rewrite-log` and ConfigMap `log-format-upstream`, beside the request-metrics line. */

function ingress(name: string, annotations: Record<string, string>): SourceObject {
  const base = object('networking.k8s.io/v1', 'Ingress', 'web', name, {
    spec: {
      ingressClassName: 'nginx',
      rules: [{ host: `${name}.example.test`, http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'app', port: { number: 80 } } } }] } }],
    },
  });
  const prefixed = Object.fromEntries(Object.entries(annotations).map(([key, value]) => [`nginx.ingress.kubernetes.io/${key}`, value]));
  return { ...base, metadata: { ...base.metadata, annotations: prefixed } };
}

function buildOf(data: Record<string, string>, extra: Partial<TranslateOptions>) {
  const objects = [service('web', 'app', '10.96.0.10', [{ port: 80 }]), ingress('quiet', { 'enable-access-log': 'false', 'enable-rewrite-log': 'true' }), ingress('loud', {}), configMap('infra', 'controller', data)];
  return build({ objects }, { ...testTranslateOptions(), configMap: 'infra/controller', ...extra });
}

function locationOf(conf: string, host: string): string {
  const start = conf.indexOf('location / {', conf.indexOf(`server_name ${host};`));
  return conf.slice(start, conf.indexOf('\n        }', start));
}

describe('access log settings', () => {
  it('turns the access log off where enable-access-log is false, and rewrite_log on where asked', () => {
    const conf = buildOf({}, { accessLog: '/var/log/nginx/access.log' }).files[0]!.contents;
    expect(locationOf(conf, 'quiet.example.test')).toContain('access_log off;');
    expect(locationOf(conf, 'quiet.example.test')).toContain('rewrite_log on;');
    expect(locationOf(conf, 'loud.example.test')).not.toMatch(/access_log|rewrite_log/);
  });

  it('keeps the request-metrics line in a location without access log', () => {
    const conf = buildOf({}, { accessLog: '/var/log/nginx/access.log', requestLog: '/tmp/i2n-requests.log' }).files[0]!.contents;
    expect(locationOf(conf, 'quiet.example.test')).toContain('access_log /tmp/i2n-requests.log i2n_request buffer=64k flush=1s;');
    expect(locationOf(conf, 'quiet.example.test')).not.toContain('access_log off;');
  });

  it('writes log-format-upstream with ingress-nginx\'s variables mapped to ours, and nginx loads it', async () => {
    const nginx = requireNginx();
    const runDir = join(tmpdir(), 'i2n-access-log-run');
    const result = buildOf({ 'log-format-upstream': '$the_real_ip "$request" $status $req_id [$proxy_upstream_name] $http_x_team' }, {
      accessLog: '/tmp/i2n-access.log',
      requestLog: '/tmp/i2n-requests.log',
      runDir,
      ...(nginx.streamModuleFile !== undefined && { streamModulePath: nginx.streamModuleFile }),
    });
    expect(result.files[0]!.contents).toContain(`    log_format upstreaminfo '\${remote_addr} "\${request}" \${status} \${i2n_request_id} [\${proxy_upstream_name}] \${http_x_team}';\n`);
    expect(await checkBuiltFiles(result.files, runDir)).toMatchObject({ ok: true });
  });

  it.each([`$status'; error_log /tmp/x`, '$namespace $status', '$status \\x', '$ alone', 'a\nb'])('refuses the format %j and keeps the default', (format) => {
    const result = buildOf({ 'log-format-upstream': format }, { accessLog: '/var/log/nginx/access.log' });
    expect(result.diagnostics.filter((d) => d.code === 'configmap-invalid').map((d) => d.field)).toEqual(['data["log-format-upstream"]']);
    expect(result.files[0]!.contents).toContain("log_format upstreaminfo '$remote_addr - $remote_user");
  });
});
