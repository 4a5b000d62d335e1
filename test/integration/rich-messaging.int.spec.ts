import { expect } from 'chai';
import { PLATFORM } from '../../infrastructure/platform/tokens.js';
import { messagingProjector } from '../../projections/messaging/messaging.projector.js';
import { richProjector } from '../../projections/rich/rich.projector.js';
import { rebuildProjector } from '../../projections/shared/rebuild.js';
import { advanceClock } from '../support/chatapp.js';
import { ADMIN_TOKEN, startTestApp, type TestApp } from '../support/http.js';
import { type Line, messagingLine } from '../support/messaging.js';
import { eventually } from '../support/numbers.js';
import {
  ANDROID,
  addRichLine,
  FAST_RICH_ENV,
  IMAGES,
  type ImageServer,
  IPHONE,
  LANDLINE,
  richLine,
  sha256,
  startImageServer,
} from '../support/rich.js';
import { startReceiver } from '../support/webhook-receiver.js';

/**
 * The rich-messaging channel over HTTP against the sandbox provider (docs/rich-messaging.md): capability checks, the
 * send path's choice with the fallback to SMS, carousels, delivery and read receipts, reactions and typing, contact
 * cards and chat backgrounds (images checked by content, fetched behind the URL guard), and shared locations.
 */
