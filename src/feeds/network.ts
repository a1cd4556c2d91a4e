import { lookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { BlockList, isIP } from 'node:net';
import { Agent, type Dispatcher } from 'undici';

/**
 * Where a feed may fetch from (docs/guide.md, "Catalog feeds"): a tenant names any URL, so by default a feed
 * reaches only public addresses, not the daemon's own host, its private network or a cloud metadata
 * service. The operator allows private networks with `--feed-private-networks`. Host names are checked
 * as they resolve, at connection time, so a name that resolves again to another address is checked again.
 */
export interface FeedNetwork {
  readonly allowPrivate: boolean;
  /** Undici's dispatcher for the feed's requests: one that refuses private addresses, or the default. */
  readonly dispatcher?: Dispatcher;
}

const PRIVATE = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 3],
] as const) {
  PRIVATE.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 127],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const) {
  PRIVATE.addSubnet(network, prefix, 'ipv6');
}

/** Whether an IP address is loopback, private, link-local, shared, reserved or multicast. */
export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return PRIVATE.check(address, 'ipv4');
  if (family !== 6) return false;
  // An IPv4 address written as IPv6 (::ffff:127.0.0.1) is the IPv4 address.
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return PRIVATE.check(mapped[1], 'ipv4');
  return PRIVATE.check(address, 'ipv6');
}

/** Why a feed may not fetch `url` on this network, or undefined when it may. */
export function refusal(network: FeedNetwork, url: URL): string | undefined {
  if (network.allowPrivate) return undefined;
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  return isIP(host) && isPrivateAddress(host) ? privateMessage(host) : undefined;
}

function privateMessage(address: string, name?: string): string {
  const what = name === undefined ? address : `${name} (${address})`;
  return `${what} is a private address; a daemon started with --feed-private-networks may fetch from it`;
}

/** DNS lookups that leave out private addresses, failing when nothing else is left. */
function publicLookup(
  hostname: string,
  options: LookupOptions,
  callback: (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void,
): void {
  lookup(hostname, { ...options, all: true }, (error, addresses) => {
    if (error) return callback(error, []);
    const allowed = addresses.filter((found) => !isPrivateAddress(found.address));
    if (allowed.length === 0) {
      const refused = Object.assign(new Error(privateMessage(addresses[0]?.address ?? '?', hostname)), {
        code: 'ENOTFOUND',
      });
      return callback(refused, []);
    }
    if (options.all) return callback(null, allowed);
    callback(null, allowed[0].address, allowed[0].family);
  });
}

export const OPEN_NETWORK: FeedNetwork = Object.freeze({ allowPrivate: true });

/** The network feeds fetch on: public addresses only, or every address when `allowPrivate`. */
export function feedNetwork(allowPrivate: boolean): FeedNetwork {
  if (allowPrivate) return OPEN_NETWORK;
  return Object.freeze({
    allowPrivate: false,
    dispatcher: new Agent({ connect: { lookup: publicLookup as never } }),
  });
}
