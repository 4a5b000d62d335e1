import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { RecordedEvent } from '../../application/ports/event-store.port.js';
import { CommandExecutor } from '../../application/shared/execute.js';
import { WebhookEventRegistry, type WebhookMapping } from '../../application/webhooks/registry.js';
import type {
  AttemptHandoverPort,
  ConversationContextPort,
  PreparedAttempt,
  WebhookQueries,
  WebhookView,
} from '../../application/webhooks/webhook.port.js';
import { WebhookDispatcher } from '../../application/webhooks/webhook-dispatcher.js';
import { DEFAULT_WEBHOOK_EVENTS, deliveryIdFor } from '../../domain/webhook/webhook.js';
import { ev, noReadModels, TestClock } from '../support/fixtures.js';
import { type StoreUnderTest, storeUnderTest } from '../support/stores.js';

const silent = { debug() {}, info() {}, warn() {}, error() {} };

/** How the messaging capability will register its event: only a mapping, no pipeline change. */
const messageReceived: WebhookMapping = {
  domainEvent: 'TestMessageReceived',
  event: 'agent.message',
  describe: (e) => {
    const d = e.data as { messageId: string; conversationId: string; agentId: string; body: string };
    return {
      agentId: d.agentId,
      channel: 'sms',
      messageId: d.messageId,
      conversationId: d.conversationId,
      data: { messageId: d.messageId, message: d.body },
    };
  },
};

