import { managedFolders } from '../../src/apply/write.js';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import yaml from 'js-yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkConfig, type NginxCheck } from '../../src/apply/check.js';
import { upstreamName } from '../../src/translate/upstream-names.js';
import { runCli } from '../support/cli.js';
import { testNowText } from '../support/options.js';
import { fixturesRoot } from '../support/golden.js';
import { requireNginx } from '../support/nginx.js';

/**
 * Design §6: every value that reaches nginx syntax passes an allow-list. Each row puts one hostile value
 * into ONE field of an otherwise valid Ingress (or the controller ConfigMap), next to a second, valid
 * Ingress. The hostile value must be refused with an error that names the field, must not reach
 * nginx.conf in any form, must not take the valid Ingress down, and the config must pass `nginx -t`.
 *
 * Every hostile value carries the marker `pwned` right after the payload. Each field also has a control
 * row with a harmless value, which must be accepted and must show up in nginx.conf: that proves the field
 * really is rendered, so "the marker is absent" means the value was refused, not that it was never used.
 */

const marker = 'pwned';

const payloads: readonly (readonly [label: string, payload: string])[] = [
  ['semicolon', ';'],
  ['opening brace', '{'],
  ['closing brace', '}'],
  ['double quote', '"'],
  ['single quote', "'"],
  ['hash', '#'],
  ['newline and a new server block', '\n} server { listen 1; }'],
  ['nginx variable $host', '$host'],
  ['backslash', '\\'],
  ['space', ' '],
];

const validHost = 'app.example.test';
const annotation = (name: string) => `nginx.ingress.kubernetes.io/${name}`;
const annotationField = (name: string) => `metadata.annotations[${JSON.stringify(annotation(name))}]`;
const configMapField = (key: string) => `data[${JSON.stringify(key)}]`;

type Manifest = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** Secrets of the fixtures, reused: a server certificate for app.example.test and a backend CA. */
function fixtureSecret(fixture: string, file: string, name: string): Manifest {
  const documents = yaml.loadAll(readFileSync(join(fixturesRoot, fixture, 'input', file), 'utf8')) as Manifest[];
  const secret = documents.find((d) => d?.kind === 'Secret' && d.metadata?.name === name);
  if (!secret) throw new Error(`fixture ${fixture} has no Secret ${name}`);
  return secret;
}
const serverSecret = fixtureSecret('termination', 'app.yaml', 'app-tls');
const caSecret = fixtureSecret('hostile', 'hostile.yaml', 'trust');

/** A basic-auth Secret (user alice, password "secret"). */
function basicAuthSecret(name: string): Manifest {
  return { apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: 'web' }, stringData: { auth: 'alice:$apr1$3Q7c0Hzf$6CSsL8aDfJkYhPYAn4fuq1\n' } };
}

function renamed(secret: Manifest, name: string): Manifest {
  return { ...secret, metadata: { ...secret.metadata, name, namespace: 'web' } };
}

function service(name: string, clusterIP: string, ports: { name: string; port: number }[]): Manifest {
  return { apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: 'web' }, spec: { clusterIP, ports } };
}

interface Target {
  host: string;
  path: string;
  serviceName: string;
  port: { number: number } | { name: string };
  annotations: Record<string, string>;
  tls?: { hosts: string[]; secretName: string };
}

function ingress(name: string, target: Target): Manifest {
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: { name, namespace: 'web', annotations: target.annotations },
    spec: {
      ingressClassName: 'nginx',
      ...(target.tls && { tls: [target.tls] }),
      rules: [
        {
          host: target.host,
          http: {
            paths: [{ path: target.path, pathType: 'Prefix', backend: { service: { name: target.serviceName, port: target.port } } }],
          },
        },
      ],
    },
  };
}

const plainTarget: Target = {
  host: 'target.example.test',
  path: '/',
  serviceName: 'app',
  port: { number: 80 },
  annotations: {},
};

