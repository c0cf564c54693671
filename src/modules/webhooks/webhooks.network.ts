import dns from 'node:dns';
import net from 'node:net';
import type { Agent, buildConnector as BuildConnector } from 'undici';
import { onUse } from '../../util/on-use.js';

/**
 * Outbound network rules of webhook deliveries (CONTRACT B.9): a destination that resolves to a loopback,
 * private, link-local, unique-local, CGNAT, multicast or otherwise reserved address is refused at
 * delivery time, unless WEBHOOK_ALLOW_PRIVATE_NETWORKS=true.
 *
 * The check runs inside the socket's own DNS lookup, so it applies to the very address the connection
 * is made to: a host that answers a public address to a first lookup and a private one to the next
 * (DNS rebinding) is still refused. IP-literal hosts never reach a lookup and are checked before connecting.
 * Both paths judge an address with isBlockedAddress, whose ranges are kept in Node's `net.BlockList`.
 */

/**
 * Every entry of IANA's IPv4 Special-Purpose Address Registry, and multicast (IANA's multicast registry).
 * The registry's few "globally reachable" entries (PCP and TURN anycast inside 192.0.0.0/24, AS112, AMT)
 * are routing infrastructure, never a webhook receiver: they are refused too.
 */
const V4_RANGES = [
  '0.0.0.0/8', // "this network" (RFC 791)
  '0.0.0.0/32', // "this host on this network" (RFC 1122)
  '10.0.0.0/8', // private use (RFC 1918)
  '100.64.0.0/10', // shared address space, CGNAT (RFC 6598)
  '127.0.0.0/8', // loopback (RFC 1122)
  '169.254.0.0/16', // link-local, includes the cloud metadata address 169.254.169.254 (RFC 3927)
  '172.16.0.0/12', // private use (RFC 1918)
  '192.0.0.0/24', // IETF protocol assignments (RFC 6890)
  '192.0.0.0/29', // IPv4 service continuity prefix (RFC 7335)
  '192.0.0.8/32', // IPv4 dummy address (RFC 7600)
  '192.0.0.9/32', // Port Control Protocol anycast (RFC 7723)
  '192.0.0.10/32', // TURN anycast (RFC 8155)
  '192.0.0.170/32', // NAT64/DNS64 discovery (RFC 7050)
  '192.0.0.171/32', // NAT64/DNS64 discovery (RFC 7050)
  '192.0.2.0/24', // documentation, TEST-NET-1 (RFC 5737)
  '192.31.196.0/24', // AS112-v4 (RFC 7535)
  '192.52.193.0/24', // AMT (RFC 7450)
  '192.88.99.0/24', // deprecated 6to4 relay anycast (RFC 7526)
  '192.88.99.2/32', // 6a44 relay anycast (RFC 6751)
  '192.168.0.0/16', // private use (RFC 1918)
  '192.175.48.0/24', // direct delegation AS112 service (RFC 7534)
  '198.18.0.0/15', // benchmarking (RFC 2544)
  '198.51.100.0/24', // documentation, TEST-NET-2 (RFC 5737)
  '203.0.113.0/24', // documentation, TEST-NET-3 (RFC 5737)
  '224.0.0.0/4', // multicast (RFC 5771)
  '240.0.0.0/4', // reserved (RFC 1112)
  '255.255.255.255/32', // limited broadcast (RFC 919)
] as const;

/**
 * IPv6 blocks that embed an IPv4 address a connection actually reaches, judged by that address rather than
 * refused whole: an IPv4-mapped address (::ffff:a.b.c.d) is the IPv4 address itself to a dual-stack socket,
 * and the well-known NAT64 prefix (64:ff9b::a.b.c.d, RFC 6052, globally reachable in the registry) is what
 * DNS64 answers for every IPv4-only host on an IPv6-only network. 64:ff9b::7f00:1 is thus loopback, and
 * ::ffff:8.8.8.8 public.
 */
