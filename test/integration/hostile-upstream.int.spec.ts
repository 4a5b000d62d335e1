import { expect } from 'chai';
import { webhookDeliveryStream } from '../../domain/webhook/webhook-delivery.decider.js';
import { PLATFORM } from '../../infrastructure/platform/tokens.js';
import { startTestApp, type TestApp } from '../support/http.js';
import { reactorPast } from '../support/reactors.js';
import { type Answer, eventually, type Receiver, startReceiver } from '../support/webhook-receiver.js';

/**
 * Upstream answers the database cannot store (docs/input-rules.md#what-upstream-servers-answer): a receiver that
 * answers a NUL byte, a lone surrogate or invalid UTF-8 gets its attempt recorded once, with the text made
 * storable, and another account's deliveries go on meanwhile.
 */
describe('hostile upstream answers: a receiver answering NUL bytes jams nothing', function () {
  this.timeout(90_000);
  let app: TestApp;
  let hostile: Receiver;
  let healthy: Receiver;

  /** an answer PostgreSQL's text and jsonb refuse: a NUL in the body */
  const nul: Answer = { status: 200, body: 'ok\u0000done' };
  before(async () => {
    app = await startTestApp({ WEBHOOK_DELIVERY_TIMEOUT_SECONDS: '5' });
    hostile = await startReceiver(() => nul);
    healthy = await startReceiver();
  });
  after(async () => {
    await hostile.close();
    await healthy.close();
    await app.close();
  });

  async function accountWithHook(url: string) {
    const { apiKey } = await app.newAccount('Upstream');
    const r = await app.call('POST', '/v1/webhooks', { key: apiKey, body: { url, events: ['agent.created'] } });
    expect(r.status).to.equal(200);
    return apiKey;
  }

  it('a test send to a receiver answering \\u0000 answers with the outcome, is sent once, and the stored body is storable', async () => {
    const key = await accountWithHook(hostile.url);
    const other = await accountWithHook(healthy.url);
    const before = hostile.received.length;
    const sent = await app.call('POST', '/v1/webhooks/test', { key });
    expect(sent.status, JSON.stringify(sent.body)).to.equal(200);
    expect(sent.body.success).to.equal(true);
    // another account's test send right behind it is not held up (nor answered 503)
    const theirs = await app.call('POST', '/v1/webhooks/test', { key: other });
    expect(theirs.status, JSON.stringify(theirs.body)).to.equal(200);
    expect(theirs.body.success).to.equal(true);
    const log = await eventually(async () => {
      const items = (await app.call('GET', '/v1/webhooks/deliveries', { key })).body.items as { test: boolean; status: string }[];
      return items.find((d) => d.test && d.status !== 'pending') as
        | { id: string; responseBody: string | null; attemptCount: number }
        | undefined;
    }, 20_000);
    expect(log!.attemptCount).to.equal(1);
    expect(log!.responseBody).to.equal('ok\ufffddone');
    // sent exactly once: the reactor that sends test deliveries has stored a checkpoint past this one's schedule, in
    // every partition, so no batch of it can come again (a restart from an older checkpoint would have sent it twice)
    const [scheduled] = await app.rt.store.readStream(webhookDeliveryStream(log!.id), { maxCount: 1 });
    await eventually(
      async () => ((await reactorPast(app.rt.get(PLATFORM.ReadDb), 'webhook_test_send', scheduled!.checkpoint)) ? true : undefined),
      20_000,
    );
    const more = await app.call('POST', '/v1/webhooks/test', { key: other });
    expect(more.body.success).to.equal(true);
    expect(hostile.received.length - before).to.equal(1);
  });

  it("a delivery whose receiver answers \\u0000 is recorded once, and another account's deliveries all arrive meanwhile", async () => {
    const key = await accountWithHook(hostile.url);
    const other = await accountWithHook(healthy.url);
    const healthyBefore = healthy.received.length;
    // the first send fails with a NUL in its error body, the others succeed with one in their answer
    let n = 0;
    hostile.answer(() => (n++ === 0 ? { status: 500, body: 'bad\u0000answer' } : nul));
    for (let i = 0; i < 3; i++) await app.call('POST', '/v1/agents', { key, body: { name: `Hostile ${i}` } });
    for (let i = 0; i < 5; i++) await app.call('POST', '/v1/agents', { key: other, body: { name: `Healthy ${i}` } });
    await healthy.waitFor(healthyBefore + 5, 30_000);
    const items = await eventually(async () => {
      const list = (await app.call('GET', '/v1/webhooks/deliveries', { key })).body?.items as {
        status: string;
        attemptCount: number;
        responseBody: string | null;
        errorMessage: string | null;
      }[];
      return list?.length === 3 && list.every((d) => d.attemptCount >= 1) ? list : undefined;
    }, 30_000);
    for (const d of items!) {
      expect(d.responseBody ?? '').not.to.include('\u0000');
      expect(d.responseBody ?? '').not.to.match(/\p{Cs}/u);
    }
    // each sent once: none stayed pending with no attempt, re-sent at every claim expiry
    expect(items!.map((d) => d.attemptCount).sort()).to.deep.equal([1, 1, 1]);
    expect(items!.filter((d) => d.status === 'success')).to.have.length(2);
  });
});