/** An HTTPS backend with verification on, so that every proxy-ssl-* annotation is rendered. */
const verifiedTarget: Target = {
  ...plainTarget,
  serviceName: 'secure',
  port: { number: 443 },
  annotations: {
    [annotation('backend-protocol')]: 'HTTPS',
    [annotation('proxy-ssl-secret')]: 'web/trust',
    [annotation('proxy-ssl-verify')]: 'on',
  },
};

interface Field {
  readonly name: string;
  /**
   * Payloads (by label) the field rightly accepts: a space in an auth realm or a header pattern, which
   * nginx gets quoted. Their rows prove nothing about refusal, so they are left out.
   */
  readonly accepts?: readonly string[];
  /** Where the value goes: into the target Ingress, or into the controller ConfigMap's data. */
  readonly place: (value: string) => { target: Target } | { configMap: Record<string, string> };
  /** The hostile value built around a payload; the marker follows the payload. */
  readonly hostile: (payload: string) => string;
  readonly expected: { readonly code: string; readonly field: string };
  /** A harmless value for the same place, and text that proves it reached nginx.conf. */
  readonly control: { readonly value: string; readonly renders: string };
}

const annotationRow = (
  name: string,
  hostile: (p: string) => string,
  control: Field['control'],
  base = verifiedTarget,
  accepts?: readonly string[],
): Field => ({
  name,
  place: (value) => ({ target: { ...base, annotations: { ...base.annotations, [annotation(name)]: value } } }),
  hostile,
  expected: { code: 'annotation-invalid', field: annotationField(name) },
  control,
  ...(accepts && { accepts }),
});

/** A plain target with these annotations (short names). */
const withAnnotations = (annotations: Record<string, string>, base: Target = plainTarget): Target => ({
  ...base,
  annotations: { ...base.annotations, ...Object.fromEntries(Object.entries(annotations).map(([name, value]) => [annotation(name), value])) },
});

/** A canary of the valid Ingress (same host and path), with these annotations. */
const canaryOfValid = (annotations: Record<string, string> = {}): Target =>
  withAnnotations({ canary: 'true', ...annotations }, { ...plainTarget, host: validHost });

const configMapRow = (
  key: string,
  hostile: (p: string) => string,
  control: Field['control'],
  others: Record<string, string> = {},
): Field => ({
  name: `ConfigMap ${key}`,
  place: (value) => ({ configMap: { ...others, [key]: value } }),
  hostile,
  expected: { code: 'configmap-invalid', field: configMapField(key) },
  control,
});