const V4_EMBEDDING = ['::ffff:', '64:ff9b::'] as const; // each a /96 followed by the 32 bits of an IPv4 address

/**
 * Every other entry of IANA's IPv6 Special-Purpose Address Registry, the deprecated and translated blocks,
 * multicast, and all of the space outside global unicast 2000::/3 (IANA's IPv6 Address Space: reserved by
 * the IETF, unique-local, link-local or multicast; nothing there is routed on the Internet).
 *
 * The other blocks that embed an IPv4 address (IPv4-compatible, IPv4-translated, local-use NAT64, 6to4,
 * Teredo) are refused whole, whatever they embed: they are deprecated or local to a site, never a globally
 * routable destination for a webhook, and judging their embedded address would only open ways around the rule.
 */
const V6_RANGES = [
  '::/128', // unspecified (RFC 4291)
  '::1/128', // loopback (RFC 4291)
  '::/96', // deprecated IPv4-compatible addresses (RFC 4291)
  '::ffff:0:0:0/96', // IPv4-translated addresses (RFC 2765)
  '64:ff9b:1::/48', // local-use IPv4/IPv6 translation (RFC 8215)
  '100::/64', // discard-only (RFC 6666)
  '100:0:0:1::/64', // dummy IPv6 prefix (RFC 9780)
  '2001::/23', // IETF protocol assignments (RFC 2928)
  '2001::/32', // Teredo, embeds an obfuscated IPv4 address (RFC 4380)
  '2001:1::1/128', // Port Control Protocol anycast (RFC 7723)
  '2001:1::2/128', // TURN anycast (RFC 8155)
  '2001:1::3/128', // DNS-SD service registration protocol anycast (RFC 9665)
  '2001:2::/48', // benchmarking (RFC 5180)
  '2001:3::/32', // AMT (RFC 7450)
  '2001:4:112::/48', // AS112-v6 (RFC 7535)
  '2001:10::/28', // deprecated ORCHID (RFC 4843)
  '2001:20::/28', // ORCHIDv2 (RFC 7343)
  '2001:30::/28', // drone remote ID entity tags (RFC 9374)
  '2001:db8::/32', // documentation (RFC 3849)
  '2002::/16', // 6to4, embeds an IPv4 address (RFC 3056, deprecated by RFC 7526)
  '2620:4f:8000::/48', // direct delegation AS112 service (RFC 7534)
  '3fff::/20', // documentation (RFC 9637)
  '5f00::/16', // segment routing SIDs (RFC 9602)
  'fc00::/7', // unique-local (RFC 4193)
  'fe80::/10', // link-local (RFC 4291)
  'fec0::/10', // deprecated site-local (RFC 3879)
  'ff00::/8', // multicast (RFC 4291)
  '::/3', // outside global unicast: 0000::–1fff:…
  '4000::/2', // outside global unicast: 4000::–7fff:…
  '8000::/1', // outside global unicast: 8000::–ffff:…
] as const;

function blockList(ranges: readonly string[], family: 'ipv4' | 'ipv6'): net.BlockList {
  const list = new net.BlockList();
  for (const range of ranges) {
    const [address, prefix] = range.split('/');
    list.addSubnet(address, Number(prefix), family);
  }
  return list;
}

// Separate lists per family: a BlockList also compares an IPv4 address with its IPv4-mapped form under
// IPv6 rules, so an IPv6 rule such as ::/3 in the IPv4 list would refuse every IPv4 address.
const BLOCKED_V4 = blockList(V4_RANGES, 'ipv4');
const BLOCKED_V6 = blockList(V6_RANGES, 'ipv6');
const EMBEDS_V4 = blockList(
  V4_EMBEDDING.map((prefix) => `${prefix}0.0.0.0/96`),
  'ipv6',
);
// The IPv4 rules under each embedding prefix: 127.0.0.0/8 becomes ::ffff:127.0.0.0/104 and 64:ff9b::127.0.0.0/104.
const BLOCKED_EMBEDDED_V4 = blockList(
  V4_EMBEDDING.flatMap((prefix) =>
    V4_RANGES.map((range) => {
      const [address, length] = range.split('/');
      return `${prefix}${address}/${96 + Number(length)}`;
    }),
  ),
  'ipv6',
);

