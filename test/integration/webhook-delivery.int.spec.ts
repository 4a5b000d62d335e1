import { createHmac } from 'node:crypto';
import { expect } from 'chai';
import type { WebhookSenderPort } from '../../application/webhooks/webhook.port.js';
import { createDeliveryWorker } from '../../infrastructure/webhooks/module.js';
import { WEBHOOKS } from '../../infrastructure/webhooks/tokens.js';
import { TestClock } from '../support/fixtures.js';
import { startTestApp, type TestApp } from '../support/http.js';
import { type Answer, eventually, type Receiver, startReceiver } from '../support/webhook-receiver.js';

const MIN = 60_000;
const HOUR = 60 * MIN;
const LEASE_MS = 150_000;

/** The receiver's signature check, from the documented facts only (docs/webhooks.md#verifying-signatures). */
function verifies(secret: string, r: { headers: Record<string, unknown>; rawBody: Buffer }, receiverNowS: number): boolean {
  const ts = r.headers['x-webhook-timestamp'];
  const sig = r.headers['x-webhook-signature'];
  if (typeof ts !== 'string' || typeof sig !== 'string' || !/^\d+$/.test(ts) || Math.abs(receiverNowS - Number(ts)) > 300) return false;
  const mac = createHmac('sha256', Buffer.from(secret, 'utf8'))
    .update(Buffer.concat([Buffer.from(`${ts}.`, 'utf8'), r.rawBody]))
    .digest('hex');
  return sig === `sha256=${mac}`;
}

type Delivery = {
  id: string;
  status: string;
  attemptCount: number;
  nextRetryAt: string | null;
  httpStatus: number | null;
  errorMessage: string | null;
  attempts: {
    attempt: number;
    status: string;
    httpStatus: number | null;
    errorMessage: string | null;
    attemptedAt: string;
    nextRetryAt: string | null;
    responseTimeMs: number;
  }[];
};

