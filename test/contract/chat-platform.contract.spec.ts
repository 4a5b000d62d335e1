import { expect } from 'chai';
import { ChatPlatformError, type ChatPlatformPort, type OutboundChat } from '../../application/chatapp/chat-platform.port.js';
import type { TemplateContent } from '../../domain/chatapp/template.decider.js';
import { CloudChatPlatform } from '../../infrastructure/chatapp/cloud-chat-platform.js';
import { CHATAPP } from '../../infrastructure/chatapp/tokens.js';
import { startFakeChatPlatform } from '../support/fake-chat-platform.js';
import { startTestApp, type TestApp } from '../support/http.js';
import { useContractMock } from '../support/prism.js';

/** The platform's published API description, vendored (test/contracts/chatapp/SOURCE), and the version it describes. */
const DOCUMENT = 'test/contracts/chatapp/business-messaging-api_v23.0.yaml';
const API_VERSION = 'v23.0';
/** The one value the description allows in `messaging_product` (the enum of its register body): CHATAPP_MESSAGING_PRODUCT live. */
const MESSAGING_PRODUCT = 'whatsapp';
/**
 * The description's operations the cloud adapter speaks (docs/chatapp.md#the-platform). The mock serves only these:
 * the description declares `GET /{Version}/{…}` for fourteen kinds of object, and a request must be checked against
 * the business account's.
 */
const OPERATIONS = [
  'getWhatsAppBusinessAccountDetails',
  'getWhatsAppBusinessAccountPhoneNumbers',
  'registerWhatsAppBusinessPhoneNumber',
  'createAuthenticationTemplateWOtpCopyCodeButton', // the description's id of `POST /{Version}/{WABA-ID}/message_templates`
  'sendMessage',
];

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

type Adapter = Readonly<{
  name: string;
  /** whether it can show what only the platform (or a fake of it) can: its refusals with their codes, one id per message */
  platformSemantics: boolean;
  setup: () => Promise<{ platform: ChatPlatformPort; world: World; close: () => Promise<void> }>;
}>;

/**
 * The ChatPlatform port's contract (docs/chatapp.md#the-platform), run against the sandbox platform, the cloud-API
 * adapter talking to a local fake of the platform, and the cloud-API adapter talking to a mock of the platform's
 * published API description (which checks every request and answers with the description's examples).
 */
function contract(a: Adapter) {
  describe(`ChatPlatform contract: ${a.name}`, function () {
    this.timeout(60_000);
    let platform: ChatPlatformPort;
    let world: World;
    let close: () => Promise<void>;
    before(async () => {
      ({ platform, world, close } = await a.setup());
    });
    after(() => close());
    const auth = () => ({ businessAccountId: world.businessAccountId, accessToken: world.token });
    const send = (to: string, content: OutboundChat['content']) =>
      platform.send({ accessToken: world.token, phoneNumberId: world.phoneNumberId, to, idempotencyKey: `k-${Math.random()}`, content });

    it('opens a business account with a good token and names it', async () => {
      const ba = await platform.businessAccount(auth());
      expect(ba.id).to.equal(world.businessAccountId);
      expect(ba.name).to.be.a('string');
    });
    it("lists the business account's numbers in E.164", async () => {
      const numbers = await platform.phoneNumbers(auth());
      expect(numbers.find((n) => n.phoneNumberId === world.phoneNumberId)).to.deep.include({ phoneNumber: world.phoneNumber });
      for (const n of numbers) expect(n.phoneNumber).to.match(/^\+[1-9]\d{6,14}$/);
    });
    it('registers a number with its pin (again: still fine)', async () => {
      await platform.registerNumber({ accessToken: world.token, phoneNumberId: world.phoneNumberId, pin: '123456' });
      await platform.registerNumber({ accessToken: world.token, phoneNumberId: world.phoneNumberId, pin: '123456' });
    });
    it('takes a template for review: an id, status pending', async () => {
      const r = await platform.submitTemplate({ ...auth(), template });
      expect(r.platformTemplateId).to.be.a('string').and.not.equal('');
      expect(r.status).to.equal('pending');
    });
    it('sends a text, a template and media, each answered with a message id', async () => {
      const ids = [
        await send('+447700900810', { kind: 'text', body: 'hello' }),
        await send('+447700900810', {
          kind: 'template',
          name: 'order_ready',
          language: 'en_US',
          variables: template.variables,
          values: { order_id: '42', name: 'Ada' },
        }),
        await send('+447700900810', { kind: 'media', mediaUrls: ['https://example.com/a.png'], caption: 'menu' }),
      ].map((r) => r.platformMessageId);
      for (const id of ids) expect(id).to.be.a('string').and.not.equal('');
    });

    if (!a.platformSemantics) return;
    it('refuses a bad token with 190 and an unknown business account with 100', async () => {
      expect(await refusalCode(platform.businessAccount({ ...auth(), accessToken: 'invalid-token' }))).to.equal(190);
      expect(await refusalCode(platform.businessAccount({ ...auth(), businessAccountId: '299999999999999' }))).to.equal(100);
    });
    it('refuses to register an unknown number with 100', async () => {
      expect(
        await refusalCode(platform.registerNumber({ accessToken: world.token, phoneNumberId: '399999999999999', pin: '123456' })),
      ).to.equal(100);
    });
    it('gives each message its own id, and refuses an invalid send with 100', async () => {
      const ids = [await send('+447700900810', { kind: 'text', body: 'one' }), await send('+447700900810', { kind: 'text', body: 'two' })];
      expect(ids[0]!.platformMessageId).to.not.equal(ids[1]!.platformMessageId);
      expect(await refusalCode(send('+447700900100', { kind: 'text', body: 'x' }))).to.equal(100);
    });
  });
}