const fields: readonly Field[] = [
  {
    name: 'host',
    place: (value) => ({ target: { ...plainTarget, host: value } }),
    hostile: (p) => `a${p}${marker}.example.test`,
    expected: { code: 'host-invalid', field: 'spec.rules[0].host' },
    control: { value: `${marker}.example.test`, renders: `server_name ${marker}.example.test;` },
  },
  {
    name: 'path',
    place: (value) => ({ target: { ...plainTarget, path: value } }),
    hostile: (p) => `/a${p}${marker}`,
    expected: { code: 'path-invalid', field: 'spec.rules[0].http.paths[0].path' },
    control: { value: `/a-${marker}`, renders: `location /a-${marker}/` },
  },
  annotationRow('proxy-ssl-name', (p) => `ok${p}${marker}.example.test`, {
    value: `${marker}.example.test`,
    renders: `proxy_ssl_name ${marker}.example.test;`,
  }),
  annotationRow('proxy-ssl-ciphers', (p) => `HIGH${p}${marker}`, {
    value: `HIGH:!aNULL:!${marker}`,
    renders: `proxy_ssl_ciphers HIGH:!aNULL:!${marker};`,
  }),
  annotationRow('proxy-ssl-protocols', (p) => `TLSv1.2${p}${marker}`, {
    value: 'TLSv1.3',
    renders: 'proxy_ssl_protocols TLSv1.3;',
  }),
  annotationRow('proxy-ssl-secret', (p) => `web/trust${p}${marker}`, {
    value: `web/trust-${marker}`,
    renders: `proxy_ssl_trusted_certificate ca/web_trust-${marker}.crt;`,
  }),
  annotationRow(
    'backend-protocol',
    (p) => `HTTPS${p}${marker}`,
    { value: 'HTTPS', renders: `proxy_pass https://${upstreamName('web_secure_443')}_tls_` },
    { ...plainTarget, serviceName: 'secure', port: { number: 443 } },
  ),
  {
    name: 'service name',
    place: (value) => ({ target: { ...plainTarget, serviceName: value } }),
    hostile: (p) => `app${p}${marker}`,
    expected: { code: 'backend-unresolved', field: 'spec.rules[0].http.paths[0].backend.service.name' },
    control: { value: `app-${marker}`, renders: `upstream ${upstreamName(`web_app-${marker}_80`)} {` },
  },
  {
    name: 'service port name',
    place: (value) => ({ target: { ...plainTarget, port: { name: value } } }),
    hostile: (p) => `http${p}${marker}`,
    expected: { code: 'backend-unresolved', field: 'spec.rules[0].http.paths[0].backend.service.port.name' },
    // The Service's port named http-pwned is 8080.
    control: { value: `http-${marker}`, renders: 'server 10.96.8.10:8080' },
  },
  {
    name: 'spec.tls secretName',
    place: (value) => ({
      target: { ...plainTarget, host: `www.${validHost}`, tls: { hosts: [`www.${validHost}`], secretName: value } },
    }),
    hostile: (p) => `app-tls${p}${marker}`,
    expected: { code: 'secret-name-invalid', field: 'spec.tls[0].secretName' },
    control: { value: `app-tls-${marker}`, renders: `ssl_certificate tls/web_app-tls-${marker}.pem;` },
  },
  configMapRow('ssl-ciphers', (p) => `HIGH${p}${marker}`, {
    value: `HIGH:!aNULL:!${marker}`,
    renders: `ssl_ciphers HIGH:!aNULL:!${marker};`,
  }),
  configMapRow('ssl-protocols', (p) => `TLSv1.2${p}${marker}`, { value: 'TLSv1.3', renders: 'ssl_protocols TLSv1.3;' }),
  configMapRow(
    'proxy-real-ip-cidr',
    (p) => `10.1.0.0/16${p}${marker}`,
    { value: '10.1.0.0/16', renders: 'set_real_ip_from 10.1.0.0/16;' },
    // Without it the CIDRs are not rendered at all.
    { 'use-forwarded-headers': 'true' },
  ),
  configMapRow('hsts-max-age', (p) => `600${p}${marker}`, { value: '1234', renders: 'max-age=1234' }),
  configMapRow('proxy-body-size', (p) => `8m${p}${marker}`, { value: '7m', renders: 'client_max_body_size 7m;' }),
  configMapRow('proxy-next-upstream', (p) => `error${p}${marker}`, { value: 'error http_502', renders: 'proxy_next_upstream error http_502;' }),
  configMapRow('whitelist-source-range', (p) => `10.0.0.0/8${p}${marker}`, { value: '10.9.0.0/16', renders: '10.9.0.0/16 0;' }),
  // Paths and redirects.
  {
    name: 'path with use-regex',
    place: (value) => ({ target: { ...withAnnotations({ 'use-regex': 'true' }), path: value } }),
    hostile: (p) => `/a${p}${marker}`,
    expected: { code: 'path-invalid', field: 'spec.rules[0].http.paths[0].path' },
    control: { value: `/(${marker})/[0-9]+$`, renders: `location ~* "^/(${marker})/[0-9]+$"` },
  },
  annotationRow('rewrite-target', (p) => `/x${p}${marker}`, { value: `/${marker}`, renders: `/${marker} break;` }, plainTarget),
  annotationRow('app-root', (p) => `/app${p}${marker}`, { value: `/${marker}`, renders: `$scheme://$host$i2n_request_port/${marker};` }, plainTarget),
  annotationRow('permanent-redirect', (p) => `https://a.example/x${p}${marker}`, { value: `https://${marker}.example/`, renders: `return 301 https://${marker}.example/;` }, plainTarget),
  annotationRow('temporal-redirect', (p) => `https://a.example/x${p}${marker}`, { value: `https://${marker}.example/`, renders: `return 302 https://${marker}.example/;` }, plainTarget),
  annotationRow('x-forwarded-prefix', (p) => `/a${p}${marker}`, { value: `/${marker}`, renders: `X-Forwarded-Prefix /${marker};` }, plainTarget),
  annotationRow('upstream-vhost', (p) => `a${p}${marker}.example`, { value: `${marker}.example:8080`, renders: `Host ${marker}.example:8080;` }, plainTarget),
  annotationRow('server-alias', (p) => `a${p}${marker}.example.test`, { value: `${marker}.example.test`, renders: `server_name ${marker}.example.test target.example.test;` }, plainTarget),
  // Proxy tuning.
  annotationRow('proxy-body-size', (p) => `8m${p}${marker}`, { value: '7m', renders: 'client_max_body_size 7m;' }, plainTarget),
  annotationRow('proxy-read-timeout', (p) => `60${p}${marker}`, { value: '77', renders: 'proxy_read_timeout 77s;' }, plainTarget),
  annotationRow('proxy-next-upstream', (p) => `error${p}${marker}`, { value: 'error http_502', renders: 'proxy_next_upstream error http_502;' }, plainTarget),
  annotationRow('proxy-redirect-from', (p) => `http://a.example/${p}${marker}`, { value: `http://${marker}.example/`, renders: `proxy_redirect http://${marker}.example/ https://public.example/;` }, withAnnotations({ 'proxy-redirect-to': 'https://public.example/' })),
  annotationRow('proxy-redirect-to', (p) => `http://a.example/${p}${marker}`, { value: `https://${marker}.example/`, renders: `proxy_redirect http://internal.example/ https://${marker}.example/;` }, withAnnotations({ 'proxy-redirect-from': 'http://internal.example/' })),
  // CORS.
  annotationRow('cors-allow-origin', (p) => `https://a${p}${marker}.example`, { value: `https://${marker}.example`, renders: `https:\\/\\/${marker}\\.example` }, withAnnotations({ 'enable-cors': 'true' })),
  annotationRow('cors-allow-methods', (p) => `GET${p}${marker}`, { value: `GET, ${marker}`, renders: `"GET, ${marker}"` }, withAnnotations({ 'enable-cors': 'true' })),
  annotationRow('cors-allow-headers', (p) => `X-A${p}${marker}`, { value: `x-${marker}`, renders: `"x-${marker}"` }, withAnnotations({ 'enable-cors': 'true' })),
  annotationRow('cors-expose-headers', (p) => `X-A${p}${marker}`, { value: `x-${marker}`, renders: `"x-${marker}"` }, withAnnotations({ 'enable-cors': 'true' })),
  // Error pages.
  annotationRow('custom-http-errors', (p) => `404${p}${marker}`, { value: '418', renders: 'error_page 418 = @i2n_status_418;' }, plainTarget),
  annotationRow('default-backend', (p) => `app${p}${marker}`, { value: `app-${marker}`, renders: `@i2n_error_${upstreamName(`web_app-${marker}_80`)}_404` }, withAnnotations({ 'custom-http-errors': '404' })),
  // Access control.
  annotationRow('whitelist-source-range', (p) => `10.0.0.0/8${p}${marker}`, { value: '10.9.0.0/16', renders: '10.9.0.0/16 0;' }, plainTarget),
  annotationRow('denylist-source-range', (p) => `10.0.0.0/8${p}${marker}`, { value: '10.9.0.0/16', renders: '10.9.0.0/16 1;' }, plainTarget),
  annotationRow('auth-realm', (p) => `Realm${p}${marker}`, { value: `Realm ${marker}`, renders: `auth_basic "Realm ${marker}";` }, withAnnotations({ 'auth-type': 'basic', 'auth-secret': 'users' }), ['space']),
  annotationRow('auth-secret', (p) => `users${p}${marker}`, { value: `users-${marker}`, renders: `auth_basic_user_file auth/web_users-${marker}.htpasswd;` }, withAnnotations({ 'auth-type': 'basic' })),
  annotationRow('auth-tls-secret', (p) => `web/trust${p}${marker}`, { value: `web/trust-${marker}`, renders: `ssl_client_certificate ca/web_trust-${marker}.crt;` }, { ...plainTarget, host: `www.${validHost}`, tls: { hosts: [`www.${validHost}`], secretName: 'app-tls' } }),
  annotationRow('auth-tls-match-cn', (p) => `CN=a${p}${marker}`, { value: `CN=${marker}$`, renders: `!~ "CN=${marker}$"` }, withAnnotations({ 'auth-tls-secret': 'trust' }), ['space']),
  annotationRow('auth-tls-error-page', (p) => `https://a.example/${p}${marker}`, { value: `https://${marker}.example/cert`, renders: `error_page 495 496 = https://${marker}.example/cert;` }, withAnnotations({ 'auth-tls-secret': 'trust' })),
  annotationRow('auth-url', (p) => `http://a.example/${p}${marker}`, { value: `http://app-${marker}.web.svc.cluster.local/auth`, renders: `proxy_pass http://${upstreamName(`web_app-${marker}_80`)}/auth;` }, plainTarget),
  annotationRow('auth-signin', (p) => `https://a.example/${p}${marker}`, { value: `https://${marker}.example/start`, renders: `error_page 401 =302 https://${marker}.example/start?rd=` }, withAnnotations({ 'auth-url': 'http://app.web.svc.cluster.local/auth' })),
  annotationRow('auth-response-headers', (p) => `X-A${p}${marker}`, { value: `X-${marker}`, renders: `auth_request_set $i2n_auth_x_${marker} $upstream_http_x_${marker};` }, withAnnotations({ 'auth-url': 'http://app.web.svc.cluster.local/auth' })),
  annotationRow('limit-rps', (p) => `5${p}${marker}`, { value: '77', renders: 'rate=77r/s;' }, plainTarget),
  annotationRow('limit-whitelist', (p) => `10.0.0.0/8${p}${marker}`, { value: '10.7.0.0/16', renders: '10.7.0.0/16 1;' }, withAnnotations({ 'limit-rps': '5' })),
  // Canaries, of the valid Ingress.
  annotationRow('canary-by-header', (p) => `X-A${p}${marker}`, { value: `X-${marker}`, renders: `map $http_x_${marker} ` }, canaryOfValid()),
  annotationRow('canary-by-header-value', (p) => `a${p}${marker}`, { value: marker, renders: `"~^${marker}$"` }, canaryOfValid({ 'canary-by-header': 'X-Canary' }), ['space']),
  annotationRow('canary-by-header-pattern', (p) => `a${p}${marker}`, { value: `^(${marker}|b)$`, renders: `"~^(${marker}|b)$"` }, canaryOfValid({ 'canary-by-header': 'X-Canary' }), ['space']),
  annotationRow('canary-by-cookie', (p) => `a${p}${marker}`, { value: marker, renders: `(?i:${marker})=always` }, canaryOfValid()),
  annotationRow('canary-weight', (p) => `5${p}${marker}`, { value: '33', renders: `33% ${upstreamName('web_app_80')};` }, canaryOfValid()),
];

