import { sandboxLineInfo } from '../carrier/sandbox-carrier.js';

/**
 * The sandbox rich-messaging provider's number rules (docs/sandbox.md#rich-messaging-the-sandbox-provider): what a
 * number can receive follows from the number itself, through the sandbox's lookup rules, so that a test picks its
 * outcome by picking the recipient.
 */

/** Recipients whose checks or sends end in a fixed way: the 628 555-019X block (fictional San Francisco numbers). */
export const RICH_MAGIC: Readonly<Record<string, { outcome: string; description: string }>> = {
  '+16285550190': { outcome: 'check-fails', description: 'every capability check fails (the provider cannot reach its directory)' },
  '+16285550191': {
    outcome: 'send-refused',
    description: 'can receive imessage, but the provider refuses every send to it (the device is unreachable)',
  },
};

/** imessage: a valid mobile number whose last digit is 0, 1 or 2; sms: a valid mobile, VoIP, toll-free or unknown-type number. */
export function sandboxCapabilities(phoneNumber: string): { imessage: boolean; sms: boolean } {
  const info = sandboxLineInfo(phoneNumber);
  if (!info.valid) return { imessage: false, sms: false };
  const last = phoneNumber.at(-1)!;
  return {
    imessage: info.lineType === 'mobile' && ['0', '1', '2'].includes(last),
    sms: ['mobile', 'voip', 'toll-free', 'unknown'].includes(info.lineType),
  };
}

/** A point on a route, in degrees. */
type Point = readonly [number, number];

/**
 * Contacts who share their location with every line of the sandbox provider, moving along a closed route on the
 * platform's Clock (one lap every `lapSeconds`, straight between the points), or sharing only part of each hour.
 */
export const SHARING_CONTACTS: ReadonlyArray<{
  phoneNumber: string;
  description: string;
  route: readonly Point[];
  lapSeconds: number;
  /** shares only while the minute of the hour (UTC) is below this */
  sharesUntilMinute: number;
}> = [
  {
    phoneNumber: '+14155550140',
    description: 'walks around Union Square, San Francisco: one lap every 10 minutes',
    route: [
      [37.7881, -122.4075],
      [37.7881, -122.4066],
      [37.7874, -122.4066],
      [37.7874, -122.4075],
    ],
    lapSeconds: 600,
    sharesUntilMinute: 60,
  },
  {
    phoneNumber: '+12125550141',
    description: 'runs around the Central Park reservoir, New York: one lap every 20 minutes',
    route: [
      [40.7857, -73.9626],
      [40.7857, -73.9589],
      [40.7812, -73.9589],
      [40.7812, -73.9626],
    ],
    lapSeconds: 1200,
    sharesUntilMinute: 60,
  },
  {
    phoneNumber: '+13125550142',
    description: 'sits in Millennium Park, Chicago, and shares only during the first 30 minutes of each hour (UTC)',
    route: [[41.8826, -87.6226]],
    lapSeconds: 60,
    sharesUntilMinute: 30,
  },
];

/** Where a sharing contact is at `at` (null while it does not share). */
export function positionAt(c: (typeof SHARING_CONTACTS)[number], at: Date): { latitude: number; longitude: number } | null {
  if (at.getUTCMinutes() >= c.sharesUntilMinute) return null;
  const legs = c.route.length;
  const progress = ((at.getTime() / 1000) % c.lapSeconds) / c.lapSeconds; // 0..1 of a lap
  const pos = progress * legs;
  const i = Math.floor(pos) % legs;
  const f = pos - Math.floor(pos);
  const [a, b] = [c.route[i]!, c.route[(i + 1) % legs]!];
  const round = (x: number) => Math.round(x * 1e6) / 1e6;
  return { latitude: round(a[0] + (b[0] - a[0]) * f), longitude: round(a[1] + (b[1] - a[1]) * f) };
}
