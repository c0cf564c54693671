// The private-network guard of webhook deliveries (CONTRACT B.9) over every range of IANA's IPv4 and IPv6
// Special-Purpose Address Registries, the translated and embedding blocks, multicast and the space outside
// global unicast: the first, middle and last address of each is refused; public addresses pass. Then one
// delivery through the API to an IPv4-translated loopback address, refused like 127.0.0.1.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECT, newTenant, testApp, type TestApp } from '../helpers/app.js';
import { isolatedPostgresUrl } from '../helpers/webhooks-e2e.js';
import { isBlockedAddress } from '../../src/modules/webhooks/webhooks.network.js';

// NOTE: the delivery queue is global to a database; on PostgreSQL this file gets its own database so no
// worker process of another test file attempts the delivery observed here.
const t: TestApp = await testApp(DIALECT === 'postgres' ? { DATABASE_URL: await isolatedPostgresUrl('webhooks_guard') } : {});

/** IANA IPv4 Special-Purpose Address Registry, every entry, and multicast. */
const V4: [string, string][] = [
  ['0.0.0.0/8', 'this network'],
  ['0.0.0.0/32', 'this host on this network'],
  ['10.0.0.0/8', 'private use'],
  ['100.64.0.0/10', 'shared address space (CGNAT)'],
  ['127.0.0.0/8', 'loopback'],
  ['169.254.0.0/16', 'link-local'],
  ['172.16.0.0/12', 'private use'],
  ['192.0.0.0/24', 'IETF protocol assignments'],
  ['192.0.0.0/29', 'IPv4 service continuity prefix'],
  ['192.0.0.8/32', 'IPv4 dummy address'],
  ['192.0.0.9/32', 'PCP anycast'],
  ['192.0.0.10/32', 'TURN anycast'],
  ['192.0.0.170/32', 'NAT64/DNS64 discovery'],
  ['192.0.0.171/32', 'NAT64/DNS64 discovery'],
  ['192.0.2.0/24', 'documentation TEST-NET-1'],
  ['192.31.196.0/24', 'AS112-v4'],
  ['192.52.193.0/24', 'AMT'],
  ['192.88.99.0/24', 'deprecated 6to4 relay anycast'],
  ['192.88.99.2/32', '6a44 relay anycast'],
  ['192.168.0.0/16', 'private use'],
  ['192.175.48.0/24', 'direct delegation AS112'],
  ['198.18.0.0/15', 'benchmarking'],
  ['198.51.100.0/24', 'documentation TEST-NET-2'],
  ['203.0.113.0/24', 'documentation TEST-NET-3'],
  ['224.0.0.0/4', 'multicast'],
  ['240.0.0.0/4', 'reserved'],
  ['255.255.255.255/32', 'limited broadcast'],
];

/** IANA IPv6 Special-Purpose Address Registry, every entry, the deprecated and translated blocks, multicast. */
const V6: [string, string][] = [
  ['::/128', 'unspecified'],
  ['::1/128', 'loopback'],
  ['::/96', 'IPv4-compatible (deprecated)'],
  ['::ffff:0:0:0/96', 'IPv4-translated (RFC 2765)'],
  ['64:ff9b:1::/48', 'local-use NAT64'],
  ['100::/64', 'discard-only'],
  ['100:0:0:1::/64', 'dummy IPv6 prefix'],
  ['2001::/23', 'IETF protocol assignments'],
  ['2001::/32', 'Teredo'],
  ['2001:1::1/128', 'PCP anycast'],
  ['2001:1::2/128', 'TURN anycast'],
  ['2001:1::3/128', 'DNS-SD SRP anycast'],
  ['2001:2::/48', 'benchmarking'],
  ['2001:3::/32', 'AMT'],
  ['2001:4:112::/48', 'AS112-v6'],
  ['2001:10::/28', 'ORCHID (deprecated)'],
  ['2001:20::/28', 'ORCHIDv2'],
  ['2001:30::/28', 'drone remote ID entity tags'],
  ['2001:db8::/32', 'documentation'],
  ['2002::/16', '6to4'],
  ['2620:4f:8000::/48', 'direct delegation AS112'],
  ['3fff::/20', 'documentation'],
  ['5f00::/16', 'SRv6 SIDs'],
  ['fc00::/7', 'unique-local'],
  ['fe80::/10', 'link-local'],
  ['fec0::/10', 'site-local (deprecated)'],
  ['ff00::/8', 'multicast'],
  ['::/3', 'reserved by the IETF (outside global unicast)'],
  ['4000::/2', 'reserved by the IETF (outside global unicast)'],
  ['8000::/1', 'reserved, unique-local, link-local, multicast (outside global unicast)'],
];

