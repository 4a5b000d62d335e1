import { expect } from 'chai';
import { ImageRefused } from '../../application/rich/rich-provider.port.js';
import { HttpImageFetcher } from '../../infrastructure/rich/http-image-fetcher.js';
import { positionAt, SHARING_CONTACTS, sandboxCapabilities } from '../../infrastructure/sandbox/rich/rules.js';
import { IMAGES, type ImageServer, startImageServer } from '../support/rich.js';

describe('the image fetcher: the webhook URL guard, size and redirects (docs/rich-messaging.md#images)', () => {
  let images: ImageServer;
  before(async () => {
    images = await startImageServer();
  });
  after(() => images.close());
  const refusal = (p: Promise<unknown>) =>
    p.then(
      () => expect.fail('fetched'),
      (e: unknown) => {
        expect(e).to.be.instanceOf(ImageRefused);
        return (e as ImageRefused).reason;
      },
    );

  it('fetches from loopback in sandbox mode (public-or-loopback), the bytes as served', async () => {
    const f = new HttpImageFetcher({ destinations: 'public-or-loopback', timeoutMs: 2000 });
    expect(Buffer.from(await f.fetch(images.url('/gif.png'), { maxBytes: 1024 })).equals(IMAGES.gif)).to.equal(true);
  });
  it('refuses loopback in live mode, and private, link-local and unique-local addresses in both', async () => {
    const live = new HttpImageFetcher({ destinations: 'public', timeoutMs: 2000 });
    expect(await refusal(live.fetch(images.url('/png.png'), { maxBytes: 1024 }))).to.contain('not allowed');
    expect(await refusal(live.fetch('http://localhost:1/a.png', { maxBytes: 1024 }))).to.contain('not allowed');
    const sandbox = new HttpImageFetcher({ destinations: 'public-or-loopback', timeoutMs: 2000 });
    for (const url of [
      'http://10.1.2.3/a.png',
      'http://172.16.0.1/a.png',
      'http://169.254.169.254/',
      'http://[fe80::1]/',
      'http://[::ffff:10.0.0.1]/',
    ])
      expect(await refusal(sandbox.fetch(url, { maxBytes: 1024 })), url).to.contain('not allowed');
    expect(images.hits.get('/png.png')).to.equal(undefined); // the live-mode fetch never reached the server
  });
  it('stops at the size limit and refuses redirects', async () => {
    const f = new HttpImageFetcher({ destinations: 'public-or-loopback', timeoutMs: 5000 });
    expect(await refusal(f.fetch(images.url('/png.png'), { maxBytes: 10 }))).to.contain('larger than 10 bytes');
    expect(await refusal(f.fetch(images.url('/redirect.png'), { maxBytes: 1024 }))).to.contain('redirect');
    expect(await refusal(f.fetch(images.url('/missing.png'), { maxBytes: 1024 }))).to.contain('404');
  });
});

describe('the sandbox rich provider number rules (docs/sandbox.md#rich-messaging-the-sandbox-provider)', () => {
  it('decides capabilities by the number', () => {
    expect(sandboxCapabilities('+14155550130')).to.deep.equal({ imessage: true, sms: true });
    expect(sandboxCapabilities('+14155550132')).to.deep.equal({ imessage: true, sms: true });
    expect(sandboxCapabilities('+14155550133')).to.deep.equal({ imessage: false, sms: true });
    expect(sandboxCapabilities('+14165550135')).to.deep.equal({ imessage: false, sms: false });
    expect(sandboxCapabilities('+12125550187')).to.deep.equal({ imessage: false, sms: true });
    expect(sandboxCapabilities('+19995550100')).to.deep.equal({ imessage: false, sms: false });
    expect(sandboxCapabilities('+447700900120')).to.deep.equal({ imessage: true, sms: true });
  });
  it('moves the sharing contacts along their routes on the clock, and the part-time sharer stops at half past', () => {
    const walker = SHARING_CONTACTS[0]!;
    const a = positionAt(walker, new Date('2026-03-01T10:00:00Z'))!;
    const b = positionAt(walker, new Date('2026-03-01T10:02:30Z'))!;
    expect(a).to.deep.equal({ latitude: walker.route[0]![0], longitude: walker.route[0]![1] });
    expect(b).to.deep.equal({ latitude: walker.route[1]![0], longitude: walker.route[1]![1] }); // a quarter of a 10-minute lap
    expect(positionAt(walker, new Date('2026-03-01T10:10:00Z'))).to.deep.equal(a);
    const sitter = SHARING_CONTACTS[2]!;
    expect(positionAt(sitter, new Date('2026-03-01T10:29:59Z'))).to.not.equal(null);
    expect(positionAt(sitter, new Date('2026-03-01T10:30:00Z'))).to.equal(null);
  });
});
