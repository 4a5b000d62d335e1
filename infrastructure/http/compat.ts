import type { DeliveryView } from '../../application/ports/webhook.port.js';
import type { WebhookTestResult } from '../../application/webhooks/webhook-commands.js';

/**
 * What the HTTP edge does so that the public API's existing clients run unchanged (docs/compatibility.md):
 * request aliases, the field list a strict (paid) request accepts, and the extra answer names older
 * clients read.
 */

// --- answer names older clients read --------------------------------------------------------------------------

/** The webhook test result under the specification's names and the names the public MCP server reads. */
export const testResultCompat = (r: WebhookTestResult) => ({ ...r, statusCode: r.httpStatus, responseMs: r.responseTimeMs, error: r.errorMessage });

/**
 * A delivery with the item fields the public MCP server reads, derived from the specification's ones:
 * `event` is the event type, `statusCode` the last HTTP status, `responseMs` the last attempt's duration,
 * `deliveredAt` the time of the successful attempt (null while not delivered).
 */
export const deliveryCompat = (d: DeliveryView) => {
  const last = d.attempts.reduce<DeliveryView['attempts'][number] | undefined>((a, b) => (a && a.attempt > b.attempt ? a : b), undefined);
  const delivered = d.attempts.find((a) => a.status === 'success');
  return {
    ...d,
    event: d.eventType,
    success: d.status === 'success',
    statusCode: d.httpStatus,
    responseMs: last ? last.responseTimeMs : null,
    deliveredAt: delivered ? delivered.attemptedAt : null,
  };
};
