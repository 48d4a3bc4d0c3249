import { describe, expect, it } from 'vitest';
import { accessWidenings } from './access-widening.js';

const prefix = 'nginx.ingress.kubernetes.io/';
const annotations = (values: Record<string, string>) => Object.fromEntries(Object.entries(values).map(([k, v]) => [`${prefix}${k}`, v]));
const widened = (before: Record<string, string>, after: Record<string, string>) =>
  accessWidenings(annotations(before), annotations(after)).map((w) => w.annotation);

describe('accessWidenings', () => {
  it('an allow-list that admits addresses it did not: opened to everyone, or by one more network', () => {
    expect(widened({ 'whitelist-source-range': '10.0.0.0/8' }, { 'whitelist-source-range': '0.0.0.0/0,::/0' })).toEqual(['whitelist-source-range']);
    expect(widened({ 'allowlist-source-range': '10.0.0.0/8' }, { 'allowlist-source-range': '10.0.0.0/8, 203.0.113.7' })).toEqual(['allowlist-source-range']);
    expect(widened({ 'whitelist-source-range': '2001:db8::/48' }, { 'whitelist-source-range': '2001:db8::/32' })).toEqual(['whitelist-source-range']);
    expect(widened({ 'whitelist-source-range': '10.0.0.0/8' }, { 'whitelist-source-range': '10.0.0.0/8,::ffff:0.0.0.0/96' })).toEqual(['whitelist-source-range']);
    const [message] = accessWidenings(annotations({ 'whitelist-source-range': '10.0.0.0/8' }), annotations({ 'whitelist-source-range': '0.0.0.0/0,::/0' }));
    expect(message?.message).toBe('whitelist-source-range admits 0.0.0.0/0, ::/0 now, which it did not (was "10.0.0.0/8", now "0.0.0.0/0,::/0")');
  });

  it('an allow-list that admits the same or less is no widening, however it is written', () => {
    for (const [before, after] of [
      ['10.0.0.0/8', '10.0.0.0/8'],
      ['10.0.0.0/8, 192.168.0.0/16', '192.168.0.0/16,10.0.0.0/8'],
      ['10.0.0.0/8', '10.1.0.0/16, 10.2.3.4'],
      ['10.0.0.0/9, 10.128.0.0/9', '10.0.0.0/8'],
      ['2001:db8::/32', '2001:db8:1::/48'],
      ['2001:db8::/32', '2001:0db8:0:0::/32'],
    ]) {
      expect(widened({ 'whitelist-source-range': before! }, { 'whitelist-source-range': after! }), `${before} → ${after}`).toEqual([]);
    }
  });

  it('a deny-list that stops denying some addresses; one that denies more is no widening', () => {
    expect(widened({ 'denylist-source-range': '198.51.100.0/24, 203.0.113.0/24' }, { 'denylist-source-range': '198.51.100.0/24' })).toEqual(['denylist-source-range']);
    expect(widened({ 'denylist-source-range': '198.51.100.0/24' }, { 'denylist-source-range': '198.51.100.0/25' })).toEqual(['denylist-source-range']);
    expect(widened({ 'denylist-source-range': '198.51.100.0/24' }, { 'denylist-source-range': '198.51.0.0/16' })).toEqual([]);
  });

  it('client-certificate verification relaxed, from "on" whether written or not; tightened is no widening', () => {
    const tls = { 'auth-tls-secret': 'web/ca' };
    expect(widened(tls, { ...tls, 'auth-tls-verify-client': 'optional_no_ca' })).toEqual(['auth-tls-verify-client']);
    expect(widened({ ...tls, 'auth-tls-verify-client': 'on' }, { ...tls, 'auth-tls-verify-client': 'optional' })).toEqual(['auth-tls-verify-client']);
    expect(widened({ ...tls, 'auth-tls-verify-client': 'optional' }, { ...tls, 'auth-tls-verify-client': 'off' })).toEqual(['auth-tls-verify-client']);
    expect(widened({ ...tls, 'auth-tls-verify-client': 'optional' }, { ...tls, 'auth-tls-verify-client': 'ON' })).toEqual([]);
    expect(widened({ ...tls, 'auth-tls-verify-depth': '1' }, { ...tls, 'auth-tls-verify-depth': '3' })).toEqual(['auth-tls-verify-depth']);
    expect(widened(tls, { 'auth-tls-secret': 'web/other-ca' })).toEqual(['auth-tls-secret']);
  });

  it('the auth service, its users or its kind swapped; satisfy turned to any', () => {
    expect(widened({ 'auth-url': 'http://auth.sso.svc/check' }, { 'auth-url': 'http://auth.other.svc/check' })).toEqual(['auth-url']);
    expect(widened({ 'auth-type': 'basic', 'auth-secret': 'web/users' }, { 'auth-type': 'basic', 'auth-secret': 'web/everyone' })).toEqual(['auth-secret']);
    expect(widened({ satisfy: 'all' }, { satisfy: 'any' })).toEqual(['satisfy']);
    expect(widened({}, { satisfy: 'any' })).toEqual(['satisfy']);
    expect(widened({ satisfy: 'any' }, { satisfy: 'all' })).toEqual([]);
  });

  it('adding access control, removing it (another rule) and values that do not parse are not this rule', () => {
    expect(widened({}, { 'whitelist-source-range': '10.0.0.0/8', 'auth-url': 'http://a/' })).toEqual([]);
    expect(widened({ 'whitelist-source-range': '10.0.0.0/8', 'auth-url': 'http://a/' }, {})).toEqual([]);
    expect(widened({ 'whitelist-source-range': '10.0.0.0/8' }, { 'whitelist-source-range': 'everyone' })).toEqual([]);
  });
});
