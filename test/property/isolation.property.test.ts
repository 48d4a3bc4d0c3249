import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Diagnostic } from '../../src/model/diagnostics.js';
import type { Location, NginxConfig } from '../../src/model/nginx.js';
import { build } from '../../src/build/build.js';
import type { SourceObject } from '../../src/sources/snapshot.js';
import type { TranslateOptions } from '../../src/translate/options.js';
import { listenedPorts } from '../../src/build/listen-ports.js';
import { configMap, gateway, object, passthrough, terminate, tlsRoute } from '../support/gateway.js';
import { checkBuiltFiles, requireNginx } from '../support/nginx.js';
import { createCa, issueCertificate } from '../support/pki.js';
import { daysFromTestNow, testTranslateOptions } from '../support/options.js';

/**
 * Safety properties over random mixes of valid and broken resources, checked with a real `nginx -t`:
 * - the config always loads (one tenant's bad input never fails everyone's reload);
 * - no marker text from any input reaches nginx.conf or a file name (no injection);
 * - no resource takes a host name from an older claim (no hijack), and a terminated name under a
 *   wildcard claim stays terminated;
 * - an Ingress about which nothing is reported is served as written;
 * - with first-namespace-owns-host, every location of a host (Ingress or HTTPRoute) is of the namespace
 *   of the oldest resource that asks for the host;
 * - operator ports outrank tenants: no tenant Gateway listener takes a port of the TCP services
 *   ConfigMap, and nothing nginx binds is a port the Pod already uses (`reservedPorts`);
 * - HTTPRoute filters never make nginx write a framing or hop-by-hop header, and no redirect is built
 *   from the decoded URI.
 * `I2N_PROPERTY_RUNS` sets the number of cases (`npm run test:property` runs many more).
 */

const runs = Number(process.env.I2N_PROPERTY_RUNS ?? 40);
const marker = 'I2NMARK';
const runDir = '/tmp/i2n-property';
const httpsTarget = `unix:${runDir}/https-443.sock`;

const namespaces = ['team-a', 'team-b', 'team-c'] as const;
const exactHosts = ['a.example.test', 'ab.example.test', 'x.a.example.test', 'default', 'include', 'other.test'] as const;
const wildcardHosts = ['*.example.test', '*.a.example.test'] as const;
const hosts = [...exactHosts, ...wildcardHosts] as const;
/** The last one is a path only as a regex (`use-regex`); without it, it is refused. */
const paths = ['/', '/api', '/.well-known/acme-challenge', '/v[0-9]+/(.*)'] as const;
/** Host names no certificate carries: they must be refused, and must not take anything with them. */
const hostileHosts = [`${marker};.example.test`, `x}${marker}`, `${marker}.example.test\n`];
const timestamps = ['2024-01-01T00:00:00Z', '2024-06-01T00:00:00Z', '2025-01-01T00:00:00Z', ''] as const;
const secrets = ['good', 'wrong-host', 'garbage', 'expired', 'weak-rsa', 'sha1'] as const;
const services = ['web', 'ext', 'headless', 'missing'] as const;
const externalNames = ['api.example.org', '127.0.0.1', 'localhost', 'metadata.google.internal', '2130706433', 'does-not-resolve.invalid'];