describe('rich messaging: capabilities, the channel and its fallback, cards, backgrounds, locations', function () {
  this.timeout(120_000);
  let app: TestApp;
  let images: ImageServer;
  let line: Line;
  let seq = 0;
  const iphone = () => IPHONE(seq++);
  const send = (body: Record<string, unknown>, key = line.key) =>
    app.call('POST', '/v1/messages', { key, body: { agent_id: line.agentId, ...body } });
  const caps = (phone: string, key = line.key) =>
    app.call('GET', `/v1/contacts/capabilities?phone_number=${encodeURIComponent(phone)}`, { key });

  before(async () => {
    app = await startTestApp(FAST_RICH_ENV);
    images = await startImageServer();
    line = await richLine(app);
  });
  after(async () => {
    await images.close();
    await app.close();
  });

  describe('capabilities', () => {
    it('refuses clearly while the account has no number on the rich channel', async () => {
      const plain = await messagingLine(app, { country: 'CA', registered: false, name: 'SMS only' });
      const r = await caps(IPHONE(90), plain.key);
      expect(r.status, JSON.stringify(r.body)).to.equal(422);
      expect(r.body.error.code).to.equal('RICH_CHANNEL_UNAVAILABLE');
      expect(r.body.error.message).to.match(/no number of this account/i);
    });

    it('answers by the sandbox number rules: iPhone, Android, landline', async () => {
      const a = await caps(IPHONE(91));
      expect(a.status, JSON.stringify(a.body)).to.equal(200);
      expect(a.body).to.include({ phoneNumber: IPHONE(91) });
      expect(a.body.capabilities).to.deep.equal({ imessage: true, sms: true });
      expect(Date.parse(a.body.checkedAt)).to.be.a('number').and.not.NaN;
      expect((await caps(ANDROID)).body.capabilities).to.deep.equal({ imessage: false, sms: true });
      expect((await caps(LANDLINE)).body.capabilities).to.deep.equal({ imessage: false, sms: false });
    });

    it('keeps an answer briefly: a second question is answered from the cache (the same checkedAt)', async () => {
      const who = IPHONE(92);
      const first = await caps(who);
      const again = await caps(`${who.slice(2, 5)}-${who.slice(5, 8)}-${who.slice(8)}`); // the same number as people write it
      expect(again.status).to.equal(200);
      expect(again.body.checkedAt).to.equal(first.body.checkedAt);
    });

    it('answers 502 when the provider cannot check (magic number), and 422 for a number that is not E.164', async () => {
      const r = await caps('+16285550190');
      expect(r.status, JSON.stringify(r.body)).to.equal(502);
      expect(r.body.error.code).to.equal('RICH_PROVIDER_ERROR');
      expect((await caps('not-a-number')).status).to.equal(422);
    });
  });

  describe('sending: the rich channel when the recipient can receive it, else SMS', () => {
    it('sends to an iMessage recipient by imessage: the message and the conversation say so', async () => {
      const who = iphone();
      const r = await send({ to_number: who, body: 'Hello over imessage', send_style: 'confetti' });
      expect(r.status, JSON.stringify(r.body)).to.equal(201);
      expect(r.body).to.include({ channel: 'imessage', from_number: line.phoneNumber, to_number: who, encoding: null, segments: null });
      const c = await app.call('GET', `/v1/conversations/${r.body.conversation_id}`, { key: line.key });
      expect(c.body.channel).to.equal('imessage');
      expect(c.body.messages[0]).to.include({ channel: 'imessage', body: 'Hello over imessage' });
      expect(c.body.capabilities).to.include({ sendChannel: 'imessage', canSendMessages: true, emojiReactions: true });
      expect(c.body.capabilities.availableChannels).to.have.members(['sms', 'mms', 'imessage']);
      expect(c.body.capabilities.mediaChannels).to.have.members(['mms', 'imessage']);
      const given = await eventually(async () => {
        const m = await app.call('GET', `/sandbox/rich/messages?to=${encodeURIComponent(who)}`, { key: ADMIN_TOKEN });
        return m.body.data[0];
      }, 'the provider was given the message');
      expect(given).to.include({ idempotencyKey: r.body.id, from: line.phoneNumber, sendStyle: 'confetti', body: 'Hello over imessage' });
    });

    it('falls back to SMS for a recipient who cannot receive imessage, on a conversation of texts', async () => {
      const r = await send({ to_number: ANDROID, body: 'Hello over SMS' });
      expect(r.status, JSON.stringify(r.body)).to.equal(201);
      expect(r.body.channel).to.equal('sms');
      expect(r.body.encoding).to.equal('GSM-7');
      const c = await app.call('GET', `/v1/conversations/${r.body.conversation_id}`, { key: line.key });
      expect(c.body.channel).to.equal('native');
      expect(c.body.capabilities.sendChannel).to.equal('sms');
      expect(c.body.capabilities.availableChannels).to.include('imessage');
      const given = await app.call('GET', `/sandbox/rich/messages?to=${encodeURIComponent(ANDROID)}`, { key: ADMIN_TOKEN });
      expect(given.body.data).to.deep.equal([]);
    });

    it('falls back to SMS when the check fails, and refuses a named imessage send to a recipient who cannot receive it', async () => {
      const r = await send({ to_number: '+16285550190', body: 'check fails' });
      expect(r.status, JSON.stringify(r.body)).to.equal(201);
      expect(r.body.channel).to.equal('sms');
      const named = await send({ to_number: ANDROID, body: 'x', channel: 'imessage' });
      expect(named.status, JSON.stringify(named.body)).to.equal(422);
      expect(JSON.stringify(named.body)).to.contain('cannot receive imessage');
    });

    it('leaves numbers off the rich channel as they were: an iMessage recipient gets SMS', async () => {
      const plain = await messagingLine(app, { country: 'CA', registered: false, name: 'Plain texter' });
      const r = await app.call('POST', '/v1/messages', {
        key: plain.key,
        body: { agent_id: plain.agentId, to_number: iphone(), body: 'hi' },
      });
      expect(r.status, JSON.stringify(r.body)).to.equal(201);
      expect(r.body.channel).to.equal('sms');
      const named = await app.call('POST', '/v1/messages', {
        key: plain.key,
        body: { agent_id: plain.agentId, to_number: iphone(), body: 'hi', channel: 'imessage' },
      });
      expect(named.status).to.equal(422);
    });

    it('sends a carousel of 2-20 images without a body; refuses one with a body, and more than 20', async () => {
      const urls = (n: number) => Array.from({ length: n }, (_, i) => `https://example.com/p${i}.jpg`);
      const who = iphone();
      const ok = await send({ to_number: who, media_urls: urls(3) });
      expect(ok.status, JSON.stringify(ok.body)).to.equal(201);
      expect(ok.body).to.include({ channel: 'imessage' });
      expect(ok.body.media_urls).to.have.length(3);
      const withBody = await send({ to_number: who, body: 'look', media_urls: urls(2) });
      expect(withBody.status).to.equal(422);
      expect(JSON.stringify(withBody.body)).to.contain('carousel');
      expect((await send({ to_number: who, media_urls: urls(21) })).status).to.equal(422);
    });

    it('keeps the MMS limit of 10 media on SMS', async () => {
      const r = await send({
        to_number: ANDROID,
        body: 'pics',
        media_urls: Array.from({ length: 11 }, (_, i) => `https://example.com/${i}.png`),
      });
      expect(r.status).to.equal(422);
      expect(JSON.stringify(r.body)).to.contain('media_urls');
    });

    it('reports delivery, then the read receipt when the recipient reads it (Clock time)', async () => {
      const r = await send({ to_number: iphone(), body: 'Will you read this?' });
      const status = async () =>
        (await app.call('GET', `/v1/conversations/${r.body.conversation_id}/messages`, { key: line.key })).body.data[0];
      const delivered = await eventually(async () => {
        const m = await status();
        return m.status === 'delivered' && m;
      }, 'delivered');
      expect(delivered.deliveredAt).to.be.a('string');
      expect(delivered.readAt).to.equal(null);
      await advanceClock(app, 10);
      const read = await eventually(async () => {
        const m = await status();
        return m.status === 'read' && m;
      }, 'read');
      expect(read.readAt).to.be.a('string');
    });

    it('fails a message the provider refuses (magic recipient), with the reason', async () => {
      const r = await send({ to_number: '+16285550191', body: 'unreachable' });
      expect(r.status, JSON.stringify(r.body)).to.equal(201);
      expect(r.body.channel).to.equal('imessage');
      const m = await eventually(async () => {
        const x = (await app.call('GET', `/v1/conversations/${r.body.conversation_id}/messages`, { key: line.key })).body.data[0];
        return x.status === 'failed' && x;
      }, 'failed');
      expect(m.failureReason).to.contain('unreachable');
    });

    it('receives a message on the imessage conversation (agent.message with channel imessage), and the answer follows it', async () => {
      const rx = await startReceiver();
      try {
        await app.call('POST', '/v1/webhooks', { key: line.key, body: { url: rx.url } });
        const who = iphone();
        const r = await app.call('POST', '/sandbox/rich/inbound', {
          key: ADMIN_TOKEN,
          body: { from: who, to: line.phoneNumber, body: 'Do you have a table for two?' },
        });
        expect(r.status, JSON.stringify(r.body)).to.equal(201);
        const hook = await eventually(
          async () => rx.received.map((x) => JSON.parse(x.body)).find((b) => b.data?.from === who),
          'agent.message',
        );
        expect(hook).to.deep.include({ event: 'agent.message', channel: 'imessage' });
        expect(hook.data).to.include({ messageId: r.body.messageId, message: 'Do you have a table for two?', to: line.phoneNumber });
        const answer = await send({ to_number: who, body: 'Yes, at 8pm.' });
        expect(answer.body).to.include({ channel: 'imessage', conversation_id: hook.data.conversationId });
        const dropped = await app.call('POST', '/sandbox/rich/inbound', {
          key: ADMIN_TOKEN,
          body: { from: who, to: '+12045550119', body: 'x' },
        });
        expect(dropped.status).to.equal(404);
      } finally {
        await rx.close();
      }
    });

    it('hands emoji reactions and typing indicators to the provider', async () => {
      const who = iphone();
      const r = await send({ to_number: who, body: 'React to me' });
      const rx = await app.call('POST', `/v1/messages/${r.body.id}/reactions`, { key: line.key, body: { reaction: '🔥' } });
      expect(rx.status, JSON.stringify(rx.body)).to.equal(200);
      expect(rx.body).to.include({ reaction_type: '🔥', channel: 'imessage' });
      const t = await app.call('POST', `/v1/conversations/${r.body.conversation_id}/typing`, { key: line.key });
      expect(t.body).to.deep.equal({ conversationId: r.body.conversation_id, channel: 'imessage', status: 'sent' });
      const actions = await eventually(async () => {
        const a = (await app.call('GET', '/sandbox/rich/actions', { key: ADMIN_TOKEN })).body.data.filter(
          (x: { to: string }) => x.to === who,
        );
        return a.length >= 2 && a;
      }, 'reaction and typing at the provider');
      expect(actions.map((a: { kind: string }) => a.kind)).to.have.members(['reaction', 'typing']);
      expect(actions.find((a: { kind: string }) => a.kind === 'reaction').detail.reaction).to.equal('🔥');
      // texts have no typing indicator
      const sms = await send({ to_number: ANDROID, body: 'typing?' });
      const none = await app.call('POST', `/v1/conversations/${sms.body.conversation_id}/typing`, { key: line.key });
      expect(none.body.status).to.equal('unsupported');
    });
  });

  describe('contact cards', () => {
    const card = (key = line.key, numberId = line.numberId) => app.call('GET', `/v1/numbers/${numberId}/contact-card`, { key });
    const put = (body: Record<string, unknown>, numberId = line.numberId) =>
      app.call('PUT', `/v1/numbers/${numberId}/contact-card`, { key: line.key, body });
    const atProvider = async () =>
      (await app.call('GET', `/sandbox/rich/contact-cards/${encodeURIComponent(line.phoneNumber)}`, { key: ADMIN_TOKEN })).body;

    it('reads an empty card before one is set', async () => {
      const r = await card();
      expect(r.status).to.equal(200);
      expect(r.body).to.deep.equal({ firstName: null, lastName: null, displayName: null, hasAvatar: false });
    });

    it('sets names and an avatar fetched once, checked by content, stored and served to the provider', async () => {
      const r = await put({ firstName: 'Ada', lastName: 'Lovelace', displayName: 'Acme Support', avatarUrl: images.url('/jpeg.txt') });
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
      expect(r.body).to.deep.equal({ firstName: 'Ada', lastName: 'Lovelace', displayName: 'Acme Support', hasAvatar: true });
      expect(images.hits.get('/jpeg.txt')).to.equal(1);
      expect((await card()).body).to.deep.equal(r.body);
      const held = await eventually(async () => {
        const c = await atProvider();
        return c.version >= 1 && c;
      }, 'the provider holds the card');
      expect(held.card).to.deep.equal({ firstName: 'Ada', lastName: 'Lovelace', displayName: 'Acme Support' });
      expect(held.avatar).to.deep.equal({ contentType: 'image/jpeg', bytes: IMAGES.jpeg.length, sha256: sha256(IMAGES.jpeg) });
    });

    for (const [what, url, words] of [
      ['a file that is not an image, whatever its name', '/text.png', 'not a JPEG, PNG'],
      ['an image over 10 MB', '/huge.png', 'larger than'],
      ['a redirect', '/redirect.png', 'redirect'],
    ] as const)
      it(`refuses ${what} (422) and leaves the card as it was`, async () => {
        const r = await put({ firstName: 'Mallory', avatarUrl: images.url(url) });
        expect(r.status, JSON.stringify(r.body)).to.equal(422);
        expect(r.body.error.code).to.equal('RICH_MEDIA_REJECTED');
        expect(r.body.error.message).to.contain(words);
        expect((await card()).body).to.include({ firstName: 'Ada', hasAvatar: true });
      });

    for (const url of [
      'http://10.0.0.7/a.png',
      'http://169.254.169.254/latest/meta-data',
      'http://[fd00::1]/a.png',
      'ftp://example.com/a.png',
    ])
      it(`never fetches from an internal address or another scheme: ${url}`, async () => {
        const r = await put({ firstName: 'Mallory', avatarUrl: url });
        expect(r.status, JSON.stringify(r.body)).to.equal(422);
        expect((await card()).body).to.include({ firstName: 'Ada' });
      });

    it('refuses a number that is not on the rich channel, and another account’s number is a 404', async () => {
      const plain = await messagingLine(app, { country: 'CA', registered: false, name: 'Card-less' });
      const r = await app.call('PUT', `/v1/numbers/${plain.numberId}/contact-card`, { key: plain.key, body: { firstName: 'X' } });
      expect(r.status).to.equal(422);
      expect(r.body.error.code).to.equal('RICH_CHANNEL_UNAVAILABLE');
      expect((await card(plain.key, line.numberId)).status).to.equal(404);
    });

    it('replaces the whole card on PUT, then deletes it (204, twice)', async () => {
      const r = await put({ displayName: 'Acme' });
      expect(r.body).to.deep.equal({ firstName: null, lastName: null, displayName: 'Acme', hasAvatar: false });
      const del = await app.call('DELETE', `/v1/numbers/${line.numberId}/contact-card`, { key: line.key });
      expect(del.status).to.equal(204);
      expect((await app.call('DELETE', `/v1/numbers/${line.numberId}/contact-card`, { key: line.key })).status).to.equal(204);
      expect((await card()).body).to.deep.equal({ firstName: null, lastName: null, displayName: null, hasAvatar: false });
      await eventually(async () => (await atProvider()).card === null, 'the provider removed the card');
    });
  });

  describe('chat backgrounds', () => {
    let conversationId: string;
    let who: string;
    const set = (imageUrl: string, id = conversationId) =>
      app.call('POST', `/v1/conversations/${id}/background`, { key: line.key, body: { image_url: imageUrl } });
    before(async () => {
      who = iphone();
      conversationId = (await send({ to_number: who, body: 'Nice wallpaper?' })).body.conversation_id;
    });

    it('sets a background (checked by content: a PNG served as .bin), then keeps it when set again (changed false)', async () => {
      const r = await set(images.url('/png.bin'));
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
      expect(r.body).to.include({ conversationId, channel: 'imessage', hasBackground: true, backgroundVersion: 1, changed: true });
      const again = await set(images.url('/png.bin'));
      expect(again.body).to.include({ backgroundVersion: 1, changed: false, backgroundId: r.body.backgroundId });
      const held = (await app.call('GET', `/sandbox/rich/backgrounds?line=${encodeURIComponent(line.phoneNumber)}`, { key: ADMIN_TOKEN }))
        .body.data;
      expect(held.find((b: { participant: string }) => b.participant === who)).to.include({
        status: 'set',
        contentType: 'image/png',
        sha256: sha256(IMAGES.png),
      });
    });

    for (const [kind, type] of [
      ['jpeg', 'image/jpeg'],
      ['gif', 'image/gif'],
      ['webp', 'image/webp'],
      ['heic', 'image/heic'],
    ] as const)
      it(`takes ${type} by its bytes and replaces the background with the next version`, async () => {
        const before = (await set(images.url(`/${kind}.png`))).body;
        expect(before).to.include({ changed: true });
        const held = (await app.call('GET', `/sandbox/rich/backgrounds?line=${encodeURIComponent(line.phoneNumber)}`, { key: ADMIN_TOKEN }))
          .body.data;
        expect(held.find((b: { participant: string }) => b.participant === who)).to.include({
          contentType: type,
          sha256: sha256(IMAGES[kind]),
        });
      });

    it('refuses what is not an image by content, over 10 MB, or at an internal address (422), and keeps the background', async () => {
      for (const url of [images.url('/text.jpg'), images.url('/huge.png'), 'http://192.168.1.10/wall.png']) {
        const r = await set(url);
        expect(r.status, `${url}: ${JSON.stringify(r.body)}`).to.equal(422);
        expect(r.body.error.code).to.equal('RICH_MEDIA_REJECTED');
      }
      const again = await set(images.url('/heic.x'));
      expect(again.body.changed).to.equal(false);
    });

    it('refuses a conversation of texts (422); another account’s conversation is a 404', async () => {
      const sms = await send({ to_number: ANDROID, body: 'plain' });
      const r = await set(images.url('/png.png'), sms.body.conversation_id);
      expect(r.status).to.equal(422);
      expect(r.body.error.code).to.equal('RICH_CHANNEL_UNAVAILABLE');
      const other = await messagingLine(app, { country: 'CA', registered: false, name: 'Nosy' });
      const nosy = await app.call('POST', `/v1/conversations/${conversationId}/background`, {
        key: other.key,
        body: { image_url: images.url('/png.png') },
      });
      expect(nosy.status).to.equal(404);
    });

    it('removes the background (204), and a second removal is a no-op (204)', async () => {
      const del = await app.call('DELETE', `/v1/conversations/${conversationId}/background`, { key: line.key });
      expect(del.status).to.equal(204);
      expect((await app.call('DELETE', `/v1/conversations/${conversationId}/background`, { key: line.key })).status).to.equal(204);
      await eventually(async () => {
        const held = (await app.call('GET', `/sandbox/rich/backgrounds?line=${encodeURIComponent(line.phoneNumber)}`, { key: ADMIN_TOKEN }))
          .body.data;
        return held.find((b: { participant: string }) => b.participant === who)?.status === 'cleared';
      }, 'the provider cleared it');
      const r = await set(images.url('/png.bin'));
      expect(r.body).to.include({ changed: true, backgroundVersion: 7 }); // png, jpeg, gif, webp, heic, removed, png again
    });
  });

  describe('shared locations', () => {
    const get = (phone: string, key = line.key) => app.call('GET', `/v1/location/${encodeURIComponent(phone)}`, { key });
    const refresh = (key = line.key) => app.call('POST', '/v1/location/refresh', { key });

    it('refuses a refresh without a rich line, and knows no location before one', async () => {
      const plain = await messagingLine(app, { country: 'CA', registered: false, name: 'No locations' });
      expect((await refresh(plain.key)).status).to.equal(422);
      const r = await get('+14155550140', plain.key);
      expect(r.status).to.equal(404);
      expect(r.body.error.code).to.equal('LOCATION_NOT_FOUND');
    });

    it('refreshes: the documented contacts share where they are, and they move on the Clock', async () => {
      const r = await refresh();
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
      expect(r.body).to.deep.equal({ success: true, pollAfterSeconds: 20 });
      const first = await eventually(async () => {
        const x = await get('+14155550140');
        return x.status === 200 && x.body;
      }, 'a location');
      expect(first).to.include({ phoneNumber: '+14155550140', status: 'active' });
      expect(first.latitude).to.be.within(37.787, 37.789);
      expect(first.longitude).to.be.within(-122.408, -122.406);
      expect(first.lastUpdated).to.be.a('number');
      await advanceClock(app, 150);
      await refresh();
      const later = await eventually(async () => {
        const x = (await get('+14155550140')).body;
        return x.lastUpdated >= first.lastUpdated + 150 && x;
      }, 'a newer location');
      expect([later.latitude, later.longitude]).not.to.deep.equal([first.latitude, first.longitude]);
      expect((await get('4155550140')).body.phoneNumber).to.equal('+14155550140');
      expect((await get('+14155550199')).status).to.equal(404);
    });

    it('shows a contact who stopped sharing as not_sharing, without a position', async () => {
      const now = new Date((await app.call('GET', '/sandbox/clock', { key: ADMIN_TOKEN })).body.now);
      const toHalfPast = ((90 - now.getUTCMinutes()) % 60) * 60 + 30; // into the second half of an hour
      await advanceClock(app, toHalfPast);
      await refresh();
      const x = await eventually(async () => {
        const l = (await get('+13125550142')).body;
        return l.status === 'not_sharing' && l;
      }, 'stopped sharing');
      expect(x).to.include({ latitude: null, longitude: null });
    });
  });

  describe('concurrency and lines that stop', () => {
    it('settles two card writes at once: each answers the card or 409, and the card is one of them', async () => {
      const names = ['First', 'Second'];
      const answers = await Promise.all(
        names.map((firstName, i) =>
          app.call('PUT', `/v1/numbers/${line.numberId}/contact-card`, {
            key: line.key,
            body: { firstName, avatarUrl: images.url(i === 0 ? '/png.png' : '/gif.png') },
          }),
        ),
      );
      for (const a of answers) expect([200, 409], JSON.stringify(a.body)).to.include(a.status);
      const ok = answers.filter((a) => a.status === 200).map((a) => a.body.firstName);
      expect(ok).to.not.be.empty;
      const now = (await app.call('GET', `/v1/numbers/${line.numberId}/contact-card`, { key: line.key })).body;
      expect(ok).to.include(now.firstName);
    });

    it('settles two background requests at once: each answers or 409, and the provider holds the last one set', async () => {
      const who = iphone();
      const conv = (await send({ to_number: who, body: 'two wallpapers' })).body.conversation_id;
      const answers = await Promise.all(
        ['/jpeg.a', '/webp.b'].map((u) =>
          app.call('POST', `/v1/conversations/${conv}/background`, { key: line.key, body: { image_url: images.url(u) } }),
        ),
      );
      for (const a of answers) expect([200, 409], JSON.stringify(a.body)).to.include(a.status);
      expect(answers.some((a) => a.status === 200)).to.equal(true);
    });

    it('sends by SMS again once the provider stops serving the number; its imessage conversations say they cannot send', async () => {
      const who = iphone();
      const first = await send({ to_number: who, body: 'on imessage' });
      expect(first.body.channel).to.equal('imessage');
      const off = await app.call('DELETE', `/sandbox/rich/lines/${encodeURIComponent(line.phoneNumber)}`, { key: ADMIN_TOKEN });
      expect(off.body).to.include({ removed: true, numberId: line.numberId });
      try {
        const next = await send({ to_number: who, body: 'now by text' });
        expect(next.body.channel).to.equal('sms');
        const c = (await app.call('GET', `/v1/conversations/${first.body.conversation_id}`, { key: line.key })).body;
        expect(c.capabilities).to.include({ canSendMessages: false, sendChannel: 'imessage' });
        expect(c.capabilities.availableChannels).to.deep.equal(['sms', 'mms']);
        expect((await caps(who)).body.error.code).to.equal('RICH_CHANNEL_UNAVAILABLE');
      } finally {
        await addRichLine(app, line.phoneNumber);
      }
    });
  });

  describe('billing', () => {
    it('counts imessage messages in usage as texts are counted (docs/rich-messaging.md#billing)', async () => {
      const fresh = await richLine(app, 'Usage account');
      const before = (await app.call('GET', '/v1/usage', { key: fresh.key })).body.stats.totalMessages;
      const r = await app.call('POST', '/v1/messages', {
        key: fresh.key,
        body: { agent_id: fresh.agentId, to_number: iphone(), body: 'counted' },
      });
      expect(r.body.channel).to.equal('imessage');
      await eventually(
        async () => (await app.call('GET', '/v1/usage', { key: fresh.key })).body.stats.totalMessages === before + 1,
        'counted in usage',
      );
    });
  });

  describe('rebuild (after everything above)', () => {
    it('rebuilds the rich read models equal to the live ones', async () => {
      for (const p of [richProjector, messagingProjector]) {
        const r = await rebuildProjector(app.rt.get(PLATFORM.ReadDb), app.rt.store, p, { checkOnly: true });
        expect(r.equal, `${p.name}: ${JSON.stringify(r)}`).to.equal(true);
      }
    });
  });
});
