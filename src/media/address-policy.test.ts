import { describe, expect, it } from 'vitest';
import { classifyAddress, isPublicAddress, parseHostLiteral, type AddressClass } from './address-policy.js';

const PUBLIC = [
  '8.8.8.8',
  '1.1.1.1',
  '93.184.216.34',
  '11.0.0.1',
  '100.63.255.255', // just below CGNAT
  '100.128.0.0', // just above CGNAT
  '126.255.255.255',
  '128.0.0.1',
  '169.253.255.255',
  '172.15.255.255', // just below 172.16/12
  '172.32.0.0', // just above 172.16/12
  '192.0.1.255',
  '192.0.3.0',
  '192.167.255.255',
  '192.169.0.0',
  '198.17.255.255',
  '198.20.0.0', // just above 198.18/15
  '198.51.99.255',
  '203.0.112.255',
  '223.255.255.255',
  '2001:4860:4860::8888',
  '2606:4700:4700::1111',
  '2a00:1450:4001:80b::200e',
  '2001:db9::1', // just outside 2001:db8::/32
  '3ffe::1',
  '::ffff:8.8.8.8',
  '::ffff:808:808', // hex form of the above
  '0:0:0:0:0:ffff:0808:0808',
  '64:ff9b::8.8.8.8',
  '64:ff9b::808:808',
  '2002:0808:0808::1', // 6to4 of 8.8.8.8
];

const NOT_PUBLIC: Array<[string, AddressClass]> = [
  ['0.0.0.0', 'unspecified'],
  ['0.1.2.3', 'unspecified'],
  ['0.255.255.255', 'unspecified'],
  ['127.0.0.1', 'loopback'],
  ['127.255.255.254', 'loopback'],
  ['10.0.0.1', 'private'],
  ['10.255.255.255', 'private'],
  ['172.16.0.1', 'private'],
  ['172.31.255.255', 'private'],
  ['192.168.0.1', 'private'],
  ['192.168.255.255', 'private'],
  ['169.254.169.254', 'link-local'], // cloud metadata
  ['169.254.0.0', 'link-local'],
  ['100.64.0.1', 'shared'],
  ['100.127.255.255', 'shared'],
  ['224.0.0.1', 'multicast'],
  ['239.255.255.250', 'multicast'],
  ['240.0.0.1', 'reserved'],
  ['254.255.255.255', 'reserved'],
  ['255.255.255.255', 'broadcast'],
  ['192.0.0.1', 'reserved'],
  ['192.0.0.255', 'reserved'],
  ['192.88.99.1', 'reserved'],
  ['198.18.0.1', 'benchmarking'],
  ['198.19.255.255', 'benchmarking'],
  ['192.0.2.1', 'documentation'],
  ['198.51.100.7', 'documentation'],
  ['203.0.113.200', 'documentation'],
  ['::', 'unspecified'],
  ['0:0:0:0:0:0:0:0', 'unspecified'],
  ['::1', 'loopback'],
  ['0:0:0:0:0:0:0:1', 'loopback'],
  ['fc00::1', 'private'],
  ['fd12:3456:789a::1', 'private'],
  ['fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', 'private'],
  ['fe80::1', 'link-local'],
  ['fe80::1%eth0', 'link-local'],
  ['febf:ffff::1', 'link-local'],
  ['fec0::1', 'private'],
  ['ff02::1', 'multicast'],
  ['ff05::1:3', 'multicast'],
  ['2001:db8::1', 'documentation'],
  ['2001:0db8:ffff:ffff::1', 'documentation'],
  ['3fff::1', 'documentation'],
  ['2001:2::1', 'benchmarking'],
  ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'reserved'], // Teredo
  ['100::1', 'reserved'],
  ['64:ff9b:1::1', 'reserved'],
  ['4000::1', 'reserved'], // outside 2000::/3
  ['1::1', 'reserved'],
  // IPv4-mapped, dotted and hex forms
  ['::ffff:127.0.0.1', 'loopback'],
  ['::ffff:7f00:1', 'loopback'],
  ['0:0:0:0:0:ffff:7f00:0001', 'loopback'],
  ['::FFFF:7F00:1', 'loopback'],
  ['::ffff:10.0.0.1', 'private'],
  ['::ffff:a9fe:a9fe', 'link-local'], // 169.254.169.254
  ['::ffff:0.0.0.0', 'unspecified'],
  ['::ffff:192.168.1.1', 'private'],
  // IPv4-compatible (deprecated) and NAT64
  ['::127.0.0.1', 'loopback'],
  ['::7f00:1', 'loopback'],
  ['::10.1.2.3', 'private'],
  ['64:ff9b::127.0.0.1', 'loopback'],
  ['64:ff9b::7f00:1', 'loopback'],
  ['64:ff9b::a9fe:a9fe', 'link-local'],
  ['64:ff9b::192.168.0.1', 'private'],
  // 6to4
  ['2002:7f00:0001::', 'loopback'],
  ['2002:0a00:0001::1', 'private'],
  ['2002:c0a8:0101:1::1', 'private'],
  ['2002:a9fe:a9fe::', 'link-local'],
  // not addresses at all
  ['', 'invalid'],
  ['localhost', 'invalid'],
  ['127.1', 'invalid'],
  ['2130706433', 'invalid'],
  ['01.2.3.4', 'invalid'],
  ['1.2.3.256', 'invalid'],
  ['[::1]', 'invalid'],
  ['::ffff:01.2.3.4', 'invalid'],
  ['1:2:3:4:5:6:7:8:9', 'invalid'],
  ['gggg::1', 'invalid'],
];

