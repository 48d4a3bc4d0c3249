import { describe, expect, it } from 'vitest';
import { defaultGzipTypes } from './gzip.js';
import {
  defaultControllerSettings,
  globalAuthKeys,
  hstsHeaderValue,
  parseControllerSettings,
  type ControllerSettings,
} from './configmap.js';
import { configMapCatalog } from './annotations/catalog.js';

describe('parseControllerSettings', () => {
  it('gives ingress-nginx defaults for an empty ConfigMap', () => {
    const { value, issues } = parseControllerSettings({});
    expect(issues).toEqual([]);
    expect(value).toEqual(defaultControllerSettings);
    expect(value).toEqual({
      sslProtocols: 'TLSv1.2 TLSv1.3',
      sslCiphers:
        'ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384:' +
        'ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305:' +
        'DHE-RSA-AES128-GCM-SHA256:DHE-RSA-AES256-GCM-SHA384',
      sslRedirect: true,
      hsts: true,
      hstsMaxAge: 31536000,
      hstsIncludeSubdomains: true,
      hstsPreload: false,
      useForwardedHeaders: false,
      proxyRealIpCidr: ['0.0.0.0/0'],
      useProxyProtocol: false,
      sslRejectHandshake: false,
      upstreamKeepaliveConnections: 320,
      workerProcesses: 'auto',
      maxWorkerConnections: 16384,
      firstNamespaceOwnsHost: false,
      allowSnippetAnnotations: false,
      annotationsRiskLevel: undefined,
      httpRedirectCode: 308,
      computeFullForwardedFor: false,
      generateRequestId: true,
      logFormatEscapeJson: false,
      proxyBodySize: '1m',
      clientBodyBufferSize: '8k',
      proxyConnectTimeout: 5,
      proxyReadTimeout: 60,
      proxySendTimeout: 60,
      proxyBuffering: false,
      proxyBufferSize: '4k',
      proxyBuffersNumber: 4,
      proxyRequestBuffering: true,
      proxyHttpVersion: '1.1',
      proxyNextUpstream: 'error timeout',
      proxyNextUpstreamTries: 3,
      proxyNextUpstreamTimeout: 0,
      whitelistSourceRange: [],
      denylistSourceRange: [],
      limitReqStatusCode: 503,
      limitConnStatusCode: 503,
      addHeaders: undefined,
      proxySetHeaders: undefined,
      hideHeaders: [],
      globalAllowedResponseHeaders: [],
      keepAlive: 75,
      useGzip: false,
      gzipLevel: 1,
      gzipMinLength: 256,
      gzipTypes: defaultGzipTypes,
      gzipDisable: undefined,
      proxyBusyBuffersSize: undefined,
      logFormatUpstream: undefined,
      customHttpErrors: [],
    } satisfies ControllerSettings);
  });

  it('does not share list defaults with its callers', () => {
    parseControllerSettings({}).value.proxyRealIpCidr.push('10.0.0.0/8');
    expect(parseControllerSettings({}).value.proxyRealIpCidr).toEqual(['0.0.0.0/0']);
    expect(defaultControllerSettings.proxyRealIpCidr).toEqual(['0.0.0.0/0']);
  });

  it('reads every supported key', () => {
    const { value, issues } = parseControllerSettings({
      'ssl-protocols': 'TLSv1.3',
      'ssl-ciphers': 'HIGH:!aNULL',
      'ssl-redirect': 'false',
      hsts: 'False',
      'hsts-max-age': '600',
      'hsts-include-subdomains': 'false',
      'hsts-preload': 'TRUE',
      'use-forwarded-headers': 'true',
      'proxy-real-ip-cidr': '10.0.0.0/8, 192.0.2.1 ,2001:db8::/32,10.0.0.0/8,',
      'use-proxy-protocol': 'true',
      'ssl-reject-handshake': 'true',
      'upstream-keepalive-connections': '0',
      'worker-processes': '4',
      'max-worker-connections': '1024',
      'first-namespace-owns-host': 'true',
      'http-redirect-code': '301',
      'compute-full-forwarded-for': 't',
      'generate-request-id': 'false',
      'log-format-escape-json': 'true',
      'proxy-body-size': '8M',
      'client-body-buffer-size': '16k',
      'proxy-connect-timeout': '2',
      'proxy-read-timeout': '120',
      'proxy-send-timeout': '30',
      'proxy-buffering': 'on',
      'proxy-buffer-size': '8k',
      'proxy-buffers-number': '8',
      'proxy-request-buffering': 'off',
      'proxy-http-version': '1.0',
      'proxy-next-upstream': 'error timeout http_502',
      'proxy-next-upstream-tries': '0',
      'proxy-next-upstream-timeout': '10',
      'whitelist-source-range': '10.0.0.1/8',
      'denylist-source-range': '192.0.2.0/24',
      'limit-req-status-code': '429',
      'limit-conn-status-code': '429',
      'allow-snippet-annotations': 'true',
      'annotations-risk-level': 'High',
      'add-headers': 'ingress/response-headers',
      'proxy-set-headers': ' ingress/request-headers ',
      'hide-headers': 'X-Powered-By, Server-Timing,X-Powered-By',
      'global-allowed-response-headers': 'X-Frame-Options,Content-Security-Policy',
      'keep-alive': '30',
      'use-gzip': 'true',
      'gzip-level': '5',
      'gzip-min-length': '1000',
      'gzip-types': 'application/json  text/plain',
      'gzip-disable': 'msie6',
      'proxy-busy-buffers-size': '24K',
      'log-format-upstream': '$the_real_ip [$time_local] "$request" $status ${req_id}',
      'custom-http-errors': '503, 404',
    });
    expect(issues).toEqual([]);
    expect(value).toEqual({
      sslProtocols: 'TLSv1.3',
      sslCiphers: 'HIGH:!aNULL',
      sslRedirect: false,
      hsts: false,
      hstsMaxAge: 600,
      hstsIncludeSubdomains: false,
      hstsPreload: true,
      useForwardedHeaders: true,
      proxyRealIpCidr: ['10.0.0.0/8', '192.0.2.1', '2001:db8::/32'],
      useProxyProtocol: true,
      sslRejectHandshake: true,
      upstreamKeepaliveConnections: 0,
      workerProcesses: '4',
      maxWorkerConnections: 1024,
      firstNamespaceOwnsHost: true,
      allowSnippetAnnotations: true,
      annotationsRiskLevel: 'High',
      httpRedirectCode: 301,
      computeFullForwardedFor: true,
      generateRequestId: false,
      logFormatEscapeJson: true,
      proxyBodySize: '8m',
      clientBodyBufferSize: '16k',
      proxyConnectTimeout: 2,
      proxyReadTimeout: 120,
      proxySendTimeout: 30,
      proxyBuffering: true,
      proxyBufferSize: '8k',
      proxyBuffersNumber: 8,
      proxyRequestBuffering: false,
      proxyHttpVersion: '1.0',
      proxyNextUpstream: 'error timeout http_502',
      proxyNextUpstreamTries: 0,
      proxyNextUpstreamTimeout: 10,
      // The network of an address written with host bits: nginx warns about those on every load.
      whitelistSourceRange: ['10.0.0.0/8'],
      denylistSourceRange: ['192.0.2.0/24'],
      limitReqStatusCode: 429,
      limitConnStatusCode: 429,
      addHeaders: { namespace: 'ingress', name: 'response-headers' },
      proxySetHeaders: { namespace: 'ingress', name: 'request-headers' },
      hideHeaders: ['X-Powered-By', 'Server-Timing'],
      globalAllowedResponseHeaders: ['X-Frame-Options', 'Content-Security-Policy'],
      keepAlive: 30,
      useGzip: true,
      gzipLevel: 5,
      gzipMinLength: 1000,
      gzipTypes: 'application/json text/plain',
      gzipDisable: 'msie6',
      proxyBusyBuffersSize: '24k',
      logFormatUpstream: '${remote_addr} [${time_local}] "${request}" ${status} ${i2n_request_id}',
      customHttpErrors: [404, 503],
    } satisfies ControllerSettings);
  });

  it('reads booleans as Go\'s ParseBool does, as ingress-nginx', () => {
    for (const raw of ['true', 'TRUE', 'True', 't', 'T', '1']) expect(parseControllerSettings({ hsts: raw, 'ssl-redirect': raw }).value.hsts, raw).toBe(true);
    for (const raw of ['false', 'FALSE', 'f', '0']) expect(parseControllerSettings({ hsts: raw }).value.hsts, raw).toBe(false);
  });

  it('normalises protocol lists and worker-processes', () => {
    expect(parseControllerSettings({ 'ssl-protocols': ' tlsv1.3 TLSv1 ' }).value.sslProtocols).toBe('TLSv1 TLSv1.3');
    expect(parseControllerSettings({ 'worker-processes': ' AUTO ' }).value.workerProcesses).toBe('auto');
  });

  it.each([
    ['ssl-protocols', 'SSLv3 TLSv1.2', 'sslProtocols'],
    ['ssl-protocols', '', 'sslProtocols'],
    ['ssl-ciphers', 'HIGH MEDIUM', 'sslCiphers'],
    ['ssl-redirect', 'yes', 'sslRedirect'],
    ['hsts', 'yes', 'hsts'],
    ['http-redirect-code', '303', 'httpRedirectCode'],
    ['proxy-body-size', '1 m', 'proxyBodySize'],
    ['proxy-body-size', '1b', 'proxyBodySize'],
    ['proxy-buffer-size', '2m', 'proxyBufferSize'],
    ['proxy-buffers-number', '2', 'proxyBuffersNumber'],
    ['client-body-buffer-size', '1g', 'clientBodyBufferSize'],
    ['proxy-read-timeout', '60s', 'proxyReadTimeout'],
    ['proxy-next-upstream', 'error off', 'proxyNextUpstream'],
    ['proxy-next-upstream', 'http_418', 'proxyNextUpstream'],
    ['proxy-http-version', '2', 'proxyHttpVersion'],
    ['whitelist-source-range', '10.0.0.0/8;', 'whitelistSourceRange'],
    ['limit-req-status-code', '200', 'limitReqStatusCode'],
    ['hsts-max-age', '-1', 'hstsMaxAge'],
    ['hsts-max-age', '1y', 'hstsMaxAge'],
    ['hsts-max-age', '2147483648', 'hstsMaxAge'],
    ['hsts-include-subdomains', 'on', 'hstsIncludeSubdomains'],
    ['hsts-preload', 'enabled', 'hstsPreload'],
    ['use-forwarded-headers', '', 'useForwardedHeaders'],
    ['proxy-real-ip-cidr', '10.0.0.0/33', 'proxyRealIpCidr'],
    ['proxy-real-ip-cidr', 'lb.example.com', 'proxyRealIpCidr'],
    ['proxy-real-ip-cidr', ',', 'proxyRealIpCidr'],
    ['use-proxy-protocol', 'proxy', 'useProxyProtocol'],
    ['ssl-reject-handshake', 'off', 'sslRejectHandshake'],
    ['upstream-keepalive-connections', '-5', 'upstreamKeepaliveConnections'],
    ['worker-processes', '0', 'workerProcesses'],
    ['worker-processes', 'auto 2', 'workerProcesses'],
    ['max-worker-connections', '0', 'maxWorkerConnections'],
  ] as const)('rejects %s=%j with the default', (key, raw, field) => {
    const { value, issues } = parseControllerSettings({ [key]: raw });
    expect(value[field]).toEqual(defaultControllerSettings[field]);
    expect(issues).toEqual([expect.objectContaining({ severity: 'error', code: 'configmap-invalid', key })]);
    expect(issues[0]?.message).toContain('Expected');
  });

  it('rejects hostile values without echoing them', () => {
    const hostile = 'TLSv1.2; } http { include /etc/shadow; #';
    const keys = ['ssl-protocols', 'ssl-ciphers', 'hsts', 'proxy-real-ip-cidr', 'worker-processes', 'hsts-max-age'];
    const { value, issues } = parseControllerSettings(Object.fromEntries(keys.map((key) => [key, hostile])));
    expect(value).toEqual(defaultControllerSettings);
    expect(issues.map((issue) => issue.key)).toEqual([...keys].sort());
    for (const issue of issues) {
      expect(issue.code).toBe('configmap-invalid');
      expect(issue.message).not.toContain(hostile);
      expect(issue.message).not.toContain('/etc/shadow');
    }
  });

  const snippetKeys = ['http-snippet', 'server-snippet', 'location-snippet', 'main-snippet', 'stream-snippet'];
  it.each([...snippetKeys, 'global-auth-snippet'])('refuses %s', (key) => {
    const { issues } = parseControllerSettings({ [key]: 'lua_package_path "/tmp/?.lua";' });
    expect(issues).toEqual([expect.objectContaining({ severity: 'error', code: 'snippet-refused', key })]);
    expect(issues[0]?.message).toContain('CVE-2025-1974');
    expect(issues[0]?.message).not.toContain('lua_package_path');
  });

  it('reports unsupported keys as info, naming them, in key order', () => {
    const { issues } = parseControllerSettings({
      'use-geoip2': 'true',
      'enable-brotli': 'true',
    });
    expect(issues.map((issue) => [issue.severity, issue.code, issue.key])).toEqual([
      ['info', 'configmap-key-unsupported', 'enable-brotli'],
      ['info', 'configmap-key-unsupported', 'use-geoip2'],
    ]);
    expect(issues[1]?.message).toContain('"use-geoip2"');
  });
});

