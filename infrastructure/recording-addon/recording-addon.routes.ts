import type { RecordingAddOnCommands } from '../../application/recording-addon/recording-addon-commands.js';
import type { Api } from '../http/api.js';
import { z } from '../http/openapi.js';

/** The documented path of the add-on (the public API's `POST /credits/recording/enable`). */
const BASE = '/credits/recording';

const RecordingAddOnResponse = z
  .object({
    enabled: z.boolean().describe('it renews at the end of the current period'),
    active: z.boolean().describe('calls placed now are recorded'),
    priceMicros: z.number().int(),
    price: z.string().describe('dollars, e.g. "5.00"'),
    periodDays: z.number().int(),
    currentPeriodStart: z.string().nullable(),
    currentPeriodEnd: z.string().nullable().describe('end of the last period paid for; null when never enabled'),
    renewsAt: z.string().nullable().describe('when the next period is charged; null when it does not renew'),
    endReason: z.enum(['disabled', 'payment_failed', 'account_closed']).nullable().describe('why it does not renew'),
  })
  .openapi('RecordingAddOn');

/** `/credits/recording…` (docs/recording-addon.md#endpoints), declared once with their schemas. */
export function recordingAddOnRoutes(api: Api, { commands }: { commands: RecordingAddOnCommands }): void {
  const tag = 'recording';

  api.route({
    method: 'get',
    path: BASE,
    tag,
    summary: 'The call-recording add-on of the account: enabled (renews), active (calls are recorded now), price, period',
    response: RecordingAddOnResponse,
    handler: ({ ctx }) => commands.view(ctx.accountId),
  });

  api.route({
    method: 'post',
    path: `${BASE}/enable`,
    tag,
    summary: 'Enable call recording: $5.00 for 30 days, renewed every 30 days (402 when the balance is short); a no-op while active',
    paid: true,
    response: RecordingAddOnResponse,
    errors: [402],
    handler: ({ ctx }) => commands.enable(ctx),
  });

  api.route({
    method: 'post',
    path: `${BASE}/disable`,
    tag,
    summary: 'Stop renewing call recording: it stays active until the period paid for ends; nothing is refunded',
    response: RecordingAddOnResponse,
    handler: ({ ctx }) => commands.disable(ctx),
  });
}