describe('webhook dispatcher', () => {
  let sut: StoreUnderTest;
  before(async () => {
    sut = await storeUnderTest();
  });
  after(() => sut.close());

  const webhook = (contextLimit: number): WebhookView => ({
    id: 'whk_1',
    url: 'https://example.com/h',
    secret: 's',
    status: 'active',
    contextLimit,
    timeout: 30,
    events: ['*'],
    createdAt: '',
    updatedAt: '',
    agentId: null,
    consecutiveFailures: 0,
    createdPosition: '0/0',
  });
  const queries = (w: WebhookView | null, seen: unknown[] = []): WebhookQueries =>
    ({
      candidates: async (...a: unknown[]) => {
        seen.push(a);
        return w ? [w] : [];
      },
      configCheckpoint: async () => sut.store.headCheckpoint(),
    }) as unknown as WebhookQueries;
  const history = Array.from({ length: 5 }, (_, i) => ({
    messageId: `m${i}`,
    content: `c${i}`,
    direction: 'inbound',
    channel: 'sms',
    at: `2026-01-01T00:00:0${i}.000Z`,
  }));
  const context: ConversationContextPort = {
    contexts: async (qs) =>
      qs.map((q) => ({
        recentHistory: q.limit > 0 ? history.slice(-q.limit) : [],
        conversationState: { stage: 'greeting' },
        contact: null,
      })),
  };
  const ids = {
    id: (p: string) => `${p}_x`,
    uuid: () => randomUUID(),
    derived: (p: string, ...parts: string[]) => `${p}_${parts.join(':')}`,
  };

  async function appendMessage(agentId = 'agt_1', messageId = 'msg_1', conversationId = 'conv_1'): Promise<RecordedEvent> {
    const stream = `test_message-${randomUUID()}`;
    await sut.store.appendToStream(stream, [ev('TestMessageReceived', { messageId, conversationId, agentId, body: 'hi' })], {
      expectedRevision: 'no_stream',
    });
    return (await sut.store.readStream(stream))[0]!;
  }
  const dispatcher = (w: WebhookView | null, seen: unknown[] = []) =>
    new WebhookDispatcher(
      new CommandExecutor(sut.store, ids, new TestClock(), noReadModels),
      sut.store,
      new WebhookEventRegistry([messageReceived]),
      queries(w, seen),
      context,
      silent,
    );

  it('builds the spec envelope with at most contextLimit recent messages, once per source event', async () => {
    const e = await appendMessage();
    const seen: unknown[] = [];
    await dispatcher(webhook(2), seen).handleBatch([e]);
    await dispatcher(webhook(2)).handleBatch([e]); // a replayed batch
    expect(seen[0]).to.deep.equal(['acc_test', ['agt_1']]);
    const stream = await sut.store.readStream(`webhook_delivery-${deliveryIdFor(e.id)}`);
    expect(stream.map((x) => x.type)).to.deep.equal(['WebhookDeliveryScheduled']);
    const data = stream[0]!.data as { body: string; eventType: string; channel: string; messageId: string; webhookId: string };
    expect(data).to.include({ eventType: 'agent.message', channel: 'sms', messageId: 'msg_1', webhookId: 'whk_1' });
    const body = JSON.parse(data.body);
    expect(Object.keys(body)).to.deep.equal(['event', 'channel', 'timestamp', 'agentId', 'data', 'conversationState', 'recentHistory']);
    expect(body).to.deep.include({
      event: 'agent.message',
      channel: 'sms',
      agentId: 'agt_1',
      timestamp: e.createdAt,
      conversationState: { stage: 'greeting' },
    });
    expect(body.recentHistory.map((h: { messageId: string }) => h.messageId)).to.deep.equal(['m3', 'm4']);
    expect(stream[0]!.metadata).to.include({ causationId: e.id, actor: 'system:webhooks' });
  });

  it('schedules an event only for a webhook that lists it (the public kinds by default, or "*")', async () => {
    const listing = (events: readonly string[]) => ({ ...webhook(2), events });
    expect(await dispatcher(listing(['agent.created', 'number.released'])).dispatch(await appendMessage())).to.equal(null);
    expect(await dispatcher(listing(DEFAULT_WEBHOOK_EVENTS)).dispatch(await appendMessage())).to.be.a('string');
    expect(await dispatcher(listing(['*'])).dispatch(await appendMessage())).to.be.a('string');
  });

  it("looks up a batch's webhooks once per account, for all the agents its events are about, and picks each agent's own", async () => {
    const events = [await appendMessage('agt_a'), await appendMessage('agt_b'), await appendMessage('agt_a')];
    const seen: unknown[] = [];
    const own: WebhookView = { ...webhook(0), id: 'whk_b', agentId: 'agt_b' };
    const d = new WebhookDispatcher(
      new CommandExecutor(sut.store, ids, new TestClock(), noReadModels),
      sut.store,
      new WebhookEventRegistry([messageReceived]),
      {
        candidates: async (...a: unknown[]) => {
          seen.push(a);
          return [webhook(0), own];
        },
        configCheckpoint: async () => sut.store.headCheckpoint(),
      } as unknown as WebhookQueries,
      context,
      silent,
    );
    await d.handleBatch(events);
    expect(seen).to.deep.equal([['acc_test', ['agt_a', 'agt_b']]]);
    const webhookOf = async (e: RecordedEvent) =>
      ((await sut.store.readStream(`webhook_delivery-${deliveryIdFor(e.id)}`))[0]?.data as { webhookId: string } | undefined)?.webhookId;
    expect(await Promise.all(events.map(webhookOf))).to.deep.equal(['whk_1', 'whk_b', 'whk_1']);
  });

  it("looks up the context of a batch's payloads in one go: several texts of several conversations, each its own", async () => {
    const events = [
      await appendMessage('agt_1', 'msg_a1', 'conv_a'),
      await appendMessage('agt_1', 'msg_b1', 'conv_b'),
      await appendMessage('agt_1', 'msg_a2', 'conv_a'),
    ];
    const asked: unknown[] = [];
    const own: ConversationContextPort = {
      contexts: async (qs) => {
        asked.push(qs);
        return qs.map((q) => ({
          recentHistory: [{ messageId: null, content: `before ${q.excludeMessageId}`, direction: 'inbound', channel: 'sms', at: '' }],
          conversationState: { of: q.conversationId },
          contact: null,
        }));
      },
    };
    const d = new WebhookDispatcher(
      new CommandExecutor(sut.store, ids, new TestClock(), noReadModels),
      sut.store,
      new WebhookEventRegistry([messageReceived]),
      queries(webhook(3)),
      own,
      silent,
    );
    await d.handleBatch(events);
    const q = (excludeMessageId: string, conversationId: string) => ({
      accountId: 'acc_test',
      conversationId,
      limit: 3,
      excludeMessageId,
      contactNumber: null,
    });
    expect(asked).to.deep.equal([[q('msg_a1', 'conv_a'), q('msg_b1', 'conv_b'), q('msg_a2', 'conv_a')]]);
    const bodies = await Promise.all(
      events.map(async (e) =>
        JSON.parse(((await sut.store.readStream(`webhook_delivery-${deliveryIdFor(e.id)}`))[0]!.data as { body: string }).body),
      ),
    );
    expect(bodies.map((b) => [b.data.messageId, b.conversationState.of, b.recentHistory[0].content])).to.deep.equal([
      ['msg_a1', 'conv_a', 'before msg_a1'],
      ['msg_b1', 'conv_b', 'before msg_b1'],
      ['msg_a2', 'conv_a', 'before msg_a2'],
    ]);
  });

  it('sends no history when contextLimit is 0', async () => {
    const e = await appendMessage();
    await dispatcher(webhook(0)).handleBatch([e]);
    const [s] = await sut.store.readStream(`webhook_delivery-${deliveryIdFor(e.id)}`);
    expect(JSON.parse((s!.data as { body: string }).body).recentHistory).to.deep.equal([]);
  });

  it('schedules nothing without a webhook, or for a disabled one', async () => {
    const e = await appendMessage();
    await dispatcher(null).handleBatch([e]);
    await dispatcher({ ...webhook(2), status: 'disabled' }).handleBatch([e]);
    expect(await sut.store.readStream(`webhook_delivery-${deliveryIdFor(e.id)}`)).to.deep.equal([]);
  });

  it('waits for webhook changes logged before its batch, and looks for them from where its last look found none', async () => {
    // the webhooks projector's checkpoint stays at the last change while nothing else moves it
    const configStream = `webhook-${randomUUID()}`;
    await sut.store.appendToStream(configStream, [ev('WebhookCreated', { webhookId: 'whk_cfg' })], { expectedRevision: 'no_stream' });
    let projected = await sut.store.headCheckpoint();
    const looks: string[] = [];
    const store = Object.create(sut.store) as typeof sut.store;
    store.readAll = (o) => {
      looks.push(o?.after ?? 'start');
      return sut.store.readAll(o);
    };
    const d = new WebhookDispatcher(
      new CommandExecutor(sut.store, ids, new TestClock(), noReadModels),
      store,
      new WebhookEventRegistry([messageReceived]),
      { ...queries(webhook(0)), configCheckpoint: async () => projected } as unknown as WebhookQueries,
      context,
      silent,
      { configWaitMs: 100 },
    );
    const first = await appendMessage('agt_1', 'msg_c1', 'conv_c');
    await d.handleBatch([first]);
    const second = await appendMessage('agt_1', 'msg_c2', 'conv_c');
    await d.handleBatch([second]);
    expect(looks).to.deep.equal([projected, first.checkpoint]);

    // a change logged after the last look and not projected yet: the batch after it waits, then gives up
    await sut.store.appendToStream(configStream, [ev('WebhookUpdated', { webhookId: 'whk_cfg' })], { expectedRevision: 0n });
    const changed = await sut.store.headCheckpoint();
    const third = await appendMessage('agt_1', 'msg_c3', 'conv_c');
    const err = await d.handleBatch([third]).then(
      () => null,
      (e: Error) => e,
    );
    expect(err?.message).to.match(/not projected/);
    // once projected, it goes on
    projected = changed;
    await d.handleBatch([third]);

    // the projector rebuilt (its checkpoint went back): looked at from there again
    looks.length = 0;
    projected = first.checkpoint;
    const err2 = await d.handleBatch([await appendMessage('agt_1', 'msg_c4', 'conv_c')]).then(
      () => null,
      (e: Error) => e,
    );
    expect(looks[0]).to.equal(first.checkpoint);
    expect(err2?.message).to.match(/not projected/);
  });

  describe("first attempts handed to this process's worker (docs/webhooks.md#the-first-attempt-handed-over)", () => {
    /** a worker with `free` slots that records what it is given */
    const worker = (free: number) => {
      const log = { asked: [] as number[], handed: [] as PreparedAttempt[], given: [] as number[] };
      const port: AttemptHandoverPort = {
        reserve: (wanted) => {
          log.asked.push(wanted);
          const count = Math.min(wanted, free);
          return count > 0 ? { count, claim: { by: 'wrk_1', until: '2026-01-01T00:02:30.000Z' } } : null;
        },
        handOver: (attempts, reserved) => {
          log.handed.push(...attempts);
          log.given.push(reserved);
        },
      };
      return { port, log };
    };
    const handingDispatcher = (handover: AttemptHandoverPort, w: WebhookView = webhook(0)) =>
      new WebhookDispatcher(
        new CommandExecutor(sut.store, ids, new TestClock(), noReadModels),
        sut.store,
        new WebhookEventRegistry([messageReceived]),
        queries(w),
        context,
        silent,
        { handover },
      );
    const scheduledOf = async (e: RecordedEvent) =>
      (await sut.store.readStream(`webhook_delivery-${deliveryIdFor(e.id)}`))[0]?.data as { firstAttemptClaim?: unknown } | undefined;

    it('schedules as many as the worker has room for already claimed by it, and hands those over with their state', async () => {
      const events = [
        await appendMessage('agt_1', 'msg_h1'),
        await appendMessage('agt_1', 'msg_h2'),
        await appendMessage('agt_1', 'msg_h3'),
      ];
      const { port, log } = worker(2);
      await handingDispatcher(port).handleBatch(events);

      expect(log.asked).to.deep.equal([3]);
      expect(log.given).to.deep.equal([2]);
      const scheduled = await Promise.all(events.map(scheduledOf));
      expect(scheduled.map((d) => d?.firstAttemptClaim ?? null)).to.deep.equal([
        { by: 'wrk_1', until: '2026-01-01T00:02:30.000Z' },
        { by: 'wrk_1', until: '2026-01-01T00:02:30.000Z' },
        null, // no room: left on the timeline for a claim
      ]);
      expect(
        log.handed.map((p) => [p.claim.deliveryId, p.claim.attempt, p.claim.claimedUntil, p.state.status, p.webhook?.id]),
      ).to.deep.equal([
        [deliveryIdFor(events[0]!.id), 1, '2026-01-01T00:02:30.000Z', 'pending', 'whk_1'],
        [deliveryIdFor(events[1]!.id), 1, '2026-01-01T00:02:30.000Z', 'pending', 'whk_1'],
      ]);
      expect(log.handed.map((p) => p.revision)).to.deep.equal([0n, 0n]);
    });

    it('hands over nothing for a batch run again: its deliveries were scheduled before, maybe into other hands', async () => {
      const e = await appendMessage('agt_1', 'msg_h4');
      await dispatcher(webhook(0)).handleBatch([e]); // scheduled without a claim
      const { port, log } = worker(8);
      await handingDispatcher(port).handleBatch([e]);
      expect(log.handed).to.deep.equal([]);
      expect(log.given).to.deep.equal([1]); // the slot set aside is given back
      expect((await scheduledOf(e))?.firstAttemptClaim).to.equal(undefined);
    });

    it('asks for no room when a batch schedules nothing, and schedules all by the timeline when the worker is full', async () => {
      const { port, log } = worker(0);
      await handingDispatcher(port, { ...webhook(0), events: ['agent.created'] }).handleBatch([await appendMessage('agt_1', 'msg_h5')]);
      expect(log.asked).to.deep.equal([]);
      const e = await appendMessage('agt_1', 'msg_h6');
      await handingDispatcher(port).handleBatch([e]);
      expect(log.asked).to.deep.equal([1]);
      expect(log.handed).to.deep.equal([]);
      expect((await scheduledOf(e))?.firstAttemptClaim).to.equal(undefined);
    });
  });
});