/** True when `ip` is not a public unicast address (a webhook may not reach it). Unparseable → true. */
export function isBlockedAddress(ip: string): boolean {
  const bare = ip.startsWith('[') && ip.endsWith(']') ? ip.slice(1, -1) : ip;
  const address = bare.split('%')[0]; // an IPv6 zone id (fe80::1%eth0) names an interface, not an address
  switch (net.isIP(address)) {
    case 4:
      return BLOCKED_V4.check(address, 'ipv4');
    case 6:
      return EMBEDS_V4.check(address, 'ipv6') ? BLOCKED_EMBEDDED_V4.check(address, 'ipv6') : BLOCKED_V6.check(address, 'ipv6');
    default:
      return true;
  }
}

export class BlockedAddressError extends Error {
  readonly code = 'ERR_WEBHOOK_BLOCKED_ADDRESS';
  constructor(host: string, address: string) {
    super(
      host === address
        ? `destination ${address} is a private or reserved address (refused; WEBHOOK_ALLOW_PRIVATE_NETWORKS is not enabled)`
        : `destination ${host} resolves to ${address}, a private or reserved address (refused; WEBHOOK_ALLOW_PRIVATE_NETWORKS is not enabled)`,
    );
  }
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => void;

/** dns.lookup that only ever hands public addresses to the socket. */
function guardedLookup(hostname: string, options: dns.LookupOptions, callback: LookupCallback): void {
  dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err) return callback(err, []);
    const allowed = addresses.filter((a) => !isBlockedAddress(a.address));
    if (allowed.length === 0) {
      return callback(new BlockedAddressError(hostname, addresses[0]?.address ?? 'no address') as NodeJS.ErrnoException, []);
    }
    if (options.all) return callback(null, allowed);
    callback(null, allowed[0].address, allowed[0].family);
  });
}

export interface DispatcherOptions {
  allowPrivateNetworks: boolean;
  timeoutMs: number;
}

/** An undici Agent whose every new connection goes through the address rules above. */
export function createDeliveryDispatcher(opts: DispatcherOptions): Agent {
  const { Agent: DeliveryAgent, buildConnector } = onUse<typeof import('undici')>('undici');
  const base = buildConnector({
    timeout: opts.timeoutMs,
    ...(opts.allowPrivateNetworks ? {} : { lookup: guardedLookup as unknown as typeof dns.lookup }),
  });
  const connect: BuildConnector.connector = (options, callback) => {
    if (!opts.allowPrivateNetworks) {
      const host = options.hostname.startsWith('[') ? options.hostname.slice(1, -1) : options.hostname;
      if (net.isIP(host) && isBlockedAddress(host)) {
        queueMicrotask(() => callback(new BlockedAddressError(host, host), null));
        return;
      }
    }
    return base(options, callback);
  };
  return new DeliveryAgent({
    connect,
    headersTimeout: opts.timeoutMs,
    bodyTimeout: opts.timeoutMs,
    keepAliveTimeout: 4_000,
    connections: 32,
  });
}

const dispatchers = new Map<string, Agent>();

/** One shared Agent per (rule, timeout) in the process: connections to a destination are reused. */
export function deliveryDispatcher(opts: DispatcherOptions): Agent {
  const key = `${opts.allowPrivateNetworks}:${opts.timeoutMs}`;
  let d = dispatchers.get(key);
  if (!d) {
    d = createDeliveryDispatcher(opts);
    dispatchers.set(key, d);
  }
  return d;
}
