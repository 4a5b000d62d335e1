import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import type { WebhookUrlPolicyPort } from '../../application/webhooks/webhook.port.js';

/** Loopback, private, link-local, carrier-grade NAT, unspecified, multicast and reserved ranges. */
const blocked = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) blocked.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [['::', 128], ['::1', 128], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8]] as const) blocked.addSubnet(net, prefix, 'ipv6');

/** True when an IP address must not receive webhooks outside sandbox mode. */
export function isDisallowedAddress(address: string): boolean {
  const ip = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const family = isIP(ip);
  if (family === 4) return blocked.check(ip, 'ipv4');
  if (family !== 6) return true;
  // IPv4-mapped / -translated IPv6 (::ffff:a.b.c.d, 64:ff9b::a.b.c.d, also in hex form) is judged as IPv4
  const mapped = /^(?:::ffff:|64:ff9b::)(?:(\d+\.\d+\.\d+\.\d+)|([0-9a-f]{1,4}):([0-9a-f]{1,4}))$/i.exec(ip);
  if (mapped) {
    const v4 = mapped[1] ?? (() => { const hi = parseInt(mapped[2]!, 16); const lo = parseInt(mapped[3]!, 16); return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`; })();
    return blocked.check(v4, 'ipv4');
  }
  return blocked.check(ip, 'ipv6');
}

export const notAllowedReason = (address: string) => `${address} is a loopback, private or link-local address`;

/**
 * URL rules for webhooks: http or https only; outside sandbox mode (PROVIDER_MODE=live) no loopback,
 * private or link-local destination unless WEBHOOK_ALLOW_PRIVATE=true. The host is checked here as written
 * and as resolved now; the sender checks the address it really connects to again at every attempt.
 */
export class WebhookUrlPolicy implements WebhookUrlPolicyPort {
  constructor(private readonly allowPrivate: boolean, private readonly resolve: (host: string) => Promise<string[]> = defaultResolve) {}

  async check(raw: string): Promise<string | null> {
    let url: URL;
    try { url = new URL(raw); } catch { return 'not a valid URL'; }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must be an http or https URL';
    if (this.allowPrivate) return null;
    const host = url.hostname.replace(/^\[|\]$/g, '');
    if (isIP(host)) return isDisallowedAddress(host) ? notAllowedReason(host) : null;
    if (host === 'localhost' || host.endsWith('.localhost') || host.endsWith('.local') || !host.includes('.')) return `${host} is not a public host name`;
    // a name that does not resolve yet is accepted; each attempt resolves it again and refuses private answers
    const addresses = await this.resolve(host).catch(() => [] as string[]);
    const bad = addresses.find(isDisallowedAddress);
    return bad ? `${host} resolves to ${notAllowedReason(bad)}` : null;
  }
}

const defaultResolve = async (host: string) => (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);
