import { expect } from 'chai';
import { bringsDueAttempts } from '../../infrastructure/webhooks/due-wakeups.js';

const batch = (types?: string[]) => ({ projector: 'webhook_deliveries_v1', checkpoint: '10/5', ...(types ? { types } : {}) });

describe('the delivery worker wakes for batches that may put attempts on the timeline (docs/webhooks.md#how-deliveries-flow)', () => {
  it('wakes for a scheduled delivery, a failed attempt with a next try, a delivery sent again', () => {
    for (const t of ['WebhookDeliveryScheduled', 'WebhookAttemptFailed', 'WebhookDeliveryRetryRequested'])
      expect(bringsDueAttempts(batch([t])), t).to.equal(true);
    expect(bringsDueAttempts(batch(['WebhookAttemptSucceeded', 'WebhookDeliveryScheduled']))).to.equal(true);
  });

  it("does not wake for a batch of a delivery's outcome, which only takes its attempt off the timeline", () => {
    expect(bringsDueAttempts(batch(['WebhookAttemptSucceeded', 'WebhookDeliverySucceeded']))).to.equal(false);
    expect(bringsDueAttempts(batch(['WebhookDeliveryFailed']))).to.equal(false);
  });

  it("wakes for another process's batch, whose events are not known here", () => {
    expect(bringsDueAttempts(batch())).to.equal(true);
  });
});