/** Everything the rows need besides the target: backends, Secrets (with `-pwned` twins for the controls), the valid Ingress. */
function manifests(target: Target, configMap: Record<string, string> | undefined): Manifest[] {
  return [
    service('app', '10.96.8.10', [
      { name: 'http', port: 80 },
      { name: `http-${marker}`, port: 8080 },
    ]),
    service(`app-${marker}`, '10.96.8.12', [{ name: 'http', port: 80 }]),
    service('secure', '10.96.8.11', [{ name: 'https', port: 443 }]),
    renamed(serverSecret, 'app-tls'),
    renamed(serverSecret, `app-tls-${marker}`),
    renamed(caSecret, 'trust'),
    renamed(caSecret, `trust-${marker}`),
    basicAuthSecret('users'),
    basicAuthSecret(`users-${marker}`),
    ingress('valid', { ...plainTarget, host: validHost, tls: { hosts: [validHost], secretName: 'app-tls' } }),
    ingress('target', target),
    ...(configMap
      ? [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'controller', namespace: 'ingress-nginx' }, data: configMap }]
      : []),
  ];
}

interface JsonDiagnostic {
  severity: string;
  code: string;
  resource: { kind: string; namespace?: string; name: string } | null;
  field: string | null;
  message: string;
}

interface Outcome {
  readonly exitCode: number;
  readonly diagnostics: readonly JsonDiagnostic[];
  readonly nginxConf: string;
  readonly keyFileNames: readonly string[];
  readonly check: NginxCheck;
}

