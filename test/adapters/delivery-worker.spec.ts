import { expect } from 'chai';
import type { ClaimedAttempt, DueAttemptsPort } from '../../application/webhooks/webhook.port.js';
import { AttemptNotRecordableError, type PreparedAttempt, type WebhookDeliverer } from '../../application/webhooks/webhook-deliverer.js';
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