let sandboxApp: TestApp;
contract({
  name: 'the sandbox platform',
  platformSemantics: true,
  setup: async () => {
    sandboxApp = await startTestApp();
    return {
      platform: sandboxApp.rt.get(CHATAPP.Platform),
      world: { businessAccountId: '200000000000001', phoneNumberId: '300000000000011', phoneNumber: '+447700900501', token: 'any-token' },
      close: () => sandboxApp.close(),
    };
  },
});

contract({
  name: 'the cloud API (a local fake of the platform: its refusals and ids)',
  platformSemantics: true,
  setup: async () => {
    const fake = await startFakeChatPlatform();
    return {
      platform: new CloudChatPlatform({ baseUrl: fake.baseUrl, messagingProduct: MESSAGING_PRODUCT, timeoutMs: 2000 }),
      world: {
        businessAccountId: fake.businessAccountId,
        phoneNumberId: '310000000000011',
        phoneNumber: '+447700900501',
        token: 'cloud-token',
      },
      close: fake.close,
    };
  },
});

describe(`the cloud API against a mock of its published API description (${API_VERSION})`, () => {
  const mock = useContractMock({ name: `chat platform API ${API_VERSION}`, document: DOCUMENT, operations: OPERATIONS });
  const cloud = () =>
    new CloudChatPlatform({ baseUrl: `${mock().url}/${API_VERSION}`, messagingProduct: MESSAGING_PRODUCT, timeoutMs: 10_000 });

  contract({
    name: `the cloud API (a mock of the platform's API description ${API_VERSION})`,
    platformSemantics: false,
    // the mock answers with the description's examples: this world is theirs
    setup: async () => ({
      platform: cloud(),
      world: { businessAccountId: '1234567890123456', phoneNumberId: '1906385232743451', phoneNumber: '+16315555555', token: 'mock-token' },
      close: async () => {},
    }),
  });

  describe('every request the adapter makes passes the description', function () {
    this.timeout(60_000);
    let platform: CloudChatPlatform;
    before(() => {
      platform = cloud();
    });
    // the last request as sent, its body read field by field
    const last = () => mock().requests.at(-1)! as { url: string; headers: Record<string, unknown>; body: any };
    const auth = { businessAccountId: '210000000000001', accessToken: 'tok' };
    const base = { accessToken: 'tok', phoneNumberId: '310000000000011', to: '+447700900810', idempotencyKey: 'k' };

    it('reads the business account and its numbers with the token as a bearer token, naming the fields it reads', async () => {
      await platform.businessAccount(auth);
      expect(last().url).to.equal(`/${API_VERSION}/210000000000001?fields=id,name`);
      await platform.phoneNumbers(auth);
      expect(last().url).to.equal(`/${API_VERSION}/210000000000001/phone_numbers?fields=id,display_phone_number,verified_name`);
      expect(
        mock()
          .requests.slice(-2)
          .map((r) => r.headers.authorization),
      ).to.deep.equal(['Bearer tok', 'Bearer tok']);
    });

    it('registers with messaging_product and the pin; without a pin it refuses (100) and sends nothing', async () => {
      await platform.registerNumber({ accessToken: 'tok', phoneNumberId: '310000000000011', pin: '654321' });
      expect(last()).to.deep.include({
        method: 'POST',
        url: `/${API_VERSION}/310000000000011/register`,
        body: { messaging_product: MESSAGING_PRODUCT, pin: '654321' },
      });
      const before = mock().requests.length;
      expect(await refusalCode(platform.registerNumber({ accessToken: 'tok', phoneNumberId: '310000000000011', pin: null }))).to.equal(100);
      expect(mock().requests.length).to.equal(before);
    });

    it('creates templates: named variables with examples, a header and a quick reply; positional with link and call buttons; none', async () => {
      await platform.submitTemplate({ ...auth, template });
      expect(last().url).to.equal(`/${API_VERSION}/210000000000001/message_templates`);
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
        ...auth,
        template: {
          ...template,
          name: 'hours',
          category: 'marketing',
          body: 'Hi {{1}}, we open at {{2}}',
          header: null,
          buttons: [
            { type: 'url', text: 'Our hours', url: 'https://example.com/hours' },
            { type: 'phone_number', text: 'Call us', phoneNumber: '+447700900501' },
          ],
          variables: { format: 'positional', count: 2 },
          examples: ['Ada', '9'],
        },
      });
      expect(last().body).to.deep.include({ category: 'MARKETING', parameter_format: 'POSITIONAL' });
      expect(last().body.components).to.deep.equal([
        { type: 'BODY', text: 'Hi {{1}}, we open at {{2}}', example: { body_text: [['Ada', '9']] } },
        {
          type: 'BUTTONS',
          buttons: [
            { type: 'URL', text: 'Our hours', url: 'https://example.com/hours' },
            { type: 'PHONE_NUMBER', text: 'Call us', phone_number: '+447700900501' },
          ],
        },
      ]);
      await platform.submitTemplate({
        ...auth,
        template: {
          ...template,
          name: 'welcome',
          body: 'Welcome!',
          header: null,
          buttons: [],
          variables: { format: 'none' },
          examples: null,
        },
      });
      expect(last().body).to.deep.equal({
        name: 'welcome',
        language: 'en_US',
        category: 'UTILITY',
        components: [{ type: 'BODY', text: 'Welcome!' }],
      });
    });

    it('sends texts to digits without +, and templates with positional, named or no body parameters', async () => {
      await platform.send({ ...base, content: { kind: 'text', body: 'hello' } });
      expect(last().body).to.deep.equal({
        messaging_product: MESSAGING_PRODUCT,
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
        language: { policy: 'deterministic', code: 'en_US' },
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
      await platform.send({
        ...base,
        content: { kind: 'template', name: 'welcome', language: 'en', variables: { format: 'none' }, values: null },
      });
      expect(last().body.template).to.deep.equal({ name: 'welcome', language: { policy: 'deterministic', code: 'en' }, components: [] });
    });

    it('sends media by link as an image, a video or a document, with the body as its caption when there is one', async () => {
      const sent: unknown[] = [];
      for (const [url, caption] of [
        ['https://example.com/menu.jpg', 'menu'],
        ['https://example.com/tour.mp4', ''],
        ['https://example.com/menu.pdf', 'menu'],
      ] as const) {
        await platform.send({ ...base, content: { kind: 'media', mediaUrls: [url], caption } });
        sent.push(last().body);
      }
      expect(sent).to.deep.equal(
        [
          { type: 'image', image: { link: 'https://example.com/menu.jpg', caption: 'menu' } },
          { type: 'video', video: { link: 'https://example.com/tour.mp4' } },
          { type: 'document', document: { link: 'https://example.com/menu.pdf', caption: 'menu' } },
        ].map((m) => ({ messaging_product: MESSAGING_PRODUCT, recipient_type: 'individual', to: '447700900810', ...m })),
      );
    });
  });
});

