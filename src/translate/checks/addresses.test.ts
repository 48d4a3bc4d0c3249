import { describe, expect, it } from 'vitest';
import { addressBytes, specialAddress, specialHostName } from './addresses.js';

describe('specialAddress', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['2130706433', 'loopback'],
    ['0x7f000001', 'loopback'],
    ['0x7f.1', 'loopback'],
    ['0177.0.0.1', 'loopback'],
    ['127.1', 'loopback'],
    ['::1', 'loopback'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::127.0.0.1', 'loopback'],
    ['64:ff9b::127.0.0.1', 'loopback'],
    ['64:ff9b::7f00:1', 'loopback'],
    ['169.254.169.254', 'link-local'],
    ['2852039166', 'link-local'],
    ['0xa9.0xfe.0xa9.0xfe', 'link-local'],
    ['0251.0376.0251.0376', 'link-local'],
    ['::ffff:169.254.169.254', 'link-local'],
    ['::ffff:a9fe:a9fe', 'link-local'],
    ['::169.254.169.254', 'link-local'],
    ['64:ff9b::a9fe:a9fe', 'link-local'],
    ['::ffff:0:a9fe:a9fe', 'link-local'],
    ['2002:a9fe:a9fe::1', 'link-local'],
    ['2001:0:a9fe:a9fe::1', 'link-local'],
    ['2001:0:4136:e378:8000:63bf:5601:5601', 'link-local'],
    ['169.254.170.2', 'link-local'],
    ['fe80::1', 'link-local'],
    ['fd00:ec2::254', 'metadata'],
    ['[fd00:ec2::254]', 'metadata'],
    ['fd20:ce::254', 'metadata'],
    ['100.100.100.200', 'metadata'],
    ['::ffff:100.100.100.200', 'metadata'],
    ['168.63.129.16', 'metadata'],
    ['192.0.0.192', 'metadata'],
    ['0.0.0.0', 'unspecified'],
    ['0', 'unspecified'],
    ['::', 'unspecified'],
    ['::ffff:0.0.0.0', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['ff02::1', 'multicast'],
    ['255.255.255.255', 'reserved'],
    ['64:ff9b:1::a00:1', 'NAT64'],
  ])('refuses %s (%s)', (text, what) => {
    expect(specialAddress(text)?.what).toContain(what);
  });

  it.each(['10.0.0.1', '192.168.1.10', '100.64.0.1', '100.100.100.201', '2001:db8::1', 'fd00::1', '::ffff:10.0.0.1', '64:ff9b::a00:1', '8.8.8.8', 'example.com', '1.2.3.4.5', '256.1.1.1'])(
    'lets %s through (not special, or no address)',
    (text) => {
      expect(specialAddress(text)).toBeUndefined();
    },
  );

  it('reads IPv4 the way the C library does', () => {
    expect(addressBytes('2130706433')).toEqual([127, 0, 0, 1]);
    expect(addressBytes('10.1')).toEqual([10, 0, 0, 1]);
    expect(addressBytes('10.0x10.0300')).toEqual([10, 16, 0, 192]);
    expect(addressBytes('4294967296')).toBeUndefined();
    expect(addressBytes('08.1.1.1')).toBeUndefined();
  });
});

describe('specialHostName', () => {
  it.each([
    ['localhost', 'loopback'],
    ['api.localhost', 'loopback'],
    ['metadata.google.internal', 'metadata'],
    ['METADATA.google.internal.', 'metadata'],
    ['2130706433', 'IP address'],
    ['0x7f.1', 'IP address'],
    ['127.0.0.1.nip.io', 'spells 127.0.0.1'],
    ['app.169.254.169.254.sslip.io', 'spells 169.254.169.254'],
    ['169-254-169-254.sslip.io', 'spells 169.254.169.254'],
    ['app-127-0-0-1.nip.io', 'spells 127.0.0.1'],
  ])('refuses %s', (name, why) => {
    expect(specialHostName(name)).toContain(why);
  });

  it.each(['api.example.org', '10.0.0.1.nip.io', 'v1-2-3-4.example.com', 'svc.team-a.svc.cluster.local'])('lets %s through', (name) => {
    expect(specialHostName(name)).toBeUndefined();
  });
});
