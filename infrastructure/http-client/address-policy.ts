import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import type { WebhookUrlPolicyPort } from '../../application/webhooks/webhook.port.js';

/**
 * Where webhooks may go (docs/security.md): `public` (live mode), `public-or-loopback` (sandbox mode: local
 * receivers on this machine, nothing else internal), `any` (WEBHOOK_ALLOW_PRIVATE=true).
 */
export type Destinations = 'public' | 'public-or-loopback' | 'any';

/** Loopback, private, link-local (cloud metadata), carrier-grade NAT, unspecified, multicast and reserved ranges. */
const blocked = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  blocked.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const)
  blocked.addSubnet(net, prefix, 'ipv6');

const loopback = new BlockList();
loopback.addSubnet('127.0.0.0', 8, 'ipv4');
loopback.addAddress('::1', 'ipv6');

/** An address as the checks see it: no brackets or zone, IPv4-mapped / -translated IPv6 as IPv4. */
function canonical(address: string): { ip: string; family: 'ipv4' | 'ipv6' } | null {
  const ip = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const family = isIP(ip);
  if (family === 4) return { ip, family: 'ipv4' };
  if (family !== 6) return null;
  const mapped = /^(?:::ffff:|64:ff9b::)(?:(\d+\.\d+\.\d+\.\d+)|([0-9a-f]{1,4}):([0-9a-f]{1,4}))$/i.exec(ip);
  if (mapped) {
    const v4 =
      mapped[1] ??
      (() => {
        const hi = parseInt(mapped[2]!, 16);
        const lo = parseInt(mapped[3]!, 16);
        return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
      })();
    return { ip: v4, family: 'ipv4' };
  }
  return { ip, family: 'ipv6' };
}

/** True when an IP address is not public (anything that is not an IP address counts as not public). */
export function isDisallowedAddress(address: string): boolean {
  const c = canonical(address);
  return c === null || blocked.check(c.ip, c.family);
}

export const isLoopbackAddress = (address: string): boolean => {
  const c = canonical(address);
  return c !== null && loopback.check(c.ip, c.family);
};

/** Whether `destinations` lets a webhook connect to this IP address. */
export const addressAllowed = (destinations: Destinations, address: string): boolean =>
  destinations === 'any' || !isDisallowedAddress(address) || (destinations === 'public-or-loopback' && isLoopbackAddress(address));

export const notAllowedReason = (address: string, destinations: Destinations = 'public') =>
  destinations === 'public-or-loopback'
    ? `${address} is a private or link-local address (sandbox mode allows loopback only)`
    : `${address} is a loopback, private or link-local address`;

/** A host name as compared: lower case, without the trailing dot(s) of a fully qualified name, no brackets. */
export const normaliseHost = (hostname: string): string =>
  hostname
    .toLowerCase()
    .replace(/^\[|\]$/g, '')
    .replace(/\.+$/, '');

const isLocalName = (host: string) => host === 'localhost' || host.endsWith('.localhost');

/**
 * URL rules for webhooks: http or https only, and a destination `destinations` allows. The host is
 * normalised, then checked as written and as resolved now; the sender checks the address it really connects
 * to again at every attempt.
 */
export class WebhookUrlPolicy implements WebhookUrlPolicyPort {
  constructor(
    private readonly destinations: Destinations,
    private readonly resolve: (host: string) => Promise<string[]> = defaultResolve,
  ) {}

  async check(raw: string): Promise<string | null> {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      return 'not a valid URL';
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must be an http or https URL';
    if (this.destinations === 'any') return null;
    const host = normaliseHost(url.hostname);
    if (!host) return 'the URL has no host';
    if (isIP(host)) return addressAllowed(this.destinations, host) ? null : notAllowedReason(host, this.destinations);
    if (isLocalName(host)) return this.destinations === 'public-or-loopback' ? null : `${host} is not a public host name`;
    if (host.endsWith('.local') || host.endsWith('.internal') || !host.includes('.')) return `${host} is not a public host name`;
    // a name that does not resolve yet is accepted; each attempt resolves it again and refuses private answers
    const addresses = await this.resolve(host).catch(() => [] as string[]);
    const bad = addresses.find((a) => !addressAllowed(this.destinations, a));
    return bad ? `${host} resolves to ${notAllowedReason(bad, this.destinations)}` : null;
  }
}

const defaultResolve = async (host: string) => (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);