/** Annotation values: ordinary ones, invalid ones, and hostile ones that carry the marker. */
const annotationValues: Record<string, readonly string[]> = {
  'ssl-redirect': ['true', 'false', `${marker};`],
  'force-ssl-redirect': ['true', 'false'],
  'backend-protocol': ['HTTP', 'HTTPS', 'GRPC', 'FCGI', `${marker}`],
  'proxy-ssl-verify': ['on', 'off'],
  'proxy-ssl-secret': ['team-a/good', `x/${marker}}`],
  'proxy-ssl-name': ['api.example.org', `${marker};evil`],
  'proxy-ssl-ciphers': ['HIGH', 'BOGUS', `${marker};`],
  'proxy-ssl-protocols': ['TLSv1.3', marker],
  // Snippets are off here: no text of theirs may reach nginx.conf (snippets.property.test.ts allows them).
  'configuration-snippet': [`return 200 ${marker};`],
  'server-snippet': [`location /${marker} { return 200; }`],
  'stream-snippet': [`server { listen 1; return ${marker}; }`],
  'auth-snippet': [`proxy_set_header X-${marker} 1;`],
  canary: ['true'],
  'canary-weight': ['0', '30', '100', `${marker}`],
  'canary-by-header': ['X-Canary', `X-${marker};`],
  'canary-by-header-pattern': ['^(beta|gamma)$', `(${marker}+)+`, `"${marker}`, '(a|a)*$', '((a{999}){999}){999}'],
  'canary-by-cookie': ['beta', `${marker};`],
  'use-regex': ['true', 'false'],
  'rewrite-target': ['/', '/$1', `/$${marker}`, `/a;${marker}`],
  'app-root': ['/app', `/app;${marker}`],
  'permanent-redirect': ['https://elsewhere.example/x', `https://a.example/${marker}"`],
  'temporal-redirect': ['http://elsewhere.example', `https://$host/${marker}`],
  'from-to-www-redirect': ['true'],
  'server-alias': ['ab.example.test', 'alias.example.test, other.test', `${marker}.test;`],
  'x-forwarded-prefix': ['/prefix', `/p ${marker}`],
  'upstream-vhost': ['internal.example:8080', `$host${marker}`],
  'proxy-body-size': ['8m', '0', `1m;${marker}`],
  'proxy-read-timeout': ['120', `${marker}`],
  'proxy-buffers-number': ['3', '8', '2', '1024'],
  'proxy-buffer-size': ['16k', '2m', '1m', '0'],
  'proxy-next-upstream': ['error timeout http_502', 'off', `error ${marker}`],
  'proxy-redirect-from': ['http://internal/', 'default', `http://${marker}/"`],
  'proxy-redirect-to': ['https://public/'],
  'enable-cors': ['true'],
  'cors-allow-origin': ['*', 'https://a.example.test, https://*.example.test', `https://${marker}".example`],
  'custom-http-errors': ['404,503', `404,${marker}`],
  'default-backend': ['web', 'missing', `web${marker}`],
  'whitelist-source-range': ['10.0.0.0/8', '127.0.0.1', `10.0.0.0/8;${marker}`],
  'denylist-source-range': ['192.0.2.0/24'],
  'auth-type': ['basic', 'digest'],
  'auth-secret': ['users', 'missing', `users;${marker}`],
  'auth-tls-secret': ['good', 'missing', 'garbage'],
  'auth-tls-verify-client': ['on', 'optional', 'optional_no_ca', 'off'],
  'auth-tls-match-cn': ['CN=(alice|bob)$', `CN=${marker}"; }`, 'CN=(a+)+', 'CN=(.*a){12}$'],
  'auth-url': [
    'http://web.team-a.svc.cluster.local/auth',
    'http://web.team-b.svc.cluster.local/auth',
    'https://$host/oauth2/auth',
    'http://$http_host/check',
    `http://x/${marker};`,
    'http://169.254.169.254/',
    'http://[fd00:ec2::254]/',
    'http://[64:ff9b::a9fe:a9fe]/',
  ],
  'auth-signin': ['https://$host/oauth2/start'],
  'mirror-target': ['http://web.team-a.svc.cluster.local$request_uri', 'https://mirror.example.org/copy?$args', `http://x/${marker};`, 'http://$host/', 'http://169.254.169.254/', `http://web.team-b.svc.cluster.local$${marker}`],
  'mirror-request-body': ['on', 'off', `${marker}`],
  'auth-cache-key': ['$http_authorization$cookie_session', `$${marker}`, `$http_x"${marker}`],
  'auth-cache-duration': ['200 202 401 5m', '200 1m, any 10s', `200 5m;${marker}`],
  'auth-request-redirect': ['https://a.example.test/back', `/x"${marker}`],
  'auth-signin-redirect-param': ['return_to', `${marker}=`],
  'auth-always-set-cookie': ['true', 'false'],
  'enable-global-auth': ['false', 'true'],
  'ssl-ciphers': ['ECDHE-ECDSA-AES128-GCM-SHA256:HIGH', 'BOGUS', `HIGH;${marker}`, '!ALL'],
  'ssl-prefer-server-ciphers': ['true', 'false', marker],
  'relative-redirects': ['true', 'false', `${marker};`],
  'mirror-host': ['shadow.example.org:8080', `${marker};`],
  'limit-rps': ['5', '0', `${marker}`],
  'limit-connections': ['10'],
  'limit-whitelist': ['127.0.0.1', `${marker}`],
  'custom-headers': ['headers', 'team-b/hostile-headers', 'missing', `${marker}`],
  'proxy-cookie-domain': ['backend.internal $host', 'off', `${marker}; x`, `a.example $${marker}`],
  'proxy-cookie-path': ['/app/ /', `/a ${marker}{`, `/a /b;${marker}`],
  'enable-access-log': ['false', 'true', `${marker};`],
  'enable-rewrite-log': ['true', `${marker}`],
  'preserve-trailing-slash': ['true', 'false', `${marker};`],
  'use-port-in-redirects': ['true', 'false', `${marker}`],
  'connection-proxy-header': ['close', 'keep-alive', `close;${marker}`, '$http_connection'],
  'proxy-busy-buffers-size': ['8k', '12k', '1k', '64k', `8k;${marker}`],
  'service-upstream': ['true', 'false', `${marker}`],
  'auth-keepalive': ['4', '0', '-1', `${marker}`],
  'auth-keepalive-requests': ['2', '0', `${marker}`],
  'auth-keepalive-timeout': ['30', '0', `30s;${marker}`],
  'fastcgi-index': ['index.php', `index.php;${marker}`, `"${marker}`],
  'fastcgi-params-configmap': ['fastcgi-params', 'team-b/fastcgi-params', 'missing', `${marker}`],
};

/**
 * The header ConfigMaps: usable entries that try to leave their quoted string (they must stay inside,
 * and nginx must load them), and entries that carry the marker and must be refused.
 */
const headerConfigMaps = {
  response: { 'X-Frame-Options': 'DENY', 'X-Host': '$host', 'X-Tricky': '"; } server { listen 1; \\', [`X-${marker}{`]: '1', 'X-Crlf': `a\r\nX-${marker}: 1`, 'X-Var': `$${marker}` },
  request: { 'X-Team': 'payments ${request_id}', [`X-${marker};`]: '1', 'X-Var': `\${${marker}}`, Host: marker },
  tenant: { 'X-Price': 'costs $5 ${host}', 'X-Tricky': `'"{};\\` },
  hostile: { 'X-Price': `1\n${marker}` },
};