describe('isPublicAddress', () => {
  it.each(PUBLIC)('%s is public', (ip) => {
    expect(classifyAddress(ip)).toBe('public');
    expect(isPublicAddress(ip)).toBe(true);
  });

  it.each(NOT_PUBLIC)('%s is not public (%s)', (ip, cls) => {
    expect(classifyAddress(ip)).toBe(cls);
    expect(isPublicAddress(ip)).toBe(false);
  });
});

describe('parseHostLiteral', () => {
  const LOOPBACK_SPELLINGS = [
    '127.0.0.1',
    '2130706433',
    '0x7f000001',
    '0X7F000001',
    '0x7f.1',
    '127.1',
    '127.0.1',
    '0177.0.0.1',
    '017700000001',
    '0x7f.0x0.0x0.0x1',
    '127.0.0.1.',
    '１２７.０.０.１', // full-width digits
    '127。0。0。1', // ideographic full stop
    '%31%32%37.0.0.1',
  ];

  it.each(LOOPBACK_SPELLINGS)('%s is 127.0.0.1, as new URL() says', (host) => {
    expect(parseHostLiteral(host)).toEqual({ family: 4, address: '127.0.0.1' });
    expect(new URL(`http://${host}/`).hostname).toBe('127.0.0.1');
  });

  it.each([
    ['0', '0.0.0.0'],
    ['0x', '0.0.0.0'],
    ['1.256', '1.0.1.0'],
    ['10.1', '10.0.0.1'],
    ['192.168.257', '192.168.1.1'],
    ['4294967295', '255.255.255.255'],
    ['0xa9fea9fe', '169.254.169.254'],
  ])('%s is %s, as new URL() says', (host, address) => {
    expect(parseHostLiteral(host)).toEqual({ family: 4, address });
    expect(new URL(`http://${host}/`).hostname).toBe(address);
  });

  it.each([['example.com'], ['localhost'], ['1.2.3.4.5'], ['4294967296'], ['256.1.1.1'], ['08'], ['0x1g'], ['a.1']])('%s is not an IP literal', (host) => {
    expect(parseHostLiteral(host)).toBeNull();
  });

  it.each([
    ['[::1]', '::1'],
    ['::1', '::1'],
    ['[::ffff:7f00:1]', '::ffff:7f00:1'],
    ['[FE80::1%25eth0]', 'fe80::1'],
    ['[2001:DB8::1]', '2001:db8::1'],
  ])('%s is the IPv6 literal %s', (host, address) => {
    expect(parseHostLiteral(host)).toEqual({ family: 6, address });
  });

  it('rejects a bracketed non-address', () => {
    expect(parseHostLiteral('[not-an-ip]')).toBeNull();
    expect(parseHostLiteral('[1.2.3.4]')).toBeNull();
  });

  it('agrees with new URL() on the hostname of every dangerous spelling', () => {
    const cases: Array<[string, string]> = [
      ['http://2130706433/', '127.0.0.1'],
      ['http://0x7f000001/', '127.0.0.1'],
      ['http://0x7f.1/', '127.0.0.1'],
      ['http://127.1/', '127.0.0.1'],
      ['http://0/', '0.0.0.0'],
      ['http://[::ffff:127.0.0.1]/', '::ffff:7f00:1'],
      ['http://[0:0:0:0:0:ffff:7f00:1]/', '::ffff:7f00:1'],
      ['http://[::1]/', '::1'],
    ];
    for (const [url, address] of cases) {
      const lit = parseHostLiteral(new URL(url).hostname);
      expect(lit?.address, url).toBe(address);
      expect(isPublicAddress(lit?.address ?? ''), url).toBe(false);
    }
  });
});

