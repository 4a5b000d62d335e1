import {
  activeAt,
  enableCharge,
  RECORDING_ADDON_PERIOD_DAYS,
  RECORDING_ADDON_PRICE_MICROS,
  recordingAddOnDecider,
  recordingAddOnStream,
} from '../../domain/recording-addon/recording-addon.decider.js';
import type { Billing } from '../accounts/billing.js';
import type { RequestContext } from '../shared/context.js';
import type { CommandExecutor } from '../shared/execute.js';
import type { RecordingAddOnQueries, RecordingAddOnView } from './recording-addon-queries.port.js';

/**
 * Enabling and disabling the call-recording add-on of the acting account (docs/recording-addon.md). Its
 * charges go to the paying account (a sub-account's parent) through Billing. Each answer is read from the read
 * model once it shows the add-on's stream as this request left it.
 */
export class RecordingAddOnCommands {
  constructor(
    private readonly exec: CommandExecutor,
    private readonly billing: Billing,
    private readonly queries: RecordingAddOnQueries,
  ) {}

  /**
   * Charges a 30-day period and starts it, unless the add-on is active (then nothing is charged; a disabled one
   * renews again). The charge comes first, under the period's charge id: a short balance answers 402 with nothing
   * recorded, and a retry (after a crash between the charge and the record, or a concurrent enable) finds the
   * charge made and records the period without charging again.
   */
  async enable(ctx: RequestContext): Promise<RecordingAddOnView> {
    const stream = recordingAddOnStream(ctx.accountId);
    // a second pass only when the add-on was active when read and its period ended before the record: it charges
    if (!(await this.enableOnce(ctx, stream))) await this.enableOnce(ctx, stream);
    return this.answer(ctx.accountId, stream);
  }

  /** One read, charge (when the add-on is not active) and record; whether the add-on is active after it. */
  private async enableOnce(ctx: RequestContext, stream: string): Promise<boolean> {
    const accountId = ctx.accountId;
    const { state } = await this.exec.state(recordingAddOnDecider, stream);
    const now = this.exec.now();
    const charge = enableCharge(accountId, state, now);
    if (charge) {
      await this.billing.charge(
        ctx,
        accountId,
        {
          chargeId: charge.chargeId,
          amountMicros: RECORDING_ADDON_PRICE_MICROS,
          kind: 'recording_addon',
          description: `Call recording add-on: ${RECORDING_ADDON_PERIOD_DAYS} days from ${now.slice(0, 10)}`,
          reference: accountId,
        },
        { readYourWrites: true }, // the charge shows in the balance once this answers
      );
    }
    const payment = charge ? { ...charge, amountMicros: RECORDING_ADDON_PRICE_MICROS } : null;
    const r = await this.exec.execute(recordingAddOnDecider, stream, { type: 'EnableRecordingAddOn', data: { accountId, payment } }, ctx);
    return charge !== null || activeAt(r.state, this.exec.now());
  }

  /** Stops the renewal: the add-on stays active until its period ends, and nothing is refunded. */
  async disable(ctx: RequestContext): Promise<RecordingAddOnView> {
    const stream = recordingAddOnStream(ctx.accountId);
    await this.exec.execute(recordingAddOnDecider, stream, { type: 'DisableRecordingAddOn', data: { accountId: ctx.accountId } }, ctx);
    return this.answer(ctx.accountId, stream);
  }

  view(accountId: string): Promise<RecordingAddOnView> {
    return this.queries.view(accountId, new Date(this.exec.now()));
  }

  /** Answers once the read model shows the stream's last event, also after a no-op whose state another request wrote. */
  private async answer(accountId: string, stream: string): Promise<RecordingAddOnView> {
    const { events } = await this.exec.load(recordingAddOnDecider, stream);
    await this.exec.settle(events.slice(-1));
    return this.view(accountId);
  }
}
