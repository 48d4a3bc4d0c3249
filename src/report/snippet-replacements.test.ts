import { describe, expect, it } from 'vitest';
import { replacementOf, snippetDirectives } from './snippet-replacements.js';

describe('snippet replacements for audit', () => {
  it('splits a snippet into directives, keeping blocks whole and dropping comments', () => {
    expect(snippetDirectives('# why\nmore_set_headers "X-A: b";\nif ($arg_x) { return 403; }\nreturn 301 https://e.test/;')).toEqual([
      'more_set_headers "X-A: b"',
      'if ($arg_x) { return 403; }',
      'return 301 https://e.test/',
    ]);
  });

  it.each([
    ['more_set_headers "X-Frame-Options: DENY"', 'custom-headers: a ConfigMap with "X-Frame-Options: DENY"'],
    ['proxy_set_header X-Team payments', 'proxy-set-headers: a ConfigMap with "X-Team: payments"'],
    ['add_header X-A b always', 'add-headers: a ConfigMap with "X-A: b"'],
    ['access_log off', 'enable-access-log: "false"'],
    ['proxy_hide_header X-Powered-By', 'hide-headers: "X-Powered-By" in the controller ConfigMap'],
    ['proxy_cookie_domain backend.internal $host', 'proxy-cookie-domain: "backend.internal $host"'],
    ['return 301 https://example.com/new', 'permanent-redirect: "https://example.com/new"'],
    ['return 308 https://example.com/new', 'permanent-redirect: "https://example.com/new", permanent-redirect-code: "308"'],
    ['return 302 /elsewhere', 'temporal-redirect: "/elsewhere"'],
    ['client_max_body_size 20m', 'proxy-body-size: "20m"'],
    ['proxy_read_timeout 120s', 'proxy-read-timeout: "120"'],
    ['allow 10.0.0.0/8', 'whitelist-source-range: "10.0.0.0/8"'],
  ])('replaces %s with %s', (directive, replacement) => {
    expect(replacementOf(directive).replacement).toBe(replacement);
  });

  it('says what ingress2nginx does with the replacement, and when nothing replaces a directive', () => {
    expect(replacementOf('return 301 https://e.test/').replacementStatus).toBe('supported');
    expect(replacementOf('if ($arg_x) { return 403; }')).toEqual({});
  });
});
