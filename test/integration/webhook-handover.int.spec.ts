import { expect } from 'chai';
import { type WebhookDeliveryEvent, webhookDeliveryDecider, webhookDeliveryStream } from '../../domain/webhook/webhook-delivery.decider.js';
import { PLATFORM } from '../../infrastructure/platform/tokens.js';
import { createDeliveryWorker } from '../../infrastructure/webhooks/module.js';
import { WEBHOOKS } from '../../infrastructure/webhooks/tokens.js';
import { TestClock } from '../support/fixtures.js';
import { startTestApp, type TestApp } from '../support/http.js';
import { eventually, type Receiver, startReceiver } from '../support/webhook-receiver.js';

const LEASE_MS = 150_000;

type Delivery = { id: string; status: string; attemptCount: number };

/**
 * The first attempt handed over (docs/webhooks.md#the-first-attempt-handed-over): the dispatcher schedules a delivery
 * already claimed by its own process's worker and hands it over, so the first attempt waits for neither the timeline's
 * projector nor a claim; the claim on the timeline row keeps every other worker off it until its lease runs out.
 */
describe('webhook delivery: the first attempt handed over', function () {
  this.timeout(30_000);
  let rx: Receiver;
  before(async () => {
    rx = await startReceiver();
  });
  after(() => rx.close());

  async function accountWithWebhook(app: TestApp, url: string) {
    const { apiKey } = await app.newAccount('Handover');
    await app.call('POST', '/v1/webhooks', { key: apiKey, body: { url, events: ['agent.created'] } });
    return apiKey;
  }
  const deliveries = async (app: TestApp, key: string): Promise<Delivery[]> =>
    (await app.call('GET', '/v1/webhooks/deliveries?limit=100', { key })).body.items;
  const sentTo = (ids: readonly string[]) => rx.received.filter((x) => ids.includes(String(x.headers['x-webhook-id'])));

  describe('with a delivery worker in the process', () => {
    let app: TestApp;
    before(async () => {
      app = await startTestApp({});
    });
    after(() => app.close());

    it("schedules each first attempt claimed by this process's worker, which sends it once", async () => {
      const key = await accountWithWebhook(app, rx.url);
      for (let i = 0; i < 3; i++) await app.call('POST', '/v1/agents', { key, body: { name: `Agent ${i}` } });
      const done = (await eventually(
        async () => {
          const l = await deliveries(app, key);
          return l.length === 3 && l.every((d) => d.status === 'success') ? l : null;
        },
        10_000,
        'three deliveries sent',
      ))!;
      const ids = done.map((d) => d.id);
      expect(sentTo(ids)).to.have.length(3);
      expect(done.every((d) => d.attemptCount === 1)).to.equal(true);
      const workerId = app.rt.get(WEBHOOKS.Worker).workerId;
      for (const id of ids) {
        const [scheduled] = await app.rt.store.readStream(webhookDeliveryStream(id));
        expect(scheduled?.type).to.equal('WebhookDeliveryScheduled');
        expect((scheduled!.data as { firstAttemptClaim?: { by: string } }).firstAttemptClaim?.by).to.equal(workerId);
      }
    });
  });

  describe('a process that died after scheduling', () => {
    const clock = new TestClock();
    let app: TestApp;
    before(async () => {
      // no background worker: the test's own worker stands for the other processes
      app = await startTestApp({ WEBHOOK_CONCURRENCY: '0', WEBHOOK_LEASE_SECONDS: String(LEASE_MS / 1000) }, { clock });
    });
    after(() => app.close());

    it('leaves its handed-over attempt to every other worker until the claim runs out, then it is sent once', async () => {
      const key = await accountWithWebhook(app, rx.url);
      await app.call('POST', '/v1/agents', { key, body: { name: 'Agent' } });
      const [scheduled] = (await eventually(
        async () => {
          const l = await deliveries(app, key);
          return l.length === 1 ? l : null;
        },
        10_000,
        'the delivery scheduled',
      ))!;
      // the delivery as the dead process's dispatcher would have scheduled it: a second schedule of the same id
      // decides nothing, so this one is written on a stream of its own with the same facts and a claim
      const first = (await app.rt.store.readStream(webhookDeliveryStream(scheduled!.id)))[0]!;
      const id = `${scheduled!.id}_h`;
      const { webhookId, webhookAgentId, eventType, channel, agentId, messageId, sourceEventId, sourceEventType, body } =
        first.data as Extract<WebhookDeliveryEvent, { type: 'WebhookDeliveryScheduled' }>['data'];
      await app.rt.get(PLATFORM.Executor).execute(
        webhookDeliveryDecider,
        webhookDeliveryStream(id),
        {
          type: 'ScheduleDelivery',
          data: {
            ...{ webhookId, webhookAgentId, eventType, channel, agentId, messageId, sourceEventId, sourceEventType, body },
            deliveryId: id,
            firstAttemptClaim: { by: 'died', until: new Date(clock.now().getTime() + LEASE_MS).toISOString() },
          },
        },
        { accountId: first.metadata.accountId, correlationId: id, causationId: null, requestId: null, actor: 'test' },
      );
      await eventually(async () => (await deliveries(app, key)).length === 2, 10_000, 'the handed-over delivery projected');

      const other = createDeliveryWorker(app.rt.get, { workerId: 'other' });
      await other.runOnce();
      expect(sentTo([scheduled!.id]), 'the unclaimed one').to.have.length(1);
      expect(sentTo([id]), 'claimed by the dead process').to.have.length(0);
      clock.advance(LEASE_MS - 1000);
      await other.runOnce();
      expect(sentTo([id]), 'still claimed').to.have.length(0);
      clock.advance(1000);
      await other.runOnce();
      expect(sentTo([id]), 'the claim ran out: sent, once').to.have.length(1);
      await other.runOnce();
      expect(sentTo([id])).to.have.length(1);
    });
  });
});
