import { describe, expect, it } from 'vitest';
import { kebabCase } from './conditions.js';
import { checkHostname, compareSpecificity, intersectHostnames } from './hostnames.js';

describe('hostname intersection (listener × route)', () => {
  it.each([
    // exact / exact
    ['www.example.com', 'www.example.com', 'www.example.com'],
    ['www.example.com', 'api.example.com', undefined],
    // wildcard listener / exact route, one and several labels
    ['*.example.com', 'www.example.com', 'www.example.com'],
    ['*.example.com', 'sub.domain.example.com', 'sub.domain.example.com'],
    ['*.example.com', 'example.com', undefined],
    ['*.example.com', 'www.example.net', undefined],
    ['*.example.com', 'wwwexample.com', undefined],
    // exact listener / wildcard route, both ways round
    ['www.example.com', '*.example.com', 'www.example.com'],
    ['sub.domain.example.com', '*.example.com', 'sub.domain.example.com'],
    ['example.com', '*.example.com', undefined],
    // wildcard / wildcard: the more specific one is the overlap
    ['*.example.com', '*.example.com', '*.example.com'],
    ['*.com', '*.example.com', '*.example.com'],
    ['*.example.com', '*.com', '*.example.com'],
    ['*.example.com', '*.example.net', undefined],
    ['*.a.example.com', '*.b.example.com', undefined],
    // no listener hostname means *
    [undefined, 'www.example.com', 'www.example.com'],
    [undefined, '*.example.com', '*.example.com'],
    ['*', '*', '*'],
  ])('listener %s, route %s → %s', (listener, route, expected) => {
    expect(intersectHostnames(listener, route)).toBe(expected);
  });
});

describe('listener hostname specificity', () => {
  it('orders exact, then longer wildcard suffix, then shorter, then none', () => {
    const sorted = [undefined, '*.com', 'a.example.com', '*.example.com', '*.b.example.com'].sort(compareSpecificity);
    expect(sorted).toEqual(['a.example.com', '*.b.example.com', '*.example.com', '*.com', undefined]);
  });

  it('treats two exact names as equally specific', () => {
    expect(compareSpecificity('a.example.com', 'b.example.com')).toBe(0);
  });
});

describe('hostname validation', () => {
  it.each(['example.com', 'a.b-c.example', '*.example.com', '*.com', 'localhost'])('accepts %s', (hostname) => {
    expect(checkHostname(hostname)).toEqual({ ok: true, value: hostname });
  });

  it.each([
    ['192.0.2.1', 'IP address'],
    ['2001:db8::1', 'IP address'],
    ['a.*.example.com', 'whole first label'],
    ['*example.com', 'whole first label'],
    ['*', 'whole first label'],
    ['**.example.com', 'whole first label'],
    ['*.*.example.com', 'whole first label'],
    ['*.-a.example.com', 'not a lowercase RFC 1123'],
    ['Example.com', 'not a lowercase RFC 1123'],
    ['example.com.', 'not a lowercase RFC 1123'],
    ['exa mple.com', 'never accepted'],
    ['a;b.example.com', 'never accepted'],
  ])('rejects %j (%s)', (hostname, why) => {
    const checked = checkHostname(hostname);
    expect(checked.ok).toBe(false);
    if (!checked.ok) expect(checked.problem).toContain(why);
  });
});

describe('diagnostic codes from reasons', () => {
  it.each([
    ['RefNotPermitted', 'ref-not-permitted'],
    ['InvalidCACertificateRef', 'invalid-ca-certificate-ref'],
    ['NoValidCACertificate', 'no-valid-ca-certificate'],
    ['BackendTLSPolicy', 'backend-tls-policy'],
    ['NoMatchingListenerHostname', 'no-matching-listener-hostname'],
  ])('%s → %s', (reason, code) => {
    expect(kebabCase(reason)).toBe(code);
  });
});