describe('webhook delivery: schedule, crash, race, slow and failing receivers', function () {
  this.timeout(30_000);
  const clock = new TestClock();
  let app: TestApp;
  let rx: Receiver;
  before(async () => {
    // no background delivery worker: each test drives its own workers, so every step is deterministic
    app = await startTestApp(
      { WEBHOOK_CONCURRENCY: '0', WEBHOOK_DELIVERY_TIMEOUT_SECONDS: '1', WEBHOOK_LEASE_SECONDS: String(LEASE_MS / 1000) },
      { clock },
    );
    rx = await startReceiver();
  });
  after(async () => {
    await rx.close();
    await app.close();
  });

  /** An account whose master webhook is `url`, and `n` agent.created deliveries for it, scheduled and projected. */
  async function accountWithDeliveries(url: string, n = 1) {
    const { apiKey } = await app.newAccount('Deliveries');
    const hook = (await app.call('POST', '/v1/webhooks', { key: apiKey, body: { url, events: ['agent.created'] } })).body as {
      id: string;
      secret: string;
    };
    for (let i = 0; i < n; i++) await app.call('POST', '/v1/agents', { key: apiKey, body: { name: `Agent ${i}` } });
    await eventually(
      async () => (await app.call('GET', '/v1/webhooks/deliveries', { key: apiKey })).body.total === n,
      10_000,
      `${n} scheduled deliveries`,
    );
    return { key: apiKey, hook };
  }
  const deliveries = async (key: string): Promise<Delivery[]> =>
    (await app.call('GET', '/v1/webhooks/deliveries?limit=100', { key })).body.items;
  /** the log once the projector has applied `attempts` attempts of every delivery */
  /** recorded and fully projected: a pending delivery always shows its next attempt (events of one append may arrive in two batches) */
  const settled = (d: Delivery) => d.status !== 'pending' || d.nextRetryAt !== null;
  const afterAttempts = async (key: string, attempts: number): Promise<Delivery[]> =>
    (await eventually(
      async () => {
        const l = await deliveries(key);
        return l.every((d) => d.attemptCount >= attempts && settled(d)) ? l : null;
      },
      10_000,
      `${attempts} attempts projected`,
    ))!;
  /**
   * Requests a receiver got for these deliveries. Assertions count the test's own deliveries only: with
   * EVENTSTORE_URL the event store outlives the read models, so deliveries of earlier suites are replayed
   * into the timeline and may be claimed by the same workers.
   */
  const sentTo = (r: Receiver, ids: readonly string[]) => r.received.filter((x) => ids.includes(String(x.headers['x-webhook-id'])));
  const webhookStatus = async (key: string) => (await app.call('GET', '/v1/webhooks', { key })).body?.status as string;

  it('walks the retry schedule on the Clock: attempts at +0, +5 min, +30 min, +2 h, +6 h, +12 h, then failed for good', async () => {
    const bad = await startReceiver(() => ({ status: 500, body: 'boom' }));
    try {
      const { key, hook } = await accountWithDeliveries(bad.url);
      const worker = createDeliveryWorker(app.rt.get);
      const ids = (await deliveries(key)).map((x) => x.id);
      const sent = () => sentTo(bad, ids).length;
      const start = clock.now().getTime();
      await worker.runOnce();
      expect(sent()).to.equal(1);
      let [d] = await afterAttempts(key, 1);
      expect(d!).to.include({ status: 'pending', httpStatus: 500, attemptCount: 1, nextRetryAt: new Date(start + 5 * MIN).toISOString() });
      const delays = [5 * MIN, 30 * MIN, 2 * HOUR, 6 * HOUR, 12 * HOUR];
      for (const [i, delay] of delays.entries()) {
        clock.advance(delay - 1000);
        await worker.runOnce();
        expect(sent(), `attempt ${i + 2} is not due a second early`).to.equal(i + 1);
        clock.advance(1000);
        await worker.runOnce();
        expect(sent(), `attempt ${i + 2} is due`).to.equal(i + 2);
        [d] = await afterAttempts(key, i + 2);
      }
      expect(d!).to.include({
        status: 'failed',
        attemptCount: 6,
        nextRetryAt: null,
        httpStatus: 500,
        errorMessage: 'HTTP 500 Internal Server Error',
      });
      const due = [0, ...delays].map((_, i, all) => start + all.slice(0, i + 1).reduce((a, b) => a + b, 0));
      expect(d!.attempts.map((a) => a.attemptedAt)).to.deep.equal(due.map((t) => new Date(t).toISOString()));
      expect(d!.attempts.map((a) => a.nextRetryAt)).to.deep.equal([...d!.attempts.slice(1).map((a) => a.attemptedAt), null]);
      expect(d!.attempts.every((a) => a.status === 'failed' && a.httpStatus === 500 && typeof a.responseTimeMs === 'number')).to.equal(
        true,
      );
      clock.advance(48 * HOUR);
      await worker.runOnce();
      expect(sent()).to.equal(6);

      const got = sentTo(bad, ids);
      expect(new Set(got.map((r) => r.headers['x-webhook-id']))).to.deep.equal(new Set([d!.id]));
      expect(new Set(got.map((r) => r.body)).size, 'every retry sends the same body').to.equal(1);
      expect(got.map((r) => Number(r.headers['x-webhook-timestamp']) * 1000)).to.deep.equal(
        d!.attempts.map((a) => Date.parse(a.attemptedAt)),
      );
      for (const r of got) expect(verifies(hook.secret, r as never, Number(r.headers['x-webhook-timestamp']))).to.equal(true);
      expect(await eventually(async () => (await webhookStatus(key)) === 'failing')).to.equal(true);
    } finally {
      await bad.close();
    }
  });

  it('sends an attempt again after a worker crashed between claim and outcome, never while the lease holds', async () => {
    const { key } = await accountWithDeliveries(rx.url);
    const real = app.rt.get(WEBHOOKS.Sender);
    const crashing: WebhookSenderPort = {
      send: async (req) => {
        await real.send(req);
        throw new Error('worker process died before recording the outcome');
      },
    };
    const crashed = createDeliveryWorker(app.rt.get, { sender: crashing, workerId: 'crashes' });
    const survivor = createDeliveryWorker(app.rt.get, { workerId: 'survivor' });
    const ids = (await deliveries(key)).map((x) => x.id);
    const sent = () => sentTo(rx, ids).length;
    await crashed.runOnce();
    expect(sent()).to.equal(1);
    const [pending] = await deliveries(key);
    expect(pending).to.include({ status: 'pending', attemptCount: 0 });

    await survivor.runOnce();
    expect(sent(), 'leased').to.equal(1);
    clock.advance(LEASE_MS - 1000);
    await survivor.runOnce();
    expect(sent(), 'still leased').to.equal(1);
    clock.advance(1000);
    await survivor.runOnce();
    expect(sent(), 'lease expired: sent again, once').to.equal(2);
    const [done] = await afterAttempts(key, 1);
    expect(done).to.include({ status: 'success', attemptCount: 1, httpStatus: 200 });
    await survivor.runOnce();
    expect(sent()).to.equal(2);
  });

  it('lets two workers race over the timeline and sends each attempt exactly once', async () => {
    const { key } = await accountWithDeliveries(rx.url, 24);
    const mine = (await deliveries(key)).map((d) => d.id);
    const a = createDeliveryWorker(app.rt.get, { concurrency: 3, workerId: 'a' });
    const b = createDeliveryWorker(app.rt.get, { concurrency: 3, workerId: 'b' });
    await Promise.all([a.runOnce(), b.runOnce()]);
    const ids = sentTo(rx, mine).map((r) => String(r.headers['x-webhook-id']));
    expect(ids).to.have.length(24);
    expect(new Set(ids)).to.deep.equal(new Set(mine));
    const log = await afterAttempts(key, 1);
    expect(log.every((d) => d.status === 'success' && d.attemptCount === 1)).to.equal(true);
  });

  it('records a receiver that does not answer within the deadline as a failed attempt, and retries it', async () => {
    const slow = await startReceiver((_r, n): Answer => (n === 0 ? 'hang' : { status: 204 }));
    try {
      const { key } = await accountWithDeliveries(slow.url);
      const worker = createDeliveryWorker(app.rt.get);
      await worker.runOnce();
      const [d] = await afterAttempts(key, 1);
      expect(d).to.include({ status: 'pending', httpStatus: null, attemptCount: 1 });
      expect(d!.errorMessage).to.match(/no complete answer within 1000 ms/);
      clock.advance(5 * MIN);
      await worker.runOnce();
      const [ok] = await afterAttempts(key, 2);
      expect(ok).to.include({ status: 'success', httpStatus: 204, attemptCount: 2 });
    } finally {
      await slow.close();
    }
  });

  it('stops a pending delivery whose webhook was deleted, without sending it', async () => {
    const bad = await startReceiver(() => ({ status: 500 }));
    try {
      const { key } = await accountWithDeliveries(bad.url);
      const worker = createDeliveryWorker(app.rt.get);
      await worker.runOnce();
      await afterAttempts(key, 1);
      await app.call('DELETE', '/v1/webhooks', { key });
      clock.advance(5 * MIN);
      await worker.runOnce();
      const [d] = (await eventually(async () => {
        const l = await deliveries(key);
        return l[0]?.status === 'failed' ? l : null;
      }))!;
      expect(d).to.include({ status: 'failed', attemptCount: 1, nextRetryAt: null, errorMessage: 'webhook deleted before delivery' });
      expect(bad.received).to.have.length(1);
    } finally {
      await bad.close();
    }
  });

  it('moves the webhook status: failing, active after a success, disabled after 5 exhausted deliveries, active after configure', async () => {
    let failing = true;
    const flaky = await startReceiver(() => (failing ? { status: 502 } : { status: 200 }));
    try {
      const { key } = await accountWithDeliveries(flaky.url, 1);
      const worker = createDeliveryWorker(app.rt.get, { concurrency: 8 });
      /** runs every pending delivery through its six attempts, waiting for the timeline between rounds */
      const exhaust = async () => {
        const pending = (await deliveries(key)).filter((d) => d.status === 'pending').map((d) => d.id);
        const round = async (n: number) => {
          await worker.runOnce();
          await eventually(
            async () => (await deliveries(key)).filter((d) => pending.includes(d.id)).every((d) => d.attemptCount === n && settled(d)),
            10_000,
            `round ${n}`,
          );
        };
        await round(1);
        for (const [i, delay] of [5 * MIN, 30 * MIN, 2 * HOUR, 6 * HOUR, 12 * HOUR].entries()) {
          clock.advance(delay);
          await round(i + 2);
        }
      };
      await exhaust();
      await eventually(async () => (await webhookStatus(key)) === 'failing', 10_000, 'failing');

      failing = false;
      await app.call('POST', '/v1/agents', { key, body: { name: 'Good news' } });
      const sentBefore = flaky.received.length;
      await eventually(
        async () => {
          await worker.runOnce();
          return flaky.received.length > sentBefore;
        },
        10_000,
        'the good news sent',
      );
      await eventually(async () => (await webhookStatus(key)) === 'active', 10_000, 'active again');

      failing = true;
      for (let i = 0; i < 5; i++) await app.call('POST', '/v1/agents', { key, body: { name: `Bad ${i}` } });
      await eventually(async () => (await deliveries(key)).filter((d) => d.status === 'pending').length === 5, 10_000, '5 pending');
      await exhaust();
      await eventually(async () => (await webhookStatus(key)) === 'disabled', 10_000, 'disabled');
      expect((await app.call('GET', '/v1/webhooks', { key })).body.status).to.equal('disabled');

      // while disabled nothing is scheduled; configuring it again re-enables it
      await app.call('POST', '/v1/agents', { key, body: { name: 'Unheard' } });
      const hook = await app.call('POST', '/v1/webhooks', { key, body: { url: flaky.url, events: ['agent.created'] } });
      expect(hook.body.status).to.equal('active');
      failing = false;
      await app.call('POST', '/v1/agents', { key, body: { name: 'Heard' } });
      const log = (await eventually(
        async () => {
          const l = await deliveries(key);
          return l.length === 8 ? l : null;
        },
        10_000,
        'the delivery after re-enabling',
      ))!;
      expect(log.filter((d) => d.status === 'pending')).to.have.length(1);
    } finally {
      await flaky.close();
    }
  });
});

