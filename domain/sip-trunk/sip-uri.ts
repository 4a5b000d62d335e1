/**
 * Origination SIP URIs (docs/numbers.md#sip-trunks): `sip:` or `sips:`, an optional user part, a host name, IPv4 address or
 * bracketed IPv6 address, an optional port, and at most one URI parameter, `;transport=udp|tcp|tls`.
 * Anything else (other parameters, headers, spaces) is refused: the trunk provider would reject it later.
 */
const USER = String.raw`[A-Za-z0-9\-_.!~*'()&=+$,?/%]+(?::[A-Za-z0-9\-_.!~*'()&=+$,%]*)?@`;
const HOSTNAME = String.raw`(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)*[A-Za-z](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.?`;
const IPV4 = String.raw`\d{1,3}(?:\.\d{1,3}){3}`;
const IPV6 = String.raw`\[[0-9A-Fa-f:.]{2,45}\]`;
const SIP_URI = new RegExp(String.raw`^(sips?):(${USER})?(${IPV4}|${IPV6}|${HOSTNAME})(?::(\d{1,5}))?(?:;transport=(udp|tcp|tls))?$`, 'i');

export const SIP_TRANSPORTS = ['udp', 'tcp', 'tls'] as const;

/** Why `uri` is not an acceptable origination SIP URI, or null when it is. */
export function sipUriProblem(uri: string): string | null {
  if (uri.length > 255) return 'must be at most 255 characters';
  const m = SIP_URI.exec(uri);
  if (!m)
    return 'must be a SIP URI such as sip:pbx.example.com:5060;transport=tls (sip: or sips:, a host, an optional port and an optional transport of udp, tcp or tls)';
  const host = m[3]!;
  if (/^\d{1,3}(\.\d{1,3}){3}$/.test(host) && host.split('.').some((o) => Number(o) > 255)) return 'has an invalid IPv4 address';
  if (m[4] !== undefined && (Number(m[4]) < 1 || Number(m[4]) > 65535)) return 'has a port outside 1-65535';
  return null;
}