interface IngressCase {
  readonly namespace: (typeof namespaces)[number];
  readonly created: string;
  readonly mode: 'passthrough' | 'tls' | 'plain';
  readonly hosts: readonly string[];
  readonly paths: readonly string[];
  readonly service: (typeof services)[number];
  readonly secret: (typeof secrets)[number];
  readonly annotations: Readonly<Record<string, string>>;
}

interface RouteCase {
  readonly namespace: (typeof namespaces)[number];
  readonly created: string;
  readonly hostnames: readonly string[];
  readonly service: (typeof services)[number];
}

/** An HTTPRoute on the HTTP listener: host names and path prefixes, some hostile; timeouts, some invalid. */
interface HttpRouteCase {
  readonly namespace: (typeof namespaces)[number];
  readonly created: string;
  readonly hostnames: readonly string[];
  readonly paths: readonly string[];
  readonly service: (typeof services)[number];
  readonly timeout?: string;
  /** The filters of every rule: header modifiers, redirects and rewrites, some framing or hostile. */
  readonly filters?: readonly Record<string, unknown>[];
}

/**
 * HTTPRoute filters: ordinary ones, ones that name a framing or hop-by-hop header (refused: nginx frames
 * every message itself), and hostile ones that carry the marker in names, values, paths and hosts.
 */
const headerNames = ['X-Team', 'Content-Length', 'Transfer-Encoding', 'Connection', 'Host', 'Proxy-Authorization', `X:${marker}`, `X;${marker}`];
/** Values with the marker are ones no filter may take (a line break, a variable); quotes are data, escaped. */
const headerValues = ['1', 'chunked', 'say "hi"', `v\r\n${marker}: 1`, `$${marker}`];
const headerModifier = (type: 'RequestHeaderModifier' | 'ResponseHeaderModifier') =>
  fc
    .record({ kind: fc.constantFrom('set', 'add', 'remove'), name: fc.constantFrom(...headerNames), value: fc.constantFrom(...headerValues) })
    .map(({ kind, name, value }) => {
      const field = type === 'RequestHeaderModifier' ? 'requestHeaderModifier' : 'responseHeaderModifier';
      return { type, [field]: kind === 'remove' ? { remove: [name] } : { [kind]: [{ name, value }] } };
    });
const redirectFilter = fc
  .record({
    path: fc.constantFrom(
      undefined,
      { type: 'ReplacePrefixMatch', replacePrefixMatch: '/new' },
      { type: 'ReplacePrefixMatch', replacePrefixMatch: '/' },
      { type: 'ReplaceFullPath', replaceFullPath: '/x' },
      { type: 'ReplacePrefixMatch', replacePrefixMatch: `/${marker}"` },
    ),
    hostname: fc.constantFrom(undefined, 'example.org', `${marker}.example.org;`),
    statusCode: fc.constantFrom(undefined, 301, 308, 200),
  })
  .map((spec) => ({ type: 'RequestRedirect', requestRedirect: Object.fromEntries(Object.entries(spec).filter(([, v]) => v !== undefined)) }));
const rewriteFilter = fc
  .constantFrom({ type: 'ReplacePrefixMatch', replacePrefixMatch: '/v2' }, { type: 'ReplaceFullPath', replaceFullPath: `/${marker};` })
  .map((path) => ({ type: 'URLRewrite', urlRewrite: { path } }));
const routeFilters = fc.array(fc.oneof(headerModifier('RequestHeaderModifier'), headerModifier('ResponseHeaderModifier'), redirectFilter, rewriteFilter), { maxLength: 2 });

/** Paths no HTTPRoute may serve: they must be refused, and must not take anything with them. */
const hostileRoutePaths = [`/${marker}"`, `/a;${marker}`, `/${marker} {`];

/** A tenant's Gateway listener on a port that may be nginx's, the operator's or the Pod's. */
interface ListenerCase {
  readonly namespace: (typeof namespaces)[number];
  readonly port: (typeof listenerPorts)[number];
  readonly mode: 'Passthrough' | 'Terminate' | 'HTTP' | 'HTTPS';
  readonly hostname?: string;
}

/** The Pod's metrics port, reserved. */
const metricsPort = 10254;
/**
 * Ports a tenant listener may ask for: the HTTP port, the operator's, free ones, the metrics port (not
 * the HTTPS port, where a tenant's host name would change who holds the names the checks above follow).
 */
const listenerPorts = [80, 5432, 8443, 9443, metricsPort] as const;

/** TCP/UDP services entries: valid, broken, and hostile ones (with the marker) in keys and values. */
const streamKeys = ['80', '443', '5432', '8443', '9443', '10254', '0053', marker] as const;
const streamValues = ['team-a/web:80', 'team-b/web:443:PROXY', 'team-c/web:80::PROXY', 'team-a/missing:80', 'team-a/web', `team-a/web:80:${marker}`, `${marker}/web:80`, `team-a/web:${marker}`];

interface World {
  readonly ingresses: readonly IngressCase[];
  readonly listeners: readonly ListenerCase[];
  readonly tcpServices: Readonly<Record<string, string>>;
  readonly udpServices: Readonly<Record<string, string>>;
  readonly routes: readonly RouteCase[];
  readonly httpRoutes: readonly HttpRouteCase[];
  readonly externalName: string;
  readonly controller?: Readonly<Record<string, string>>;
}