describe('hstsHeaderValue', () => {
  it('matches the design default', () => {
    expect(hstsHeaderValue(defaultControllerSettings)).toBe('max-age=31536000; includeSubDomains');
  });

  it('follows the settings', () => {
    const settings = { ...defaultControllerSettings, hstsMaxAge: 0, hstsIncludeSubdomains: false };
    expect(hstsHeaderValue(settings)).toBe('max-age=0');
    expect(hstsHeaderValue({ ...defaultControllerSettings, hstsPreload: true })).toBe(
      'max-age=31536000; includeSubDomains; preload',
    );
    expect(hstsHeaderValue({ ...defaultControllerSettings, hsts: false })).toBeUndefined();
  });
});

describe('the ConfigMap catalog', () => {
  it('lists as supported or differing exactly the keys the parser reads', () => {
    for (const entry of configMapCatalog) {
      const unsupported = parseControllerSettings({ [entry.key]: 'x' }).issues.some((issue) => issue.code === 'configmap-key-unsupported');
      expect(unsupported, entry.key).toBe(entry.status === 'ignored' || entry.status === 'refused');
    }
    const read = Object.keys(defaultControllerSettings).length + globalAuthKeys.length;
    expect(configMapCatalog.filter((entry) => entry.status === 'supported' || entry.status === 'differs')).toHaveLength(read);
  });
});