let workDir: string;
let runDir: string;
let cases = 0;
beforeAll(async () => {
  workDir = await mkdtemp(join(tmpdir(), 'ingress2nginx-hostile-'));
  // Short and absolute: the run dir holds unix sockets (path limit) and must pass --run-dir's check.
  runDir = await mkdtemp('/tmp/i2n-hostile-');
});
afterAll(async () => {
  await rm(workDir, { recursive: true, force: true });
  await rm(runDir, { recursive: true, force: true });
});

/**
 * `nginx -t` per distinct output. Most hostile values of one field are refused the same way and so
 * render byte-identical configs; those share one run. Identical nginx.conf and key files give nginx
 * identical input (every path in the config is relative to it or is the shared run dir), so each case
 * still gets the verdict on exactly its own config.
 */
const checks = new Map<string, Promise<NginxCheck>>();
function nginxCheck(outDir: string, nginxConf: string, keyFiles: readonly [string, string][]): Promise<NginxCheck> {
  const digest = createHash('sha256').update(JSON.stringify([nginxConf, keyFiles])).digest('hex');
  let check = checks.get(digest);
  if (!check) {
    check = checkConfig(outDir, runDir, requireNginx().binary);
    checks.set(digest, check);
  }
  return check;
}

function renderCase(target: Target, configMap?: Record<string, string>): Promise<Outcome> {
  return renderDocuments(manifests(target, configMap), configMap !== undefined);
}