describe('the cloud-API adapter against the fake: pages and unknown outcomes', function () {
  this.timeout(30_000);
  let fake: Awaited<ReturnType<typeof startFakeChatPlatform>>;
  let platform: CloudChatPlatform;
  before(async () => {
    fake = await startFakeChatPlatform();
    platform = new CloudChatPlatform({ baseUrl: `${fake.baseUrl}/`, messagingProduct: MESSAGING_PRODUCT, timeoutMs: 2000 });
  });
  after(() => fake.close());

  it('follows the pages of the number list by their cursor', async () => {
    const numbers = await platform.phoneNumbers({ businessAccountId: fake.businessAccountId, accessToken: 'tok' });
    expect(numbers.map((n) => n.phoneNumber)).to.deep.equal(['+447700900501', '+447700900502', '+12045550100']);
    const pages = fake.requests.filter((r) => r.path.endsWith('/phone_numbers'));
    expect(pages.map((r) => r.query.get('after'))).to.deep.equal([null, 'page2']);
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
    const unreachable = new CloudChatPlatform({ baseUrl: 'http://127.0.0.1:1/v23.0', messagingProduct: MESSAGING_PRODUCT, timeoutMs: 500 });
    const u = await unreachable.businessAccount({ businessAccountId: 'x', accessToken: 't' }).catch((x) => x);
    expect(u).to.be.instanceOf(Error).and.not.instanceOf(ChatPlatformError);
  });
});
