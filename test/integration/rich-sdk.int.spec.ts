import { AgentPhoneClient, AgentPhoneError } from 'agentphone';
import { expect } from 'chai';
import { ADMIN_TOKEN, startTestApp, type TestApp } from '../support/http.js';
import type { Line } from '../support/messaging.js';
import { eventually } from '../support/numbers.js';
import { FAST_RICH_ENV, type ImageServer, IPHONE, richLine, startImageServer } from '../support/rich.js';

/**
 * The public SDK itself (the npm package `agentphone`, pinned in devDependencies), pointed at this server with its
 * `baseUrl` option: every method of its `contacts`, `contactCards`, `conversations` and `location` groups, unchanged,
 * plus the sends and reactions they need (docs/rich-messaging.md).
 */
describe('the public SDK (agentphone 1.0.17) against the server: contacts, contactCards, conversations, location', function () {
  this.timeout(90_000);
  let app: TestApp;
  let images: ImageServer;
  let line: Line;
  let client: AgentPhoneClient;
  let conversationId: string;
  const who = IPHONE(200);

  before(async () => {
    app = await startTestApp(FAST_RICH_ENV);
    images = await startImageServer();
    line = await richLine(app, 'SDK account');
    client = new AgentPhoneClient({ token: line.key, baseUrl: app.url, maxRetries: 0 });
  });
  after(async () => {
    await images.close();
    await app.close();
  });

  describe('contacts', () => {
    let contactId: string;
    it('createContact, getContact, listContacts', async () => {
      const c = await client.contacts.createContact({ phoneNumber: '(415) 555-0188', name: 'Grace Hopper', email: 'grace@example.com' });
      expect(c).to.include({ phoneNumber: '+14155550188', name: 'Grace Hopper', email: 'grace@example.com' });
      contactId = c.id;
      expect(await client.contacts.getContact({ contact_id: contactId })).to.include({ id: contactId, name: 'Grace Hopper' });
      const list = await client.contacts.listContacts({ limit: 10 });
      expect(list.data.map((x) => x.id)).to.include(contactId);
    });
    it('updateContact, deleteContact (then a 404 the SDK throws)', async () => {
      expect(await client.contacts.updateContact({ contact_id: contactId, name: 'Rear Admiral Hopper' })).to.include({
        name: 'Rear Admiral Hopper',
      });
      await client.contacts.deleteContact({ contact_id: contactId });
      const err = await client.contacts.getContact({ contact_id: contactId }).catch((e: unknown) => e);
      expect(err).to.be.instanceOf(AgentPhoneError);
      expect((err as AgentPhoneError).statusCode).to.equal(404);
    });
    it('getContactCapabilities: a live check through the rich provider', async () => {
      const r = await client.contacts.getContactCapabilities({ phone_number: who });
      expect(r.phoneNumber).to.equal(who);
      expect(r.capabilities).to.deep.equal({ imessage: true, sms: true });
      expect(r.checkedAt).to.be.a('string');
      const android = await client.contacts.getContactCapabilities({ phone_number: '+13035550173' });
      expect(android.capabilities).to.deep.equal({ imessage: false, sms: true });
    });
  });

  describe('contactCards', () => {
    it('putContactCard (with an avatar), getContactCard, deleteContactCard', async () => {
      const put = await client.contactCards.putContactCard({
        number_id: line.numberId,
        firstName: 'Ada',
        lastName: 'Lovelace',
        displayName: 'Acme',
        avatarUrl: images.url('/png.png'),
      });
      expect(put).to.deep.equal({ firstName: 'Ada', lastName: 'Lovelace', displayName: 'Acme', hasAvatar: true });
      expect(await client.contactCards.getContactCard({ number_id: line.numberId })).to.deep.equal(put);
      await client.contactCards.deleteContactCard({ number_id: line.numberId });
      expect(await client.contactCards.getContactCard({ number_id: line.numberId })).to.deep.include({
        displayName: null,
        hasAvatar: false,
      });
    });
  });

  describe('conversations', () => {
    before(async () => {
      const sent = await client.messages.sendMessage({
        agent_id: line.agentId,
        to_number: who,
        body: 'Hi from the SDK',
        send_style: 'balloons',
      });
      expect(sent.channel).to.equal('imessage');
      conversationId = sent.conversation_id!;
      const reaction = await client.messages.sendReaction({ message_id: sent.id, reaction: '👍' });
      expect(reaction).to.include({ reaction_type: '👍', channel: 'imessage' });
    });
    it('listConversations, getConversation (its channel and capabilities), getConversationMessages', async () => {
      const list = await client.conversations.listConversations({ offset: 0 });
      expect(list.data.map((c) => c.id)).to.include(conversationId);
      const c = await client.conversations.getConversation({ conversation_id: conversationId, message_limit: 10 });
      expect(c).to.include({ id: conversationId, participant: who, phoneNumber: line.phoneNumber });
      const raw = c as unknown as {
        channel: string;
        capabilities: { sendChannel: string; availableChannels: string[]; emojiReactions: boolean };
      };
      expect(raw.channel).to.equal('imessage');
      expect(raw.capabilities).to.include({ sendChannel: 'imessage', emojiReactions: true });
      const messages = await client.conversations.getConversationMessages({ conversation_id: conversationId, limit: 5 });
      expect(messages.data[0]).to.include({ body: 'Hi from the SDK', channel: 'imessage' });
      expect(messages.data[0]!.reactions?.map((r) => r.reactionType)).to.deep.equal(['👍']);
    });
    it('the sandbox provider was given the message the SDK sent', async () => {
      const held = await eventually(async () => {
        const r = await app.call('GET', `/sandbox/rich/messages?to=${encodeURIComponent(who)}`, { key: ADMIN_TOKEN });
        return r.body.data[0];
      }, 'at the provider');
      expect(held).to.include({ body: 'Hi from the SDK', sendStyle: 'balloons' });
    });
    it('updateConversation', async () => {
      const c = await client.conversations.updateConversation({ conversation_id: conversationId, metadata: { ticket: 'T-1' } });
      expect(c.metadata).to.deep.equal({ ticket: 'T-1' });
    });
    it('sendTypingIndicator', async () => {
      expect(await client.conversations.sendTypingIndicator({ conversation_id: conversationId })).to.deep.equal({
        conversationId,
        channel: 'imessage',
        status: 'sent',
      });
    });
    it('setChatBackground, removeChatBackground', async () => {
      const r = await client.conversations.setChatBackground({ conversation_id: conversationId, image_url: images.url('/webp.jpg') });
      expect(r).to.include({ conversationId, channel: 'imessage', hasBackground: true, changed: true, backgroundVersion: 1 });
      await client.conversations.removeChatBackground({ conversation_id: conversationId });
      await client.conversations.removeChatBackground({ conversation_id: conversationId }); // a no-op, still 204
    });
  });

  describe('location', () => {
    it('refreshLocations, then getLocation after the poll', async () => {
      const r = await client.location.refreshLocations();
      expect(r).to.deep.equal({ success: true, pollAfterSeconds: 20 });
      const l = await eventually(
        () => client.location.getLocation({ phone_number: '+12125550141' }).catch(() => undefined),
        'the shared location',
      );
      expect(l).to.include({ phoneNumber: '+12125550141', status: 'active' });
      expect(l.latitude).to.be.within(40.78, 40.79);
      expect(l.lastUpdated).to.be.a('number');
    });
  });
});