describe('isPublicAddress against an independent net.BlockList', () => {
  it('agrees on random IPv4 addresses and their mapped / NAT64 / 6to4 forms', async () => {
    const { BlockList } = await import('node:net');
    const list = new BlockList();
    const v4: Array<[string, number]> = [
      ['0.0.0.0', 8],
      ['10.0.0.0', 8],
      ['100.64.0.0', 10],
      ['127.0.0.0', 8],
      ['169.254.0.0', 16],
      ['172.16.0.0', 12],
      ['192.0.0.0', 24],
      ['192.0.2.0', 24],
      ['192.88.99.0', 24],
      ['192.168.0.0', 16],
      ['198.18.0.0', 15],
      ['198.51.100.0', 24],
      ['203.0.113.0', 24],
      ['224.0.0.0', 4],
      ['240.0.0.0', 4],
    ];
    for (const [net, bits] of v4) list.addSubnet(net, bits, 'ipv4');
    // Bias the sample towards the edges of the ranges, where mask mistakes show.
    const seeds = v4.flatMap(([net, bits]) => {
      const base = net.split('.').reduce((a, p) => a * 256 + Number(p), 0);
      const size = 2 ** (32 - bits);
      return [base - 1, base, base + size - 1, base + size];
    });
    let state = 12345;
    const rand = (): number => (state = (Math.imul(state, 1103515245) + 12345) >>> 0);
    const samples = [...seeds, ...Array.from({ length: 5000 }, rand)].filter((n) => n >= 0 && n <= 0xffffffff);
    for (const n of samples) {
      const ip = [n >>> 24, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff].join('.');
      const expected = !list.check(ip, 'ipv4');
      const hi = (n >>> 16).toString(16);
      const lo = (n & 0xffff).toString(16);
      expect(isPublicAddress(ip), ip).toBe(expected);
      expect(isPublicAddress(`::ffff:${ip}`), `::ffff:${ip}`).toBe(expected);
      expect(isPublicAddress(`::ffff:${hi}:${lo}`), `::ffff:${hi}:${lo}`).toBe(expected);
      expect(isPublicAddress(`64:ff9b::${hi}:${lo}`), `64:ff9b::${hi}:${lo}`).toBe(expected);
      expect(isPublicAddress(`2002:${hi}:${lo}::1`), `2002:${hi}:${lo}::1`).toBe(expected);
    }
  });
});
