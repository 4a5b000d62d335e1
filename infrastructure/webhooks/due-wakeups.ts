import { PUTS_DUE_ATTEMPTS } from '../../projections/webhooks/webhook-deliveries.projector.js';
import type { ProjectedNotice } from '../event-store/append-signals.js';

/**
 * Whether a batch of the timeline's projector may have given the delivery worker something new to claim
 * (docs/webhooks.md#how-deliveries-flow): one with an event that puts an attempt on the timeline (`PUTS_DUE_ATTEMPTS`: a delivery
 * scheduled, an attempt failed with a next try, a delivery sent again), or one whose events this process does not
 * know (another process's batch). A delivery's outcome (its attempt succeeded, the delivery finished) is a batch of
 * its own that only takes attempts off the timeline; waking the worker for it was a claim that found nothing, once
 * per delivery. So is a delivery scheduled with its first attempt already claimed (`SCHEDULED_CLAIMED`,
 * docs/webhooks.md#the-first-attempt-handed-over): its worker has it, and no other may take it before the claim ends.
 */
export function bringsDueAttempts(n: ProjectedNotice): boolean {
  return n.types === undefined || n.types.some((t) => PUTS_DUE_ATTEMPTS.has(t));
}