const ingressCase: fc.Arbitrary<IngressCase> = fc.record({
  namespace: fc.constantFrom(...namespaces),
  created: fc.constantFrom(...timestamps),
  mode: fc.constantFrom('passthrough', 'tls', 'plain'),
  hosts: fc
    .tuple(fc.subarray([...hosts], { minLength: 1, maxLength: 3 }), fc.option(fc.constantFrom(...hostileHosts), { freq: 8 }))
    .map(([valid, hostile]) => (hostile === null ? valid : [...valid, hostile])),
  paths: fc.subarray([...paths], { minLength: 1, maxLength: 2 }),
  service: fc.constantFrom(...services),
  secret: fc.constantFrom(...secrets),
  annotations: fc
    .subarray(Object.keys(annotationValues), { maxLength: 5 })
    .chain((keys) => fc.tuple(...keys.map((k) => fc.constantFrom(...annotationValues[k]!).map((v) => [k, v] as const))))
    .map((pairs) => Object.fromEntries(pairs)),
});

const routeCase: fc.Arbitrary<RouteCase> = fc.record({
  namespace: fc.constantFrom(...namespaces),
  created: fc.constantFrom(...timestamps),
  hostnames: fc.subarray([...hosts].filter((h) => h !== 'default' && h !== 'include'), { minLength: 1, maxLength: 2 }),
  service: fc.constantFrom(...services),
});

const httpRouteCase: fc.Arbitrary<HttpRouteCase> = fc.record(
  {
    namespace: fc.constantFrom(...namespaces),
    created: fc.constantFrom(...timestamps),
    hostnames: fc
      .tuple(fc.subarray([...hosts].filter((h) => h !== 'default' && h !== 'include'), { minLength: 1, maxLength: 2 }), fc.option(fc.constantFrom(...hostileHosts), { freq: 6 }))
      .map(([valid, hostile]) => (hostile === null ? valid : [...valid, hostile])),
    paths: fc.subarray(['/', '/api', ...hostileRoutePaths], { minLength: 1, maxLength: 2 }),
    service: fc.constantFrom(...services),
    timeout: fc.constantFrom('5s', '500ms', '0s', `1s;${marker}`, '1d'),
    filters: routeFilters,
  },
  { requiredKeys: ['namespace', 'created', 'hostnames', 'paths', 'service'] },
);

const listenerCase: fc.Arbitrary<ListenerCase> = fc.record(
  {
    namespace: fc.constantFrom(...namespaces),
    port: fc.constantFrom(...listenerPorts),
    mode: fc.constantFrom('Passthrough', 'Terminate', 'HTTP', 'HTTPS'),
    hostname: fc.constantFrom(...exactHosts.filter((h) => h !== 'default' && h !== 'include'), ...wildcardHosts),
  },
  { requiredKeys: ['namespace', 'port', 'mode'] },
);

const streamEntries = fc
  .subarray([...streamKeys], { maxLength: 4 })
  .chain((keys) => fc.tuple(...keys.map((k) => fc.constantFrom(...streamValues).map((v) => [k, v] as const))))
  .map((pairs) => Object.fromEntries(pairs));

const world: fc.Arbitrary<World> = fc.record(
  {
    ingresses: fc.array(ingressCase, { minLength: 1, maxLength: 8 }),
    listeners: fc.array(listenerCase, { maxLength: 3 }),
    tcpServices: streamEntries,
    udpServices: streamEntries,
    routes: fc.array(routeCase, { maxLength: 3 }),
    httpRoutes: fc.array(httpRouteCase, { maxLength: 4 }),
    externalName: fc.constantFrom(...externalNames),
    controller: fc.record(
      {
        'ssl-ciphers': fc.constantFrom('HIGH:!aNULL', 'NOSUCHCIPHER', `${marker};`),
        'first-namespace-owns-host': fc.constantFrom('true', 'false'),
        'http-snippet': fc.constant(`map $host $${marker} { default 1; }`),
        'main-snippet': fc.constant(`env ${marker};`),
        'server-snippet': fc.constant(`location /${marker} { return 200; }`),
        'location-snippet': fc.constant(`add_header X-${marker} 1;`),
        'allow-snippet-annotations': fc.constant('false'),
        'add-headers': fc.constantFrom('infra/response-headers', 'infra/missing', `infra/${marker}`),
        'proxy-set-headers': fc.constantFrom('infra/request-headers', `${marker}/x`),
        'hide-headers': fc.constantFrom('X-Powered-By', `X-${marker};`),
        'global-allowed-response-headers': fc.constantFrom('X-Price,X-Tricky', `X-Price,X-${marker} }`),
        'use-gzip': fc.constantFrom('true', 'false'),
        'gzip-types': fc.constantFrom('application/json text/css', `text/${marker};`),
        'gzip-disable': fc.constantFrom('msie6', 'MSIE [1-6]\\.', `${marker}"`, `(${marker}+)+$`),
        'large-client-header-buffers': fc.constantFrom('4 16k', `4 ${marker}`),
        'enable-underscores-in-headers': fc.constantFrom('true', marker),
        'upstream-keepalive-time': fc.constantFrom('1h', `1h;${marker}`),
        'global-auth-url': fc.constantFrom('http://web.team-c.svc.cluster.local/auth', 'https://$host/oauth2/auth', `http://x/${marker};`, 'http://169.254.169.254/'),
        'global-auth-cache-key': fc.constantFrom('$http_authorization', `$${marker}`),
        'global-auth-signin-redirect-param': fc.constantFrom('return_to', `${marker}&`),
      },
      { requiredKeys: [] },
    ),
  },
  { requiredKeys: ['ingresses', 'listeners', 'tcpServices', 'udpServices', 'routes', 'httpRoutes', 'externalName'] },
);