async function renderDocuments(documents: readonly Manifest[], withConfigMap: boolean): Promise<Outcome> {
  const dir = join(workDir, `case-${++cases}`);
  await mkdir(dir, { recursive: true });
  const input = join(dir, 'input.yaml');
  await writeFile(input, documents.map((m) => `---\n${yaml.dump(m, { lineWidth: -1 })}`).join(''));
  const output = join(dir, 'out');
  const result = await runCli([
    'render',
    ...['-f', input, '-o', output, '--format', 'json', '--run-dir', runDir, '--now', testNowText],
    ...['--stream-module', requireNginx().streamModuleFile ?? 'none'],
    ...(withConfigMap ? ['--configmap', 'ingress-nginx/controller'] : []),
  ]);
  expect(result.stderr).not.toContain('internal error');
  const nginxConf = await readFile(join(output, 'nginx.conf'), 'utf8');
  const keyFiles: [string, string][] = [];
  for (const folder of managedFolders) {
    if (!existsSync(join(output, folder))) continue;
    for (const file of (await readdir(join(output, folder))).sort()) {
      keyFiles.push([`${folder}/${file}`, await readFile(join(output, folder, file), 'utf8')]);
    }
  }
  return {
    exitCode: result.exitCode,
    diagnostics: (JSON.parse(result.stdout) as { diagnostics: JsonDiagnostic[] }).diagnostics,
    nginxConf,
    keyFileNames: keyFiles.map(([name]) => name),
    check: await nginxCheck(output, nginxConf, keyFiles),
  };
}

