import { describe, expect, it } from 'vitest';
import { parseIngressAnnotations, type IngressAnnotations } from './index.js';

const prefix = 'nginx.ingress.kubernetes.io/';

function parse(short: Record<string, string>) {
  const full = Object.entries(short).map(([name, value]) => [prefix + name, value]);
  return parseIngressAnnotations(Object.fromEntries(full));
}

const defaults: IngressAnnotations = {
  canary: false,
  sslPassthrough: false,
  forceSslRedirect: false,
  backendProtocol: 'HTTP',
  proxySsl: { verify: false, verifyDepth: 1, serverName: false, protocols: 'TLSv1.2', ciphers: 'DEFAULT' },
  httpLevelAnnotations: [],
};

describe('parseIngressAnnotations', () => {
  it('gives the defaults without annotations', () => {
    const { value, issues } = parseIngressAnnotations({});
    expect(value).toEqual(defaults);
    expect(value.sslRedirect).toBeUndefined();
    expect(value.proxySsl.secret).toBeUndefined();
    expect(value.proxySsl.name).toBeUndefined();
    expect(issues).toEqual([]);
  });

  it('ignores other prefixes', () => {
    const { value, issues } = parseIngressAnnotations({
      'kubernetes.io/ingress.class': 'nginx',
      'example.com/server-snippet': 'anything',
      'nginx.org/ssl-passthrough': 'true',
    });
    expect(value).toEqual(defaults);
    expect(issues).toEqual([]);
  });

  describe('booleans', () => {
    it('reads "true" and keeps "false" false', () => {
      expect(parse({ 'ssl-passthrough': 'true' }).value.sslPassthrough).toBe(true);
      expect(parse({ 'ssl-passthrough': 'false' }).value.sslPassthrough).toBe(false);
      expect(parse({ 'ssl-redirect': 'false' }).value.sslRedirect).toBe(false);
      expect(parse({ 'ssl-redirect': 'true' }).value.sslRedirect).toBe(true);
      expect(parse({ 'force-ssl-redirect': 'false' }).value.forceSslRedirect).toBe(false);
      expect(parse({ 'force-ssl-redirect': 'true' }).value.forceSslRedirect).toBe(true);
    });

    it('is case-insensitive and trimmed', () => {
      expect(parse({ 'ssl-passthrough': ' TRUE ' }).value.sslPassthrough).toBe(true);
      expect(parse({ 'ssl-redirect': 'False\n' }).value.sslRedirect).toBe(false);
    });

    it.each(['yes', '1', 'on', '', 'truee'])('rejects %j with the default', (raw) => {
      const { value, issues } = parse({ 'ssl-passthrough': raw, 'ssl-redirect': raw });
      expect(value.sslPassthrough).toBe(false);
      expect(value.sslRedirect).toBeUndefined();
      expect(issues.map((issue) => [issue.code, issue.severity, issue.annotation])).toEqual([
        ['annotation-invalid', 'error', `${prefix}ssl-passthrough`],
        ['annotation-invalid', 'error', `${prefix}ssl-redirect`],
      ]);
      expect(issues[0]?.message).toContain('true or false');
    });
  });

  describe('backend-protocol', () => {
    it.each([
      ['HTTP', 'HTTP'],
      ['https', 'HTTPS'],
      [' GRPC ', 'GRPC'],
      ['grpcs', 'GRPCS'],
      ['Auto_Http', 'AUTO_HTTP'],
    ] as const)('reads %j as %s', (raw, expected) => {
      const { value, issues } = parse({ 'backend-protocol': raw });
      expect(value.backendProtocol).toBe(expected);
      expect(issues).toEqual([]);
    });

    it.each(['FCGI', 'fcgi', 'AJP', 'TCP', ''])('rejects %j, naming the accepted values', (raw) => {
      const { value, issues } = parse({ 'backend-protocol': raw });
      expect(value.backendProtocol).toBe('HTTP');
      expect(issues).toHaveLength(1);
      expect(issues[0]).toMatchObject({
        severity: 'error',
        code: 'annotation-invalid',
        annotation: `${prefix}backend-protocol`,
      });
      expect(issues[0]?.message).toContain('HTTP, HTTPS, GRPC, GRPCS, AUTO_HTTP');
    });
  });

  describe('proxy-ssl', () => {
    it('reads a full set', () => {
      const { value, issues } = parse({
        'proxy-ssl-secret': ' backend-ns/backend-ca ',
        'proxy-ssl-verify': 'on',
        'proxy-ssl-verify-depth': '3',
        'proxy-ssl-name': 'Backend.Internal.example',
        'proxy-ssl-server-name': 'ON',
        'proxy-ssl-protocols': 'TLSv1.3 TLSv1.2',
        'proxy-ssl-ciphers': 'HIGH:!aNULL:!MD5',
      });
      expect(issues).toEqual([]);
      expect(value.proxySsl).toEqual({
        secret: { namespace: 'backend-ns', name: 'backend-ca' },
        verify: true,
        verifyDepth: 3,
        name: 'backend.internal.example',
        serverName: true,
        protocols: 'TLSv1.2 TLSv1.3',
        ciphers: 'HIGH:!aNULL:!MD5',
      });
    });

    it('keeps off as off', () => {
      const { value } = parse({ 'proxy-ssl-verify': 'off', 'proxy-ssl-server-name': 'OFF' });
      expect(value.proxySsl.verify).toBe(false);
      expect(value.proxySsl.serverName).toBe(false);
    });

    it.each(['true', 'false', 'yes', '1', ''])('proxy-ssl-verify rejects %j', (raw) => {
      const { value, issues } = parse({ 'proxy-ssl-verify': raw });
      expect(value.proxySsl.verify).toBe(false);
      expect(issues[0]).toMatchObject({ code: 'annotation-invalid', annotation: `${prefix}proxy-ssl-verify` });
      expect(issues[0]?.message).toContain('on or off');
    });

    it.each(['name-only', 'a/b/c', '/name', 'ns/', 'NS/name', 'ns/na_me', 'ns /name', ''])(
      'proxy-ssl-secret rejects %j',
      (raw) => {
        const { value, issues } = parse({ 'proxy-ssl-secret': raw });
        expect(value.proxySsl.secret).toBeUndefined();
        expect(issues).toHaveLength(1);
        expect(issues[0]).toMatchObject({ severity: 'error', code: 'annotation-invalid' });
        expect(issues[0]?.message).toContain('namespace/name');
      },
    );

    it.each(['0', '101', '-1', '1.5', 'two', ''])('proxy-ssl-verify-depth rejects %j', (raw) => {
      const { value, issues } = parse({ 'proxy-ssl-verify-depth': raw });
      expect(value.proxySsl.verifyDepth).toBe(1);
      expect(issues[0]?.message).toContain('from 1 to 100');
    });

    it('proxy-ssl-verify-depth takes 100', () => {
      expect(parse({ 'proxy-ssl-verify-depth': '100' }).value.proxySsl.verifyDepth).toBe(100);
    });

    it.each(['$host', '$proxy_host', '*.example.com', 'a_b.example', 'example.com.', ''])(
      'proxy-ssl-name rejects %j',
      (raw) => {
        const { value, issues } = parse({ 'proxy-ssl-name': raw });
        expect(value.proxySsl.name).toBeUndefined();
        expect(issues[0]?.code).toBe('annotation-invalid');
      },
    );

    it.each(['TLSv1 TLSv1.2', 'TLSv1.1', 'SSLv3', 'TLSv1.2,TLSv1.3', ''])('proxy-ssl-protocols rejects %j', (raw) => {
      const { value, issues } = parse({ 'proxy-ssl-protocols': raw });
      expect(value.proxySsl.protocols).toBe('TLSv1.2');
      expect(issues[0]?.message).toContain('TLSv1.2, TLSv1.3');
    });

    it.each(['HIGH MEDIUM', 'HIGH::LOW', ''])('proxy-ssl-ciphers rejects %j', (raw) => {
      const { value, issues } = parse({ 'proxy-ssl-ciphers': raw });
      expect(value.proxySsl.ciphers).toBe('DEFAULT');
      expect(issues[0]?.code).toBe('annotation-invalid');
    });
  });

  describe('hostile values', () => {
    const hostileValues = [
      'true; }\nserver { listen 1; }',
      'HTTPS"; include /etc/passwd; #',
      "on' ; load_module /tmp/x.so;",
      '${ssl_server_name}',
      'ns/name\\\n}',
      'backend.example\u202e',
    ];
    const names = [
      'ssl-passthrough',
      'ssl-redirect',
      'force-ssl-redirect',
      'backend-protocol',
      'proxy-ssl-secret',
      'proxy-ssl-verify',
      'proxy-ssl-verify-depth',
      'proxy-ssl-name',
      'proxy-ssl-server-name',
      'proxy-ssl-protocols',
      'proxy-ssl-ciphers',
    ];

    it.each(hostileValues)('rejects %j everywhere without echoing it', (hostile) => {
      const { value, issues } = parse(Object.fromEntries(names.map((name) => [name, hostile])));
      expect({ ...value, httpLevelAnnotations: [] }).toEqual(defaults);
      expect(issues.map((issue) => issue.annotation)).toEqual(names.map((name) => prefix + name).sort());
      for (const issue of issues) {
        expect(issue.code).toBe('annotation-invalid');
        expect(issue.message).not.toContain(hostile);
        expect(issue.message).not.toContain(hostile.trim());
        expect(issue.message).not.toContain('\n');
        expect(issue.message).not.toContain('\u202e');
      }
    });
  });

  describe('snippets', () => {
    const snippetNames = ['configuration-snippet', 'server-snippet', 'stream-snippet', 'auth-snippet'];
    it.each([...snippetNames, 'modsecurity-snippet', 'new-snippet'])('refuses %s with an explanation', (name) => {
      const { issues } = parse({ [name]: 'more_set_headers "X: y";' });
      expect(issues).toHaveLength(1);
      expect(issues[0]).toMatchObject({ severity: 'error', code: 'snippet-refused', annotation: prefix + name });
      expect(issues[0]?.message).toContain('CVE-2025-1974');
      expect(issues[0]?.message).toContain('supported annotation');
      expect(issues[0]?.message).not.toContain('more_set_headers');
    });
  });

  describe('unsupported and unknown annotations', () => {
    it.each([
      'rewrite-target',
      'use-regex',
      'proxy-body-size',
      'proxy-read-timeout',
      'enable-cors',
      'cors-allow-origin',
      'limit-rps',
      'affinity',
      'affinity-mode',
      'session-cookie-name',
      'canary-weight',
      'app-root',
      'permanent-redirect',
      'temporal-redirect',
      'upstream-vhost',
      'server-alias',
      'custom-http-errors',
      'default-backend',
      'ssl-ciphers',
    ])('warns that %s is unsupported', (name) => {
      const { issues } = parse({ [name]: 'x' });
      expect(issues).toEqual([
        expect.objectContaining({ severity: 'warning', code: 'annotation-unsupported', annotation: prefix + name }),
      ]);
    });

    it.each(['auth-url', 'auth-tls-secret', 'auth-tls-verify-client', 'whitelist-source-range', 'denylist-source-range', 'satisfy'])(
      'refuses the Ingress for the access-control annotation %s, which it cannot enforce',
      (name) => {
        const { issues } = parse({ [name]: 'x' });
        expect(issues).toEqual([
          expect.objectContaining({ severity: 'error', code: 'annotation-access-control-unsupported', annotation: prefix + name }),
        ]);
      },
    );

    it.each(['ssl-passtrough', 'backend-protocols', 'proxy-ssl-foo', 'x'])('warns that %s is unknown', (name) => {
      const { issues } = parse({ [name]: 'true' });
      expect(issues).toEqual([
        expect.objectContaining({ severity: 'warning', code: 'annotation-unknown', annotation: prefix + name }),
      ]);
      expect(issues[0]?.message).toContain(JSON.stringify(prefix + name));
    });

    it('quotes a hostile annotation name with its control characters escaped', () => {
      const key = `${prefix}x\u001b[2J\u202e`;
      const { issues } = parseIngressAnnotations({ [key]: 'y' });
      expect(issues[0]?.annotation).toBe(key);
      expect(issues[0]?.message).not.toContain('\u001b');
      expect(issues[0]?.message).not.toContain('\u202e');
      expect(issues[0]?.message).toContain('\\u001b[2J\\u202e');
    });
  });

  it('lists the HTTP-level annotations present, sorted, without ssl-passthrough', () => {
    const { value } = parse({
      'ssl-passthrough': 'true',
      'rewrite-target': '/',
      'backend-protocol': 'HTTPS',
      'configuration-snippet': 'x',
      'ssl-redirect': 'false',
    });
    expect(value.httpLevelAnnotations).toEqual([
      `${prefix}backend-protocol`,
      `${prefix}configuration-snippet`,
      `${prefix}rewrite-target`,
      `${prefix}ssl-redirect`,
    ]);
  });

  it('sorts issues by annotation key whatever the input order', () => {
    const { issues } = parse({ zzz: '1', 'server-snippet': 'x', 'backend-protocol': 'FCGI', 'rewrite-target': '/' });
    expect(issues.map((issue) => issue.annotation)).toEqual(
      ['backend-protocol', 'rewrite-target', 'server-snippet', 'zzz'].map((name) => prefix + name),
    );
  });
});