const options: TranslateOptions = testTranslateOptions({
  resolvers: ['127.0.0.1:9'],
  runDir,
  tcpServicesConfigMap: 'infra/tcp-services',
  udpServicesConfigMap: 'infra/udp-services',
  reservedPorts: new Map([[metricsPort, "the sidecar's metrics port"]]),
});

let pems: Record<(typeof secrets)[number], { cert: string; key: string }>;
let scratch: string;

async function opensslSelfSigned(dir: string, name: string, args: readonly string[]): Promise<{ cert: string; key: string }> {
  const cert = join(dir, `${name}.crt`);
  const key = join(dir, `${name}.key`);
  await execa('openssl', ['req', '-x509', '-nodes', '-keyout', key, '-out', cert, '-days', '30', '-subj', `/CN=${name}`, ...args]);
  return { cert: await readFile(cert, 'utf8'), key: await readFile(key, 'utf8') };
}

beforeAll(async () => {
  requireNginx();
  scratch = await mkdtemp(join(tmpdir(), 'i2n-property-'));
  const ca = await createCa(scratch, 'Property CA');
  const sans = [...hosts];
  const [good, wrong, expired] = await Promise.all([
    issueCertificate(ca, { commonName: 'good', sans }),
    issueCertificate(ca, { commonName: 'wrong', sans: ['elsewhere.test'] }),
    issueCertificate(ca, { commonName: 'old', sans, notBefore: daysFromTestNow(-30), days: 1 }),
  ]);
  const weak = await opensslSelfSigned(scratch, 'weak', ['-newkey', 'rsa:1024', '-addext', `subjectAltName=${sans.map((h) => `DNS:${h}`).join(',')}`]);
  pems = {
    good: { cert: good.certPem, key: good.keyPem },
    'wrong-host': { cert: wrong.certPem, key: wrong.keyPem },
    garbage: { cert: '-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n', key: good.keyPem },
    'weak-rsa': weak,
    sha1: { cert: await sha1SignedBy(ca, good.keyFile, sans), key: good.keyPem },
    expired: { cert: expired.certPem, key: expired.keyPem },
  };
});

/** A certificate for the key in `keyFile`, signed by `ca` with SHA-1 (OpenSSL security level 2 refuses it). */
async function sha1SignedBy(ca: { certFile: string; keyFile: string }, keyFile: string, sans: readonly string[]): Promise<string> {
  const csr = join(scratch, 'sha1.csr');
  const crt = join(scratch, 'sha1.crt');
  const ext = join(scratch, 'sha1.ext');
  await writeFile(ext, `subjectAltName=${sans.map((h) => `DNS:${h}`).join(',')}\n`);
  await execa('openssl', ['req', '-new', '-key', keyFile, '-subj', '/CN=sha1', '-out', csr]);
  await execa('openssl', ['x509', '-req', '-in', csr, '-CA', ca.certFile, '-CAkey', ca.keyFile, '-CAcreateserial', '-sha1', '-days', '30', '-extfile', ext, '-out', crt]);
  return readFile(crt, 'utf8');
}