function placed(field: Field, value: string): [Target, Record<string, string> | undefined] {
  const where = field.place(value);
  return 'target' in where ? [where.target, undefined] : [plainTarget, where.configMap];
}

function expectValidIngressServed(outcome: Outcome): void {
  expect(outcome.nginxConf).toContain(`server_name ${validHost};`);
  expect(outcome.keyFileNames).toContain('tls/web_app-tls.pem');
  expect(outcome.diagnostics.filter((d) => d.resource?.name === 'valid')).toEqual([]);
  expect(outcome.check.output).toBe('');
  expect(outcome.check.ok).toBe(true);
}

describe.each(fields)('$name', (field) => {
  it('control: a harmless value is accepted and rendered', async () => {
    const outcome = await renderCase(...placed(field, field.control.value));
    expect(outcome.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    expect(outcome.exitCode).toBe(0);
    expect(outcome.nginxConf).toContain(field.control.renders);
    expectValidIngressServed(outcome);
  });

  it.each(payloads.filter(([label]) => !(field.accepts ?? []).includes(label)))('refuses %s', async (_label, payload) => {
    const value = field.hostile(payload);
    const outcome = await renderCase(...placed(field, value));
    expect(outcome.diagnostics).toContainEqual(
      expect.objectContaining({ severity: 'error', code: field.expected.code, field: field.expected.field }),
    );
    expect(outcome.exitCode).toBe(1);
    expect(outcome.nginxConf).not.toContain(marker);
    expect(outcome.keyFileNames.filter((name) => name.includes(marker))).toEqual([]);
    expectValidIngressServed(outcome);
  });
});

/**
 * Names of resources read from files are not checked by an API server, and they reach nginx.conf
 * (comments, upstream names, key file paths), so translate holds them to Kubernetes' naming rules.
 */
describe('names read from manifest files', () => {
  const namePayload = `\n} server { listen 1; } #${marker}`;

  function renderWith(edit: (documents: Manifest[]) => void): Promise<Outcome> {
    const documents = manifests(plainTarget, undefined);
    edit(documents);
    return renderDocuments(documents, false);
  }

  const target = (documents: Manifest[]): Manifest => {
    const found = documents.find((d) => d.kind === 'Ingress' && d.metadata.name === 'target');
    if (!found) throw new Error('no target Ingress');
    return found;
  };

  it('refuses a hostile Ingress metadata.name', async () => {
    const outcome = await renderWith((documents) => {
      target(documents).metadata.name = `target${namePayload}`;
    });
    expect(outcome.diagnostics).toContainEqual(expect.objectContaining({ severity: 'error', field: 'metadata.name' }));
    expect(outcome.exitCode).toBe(1);
    expect(outcome.nginxConf).not.toContain(marker);
    expectValidIngressServed(outcome);
  });

  it('refuses a hostile Ingress metadata.namespace', async () => {
    const outcome = await renderWith((documents) => {
      target(documents).metadata.namespace = `web;return 200 ${marker};`;
    });
    expect(outcome.diagnostics).toContainEqual(expect.objectContaining({ severity: 'error', field: 'metadata.namespace' }));
    expect(outcome.exitCode).toBe(1);
    expect(outcome.nginxConf).not.toContain(marker);
    expectValidIngressServed(outcome);
  });

  it('refuses a Secret whose hostile name matches a hostile secretName', async () => {
    const hostileName = `app-tls;return 200 ${marker};#`;
    const outcome = await renderWith((documents) => {
      documents.push(renamed(serverSecret, hostileName));
      target(documents).spec.rules[0].host = `www.${validHost}`;
      target(documents).spec.tls = [{ hosts: [`www.${validHost}`], secretName: hostileName }];
    });
    expect(outcome.diagnostics.some((d) => d.severity === 'error')).toBe(true);
    expect(outcome.exitCode).toBe(1);
    expect(outcome.nginxConf).not.toContain(marker);
    expectValidIngressServed(outcome);
  });
});
