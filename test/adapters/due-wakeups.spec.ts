import { expect } from 'chai';
import { bringsDueAttempts } from '../../infrastructure/webhooks/due-wakeups.js';
import { SCHEDULED_CLAIMED, webhookDeliveriesProjector } from '../../projections/webhooks/webhook-deliveries.projector.js';
import { ev } from '../support/fixtures.js';

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

  it('does not wake for deliveries scheduled with their first attempt claimed: their worker has them (docs/webhooks.md#the-first-attempt-handed-over)', () => {
    const told = (data: Record<string, unknown>) =>
      webhookDeliveriesProjector.tells!({ ...ev('WebhookDeliveryScheduled', { test: false, ...data }), checkpoint: '1/1' } as never);
    expect(told({ firstAttemptClaim: { by: 'wrk_1', until: '2026-01-01T00:02:30.000Z' } })).to.equal(SCHEDULED_CLAIMED);
    expect(told({})).to.equal('WebhookDeliveryScheduled');
    expect(bringsDueAttempts(batch([SCHEDULED_CLAIMED]))).to.equal(false);
    expect(bringsDueAttempts(batch([SCHEDULED_CLAIMED, 'WebhookAttemptSucceeded', 'WebhookDeliverySucceeded']))).to.equal(false);
    expect(bringsDueAttempts(batch([SCHEDULED_CLAIMED, 'WebhookDeliveryScheduled'])), 'one of them unclaimed').to.equal(true);
  });

  it("wakes for another process's batch, whose events are not known here", () => {
    expect(bringsDueAttempts(batch())).to.equal(true);
  });
});