afterAll(async () => {
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

function toObjects(w: World): SourceObject[] {
  const objects: SourceObject[] = [];
  for (const ns of namespaces) {
    objects.push(object('v1', 'Service', ns, 'web', { spec: { clusterIP: '10.96.0.10', ports: [{ port: 80 }, { port: 443 }] } }));
    objects.push(object('v1', 'Service', ns, 'ext', { spec: { type: 'ExternalName', externalName: w.externalName, ports: [{ port: 80 }, { port: 443 }] } }));
    objects.push(object('v1', 'Service', ns, 'headless', { spec: { clusterIP: 'None', ports: [{ port: 80 }, { port: 443 }] } }));
    for (const secret of secrets) {
      objects.push(object('v1', 'Secret', ns, secret, { type: 'kubernetes.io/tls', stringData: { 'tls.crt': pems[secret].cert, 'tls.key': pems[secret].key, 'ca.crt': pems.good.cert } }));
    }
    // Basic-auth users (an apr1 hash of "secret").
    objects.push(object('v1', 'Secret', ns, 'users', { stringData: { auth: 'alice:$apr1$3Q7c0Hzf$6CSsL8aDfJkYhPYAn4fuq1\n' } }));
  }
  w.ingresses.forEach((c, index) => {
    const port = c.mode === 'passthrough' ? 443 : 80;
    const backend = { service: { name: c.service, port: { number: port } } };
    const annotations: Record<string, string> = Object.fromEntries(
      Object.entries(c.annotations).map(([k, v]) => [`nginx.ingress.kubernetes.io/${k}`, v]),
    );
    if (c.mode === 'passthrough') annotations['nginx.ingress.kubernetes.io/ssl-passthrough'] = 'true';
    const rules = c.hosts.map((host) => ({ host, http: { paths: c.paths.map((path) => ({ path, pathType: 'Prefix', backend })) } }));
    const base = object(
      'networking.k8s.io/v1',
      'Ingress',
      c.namespace,
      `ing-${index}`,
      { spec: { ingressClassName: 'nginx', ...(c.mode === 'tls' && { tls: [{ hosts: c.hosts, secretName: c.secret }] }), rules } },
      { creationTimestamp: c.created },
    );
    objects.push({ ...base, metadata: { ...base.metadata, annotations } });
  });
  objects.push(
    gateway('infra', 'gw', [
      passthrough('tls', 443, undefined, { allowedRoutes: { namespaces: { from: 'All' } } }),
      { name: 'http', port: 80, protocol: 'HTTP', allowedRoutes: { namespaces: { from: 'All' } } },
    ]),
  );
  w.listeners.forEach((l, index) => {
    const all = { allowedRoutes: { namespaces: { from: 'All' } } };
    const listener =
      l.mode === 'Passthrough'
        ? passthrough(`l${index}`, l.port, l.hostname, all)
        : l.mode === 'Terminate'
          ? terminate(`l${index}`, l.port, l.hostname, [{ name: 'good' }], all)
          : { name: `l${index}`, port: l.port, protocol: l.mode, ...(l.hostname !== undefined && { hostname: l.hostname }), ...(l.mode === 'HTTPS' && { tls: { certificateRefs: [{ name: 'good' }] } }), ...all };
    objects.push(gateway(l.namespace, `gw-${index}`, [listener], { creationTimestamp: timestamps[index % timestamps.length] }));
  });
  objects.push(configMap('infra', 'tcp-services', { ...w.tcpServices }), configMap('infra', 'udp-services', { ...w.udpServices }));
  w.httpRoutes.forEach((r, index) => {
    const rules = r.paths.map((value) => ({
      matches: [{ path: { type: 'PathPrefix', value } }],
      backendRefs: [{ name: r.service, port: 80 }],
      ...(r.timeout !== undefined && { timeouts: { request: r.timeout } }),
      ...(r.filters !== undefined && { filters: r.filters }),
    }));
    const spec = { parentRefs: [{ name: 'gw', namespace: 'infra', sectionName: 'http' }], hostnames: [...r.hostnames], rules };
    objects.push(object('gateway.networking.k8s.io/v1', 'HTTPRoute', r.namespace, `http-${index}`, { spec }, { creationTimestamp: r.created }));
  });
  w.routes.forEach((r, index) => {
    objects.push(tlsRoute(r.namespace, `route-${index}`, { hostnames: [...r.hostnames], backendRefs: [{ name: r.service, port: 443 }] }, { creationTimestamp: r.created }));
  });
  if (w.controller) objects.push(configMap('infra', 'controller', { ...w.controller }));
  objects.push(
    configMap('infra', 'response-headers', headerConfigMaps.response),
    configMap('infra', 'request-headers', headerConfigMaps.request),
    configMap('team-a', 'headers', headerConfigMaps.tenant),
    configMap('team-b', 'hostile-headers', headerConfigMaps.hostile),
    configMap('team-a', 'fastcgi-params', { SCRIPT_FILENAME: '/srv$fastcgi_script_name', APP_ENV: 'prod' }),
    configMap('team-b', 'fastcgi-params', { SCRIPT_FILENAME: `/srv";${marker}`, [`X;${marker}`]: 'x', APP: `$${marker}` }),
  );
  return objects;
}

/**
 * What a tenant's filter may never write: a framing or hop-by-hop response header (nginx frames every
 * response itself), and a redirect built from the decoded `$uri` (its `%0d%0a` would end the header).
 * Our own auth subrequest clears Content-Length with `proxy_set_header`, so the request side is held
 * by checks/header-names.test.ts.
 */
function checkFilteredHeaders(conf: string): void {
  expect(conf).not.toMatch(/^\s*add_header\s+(?:content-length|transfer-encoding|connection|keep-alive|upgrade|te|trailer|proxy-[a-z-]*)\s/im);
  expect(conf).not.toMatch(/^\s*map \$uri \$i2n_redirect_/m);
  expect(conf).not.toMatch(/^\s*return 30[1278] [^;]*\$uri/m);
}

/** nginx's `map … hostnames` lookup: the exact name, else the longest matching `*.` wildcard, else default. */
function lookup(model: NginxConfig, name: string): { target: string; comment: string } {
  const routes = model.stream.frontends.find((f) => f.port === 443)?.routes ?? [];
  const exact = routes.find((r) => r.serverName === name);
  if (exact) return exact;
  const wildcard = routes
    .filter((r) => r.serverName.startsWith('*.') && name.endsWith(r.serverName.slice(1)) && name.length > r.serverName.length - 1)
    .sort((a, b) => b.serverName.length - a.serverName.length)[0];
  return wildcard ?? { target: httpsTarget, comment: 'default' };
}

interface Claimant {
  readonly id: string;
  readonly created: string;
  readonly kind: 'passthrough' | 'tls' | 'plain' | 'route';
  readonly namespace: string;
}

function age(a: Claimant, b: Claimant): number {
  const ta = a.created === '' ? Infinity : Date.parse(a.created);
  const tb = b.created === '' ? Infinity : Date.parse(b.created);
  // Then namespace/name, whatever the kind.
  const na = a.id.slice(a.id.indexOf(' ') + 1);
  const nb = b.id.slice(b.id.indexOf(' ') + 1);
  return ta !== tb ? ta - tb : na < nb ? -1 : na > nb ? 1 : 0;
}

function leftOut(diagnostics: readonly Diagnostic[], kind: string): Set<string> {
  const codes = new Set(['ingress-skipped', 'canary-invalid', 'resource-invalid']);
  return new Set(diagnostics.filter((d) => d.resource?.kind === kind && codes.has(d.code)).map((d) => `${d.resource?.namespace}/${d.resource?.name}`));
}

/**
 * Who must hold the TLS connections of an exact name, from the rules alone: among Ingresses, the oldest
 * that asks for the name's TLS (ssl-passthrough or spec.tls) decides the mode. A passthrough holds the
 * name unless an older TLSRoute asks for it. Terminated, the name stays with the http servers if an
 * Ingress has spec.tls for it, else if the oldest Ingress routing it is older than every TLSRoute.
 * With first-namespace-owns-host, only claims from the namespace of the oldest claimant count.
 */
function expectedHolder(list: readonly Claimant[], owned: boolean): string {
  let claims = [...list].sort(age);
  if (owned) claims = claims.filter((c) => c.namespace === claims[0]!.namespace);
  const routes = claims.filter((c) => c.kind === 'route');
  const mode = claims.find((c) => c.kind === 'passthrough' || c.kind === 'tls');
  if (mode?.kind === 'passthrough') return [mode, ...routes].sort(age)[0]!.id;
  const terminating = claims.filter((c) => c.kind === 'tls' || c.kind === 'plain');
  const owner = terminating[0];
  if (!owner) return routes[0]?.id ?? 'terminating';
  if (mode?.kind === 'tls') return 'terminating';
  const holder = [owner, ...routes].sort(age)[0]!;
  return holder === owner ? 'terminating' : holder.id;
}

function checkOwnership(w: World, model: NginxConfig, diagnostics: readonly Diagnostic[]): void {
  const skipped = leftOut(diagnostics, 'Ingress');
  const claimants = new Map<string, Claimant[]>();
  const add = (host: string, claimant: Claimant) => claimants.set(host, [...(claimants.get(host) ?? []), claimant]);
  w.ingresses.forEach((c, index) => {
    const id = `${c.namespace}/ing-${index}`;
    // A canary claims nothing: it only splits locations of a main Ingress; nor do rules without a valid path.
    if (skipped.has(id) || isCanary(c) || (c.mode === 'plain' && routedPaths(c).length === 0)) return;
    for (const host of c.hosts) add(host, { id: `Ingress ${id}`, created: c.created, kind: c.mode, namespace: c.namespace });
  });
  w.routes.forEach((r, index) => {
    for (const host of r.hostnames) add(host, { id: `TLSRoute ${r.namespace}/route-${index}`, created: r.created, kind: 'route', namespace: r.namespace });
  });
  // An HTTPRoute with a path it may serve asks for its host names as a plain Ingress rule does.
  w.httpRoutes.forEach((r, index) => {
    if (!r.paths.some((path) => !hostileRoutePaths.includes(path))) return;
    for (const host of r.hostnames) add(host, { id: `HTTPRoute ${r.namespace}/http-${index}`, created: r.created, kind: 'plain', namespace: r.namespace });
  });
  const owned = w.controller?.['first-namespace-owns-host'] === 'true';
  if (owned) checkOwnedLocations(model, claimants);
  for (const [host, list] of claimants) {
    if (!(exactHosts as readonly string[]).includes(host)) continue;
    const holder = expectedHolder(list, owned);
    const entry = lookup(model, host);
    const servedBy = entry.target === httpsTarget ? 'terminating' : entry.comment;
    const message = `${host}: must be held by ${holder}, is served by ${servedBy}`;
    if (holder === 'terminating' || holder.startsWith('Ingress ')) expect(servedBy, message).toBe(holder);
    else expect(servedBy.startsWith(`${holder} `), message).toBe(true);
  }
}

/**
 * first-namespace-owns-host: every location of an exact host name, from an Ingress or an HTTPRoute, is
 * of the namespace of the oldest resource that asks for the name, whatever its kind.
 */
function checkOwnedLocations(model: NginxConfig, claimants: ReadonlyMap<string, readonly Claimant[]>): void {
  for (const server of model.http.virtualHosts) {
    const list = claimants.get(server.serverName);
    if (!list || !(exactHosts as readonly string[]).includes(server.serverName)) continue;
    const owner = [...list].sort(age)[0]!;
    for (const location of server.locations) {
      const resource = location.origin?.claim.claimant.resource;
      if (!resource || (resource.kind !== 'Ingress' && resource.kind !== 'HTTPRoute')) continue;
      const message = `${server.serverName}${location.path}: served by ${resource.kind} ${resource.namespace}/${resource.name}, the host belongs to ${owner.id}`;
      expect(resource.namespace, message).toBe(owner.namespace);
    }
  }
}

/** The paths an Ingress routes: the regex-only one only as a regex (use-regex, or a rewrite). */
function routedPaths(c: IngressCase): readonly string[] {
  const target = c.annotations['rewrite-target'];
  const regex = c.annotations['use-regex'] === 'true' || ((target === '/' || target === '/$1') && c.paths.some((path) => path !== target));
  return regex ? c.paths : c.paths.filter((path) => !path.includes('['));
}

function isCanary(c: IngressCase): boolean {
  return c.annotations['canary'] === 'true';
}

/**
 * An Ingress nothing was reported about (no error or warning) is served as written, and no annotation
 * of another namespace's Ingress takes a request from it: for every path, the location nginx picks for
 * the path itself and for a request under it is never a regex location of another namespace.
 */
function checkCleanIngresses(w: World, model: NginxConfig, diagnostics: readonly Diagnostic[]): void {
  const reported = new Set(
    diagnostics.filter((d) => d.resource?.kind === 'Ingress' && d.severity !== 'info').map((d) => `${d.resource?.namespace}/${d.resource?.name}`),
  );
  w.ingresses.forEach((c, index) => {
    const id = `${c.namespace}/ing-${index}`;
    if (reported.has(id) || isCanary(c)) return;
    for (const host of c.hosts) {
      if (c.mode === 'passthrough') {
        // Or an older (or same-age, first by name) Ingress of its namespace passes the name through to the same Service: nothing of it is lost.
        const served = lookup(model, host).comment;
        const twin = w.ingresses.find((o, i) => served === `Ingress ${o.namespace}/ing-${i}` && o.namespace === c.namespace && o.mode === 'passthrough' && o.service === c.service);
        expect(served === `Ingress ${id}` || twin !== undefined, `${id} ${host}: served by ${served}`).toBe(true);
        continue;
      }
      const server = model.http.virtualHosts.find((h) => h.serverName === host);
      for (const path of c.paths) {
        const location = server?.locations.find((l) => l.comment === `${id} Prefix ${path}`);
        expect(location, `${id} ${host} ${path}`).toBeDefined();
        if (!server || location?.modifier === '~*') continue;
        for (const probe of [path, path === '/' ? '/probe' : `${path}/probe`]) {
          const chosen = chooseLocation(server.locations, probe);
          const owner = chosen?.comment.split(' ')[0] ?? '';
          if (chosen?.modifier === '~*') expect(owner.split('/')[0], `${host}${probe}: ${id} lost it to ${chosen.comment}`).toBe(c.namespace);
        }
      }
    }
  });
}

/**
 * nginx's choice of location for a URI: an exact match; else the longest prefix, unless it is `^~`,
 * then the first regex that matches (in order of appearance), then that longest prefix.
 */
function chooseLocation(locations: readonly Location[], uri: string): Location | undefined {
  const exact = locations.find((l) => l.modifier === '=' && l.path === uri);
  if (exact) return exact;
  const prefix = locations
    .filter((l) => (l.modifier === '' || l.modifier === '^~') && !l.path.startsWith('@') && uri.startsWith(l.path))
    .sort((a, b) => b.path.length - a.path.length)[0];
  if (prefix?.modifier === '^~') return prefix;
  const regex = locations.find((l) => l.modifier === '~*' && new RegExp(l.path.slice(1, -1), 'i').test(uri));
  return regex ?? prefix;
}

/**
 * Operator configuration outranks tenants: no SNI front (a Gateway listener's port, or the HTTPS port)
 * is on a port the TCP services ConfigMap gives out, and no HTTP or HTTPS listener's own servers on a TCP
 * or UDP service's, except nginx's own HTTP and HTTPS ports, which those entries may not take; nothing
 * nginx binds is a port the Pod already uses.
 */
function checkOperatorPorts(w: World, model: NginxConfig): void {
  const own = [options.httpPort, options.httpsPort];
  const operator = Object.keys(w.tcpServices).filter((port) => /^[1-9][0-9]*$/.test(port) && !own.includes(Number(port)));
  for (const frontend of model.stream.frontends) expect(operator, `SNI front on the TCP service port ${frontend.port}`).not.toContain(String(frontend.port));
  const services = [...operator, ...Object.keys(w.udpServices).filter((port) => /^[1-9][0-9]*$/.test(port) && !own.includes(Number(port)))];
  for (const servers of model.http.ownPorts ?? []) expect(services, `a listener's own servers on the TCP/UDP service port ${servers.port}`).not.toContain(String(servers.port));
  for (const port of listenedPorts(model)) expect(options.reservedPorts?.has(port.port), `nginx binds the reserved port ${port.port}`).toBe(false);
}

describe('random mixes of valid and broken resources', () => {
  it(`always load, never leak input text into nginx.conf, never lose a host to a newer claim (${runs} cases)`, async () => {
    const nginx = requireNginx();
    await fc.assert(
      fc.asyncProperty(world, async (w) => {
        const objects = toObjects(w);
        const result = build(
          { objects },
          {
            ...options,
            ...(nginx.streamModuleFile !== undefined && { streamModulePath: nginx.streamModuleFile }),
            ...(w.controller && { configMap: 'infra/controller' }),
          },
        );
        for (const file of result.files) {
          expect(file.contents.includes(marker) || file.path.includes(marker), file.path).toBe(false);
        }
        checkOwnership(w, result.model, result.diagnostics);
        checkOperatorPorts(w, result.model);
        checkFilteredHeaders(result.files.find((f) => f.path === 'nginx.conf')?.contents ?? '');
        checkCleanIngresses(w, result.model, result.diagnostics);
        const check = await checkBuiltFiles(result.files, runDir);
        expect(check.output).toBe('');
        expect(check.ok).toBe(true);
      }),
      { numRuns: runs, seed: process.env.I2N_PROPERTY_SEED ? Number(process.env.I2N_PROPERTY_SEED) : undefined },
    );
    // A bound for the run, never a measure: each case starts a real nginx -t.
  }, Math.max(60_000, runs * 500));
});
