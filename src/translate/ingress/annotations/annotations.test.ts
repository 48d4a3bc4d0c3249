import { describe, expect, it } from 'vitest';
import { annotationCatalog, catalogEntry, notImplementedAnnotations } from './catalog.js';
import { allRules } from './families.js';
import { implementedAnnotationNames, parseIngressAnnotations } from './index.js';

const prefix = 'nginx.ingress.kubernetes.io/';

function parse(short: Record<string, string>) {
  const full = Object.entries(short).map(([name, value]) => [prefix + name, value]);
  return parseIngressAnnotations(Object.fromEntries(full));
}

/** How many values were rejected. */
function invalid(short: Record<string, string>): number {
  return parse(short).issues.filter((issue) => issue.code === 'annotation-invalid').length;
}

/** The issues as `[code, severity, annotation without prefix, leavesOut]`. */
function issuesOf(short: Record<string, string>) {
  return parse(short).issues.map((issue) => [issue.code, issue.severity, issue.annotation.slice(prefix.length), issue.leavesOut]);
}

describe('parseIngressAnnotations', () => {
  it('gives the defaults without annotations', () => {
    const { value, issues } = parseIngressAnnotations({});
    expect(issues).toEqual([]);
    expect(value.tls).toEqual({ sslPassthrough: false, sslRedirect: undefined, forceSslRedirect: false, preserveTrailingSlash: false, usePortInRedirects: false, backendProtocol: 'HTTP' });
    expect(value.proxySsl).toMatchObject({ verify: false, verifyDepth: 1, serverName: false, protocols: 'TLSv1.2 TLSv1.3', ciphers: 'DEFAULT' });
    expect(value.canary).toMatchObject({ enabled: false, weight: 0, weightTotal: 100 });
    expect(value.cors).toMatchObject({ enabled: false, allowOrigin: { any: true }, allowCredentials: true, maxAge: 1728000 });
    expect(value.rateLimit).toMatchObject({ burstMultiplier: 5, allowlist: [] });
    expect(Object.values(value.proxy).every((v) => v === undefined)).toBe(true);
    expect(value.httpLevelAnnotations).toEqual([]);
  });

  it('reads a set it has read before to the same values, whatever else the Ingress carries, and each caller owns its issues', () => {
    const set = { 'proxy-read-timeout': '120', 'proxy-connect-timeout': 'soon' };
    const first = parse(set);
    const again = parseIngressAnnotations({ ...Object.fromEntries(Object.entries(set).map(([k, v]) => [prefix + k, v])), 'example.com/other': 'x' });
    expect(again).toEqual(first);
    expect(first.value.proxy).toMatchObject({ readTimeout: 120 });
    expect(first.issues.map((issue) => issue.code)).toEqual(['annotation-invalid']);
    first.issues.pop();
    again.issues[0]!.message = 'changed by one caller';
    expect(parse(set).issues).toMatchObject([{ code: 'annotation-invalid', message: expect.stringContaining('proxy-connect-timeout') }]);
    expect(parse({ ...set, 'proxy-read-timeout': '30' }).value.proxy).toMatchObject({ readTimeout: 30 });
  });

  it('ignores other prefixes', () => {
    const { issues } = parseIngressAnnotations({
      'kubernetes.io/ingress.class': 'nginx',
      'example.com/server-snippet': 'anything',
      'nginx.org/ssl-passthrough': 'true',
    });
    expect(issues).toEqual([]);
  });

  describe('booleans, as Go\'s ParseBool reads them', () => {
    it.each(['true', 'TRUE', 'True', 't', 'T', '1', ' true\n'])('reads %j as true', (raw) => {
      expect(parse({ 'ssl-passthrough': raw }).value.tls.sslPassthrough).toBe(true);
      expect(parse({ 'ssl-redirect': raw }).value.tls.sslRedirect).toBe(true);
      expect(parse({ 'use-regex': raw }).value.paths.useRegex).toBe(true);
    });
    it.each(['false', 'FALSE', 'f', 'F', '0'])('reads %j as false', (raw) => {
      expect(parse({ 'ssl-redirect': raw }).value.tls.sslRedirect).toBe(false);
      expect(parse({ 'force-ssl-redirect': raw }).value.tls.forceSslRedirect).toBe(false);
    });
    it.each(['yes', 'no', 'on', '', 'truee', '2'])('rejects %j: an error, and ingress-nginx\'s fallback', (raw) => {
      const { value, issues } = parse({ 'ssl-redirect': raw, 'force-ssl-redirect': raw });
      expect(value.tls.sslRedirect).toBeUndefined();
      expect(value.tls.forceSslRedirect).toBe(false);
      expect(issues.filter((issue) => issue.severity === 'error').map((issue) => [issue.code, issue.severity, issue.leavesOut])).toEqual([
        ['annotation-invalid', 'error', false],
        ['annotation-invalid', 'error', false],
      ]);
      expect(issues.find((issue) => issue.severity === 'error')?.message).toContain('Falling back to its default');
    });
  });

  describe('spellings ingress-nginx reads', () => {
    it.each(['false', 'FALSE', ' false '])('reads proxy-ssl-verify and proxy-ssl-server-name %j as off, with an info', (raw) => {
      const { value, issues } = parse({ 'proxy-ssl-verify': raw, 'proxy-ssl-server-name': raw });
      expect(value.proxySsl.verify).toBe(false);
      expect(value.proxySsl.serverName).toBe(false);
      const spelled = issues.filter((issue) => issue.code === 'annotation-spelling');
      expect(spelled.map((issue) => [issue.severity, issue.leavesOut])).toEqual([['info', false], ['info', false]]);
      expect(spelled[0]?.message).toContain('read as "off"');
      expect(issues.filter((issue) => issue.severity === 'error')).toEqual([]);
    });
  });

  describe('what guards access fails closed', () => {
    it.each([
      ['canary', 'maybe'],
      ['backend-protocol', 'AJP'],
      ['proxy-ssl-verify', 'true'],
      ['proxy-ssl-secret', 'name-only'],
      ['whitelist-source-range', '10.0.0.0/33'],
      ['denylist-source-range', 'everyone'],
      ['satisfy', 'any'],
      ['auth-type', 'digest'],
      ['auth-secret', 'a/b/c'],
      ['auth-tls-verify-client', 'sometimes'],
      ['auth-tls-match-cn', 'CN=(a+)+'],
      ['auth-url', 'ftp://auth.example/'],
      ['limit-rps', '0'],
      ['limit-whitelist', 'nobody'],
    ])('%s=%j leaves the Ingress out', (name, raw) => {
      const issues = parse({ [name]: raw }).issues.filter((issue) => issue.code === 'annotation-invalid');
      expect(issues).toHaveLength(1);
      expect(issues[0]?.leavesOut).toBe(true);
      expect(issues[0]?.message).toContain('is not rendered until this is fixed');
    });

    it.each([
      ['proxy-body-size', '1 gigabyte'],
      ['proxy-read-timeout', '60s'],
      ['rewrite-target', '/$host'],
      ['canary-weight', '-1'],
      ['enable-cors', 'yes'],
      ['custom-http-errors', '200'],
    ])('%s=%j falls back, with an error', (name, raw) => {
      const issues = parse({ [name]: raw }).issues.filter((issue) => issue.code === 'annotation-invalid');
      expect(issues.map((issue) => [issue.severity, issue.leavesOut])).toEqual([['error', false]]);
    });

    it('falls back to the strictest CORS values, not to ingress-nginx\'s permissive defaults', () => {
      const { value } = parse({ 'cors-allow-origin': 'javascript:alert(1)', 'cors-allow-credentials': 'maybe' });
      expect(value.cors.allowOrigin).toEqual({ any: false, origins: [] });
      expect(value.cors.allowCredentials).toBe(false);
    });
  });

  describe('names from the catalog', () => {
    it('refuses snippets with an explanation, without echoing them', () => {
      for (const name of ['configuration-snippet', 'server-snippet', 'stream-snippet', 'auth-snippet', 'modsecurity-snippet', 'new-snippet']) {
        const { issues } = parse({ [name]: 'more_set_headers "X: y";' });
        expect(issues).toEqual([expect.objectContaining({ severity: 'error', code: 'snippet-refused', leavesOut: true })]);
        expect(issues[0]?.message).toContain('CVE-2025-1974');
        expect(issues[0]?.message).not.toContain('more_set_headers');
      }
    });

    it.each(['enable-modsecurity', 'auth-proxy-set-headers'])('refuses %s, saying what to do', (name) => {
      expect(issuesOf({ [name]: 'true' })).toEqual([['annotation-refused', 'error', name, true]]);
    });

    it.each(['upstream-hash-by-subset', 'enable-opentelemetry', 'mirror-uri'])(
      'warns that %s is ignored, saying what to do instead',
      (name) => {
        const { issues } = parse({ [name]: 'x' });
        expect(issues).toEqual([expect.objectContaining({ severity: 'warning', code: 'annotation-unsupported', leavesOut: false })]);
        expect(issues[0]?.message).toMatch(/ignores: \S/);
      },
    );

    it.each(['ssl-passtrough', 'backend-protocols', 'proxy-ssl-foo', 'x'])('warns that %s is unknown', (name) => {
      expect(issuesOf({ [name]: 'true' })).toEqual([['annotation-unknown', 'warning', name, false]]);
    });

    it('says at the resource where an annotation differs from ingress-nginx', () => {
      const { issues } = parse({ 'use-regex': 'true', 'proxy-body-size': '8m' });
      expect(issues).toEqual([expect.objectContaining({ severity: 'info', code: 'annotation-differs', annotation: `${prefix}use-regex` })]);
      expect(issues[0]?.message).toContain('differs from ingress-nginx on purpose');
    });

    it('lists every implemented annotation (aliases too) in the catalog as supported or differing, and nothing else so', () => {
      const implemented = annotationCatalog.filter((entry) => entry.status === 'supported' || entry.status === 'differs').map((entry) => entry.name);
      expect([...implementedAnnotationNames].sort()).toEqual([...implemented].sort());
    });

    it('describes an implemented annotation by its rule only, never again as an entry of its own', () => {
      expect(notImplementedAnnotations.map((entry) => entry.name).filter((name) => implementedAnnotationNames.has(name))).toEqual([]);
    });

    it('has one entry per name, each with a note unless supported, and a note for every alias', () => {
      const names = annotationCatalog.map((entry) => entry.name);
      expect(new Set(names).size).toBe(names.length);
      for (const entry of annotationCatalog) {
        if (entry.status !== 'supported') expect(entry.note, entry.name).not.toBe('');
      }
      for (const rule of allRules.filter((r) => r.aliases !== undefined)) expect(rule.aliasNote, rule.name).toMatch(/\S/);
    });

    it('words a default from the rule: its value, its ConfigMap key\'s default, or its own words', () => {
      expect(catalogEntry('canary-weight')?.defaultValue).toBe('`0`');
      expect(catalogEntry('auth-cache-duration')?.defaultValue).toBe('`200 202 401 5m`');
      expect(catalogEntry('server-alias')?.defaultValue).toBe('');
      expect(catalogEntry('proxy-body-size')?.defaultValue).toBe('ConfigMap `proxy-body-size` (`1m`)');
      expect(catalogEntry('whitelist-source-range')?.defaultValue).toBe('ConfigMap `whitelist-source-range`');
      expect(catalogEntry('cors-allow-origin')?.defaultValue).toBe('`*`');
    });

    it('quotes a hostile annotation name with its control characters escaped', () => {
      const key = `${prefix}x\u001b[2J\u202e`;
      const { issues } = parseIngressAnnotations({ [key]: 'y' });
      expect(issues[0]?.annotation).toBe(key);
      expect(issues[0]?.message).not.toContain('\u001b');
      expect(issues[0]?.message).toContain('\\u001b[2J\\u202e');
    });
  });

  describe('aliases', () => {
    it('reads whitelist-source-range as allowlist-source-range, which wins', () => {
      expect(parse({ 'whitelist-source-range': '10.0.0.0/8' }).value.sourceRange.allow).toEqual(['10.0.0.0/8']);
      expect(parse({ 'whitelist-source-range': '10.0.0.0/8', 'allowlist-source-range': '192.0.2.0/24' }).value.sourceRange.allow).toEqual([
        '192.0.2.0/24',
      ]);
      expect(parse({ 'limit-whitelist': '127.0.0.1' }).value.rateLimit.allowlist).toEqual(['127.0.0.1']);
    });
  });

  describe('families', () => {
    it('reads backend protocols case-insensitively', () => {
      expect(parse({ 'backend-protocol': ' grpcs ' }).value.tls.backendProtocol).toBe('GRPCS');
      expect(parse({ 'backend-protocol': 'Auto_Http' }).value.tls.backendProtocol).toBe('AUTO_HTTP');
    });

    it('reads a full proxy-ssl set; proxy-ssl-name may be $host and nothing else with a $', () => {
      const { value, issues } = parse({
        'proxy-ssl-secret': ' backend-ns/backend-ca ',
        'proxy-ssl-verify': 'ON',
        'proxy-ssl-verify-depth': '3',
        'proxy-ssl-name': '$host',
        'proxy-ssl-protocols': 'TLSv1.3',
        'proxy-ssl-ciphers': 'HIGH:!aNULL',
      });
      expect(issues.filter((issue) => issue.severity !== 'info')).toEqual([]);
      expect(value.proxySsl).toEqual({
        secret: { namespace: 'backend-ns', name: 'backend-ca' },
        verify: true,
        verifyDepth: 3,
        name: '$host',
        serverName: false,
        protocols: 'TLSv1.3',
        ciphers: 'HIGH:!aNULL',
      });
      for (const name of ['$proxy_host', '$host;', '*.example.com', 'a_b.example']) {
        expect(invalid({ 'proxy-ssl-name': name }), name).toBe(1);
      }
    });

    it('reads proxy tuning with nginx units', () => {
      const { value, issues } = parse({
        'proxy-body-size': '8M',
        'proxy-read-timeout': '120',
        'proxy-buffering': 'on',
        'proxy-buffer-size': '16k',
        'proxy-buffers-number': '8',
        'proxy-next-upstream': 'error  timeout http_502',
        'proxy-next-upstream-tries': '0',
        'proxy-http-version': '1.0',
        'proxy-redirect-from': 'http://backend.internal/',
        'proxy-redirect-to': 'https://app.example/',
      });
      expect(issues).toEqual([]);
      expect(value.proxy).toMatchObject({
        bodySize: '8m',
        readTimeout: 120,
        buffering: true,
        bufferSize: '16k',
        buffersNumber: 8,
        nextUpstream: 'error timeout http_502',
        nextUpstreamTries: 0,
        httpVersion: '1.0',
        redirectFrom: 'http://backend.internal/',
        redirectTo: 'https://app.example/',
      });
    });

    it('reads canary settings', () => {
      const { value, issues } = parse({
        canary: 'true',
        'canary-weight': '30',
        'canary-weight-total': '1000',
        'canary-by-header': 'X-Canary',
        'canary-by-header-pattern': '^(beta|gamma)$',
        'canary-by-cookie': 'try_me',
      });
      expect(issues.filter((issue) => issue.severity !== 'info')).toEqual([]);
      expect(value.canary).toEqual({
        enabled: true,
        weight: 30,
        weightTotal: 1000,
        header: 'X-Canary',
        headerValue: undefined,
        headerPattern: '^(beta|gamma)$',
        cookie: 'try_me',
      });
      expect(value.httpLevelAnnotations).toEqual([]);
    });

    it('reads redirects and regex settings', () => {
      const { value } = parse({
        'rewrite-target': '/$2',
        'permanent-redirect': 'https://new.example.com/path?a=b',
        'permanent-redirect-code': '308',
        'server-alias': 'B.example.com, *.c.example.com,b.example.com',
        'app-root': '/app',
      });
      expect(value.paths).toMatchObject({
        rewriteTarget: '/$2',
        permanentRedirect: 'https://new.example.com/path?a=b',
        permanentRedirectCode: 308,
        serverAlias: ['*.c.example.com', 'b.example.com'],
        appRoot: '/app',
      });
      for (const target of ['/$host', '$1;', '/a b', '/${1}']) expect(invalid({ 'rewrite-target': target }), target).toBe(1);
      for (const url of ['https://$host/x', 'javascript:alert(1)', 'https://a.example/x y', 'https://a.example/"']) {
        expect(invalid({ 'permanent-redirect': url }), url).toBe(1);
      }
      expect(invalid({ 'server-alias': '~^www\\d+\\.example\\.com$' })).toBe(1);
    });

    it('reads access control', () => {
      const { value, issues } = parse({
        'whitelist-source-range': '10.0.0.1/8, 2001:db8::1/32',
        'auth-type': 'basic',
        'auth-secret': 'users',
        'auth-realm': 'Authentication Required - app',
        'auth-tls-secret': 'certs/client-ca',
        'auth-tls-verify-client': 'optional',
        'auth-tls-match-cn': 'CN=(alice|bob)$',
        'auth-url': 'https://$host/oauth2/auth',
        'auth-signin': 'https://$host/oauth2/start?rd=$escaped_request_uri',
        'auth-response-headers': 'X-Auth-Request-User, X-Auth-Request-Email',
        'limit-rps': '10',
      });
      expect(issues.filter((issue) => issue.severity === 'error')).toEqual([]);
      expect(value.sourceRange.allow).toEqual(['10.0.0.0/8', '2001:db8::/32']);
      expect(value.basicAuth).toEqual({ type: 'basic', secret: { name: 'users' }, secretType: 'auth-file', realm: 'Authentication Required - app' });
      expect(value.clientCertificate).toMatchObject({ secret: { namespace: 'certs', name: 'client-ca' }, verifyClient: 'optional', matchCn: 'CN=(alice|bob)$' });
      expect(value.externalAuth.url).toEqual({ url: 'https://$host/oauth2/auth', scheme: 'https', path: '/oauth2/auth' });
      expect(value.externalAuth.signin?.url).toBe('https://$host/oauth2/start?rd=$request_uri');
      expect(value.externalAuth.responseHeaders).toEqual(['X-Auth-Request-User', 'X-Auth-Request-Email']);
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
    // Every implemented annotation except the pure booleans, whose only failure is being no boolean.
    const names = [...implementedAnnotationNames].sort();
    it.each(hostileValues)('rejects %j everywhere without echoing it', (hostile) => {
      const { issues } = parse(Object.fromEntries(names.map((name) => [name, hostile])));
      const invalid = issues.filter((issue) => issue.code === 'annotation-invalid');
      // Annotations read under an alias are shadowed by their main name, which is rejected instead.
      // upstream-hash-by takes nginx variables: `${ssl_server_name}` is a key it accepts.
      const takesVariables = hostile === '${ssl_server_name}' ? ['upstream-hash-by'] : [];
      expect(invalid.map((issue) => issue.annotation.slice(prefix.length))).toEqual(
        names.filter((name) => !['whitelist-source-range', 'limit-whitelist', ...takesVariables].includes(name)),
      );
      for (const issue of issues) {
        expect(issue.message).not.toContain(hostile);
        expect(issue.message).not.toContain(hostile.trim());
        expect(issue.message).not.toContain('\n');
        expect(issue.message).not.toContain('\u202e');
      }
    });
  });

  it('lists the HTTP-level annotations present, sorted, without ssl-passthrough and canary-*', () => {
    const { value } = parse({
      'ssl-passthrough': 'true',
      'rewrite-target': '/',
      'backend-protocol': 'HTTPS',
      'configuration-snippet': 'x',
      'canary-weight': '5',
    });
    expect(value.httpLevelAnnotations).toEqual([`${prefix}backend-protocol`, `${prefix}configuration-snippet`, `${prefix}rewrite-target`]);
  });

  it('sorts issues by annotation key whatever the input order', () => {
    const { issues } = parse({ zzz: '1', 'server-snippet': 'x', 'backend-protocol': 'AJP', affinity: 'cookie' });
    expect(issues.map((issue) => issue.annotation)).toEqual(['affinity', 'backend-protocol', 'server-snippet', 'zzz'].map((name) => prefix + name));
  });
});
