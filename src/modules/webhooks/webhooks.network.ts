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
 */

type Range = { bits: number; prefix: bigint; len: number };

function v4ToBig(ip: string): bigint | null {
  const parts = ip.split('.');
  if (parts.length !== 4) return null;
  let n = 0n;
  for (const p of parts) {
    if (!/^\d{1,3}$/.test(p) || Number(p) > 255) return null;
    n = (n << 8n) | BigInt(Number(p));
  }
  return n;
}

function v6ToBig(input: string): bigint | null {
  let ip = input.split('%')[0]; // zone id
  if (ip.startsWith('[') && ip.endsWith(']')) ip = ip.slice(1, -1);
  // An embedded dotted IPv4 address at the end (::ffff:1.2.3.4) stands for two groups.
  const lastColon = ip.lastIndexOf(':');
  if (lastColon >= 0 && ip.slice(lastColon + 1).includes('.')) {
    const v4 = v4ToBig(ip.slice(lastColon + 1));
    if (v4 === null) return null;
    ip = ip.slice(0, lastColon + 1) + (v4 >> 16n).toString(16) + ':' + (v4 & 0xffffn).toString(16);
  }
  const halves = ip.split('::');
  if (halves.length > 2) return null;
  const parse = (s: string) => (s === '' ? [] : s.split(':'));
  const head = parse(halves[0]);
  const rest = halves.length === 2 ? parse(halves[1]) : [];
  const total = head.length + rest.length;
  if (halves.length === 1 ? total !== 8 : total > 7) return null;
  const groups = [...head, ...Array<string>(8 - total).fill('0'), ...rest];
  let n = 0n;
  for (const g of groups) {
    if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return null;
    n = (n << 16n) | BigInt('0x' + g);
  }
  return n;
}

function cidr(s: string): Range {
  const [ip, len] = s.split('/');
  const v4 = ip.includes('.') && !ip.includes(':');
  const value = v4 ? v4ToBig(ip) : v6ToBig(ip);
  if (value === null) throw new Error(`bad range ${s}`);
  const bits = v4 ? 32 : 128;
  const l = Number(len);
  return { bits, len: l, prefix: value >> BigInt(bits - l) };
}

const inRange = (value: bigint, bits: number, r: Range) => r.bits === bits && value >> BigInt(bits - r.len) === r.prefix;

const BLOCKED_V4 = [
  '0.0.0.0/8', // "this network", includes 0.0.0.0
  '10.0.0.0/8',
  '100.64.0.0/10', // CGNAT
  '127.0.0.0/8',
  '169.254.0.0/16', // link-local, includes the cloud metadata address 169.254.169.254
  '172.16.0.0/12',
  '192.0.0.0/24',
  '192.0.2.0/24',
  '192.88.99.0/24',
  '192.168.0.0/16',
  '198.18.0.0/15',
  '198.51.100.0/24',
  '203.0.113.0/24',
  '224.0.0.0/4', // multicast
  '240.0.0.0/4', // reserved, includes broadcast
].map(cidr);

const BLOCKED_V6 = [
  '::/96', // unspecified, loopback and the deprecated IPv4-compatible block
  '100::/64', // discard
  '2001:db8::/32', // documentation
  '64:ff9b:1::/48', // local-use NAT64
  'fc00::/7', // unique-local
  'fe80::/10', // link-local
  'fec0::/10', // deprecated site-local
  'ff00::/8', // multicast
].map(cidr);
// IPv6 blocks that embed an IPv4 address, judged by that address.
const MAPPED_V4 = cidr('::ffff:0:0/96');
const NAT64 = cidr('64:ff9b::/96');
const SIX_TO_FOUR = cidr('2002::/16');

/** True when `ip` is not a public unicast address (a webhook may not reach it). Unparseable → true. */
export function isBlockedAddress(ip: string): boolean {
  const family = net.isIP(ip.startsWith('[') ? ip.slice(1, -1) : ip.split('%')[0]);
  if (family === 4) {
    const v = v4ToBig(ip)!;
    return BLOCKED_V4.some((r) => inRange(v, 32, r));
  }
  if (family === 6) {
    const v = v6ToBig(ip);
    if (v === null) return true;
    if (inRange(v, 128, MAPPED_V4) || inRange(v, 128, NAT64)) return isBlockedV4(v & 0xffffffffn);
    if (inRange(v, 128, SIX_TO_FOUR)) return isBlockedV4((v >> 80n) & 0xffffffffn);
    return BLOCKED_V6.some((r) => inRange(v, 128, r));
  }
  return true;
}

function isBlockedV4(v: bigint): boolean {
  return BLOCKED_V4.some((r) => inRange(v, 32, r));
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
