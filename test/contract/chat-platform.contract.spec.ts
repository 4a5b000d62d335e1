import { expect } from 'chai';
import { ChatPlatformError, type ChatPlatformPort } from '../../application/chatapp/chat-platform.port.js';
import type { TemplateContent } from '../../domain/chatapp/template.decider.js';
import { CloudChatPlatform } from '../../infrastructure/chatapp/cloud-chat-platform.js';
import { CHATAPP } from '../../infrastructure/chatapp/tokens.js';
import { startFakeChatPlatform } from '../support/fake-chat-platform.js';
import { startTestApp, type TestApp } from '../support/http.js';

type World = Readonly<{ businessAccountId: string; phoneNumberId: string; phoneNumber: string; token: string }>;

const template: TemplateContent = {
  name: 'order_ready',
  language: 'en_US',
  category: 'utility',
  body: 'Order {{order_id}} is ready, {{name}}.',
  header: 'Your order',
  buttons: [{ type: 'quick_reply', text: 'Thanks' }],
  variables: { format: 'named', names: ['order_id', 'name'] },
  examples: { order_id: '42', name: 'Ada' },
};

const refusalCode = async (p: Promise<unknown>): Promise<number | string> =>
  p.then(
    () => 'resolved',
    (e: unknown) => (e instanceof ChatPlatformError ? e.code : `not a ChatPlatformError: ${String(e)}`),
  );

/**
 * The ChatPlatform port's contract (docs/chatapp.md#the-platform), run against both adapters: the sandbox platform
 * and the cloud-API adapter talking to a local server that answers in the platform's documented shapes.
 */
function contract(name: string, setup: () => Promise<{ platform: ChatPlatformPort; world: World; close: () => Promise<void> }>) {
  describe(`ChatPlatform contract: ${name}`, function () {
    this.timeout(60_000);
    let platform: ChatPlatformPort;
    let world: World;
    let close: () => Promise<void>;
    before(async () => {
      ({ platform, world, close } = await setup());
    });
    after(() => close());
    const auth = () => ({ businessAccountId: world.businessAccountId, accessToken: world.token });

    it('opens a business account with a good token and names it', async () => {
      const ba = await platform.businessAccount(auth());
      expect(ba.id).to.equal(world.businessAccountId);
      expect(ba.name).to.be.a('string');
    });
    it('refuses a bad token with 190 and an unknown business account with 100', async () => {
      expect(await refusalCode(platform.businessAccount({ ...auth(), accessToken: 'invalid-token' }))).to.equal(190);
      expect(await refusalCode(platform.businessAccount({ ...auth(), businessAccountId: '299999999999999' }))).to.equal(100);
    });
    it("lists the business account's numbers in E.164", async () => {
      const numbers = await platform.phoneNumbers(auth());
      expect(numbers.find((n) => n.phoneNumberId === world.phoneNumberId)).to.deep.include({ phoneNumber: world.phoneNumber });
      for (const n of numbers) expect(n.phoneNumber).to.match(/^\+[1-9]\d{6,14}$/);
    });
    it('registers a number (again: still fine), and refuses an unknown one', async () => {
      await platform.registerNumber({ accessToken: world.token, phoneNumberId: world.phoneNumberId, pin: '123456' });
      await platform.registerNumber({ accessToken: world.token, phoneNumberId: world.phoneNumberId, pin: '123456' });
      expect(
        await refusalCode(platform.registerNumber({ accessToken: world.token, phoneNumberId: '399999999999999', pin: null })),
      ).to.equal(100);
    });
    it('takes a template for review: an id, status pending', async () => {
      const r = await platform.submitTemplate({ ...auth(), template });
      expect(r.platformTemplateId).to.be.a('string').and.not.equal('');
      expect(r.status).to.equal('pending');
    });
    it('sends a text, a template and media, each answered with a message id; refuses an invalid send with 100', async () => {
      const base = { accessToken: world.token, phoneNumberId: world.phoneNumberId, to: '+447700900810' };
      const ids = [
        await platform.send({ ...base, idempotencyKey: 'k1', content: { kind: 'text', body: 'hello' } }),
        await platform.send({
          ...base,
          idempotencyKey: 'k2',
          content: {
            kind: 'template',
            name: 'order_ready',
            language: 'en_US',
            variables: template.variables,
            values: { order_id: '42', name: 'Ada' },
          },
        }),
        await platform.send({
          ...base,
          idempotencyKey: 'k3',
          content: { kind: 'media', mediaUrls: ['https://example.com/a.png'], caption: 'menu' },
        }),
      ].map((r) => r.platformMessageId);
      for (const id of ids) expect(id).to.be.a('string').and.not.equal('');
      expect(new Set(ids).size).to.equal(3);
      expect(
        await refusalCode(platform.send({ ...base, to: '+447700900100', idempotencyKey: 'k4', content: { kind: 'text', body: 'x' } })),
      ).to.equal(100);
    });
  });
}

let sandboxApp: TestApp;
contract('the sandbox platform', async () => {
  sandboxApp = await startTestApp();
  return {
    platform: sandboxApp.rt.get(CHATAPP.Platform),
    world: { businessAccountId: '200000000000001', phoneNumberId: '300000000000011', phoneNumber: '+447700900501', token: 'any-token' },
    close: () => sandboxApp.close(),
  };
});

contract('the cloud API (local server in its documented shapes)', async () => {
  const fake = await startFakeChatPlatform();
  return {
    platform: new CloudChatPlatform({ baseUrl: fake.baseUrl, messagingProduct: 'chatapp', timeoutMs: 2000 }),
    world: {
      businessAccountId: fake.businessAccountId,
      phoneNumberId: '310000000000011',
      phoneNumber: '+447700900501',
      token: 'cloud-token',
    },
    close: fake.close,
  };
});

