import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ADMIN_TOKEN, type TestApp } from './http.js';
import { FAST_MESSAGING_ENV, type Line, messagingLine } from './messaging.js';

/** A test app whose sandbox rich provider reports at once (read receipts still wait SANDBOX_RICH_READ_DELAY_SECONDS of Clock time). */
export const FAST_RICH_ENV = {
  ...FAST_MESSAGING_ENV,
  SANDBOX_RICH_DELIVERY_DELAY_MS: '0',
  SANDBOX_RICH_POLL_INTERVAL_MS: '20',
  RICH_PROVIDER_TIMEOUT_MS: '5000',
};

/** Recipients by the sandbox rules (docs/sandbox.md#rich-messaging-the-sandbox-provider): fictional 555-01XX numbers. */
const AREAS = [
  '201',
  '202',
  '203',
  '205',
  '206',
  '207',
  '208',
  '209',
  '210',
  '212',
  '213',
  '214',
  '215',
  '216',
  '217',
  '218',
  '219',
  '224',
];
/** a mobile ending in 0 (imessage), a different one for each n */
export const IPHONE = (n: number) => `+1${AREAS[n % AREAS.length]}555${String(130 + 10 * Math.floor(n / AREAS.length)).padStart(4, '0')}`;
export const ANDROID = '+13035550173'; // last digit 3: a mobile without imessage
export const LANDLINE = '+13035550175';

/** A Canadian number (no 10DLC wait) that the sandbox rich provider serves. */
export async function richLine(app: TestApp, name = 'Rich test'): Promise<Line> {
  const line = await messagingLine(app, { country: 'CA', registered: false, name });
  await addRichLine(app, line.phoneNumber);
  return line;
}

export async function addRichLine(app: TestApp, phoneNumber: string) {
  const r = await app.call('POST', '/sandbox/rich/lines', { key: ADMIN_TOKEN, body: { phone_number: phoneNumber } });
  if (r.status !== 200 || !r.body.numberId) throw new Error(`rich line: ${r.status} ${JSON.stringify(r.body)}`);
}

/** Small real images of each kind, by their first bytes (the rest is padding): what a server would send. */
const pad = (head: number[], size = 64) => Buffer.concat([Buffer.from(head), Buffer.alloc(size - head.length, 7)]);
export const IMAGES = {
  png: pad([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]),
  png2: pad([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13], 96),
  jpeg: pad([0xff, 0xd8, 0xff, 0xe0]),
  gif: Buffer.concat([Buffer.from('GIF89a'), Buffer.alloc(40, 1)]),
  webp: Buffer.concat([Buffer.from('RIFF'), Buffer.from([40, 0, 0, 0]), Buffer.from('WEBPVP8 '), Buffer.alloc(40, 2)]),
  heic: Buffer.concat([Buffer.from([0, 0, 0, 24]), Buffer.from('ftypheic'), Buffer.alloc(40, 3)]),
  text: Buffer.from('<html>this is not an image, whatever its name says</html>'),
} as const;
export const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

export type ImageServer = { url: (path: string) => string; hits: Map<string, number>; close: () => Promise<void> };

/**
 * A local image host (sandbox mode lets the fetcher reach loopback): `/<kind>.<anything>` serves IMAGES[kind] with a
 * content type that lies (always image/png), `/huge.png` 10 MB + 1 byte of PNG, `/redirect.png` a 302.
 */
export async function startImageServer(): Promise<ImageServer> {
  const hits = new Map<string, number>();
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    hits.set(path, (hits.get(path) ?? 0) + 1);
    if (path === '/huge.png') {
      res.writeHead(200, { 'content-type': 'image/png' });
      res.end(Buffer.concat([IMAGES.png, Buffer.alloc(10 * 1024 * 1024 + 1 - IMAGES.png.length)]));
      return;
    }
    if (path === '/redirect.png') {
      res.writeHead(302, { location: '/png.png' });
      res.end();
      return;
    }
    const kind = path.slice(1).split('.')[0] as keyof typeof IMAGES;
    const body = IMAGES[kind];
    if (!body) {
      res.writeHead(404);
      res.end();
      return;
    }
    res.writeHead(200, { 'content-type': 'image/png' });
    res.end(body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: (path) => `http://127.0.0.1:${port}${path}`,
    hits,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
