import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { CommandExecutor } from '../../application/shared/execute.js';
import type { OutgoingWebhook, WebhookQueries, WebhookSenderPort, WebhookView } from '../../application/webhooks/webhook.port.js';
import { AttemptNotRecordableError, WebhookDeliverer } from '../../application/webhooks/webhook-deliverer.js';
import { webhookDeliveryDecider } from '../../domain/webhook/webhook-delivery.decider.js';
import { meta, noReadModels, TestClock } from '../support/fixtures.js';
import { type StoreUnderTest, storeUnderTest } from '../support/stores.js';

const silent = { debug() {}, info() {}, warn() {}, error() {} };

describe('webhook deliverer (one claimed attempt)', () => {
  let sut: StoreUnderTest;
  before(async () => {
    sut = await storeUnderTest();
  });
  after(() => sut.close());

  const clock = new TestClock();
  const hook: WebhookView = {
    id: 'whk_1',
    url: 'https://hooks.example.com/in',
    secret: 'whsec_1',
    status: 'active',
    contextLimit: 10,
    timeout: 7,
    events: ['*'],
    createdAt: '',
    updatedAt: '',
    agentId: null,
    consecutiveFailures: 0,
    createdPosition: '0/0',
  };
  const ids = {
    id: (p: string) => `${p}_x`,
    uuid: () => randomUUID(),
    derived: (p: string, ...parts: string[]) => `${p}_${parts.join(':')}`,
  };

  async function scheduled(channel: string | null): Promise<string> {
    const deliveryId = `whd_${randomUUID().replace(/-/g, '')}`;
    const [e] = webhookDeliveryDecider.decide(
      {
        type: 'ScheduleDelivery',
        data: {
          deliveryId,
          webhookId: 'whk_1',
          webhookAgentId: null,
          eventType: 'agent.message',
          channel,
          agentId: 'agt_1',
          messageId: null,
          sourceEventId: null,
          sourceEventType: 'X',
          body: '{"a":1}',
        },
        metadata: { now: clock.now().toISOString(), accountId: 'acc_test' },
      },
      webhookDeliveryDecider.initialState(),
    );
    await sut.store.appendToStream(`webhook_delivery-${deliveryId}`, [{ ...e!, id: randomUUID(), metadata: meta() }], {
      expectedRevision: 'no_stream',
    });
    return deliveryId;
  }
  function deliverer(w: WebhookView | null, sent: OutgoingWebhook[]) {
    const sender: WebhookSenderPort = {
      send: async (r) => {
        sent.push(r);
        return { ok: true, httpStatus: 200, responseBody: null, durationMs: 3 };
      },
    };
    return new WebhookDeliverer(
      new CommandExecutor(sut.store, ids, clock, noReadModels),
      sut.store,
      ids,
      clock,
      { byId: async () => w } as unknown as WebhookQueries,
      sender,
      silent,
      { defaultDeadlineMs: 15_000 },
    );
  }
  const claim = (deliveryId: string, attempt = 1) => ({ deliveryId, accountId: 'acc_test', attempt, claimedUntil: '' });

  it("gives a voice turn the webhook's own timeout, other events the default deadline", async () => {
    const sent: OutgoingWebhook[] = [];
    await deliverer(hook, sent).deliver(claim(await scheduled('voice')));
    await deliverer(hook, sent).deliver(claim(await scheduled('sms')));
    expect(sent.map((s) => s.deadlineMs)).to.deep.equal([7000, 15_000]);
    expect(sent[0]).to.include({
      url: hook.url,
      secret: hook.secret,
      body: '{"a":1}',
      timestamp: Math.floor(clock.now().getTime() / 1000),
    });
  });

  it('sends nothing for an attempt the stream already records, and records each attempt once', async () => {
    const sent: OutgoingWebhook[] = [];
    const id = await scheduled('sms');
    expect(await deliverer(hook, sent).deliver(claim(id))).to.equal('sent');
    expect(await deliverer(hook, sent).deliver(claim(id))).to.equal('stale');
    expect(await deliverer(hook, sent).deliver(claim(id, 2))).to.equal('stale');
    expect(sent).to.have.length(1);
    expect((await sut.store.readStream(`webhook_delivery-${id}`)).map((e) => e.type)).to.deep.equal([
      'WebhookDeliveryScheduled',
      'WebhookAttemptSucceeded',
      'WebhookDeliverySucceeded',
    ]);
  });

  it('abandons the delivery without sending when the webhook is gone or disabled', async () => {
    const sent: OutgoingWebhook[] = [];
    const gone = await scheduled('sms');
    const disabled = await scheduled('sms');
    expect(await deliverer(null, sent).deliver(claim(gone))).to.equal('abandoned');
    expect(await deliverer({ ...hook, status: 'disabled' }, sent).deliver(claim(disabled))).to.equal('abandoned');
    expect(sent).to.deep.equal([]);
    const last = (await sut.store.readStream(`webhook_delivery-${gone}`)).at(-1)!;
    expect(last.type).to.equal('WebhookDeliveryFailed');
    expect(last.data).to.include({ reason: 'webhook_deleted', attempts: 0 });
  });

  describe('an outcome the store refuses for good (docs/webhooks.md#hostile-answers)', () => {
    /** the store refuses appends whose data contains `refused` (a value no rule foresaw), as a non-transient error */
    function refusing(refused: string, answer: string) {
      const store = new Proxy(sut.store, {
        get(target, prop, receiver) {
          if (prop !== 'appendToStream') return Reflect.get(target, prop, receiver);
          return async (stream: string, events: { data: unknown }[], o: never) => {
            if (events.some((e) => JSON.stringify(e.data).includes(refused))) throw new Error('invalid input syntax for type json');
            return target.appendToStream(stream, events as never, o);
          };
        },
      });
      const sender: WebhookSenderPort = { send: async () => ({ ok: true, httpStatus: 200, responseBody: answer, durationMs: 3 }) };
      return new WebhookDeliverer(
        new CommandExecutor(store, ids, clock, noReadModels),
        store,
        ids,
        clock,
        { byId: async () => hook } as unknown as WebhookQueries,
        sender,
        silent,
        { defaultDeadlineMs: 15_000, isTransient: () => false },
      );
    }

    it("records the attempt without the receiver's words when only they are refused", async () => {
      const id = await scheduled('sms');
      expect(await refusing('poison', 'poison').deliver(claim(id))).to.equal('sent');
      const attempt = (await sut.store.readStream(`webhook_delivery-${id}`)).find((e) => e.type === 'WebhookAttemptSucceeded')!;
      expect(attempt.data).to.include({ httpStatus: 200, responseBody: null });
    });

    it('throws AttemptNotRecordableError when even the bare outcome is refused, for the worker to isolate', async () => {
      const id = await scheduled('sms');
      let thrown: unknown = null;
      await refusing('"attempt":1', 'fine')
        .deliver(claim(id))
        .catch((err: unknown) => {
          thrown = err;
        });
      expect(thrown).to.be.instanceOf(AttemptNotRecordableError);
      expect((await sut.store.readStream(`webhook_delivery-${id}`)).map((e) => e.type)).to.deep.equal(['WebhookDeliveryScheduled']);
    });
  });
});