describe('the cloud-API adapter speaks the documented request shapes', function () {
  this.timeout(30_000);
  let fake: Awaited<ReturnType<typeof startFakeChatPlatform>>;
  let platform: CloudChatPlatform;
  before(async () => {
    fake = await startFakeChatPlatform();
    platform = new CloudChatPlatform({ baseUrl: `${fake.baseUrl}/`, messagingProduct: 'chatapp', timeoutMs: 2000 });
  });
  after(() => fake.close());
  const last = () => fake.requests.at(-1)!;

  it('sends the token as a bearer token and follows the pages of the number list', async () => {
    const numbers = await platform.phoneNumbers({ businessAccountId: fake.businessAccountId, accessToken: 'tok' });
    expect(numbers.map((n) => n.phoneNumber)).to.deep.equal(['+447700900501', '+447700900502', '+12045550100']);
    const pages = fake.requests.filter((r) => r.path.endsWith('/phone_numbers'));
    expect(pages.map((r) => r.query.get('after'))).to.deep.equal([null, 'page2']);
    expect(pages.every((r) => r.authorization === 'Bearer tok')).to.equal(true);
  });

  it('registers with messaging_product and the pin', async () => {
    await platform.registerNumber({ accessToken: 'tok', phoneNumberId: '310000000000011', pin: '654321' });
    expect(last()).to.deep.include({
      method: 'POST',
      path: '/v99.0/310000000000011/register',
      body: { messaging_product: 'chatapp', pin: '654321' },
    });
  });

  it('creates a named template with its components and named examples', async () => {
    await platform.submitTemplate({ businessAccountId: fake.businessAccountId, accessToken: 'tok', template });
    expect(last().path).to.equal(`/v99.0/${fake.businessAccountId}/message_templates`);
    expect(last().body).to.deep.equal({
      name: 'order_ready',
      language: 'en_US',
      category: 'UTILITY',
      parameter_format: 'NAMED',
      components: [
        { type: 'HEADER', format: 'TEXT', text: 'Your order' },
        {
          type: 'BODY',
          text: 'Order {{order_id}} is ready, {{name}}.',
          example: {
            body_text_named_params: [
              { param_name: 'order_id', example: '42' },
              { param_name: 'name', example: 'Ada' },
            ],
          },
        },
        { type: 'BUTTONS', buttons: [{ type: 'QUICK_REPLY', text: 'Thanks' }] },
      ],
    });
    await platform.submitTemplate({
      businessAccountId: fake.businessAccountId,
      accessToken: 'tok',
      template: {
        ...template,
        name: 'hours',
        body: 'Hi {{1}}',
        header: null,
        buttons: [],
        variables: { format: 'positional', count: 1 },
        examples: ['Ada'],
      },
    });
    expect(last().body.components).to.deep.equal([{ type: 'BODY', text: 'Hi {{1}}', example: { body_text: [['Ada']] } }]);
    expect(last().body.parameter_format).to.equal('POSITIONAL');
  });

  it('sends texts to digits without +, templates with positional or named body parameters, and media by link', async () => {
    const base = { accessToken: 'tok', phoneNumberId: '310000000000011', to: '+447700900810', idempotencyKey: 'k' };
    await platform.send({ ...base, content: { kind: 'text', body: 'hello' } });
    expect(last().body).to.deep.equal({
      messaging_product: 'chatapp',
      recipient_type: 'individual',
      to: '447700900810',
      type: 'text',
      text: { preview_url: false, body: 'hello' },
    });
    await platform.send({
      ...base,
      content: { kind: 'template', name: 'hours', language: 'en_US', variables: { format: 'positional', count: 1 }, values: ['Ada'] },
    });
    expect(last().body.template).to.deep.equal({
      name: 'hours',
      language: { code: 'en_US' },
      components: [{ type: 'body', parameters: [{ type: 'text', text: 'Ada' }] }],
    });
    await platform.send({
      ...base,
      content: {
        kind: 'template',
        name: 'order_ready',
        language: 'en_US',
        variables: template.variables,
        values: { order_id: '42', name: 'Ada' },
      },
    });
    expect(last().body.template.components[0].parameters).to.deep.equal([
      { type: 'text', parameter_name: 'order_id', text: '42' },
      { type: 'text', parameter_name: 'name', text: 'Ada' },
    ]);
    await platform.send({ ...base, content: { kind: 'media', mediaUrls: ['https://example.com/menu.pdf'], caption: 'menu' } });
    expect(last().body).to.deep.include({ type: 'document', document: { link: 'https://example.com/menu.pdf', caption: 'menu' } });
  });

  it('treats a 5xx and no answer as an unknown outcome (a plain error), never as a refusal', async () => {
    fake.failNext(1);
    const e = await platform
      .send({
        accessToken: 'tok',
        phoneNumberId: '310000000000011',
        to: '+447700900810',
        idempotencyKey: 'k',
        content: { kind: 'text', body: 'x' },
      })
      .catch((x) => x);
    expect(e).to.be.instanceOf(Error).and.not.instanceOf(ChatPlatformError);
    const unreachable = new CloudChatPlatform({ baseUrl: 'http://127.0.0.1:1/v99.0', messagingProduct: 'chatapp', timeoutMs: 500 });
    const u = await unreachable.businessAccount({ businessAccountId: 'x', accessToken: 't' }).catch((x) => x);
    expect(u).to.be.instanceOf(Error).and.not.instanceOf(ChatPlatformError);
  });
});
