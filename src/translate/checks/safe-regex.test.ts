import { describe, expect, it } from 'vitest';
import { checkSafeRegex, pathRegexAlphabet, textRegexAlphabet } from './safe-regex.js';

const groupsOf = (source: string, alphabet = pathRegexAlphabet) => {
  const checked = checkSafeRegex(source, alphabet);
  return checked.ok ? checked.value.capturingGroups : checked.problem;
};

describe('checkSafeRegex', () => {
  it.each([
    ['/api(/|$)(.*)', 2],
    ['/foo/bar', 0],
    ['/v[0-9]+/items/?', 0],
    ['/(?:a|b)/(\\d{1,3})$', 1],
    ['/static/.*\\.(js|css|png)$', 1],
    ['/users/([^/]+)/posts', 1],
    ['/a{2}b{1,}c{0,3}?', 0],
    ['/[\\w.-]+@example\\.com', 0],
    ['/x(/.*)?', 1],
  ])('accepts the path regex %j with %i groups', (source, groups) => {
    expect(groupsOf(source)).toBe(groups);
  });

  it.each([
    ['CN=(alice|bob)$', 1],
    ['CN=my client,O=Example', 0],
    ['^(beta|gamma)$', 1],
    ['(?i)^canary', 0],
  ])('accepts the text regex %j', (source, groups) => {
    expect(groupsOf(source, textRegexAlphabet)).toBe(groups);
  });

  it.each([
    ['(a+)+', 'nests one unbounded repetition'],
    ['(a*)*b', 'nests one unbounded repetition'],
    ['(?:x|(y+))*', 'nests one unbounded repetition'],
    ['(a+){2,}', 'nests one unbounded repetition'],
    ['/a(', 'unclosed "("'],
    ['/a)', 'unmatched ")"'],
    ['/[a-', 'unclosed "["'],
    ['/[z-a]', 'out of order'],
    ['/[[:alpha:]]', 'POSIX'],
    ['/a{3,2}', 'out of order'],
    ['/a{2000}', 'above 1000'],
    ['/a{x}', 'not a repetition'],
    ['*a', 'nothing to repeat'],
    ['/(*a)', 'nothing to repeat'],
    ['/a**', 'repeats a repetition'],
    ['/a++', 'repeats a repetition'],
    ['/(?=x)', 'group form'],
    ['/(?<name>x)', 'group form'],
    ['/\\1', 'escape'],
    ['/\\\\', 'escape'],
    ['/\\"', 'escape'],
    ['/\\x41', 'escape'],
    ['/a b', 'not accepted here'],
    ['/a;b', 'not accepted here'],
    ['/a"b', 'not accepted here'],
    ["/a'b", 'not accepted here'],
    ['/a#b', 'not accepted here'],
    ['/a\nb', 'not accepted here'],
    ['/a}', 'unmatched "}"'],
    ['(?i)/a', 'not accepted here'],
    ['/a\\', 'ends with a backslash'],
    ['/a$host', 'can only end'],
    ['/a$b|c', 'can only end'],
    ['', 'is empty'],
  ])('refuses the path regex %j', (source, problem) => {
    expect(groupsOf(source)).toContain(problem);
  });

  it('refuses what would break out of nginx quoting (the CVE-2025-1097 shape)', () => {
    const payloads = [
      'CN=abc" ; } } server { listen 1; } #',
      'CN=x$"\n}\nload_module /tmp/x.so;',
      'CN=a\\"b',
      "CN=a';b",
      'CN=${ssl_client_s_dn}',
      'CN={evil}',
    ];
    for (const payload of payloads) expect(checkSafeRegex(payload, textRegexAlphabet).ok, payload).toBe(false);
  });

  it.each([
    ['/((a{999}){999}){999}', 'multiply to more than 1000'],
    ['/(a{999}){2}', 'multiply to more than 1000'],
    ['/(abcdefghij[a-z][0-9]){400}', 'too large'],
    [`/${'('.repeat(17)}a${')'.repeat(17)}`, 'more than 16 deep'],
    ['/(a|a)*$', 'alternatives that can match the same text'],
    ['/(js|json)', 'alternatives that can match the same text'],
    ['/(a|)b', 'alternatives that can match the same text'],
    ['/(.*a){12}$', 'inside another repetition'],
    ['/(a?){30}a{30}', 'inside another repetition'],
    ['/(a?)*', 'inside another repetition'],
    ['/.*a.*b$', 'scans the same characters again'],
    ['/\\d+\\d+$', 'scans the same characters again'],
    ['/api/.*/items/.*\\.json$', 'scans the same characters again'],
    ['/.*=[a-z=]*!', 'scans the same characters again'],
  ])('refuses the costly path regex %j', (source, problem) => {
    expect(groupsOf(source)).toContain(problem);
  });

  it.each([
    ['/(api|app)/(v1|v2)', 2],
    ['/[^a]*a.*b$', 0],
    ['/(.*)/api/(.*)', 2],
    ['/users/(.*)/posts/([^/]*)\\.json$', 2],
    ['/[a-z]{1,1000}x', 0],
    ['/(\\d{1,3}\\.){3}\\d{1,3}$', 1],
    ['/([^/]+/){3}x', 1],
  ])('accepts the path regex %j, which is linear', (source, groups) => {
    expect(groupsOf(source)).toBe(groups);
  });

  it.each([
    ['x.*y', 'anchor it with ^'],
    ['.*beta.*', 'anchor it with ^'],
    ['CN=.*,O=Example', 'anchor it with ^'],
    ['(a|a)*$', 'alternatives'],
    ['(.*a){12}$', 'inside another repetition'],
  ])('refuses the costly text regex %j (searched for anywhere in the value)', (source, problem) => {
    expect(groupsOf(source, textRegexAlphabet)).toContain(problem);
  });

  it.each(['^x.*y', '^.*beta.*', 'CN=[a-z]+,O=Example', 'CN=(alice|bob)$'])('accepts the text regex %j', (source) => {
    expect(checkSafeRegex(source, textRegexAlphabet).ok).toBe(true);
  });

  it('does not let a long expression through', () => {
    expect(groupsOf(`/${'a'.repeat(1024)}`)).toContain('longer than');
    expect(groupsOf(`CN=${'a'.repeat(260)}`, textRegexAlphabet)).toContain('longer than');
  });

  it('describes a problem without quoting the input', () => {
    const checked = checkSafeRegex('/a;rm -rf', pathRegexAlphabet);
    expect(checked.ok).toBe(false);
    if (!checked.ok) expect(checked.problem).not.toContain('rm -rf');
  });
});