function v4ToBig(ip: string): bigint {
  return ip.split('.').reduce((n, part) => (n << 8n) | BigInt(Number(part)), 0n);
}
function bigToV4(n: bigint): string {
  return [24n, 16n, 8n, 0n].map((shift) => String((n >> shift) & 0xffn)).join('.');
}
function v6ToBig(ip: string): bigint {
  const [head, tail] = ip.split('::');
  const h = head ? head.split(':') : [];
  const t = tail === undefined ? [] : tail ? tail.split(':') : [];
  const groups = [...h, ...Array<string>(8 - h.length - t.length).fill('0'), ...t];
  return groups.reduce((n, g) => (n << 16n) | BigInt(`0x${g}`), 0n);
}
function bigToV6(n: bigint): string {
  return Array.from({ length: 8 }, (_, i) => ((n >> BigInt(112 - 16 * i)) & 0xffffn).toString(16)).join(':');
}

/** The first, middle and last address of a range, written out in full. */
function samples(range: string, bits: 32 | 128): string[] {
  const [address, length] = range.split('/');
  const size = 1n << BigInt(bits - Number(length));
  const first = bits === 32 ? v4ToBig(address) : v6ToBig(address);
  assert.equal(first % size, 0n, `${range} starts on its boundary`);
  const show = bits === 32 ? bigToV4 : bigToV6;
  return [...new Set([first, first + size / 2n, first + size - 1n].map(show))];
}

const PUBLIC = [
  '8.8.8.8',
  '1.1.1.1',
  '2606:4700::1111',
  '2001:4860:4860::8888',
  '172.32.0.1',
  '100.128.0.1',
  '169.255.0.1',
  '192.0.1.1',
  '192.88.98.255',
  '198.17.255.255',
  '198.20.0.0',
  '223.255.255.255',
  '2a00:1450:4001::200e',
  '2001:200::1',
  '2003::1',
  // The two embeddings that reach the IPv4 address itself are judged by it.
  '::ffff:8.8.8.8',
  '::ffff:808:808',
  '64:ff9b::1.1.1.1',
  '[64:ff9b::808:808]',
];

test('isBlockedAddress: the first, middle and last address of every IPv4 range of the registries, and their IPv4-mapped and NAT64 forms', () => {
  let checked = 0;
  for (const [range, name] of V4) {
    for (const ip of samples(range, 32)) {
      for (const form of [ip, `::ffff:${ip}`, `64:ff9b::${ip}`, `[::ffff:${ip}]`]) {
        assert.equal(isBlockedAddress(form), true, `${form} (${range}, ${name})`);
        checked++;
      }
    }
  }
  assert.ok(checked > 250, `${checked} addresses`);
});

test('isBlockedAddress: the first, middle and last address of every IPv6 range of the registries', () => {
  for (const [range, name] of V6) {
    for (const ip of samples(range, 128)) {
      assert.equal(isBlockedAddress(ip), true, `${ip} (${range}, ${name})`);
      assert.equal(isBlockedAddress(`[${ip}]`), true, `[${ip}] (${range}, ${name})`);
    }
  }
});

test('isBlockedAddress: the other IPv4-embedding blocks are refused whole, even around a public IPv4 address', () => {
  const embedding = [
    '::ffff:0:127.0.0.1',
    '::ffff:0:7f00:1',
    '::ffff:0:8.8.8.8', // IPv4-translated (RFC 2765)
    '::127.0.0.1',
    '::8.8.8.8', // IPv4-compatible (deprecated)
    '64:ff9b:1::8.8.8.8',
    '64:ff9b:1::7f00:1', // local-use NAT64
    '2002:808:808::1',
    '2002:7f00:1::1', // 6to4
    '2001:0:4136:e378:8000:63bf:f7f7:f7f7', // Teredo (client 8.8.8.8, obfuscated)
    'fe80::1%eth0',
    '::ffff:0:127.0.0.1%1',
    'not-an-ip',
    '',
    '1.2.3',
    '::ffff:256.0.0.1',
  ];
  for (const ip of embedding) assert.equal(isBlockedAddress(ip), true, ip);
});

test('isBlockedAddress: public unicast addresses pass', () => {
  for (const ip of PUBLIC) assert.equal(isBlockedAddress(ip), false, ip);
});

test('a webhook to https://[::ffff:0:127.0.0.1]/ (IPv4-translated loopback) is refused at delivery like 127.0.0.1', async () => {
  const { api } = await newTenant(t);
  for (const url of ['https://[::ffff:0:127.0.0.1]/hook', 'https://[::ffff:0:7f00:1]:9/hook', 'https://127.0.0.1:9/hook']) {
    const created = await api.post('/webhooks', { name: 'Guard', url, events: ['deal.won'], isActive: false });
    assert.equal(created.status, 201, 'a private URL is accepted at creation (judged at delivery time)');
    const r = await api.post(`/webhooks/${created.body.id}/test`);
    assert.equal(r.status, 200);
    assert.equal(r.body.success, false, url);
    assert.equal(r.body.statusCode, null, url);
    assert.match(r.body.error, /^destination \S+ is a private or reserved address \(refused; WEBHOOK_ALLOW_PRIVATE_NETWORKS is not enabled\)$/, url);
    const d = (await api.get(`/webhooks/${created.body.id}/deliveries`)).body;
    assert.equal(d[0].status, 'permanent_failure', url);
  }
});
