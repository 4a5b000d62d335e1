import { expect } from 'chai';
import type { ClaimedAttempt, DueAttemptsPort, PreparedAttempt } from '../../application/webhooks/webhook.port.js';
import { AttemptNotRecordableError, type WebhookDeliverer } from '../../application/webhooks/webhook-deliverer.js';
import { WebhookDeliveryWorker } from '../../infrastructure/webhooks/delivery-worker.js';
import { TestClock } from '../support/fixtures.js';

const silent = { debug() {}, info() {}, warn() {}, error() {} };

/**
 * The delivery worker refills its slots in batches (docs/webhooks.md#how-deliveries-flow): while sends are in
 * flight it claims again only once a quarter of its slots are free, so a finished send does not cost a claim,
 * a read and a look-up of its own.
 */
describe('webhook delivery worker: refills in batches', () => {
  it('claims a quarter of its slots or more at a time while sends finish one by one, and sends every attempt once', async () => {
    let due = 40;
    const limits: number[] = [];
    const timeline: DueAttemptsPort = {
      claim: async (o) => {
        limits.push(o.limit);
        const n = Math.min(o.limit, due);
        due -= n;
        return Array.from({ length: n }, (_, i) => ({
          deliveryId: `whd_${due + i}`,
          accountId: 'acc',
          attempt: 1,
          claimedUntil: new Date(0).toISOString(),
        }));
      },
    };
    const sent: string[] = [];
    let finishing = 0;
    const deliverer = {
      prepare: async (claims: readonly ClaimedAttempt[]) => claims.map((claim) => ({ claim }) as unknown as PreparedAttempt),
      // each send ends a little after the one before it, so that the slots free up one at a time
      send: (p: PreparedAttempt) =>
        new Promise<'sent'>((resolve) => {
          finishing += 1;
          setTimeout(
            () => {
              sent.push(p.claim.deliveryId);
              resolve('sent');
            },
            2 + finishing * 0.5,
          );
        }),
    } as unknown as WebhookDeliverer;
    const worker = new WebhookDeliveryWorker(timeline, deliverer, new TestClock(), silent, {
      concurrency: 8,
      leaseMs: 150_000,
      pollIntervalMs: 60_000,
    });
    await worker.start();
    const deadline = Date.now() + 5000;
    while (sent.length < 40 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    await worker.stop();
    expect(new Set(sent).size).to.equal(40);
    expect(sent).to.have.length(40);
    expect(limits[0]).to.equal(8);
    // a quarter of 8 slots is 2; the last claim, with nothing in flight, may ask for anything
    expect(
      limits.filter((l) => l < 2),
      `claims asked for ${limits.join(', ')}`,
    ).to.deep.equal([]);
    expect(limits.length).to.be.below(40);
  });
});

/** An attempt that fails for good is isolated, not sent again at every claim expiry (docs/operations.md#isolated-work). */
describe('webhook delivery worker: poisoned attempts', () => {
  const claimOf = (id: string): ClaimedAttempt => ({
    deliveryId: id,
    accountId: 'acc',
    attempt: 1,
    claimedUntil: new Date(0).toISOString(),
  });
  const run = async (failure: Error) => {
    const timeline: DueAttemptsPort = { claim: async () => [] };
    const deliverer = {
      prepare: async (claims: readonly ClaimedAttempt[]) => claims.map((claim) => ({ claim }) as unknown as PreparedAttempt),
      send: async (p: PreparedAttempt) => {
        if (p.claim.deliveryId === 'whd_poisoned') throw failure;
        return 'sent' as const;
      },
    } as unknown as WebhookDeliverer;
    const isolated: string[] = [];
    let due = [claimOf('whd_poisoned'), claimOf('whd_fine')];
    timeline.claim = async () => {
      const out = due;
      due = [];
      return out;
    };
    const worker = new WebhookDeliveryWorker(timeline, deliverer, new TestClock(), silent, {
      concurrency: 4,
      leaseMs: 150_000,
      pollIntervalMs: 60_000,
      isolate: async (c) => {
        isolated.push(c.deliveryId);
      },
    });
    expect(await worker.runOnce()).to.equal(2);
    return isolated;
  };

  it('hands an attempt whose outcome cannot be recorded, even without the answer, to isolation', async () => {
    const refused = new Error('invalid byte sequence for encoding "UTF8": 0x00');
    expect(await run(new AttemptNotRecordableError('whd_poisoned', 1, refused))).to.deep.equal(['whd_poisoned']);
  });

  it('leaves any other failure to its claim expiry: the database away, a worker that died mid-send', async () => {
    expect(await run(new Error('worker process died before recording the outcome'))).to.deep.equal([]);
    expect(await run(Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }))).to.deep.equal([]);
  });
});