describe('webhook delivery by the background worker', function () {
  // on EventStoreDB the run shares one log, which a new app's projectors and reactors first catch up on
  this.timeout(60_000);
  const clock = new TestClock(new Date());
  let app: TestApp;
  before(async () => {
    app = await startTestApp({ WEBHOOK_POLL_INTERVAL_MS: '20' }, { clock });
  });
  after(() => app.close());

  it('retries a receiver that answers 500, then 200, signing every try so that a receiver following docs/webhooks.md accepts it', async () => {
    const rx = await startReceiver((_r, n) => (n === 0 ? { status: 500, body: 'not yet' } : { status: 200, body: 'thanks' }));
    try {
      const { apiKey } = await app.newAccount('Background');
      const hook = (await app.call('POST', '/v1/webhooks', { key: apiKey, body: { url: rx.url, events: ['agent.created'] } })).body;
      const agent = (await app.call('POST', '/v1/agents', { key: apiKey, body: { name: 'Retried' } })).body;
      await rx.waitFor(1, 40_000);
      const first = await eventually(async () => {
        const l = (await app.call('GET', '/v1/webhooks/deliveries', { key: apiKey })).body.items;
        return l[0]?.attemptCount === 1 ? l[0] : null;
      });
      expect(first).to.include({ status: 'pending', httpStatus: 500, responseBody: 'not yet' });
      expect(Date.parse(first.nextRetryAt) - Date.parse(first.lastAttemptAt)).to.equal(5 * MIN);
      clock.advance(5 * MIN);
      await rx.waitFor(2);
      const done = await eventually(async () => {
        const l = (await app.call('GET', '/v1/webhooks/deliveries', { key: apiKey })).body.items;
        return l[0]?.status === 'success' ? l[0] : null;
      });
      expect(done).to.include({
        httpStatus: 200,
        responseBody: 'thanks',
        attemptCount: 2,
        nextRetryAt: null,
        eventType: 'agent.created',
        agentId: agent.id,
      });
      expect(done.attempts.map((a: { status: string; httpStatus: number }) => [a.status, a.httpStatus])).to.deep.equal([
        ['failed', 500],
        ['success', 200],
      ]);
      expect(rx.received[0]!.headers['x-webhook-id']).to.equal(done.id);
      expect(rx.received[1]!.headers['x-webhook-id']).to.equal(done.id);
      expect(rx.received[0]!.body).to.equal(rx.received[1]!.body);
      // the receiver's clock at each arrival is the attempt time
      for (const [i, r] of rx.received.entries())
        expect(verifies(hook.secret, r as never, Date.parse(done.attempts[i].attemptedAt) / 1000)).to.equal(true);
      expect(verifies('whsec_wrong', rx.received[0] as never, clock.now().getTime() / 1000)).to.equal(false);
      const payload = JSON.parse(rx.received[0]!.body);
      expect(payload).to.include({ event: 'agent.created', channel: null, agentId: agent.id, conversationState: null });
      expect(payload.recentHistory).to.deep.equal([]);
    } finally {
      await rx.close();
    }
  });
});