/** First attempts handed over by the dispatcher of the worker's process (docs/webhooks.md#the-first-attempt-handed-over). */
describe('webhook delivery worker: first attempts handed over', () => {
  const prepared = (id: string): PreparedAttempt =>
    ({ claim: { deliveryId: id, accountId: 'acc', attempt: 1, claimedUntil: '' } }) as unknown as PreparedAttempt;

  it('sets aside only free slots under its own lease, sends what it is handed, and claims what did not fit once slots free', async () => {
    const clock = new TestClock();
    const claims: number[] = [];
    let due = 0; // the timeline: the deliveries that did not fit come on it below
    const timeline: DueAttemptsPort = {
      claim: async (o) => {
        claims.push(o.limit);
        const n = Math.min(o.limit, due);
        due -= n;
        return Array.from({ length: n }, (_, i) => ({ deliveryId: `whd_t${due + i}`, accountId: 'acc', attempt: 1, claimedUntil: '' }));
      },
    };
    const sent: string[] = [];
    const release: (() => void)[] = [];
    const deliverer = {
      prepare: async (cs: readonly ClaimedAttempt[]) => cs.map((claim) => ({ claim }) as unknown as PreparedAttempt),
      // a send finishes when the test lets it
      send: (p: PreparedAttempt) =>
        new Promise<'sent'>((resolve) => {
          release.push(() => {
            sent.push(p.claim.deliveryId);
            resolve('sent');
          });
        }),
    } as unknown as WebhookDeliverer;
    const worker = new WebhookDeliveryWorker(timeline, deliverer, clock, silent, {
      concurrency: 8,
      leaseMs: 150_000,
      pollIntervalMs: 60_000,
      workerId: 'wrk_1',
    });
    expect(worker.reserve(2), 'a stopped worker takes nothing').to.equal(null);
    await worker.start();
    const until = new Date(clock.now().getTime() + 150_000).toISOString();
    const waitFor = async (what: () => boolean, label: string) => {
      const deadline = Date.now() + 5000;
      while (!what() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
      expect(what(), label).to.equal(true);
    };
    await waitFor(() => claims.length === 1, 'the first look at the timeline');
    claims.length = 0;

    expect(worker.reserve(6)).to.deep.equal({ count: 6, claim: { by: 'wrk_1', until } });
    expect(worker.reserve(5), 'two slots left').to.deep.equal({ count: 2, claim: { by: 'wrk_1', until } });
    expect(worker.reserve(1), 'no slot left').to.equal(null);
    const handed = ['whd_h1', 'whd_h2', 'whd_h3', 'whd_h4', 'whd_h5', 'whd_h6', 'whd_h7'];
    worker.handOver(handed.slice(0, 5).map(prepared), 6); // one of the six was not scheduled by this call
    worker.handOver(handed.slice(5).map(prepared), 2);
    expect(release).to.have.length(7);
    expect(worker.reserve(2), 'the slot given back').to.deep.include({ count: 1 });
    worker.handOver([], 1);
    // three that did not fit wait on the timeline for room: the wake of their projector, with one slot free (less
    // than a quarter of 8), claims nothing
    due = 3;
    worker.wake();
    await new Promise((r) => setImmediate(r)); // the loop's turn after a wake runs on promises alone
    expect(claims).to.deep.equal([]);
    // a send finishes: two slots are free, and what did not fit is claimed
    release.shift()!();
    await waitFor(() => claims.length > 0, 'a claim once slots are free');
    expect(claims[0]).to.equal(2);
    await waitFor(() => {
      release.shift()?.();
      return sent.length === 10;
    }, 'every attempt sent');
    await worker.stop();
    expect([...sent].sort()).to.deep.equal([...handed, 'whd_t0', 'whd_t1', 'whd_t2']);
  });
});
