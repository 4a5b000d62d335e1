import { accountDecider, accountStream } from '../../domain/account/account.decider.js';
import {
  RECORDING_ADDON_PERIOD_DAYS,
  RECORDING_ADDON_PRICE_MICROS,
  type RecordingAddOnCommand,
  type RecordingAddOnEndReason,
  recordingAddOnChargeId,
  recordingAddOnDecider,
  recordingAddOnStream,
  renewalPeriod,
} from '../../domain/recording-addon/recording-addon.decider.js';
import { DomainError } from '../../domain/shared/errors.js';
import type { Billing } from '../accounts/billing.js';
import type { LoggerPort } from '../ports/logger.port.js';
import type { RequestContext } from '../shared/context.js';
import type { CommandExecutor, CommandInput } from '../shared/execute.js';
import type { RecordingAddOnQueries } from './recording-addon-queries.port.js';

export type RecordingAddOnRenewalPass = Readonly<{ renewed: number; lapsed: number; expired: number }>;
type Outcome = keyof RecordingAddOnRenewalPass | null;

/**
 * The add-on's renewal (docs/recording-addon.md#renewal). A scheduled worker calls `renewDue`; the time comes from
 * the Clock. For each add-on whose period has ended: one that renews is charged the next period under the
 * period's charge id (`recording_addon:<accountId>:<period>`, so a repeated pass, a second worker or a crash
 * between the charge and the record never charges twice) or, when the balance cannot cover it, lapses (no
 * negative balance, no retry: enabling it again starts a new period); one that was disabled, or whose account
 * was closed, expires.
 */
export class RecordingAddOnRenewals {
  constructor(
    private readonly exec: CommandExecutor,
    private readonly billing: Billing,
    private readonly queries: RecordingAddOnQueries,
    private readonly log: LoggerPort,
  ) {}

  async renewDue(batchSize = 200): Promise<RecordingAddOnRenewalPass> {
    const now = this.exec.now();
    const pass = { renewed: 0, lapsed: 0, expired: 0 };
    for (const { accountId } of await this.queries.dueForRenewal(now, batchSize)) {
      try {
        const outcome = await this.renew(accountId, now);
        if (outcome) pass[outcome]++;
      } catch (err) {
        this.log.error({ err, accountId }, 'recording add-on renewal failed; retried on the next pass');
      }
    }
    return pass;
  }

  /** Takes the step that is due for one account's add-on at `now`; returns once the read model shows it. */
  async renew(accountId: string, now: string): Promise<Outcome> {
    const stream = recordingAddOnStream(accountId);
    try {
      return await this.step(accountId, stream, now);
    } finally {
      const { events } = await this.exec.load(recordingAddOnDecider, stream);
      await this.exec.settle(events.slice(-1));
    }
  }

  private async step(accountId: string, stream: string, now: string): Promise<Outcome> {
    const { state: s } = await this.exec.state(recordingAddOnDecider, stream);
    if (s.status !== 'subscribed' || Date.parse(now) < Date.parse(s.periodEnd)) return null;
    const period = s.periodsPaid;
    const ctx: RequestContext = {
      accountId,
      requestId: null,
      correlationId: `recording-addon-renewal:${accountId}:${period}`,
      actor: 'system:recording-addon-renewal',
    };
    const record = async (cmd: CommandInput<RecordingAddOnCommand>, outcome: Outcome) =>
      (await this.exec.execute(recordingAddOnDecider, stream, cmd, ctx)).events.length > 0 ? outcome : null;
    const expire = (reason: RecordingAddOnEndReason) =>
      record({ type: 'ExpireRecordingAddOn', data: { accountId, period, reason } }, 'expired');

    if (!s.renews) return expire('disabled');
    if ((await this.exec.state(accountDecider, accountStream(accountId))).state.status !== 'open') return expire('account_closed');
    const chargeId = recordingAddOnChargeId(accountId, period);
    const next = renewalPeriod(s, now);
    try {
      await this.billing.charge(ctx, accountId, {
        chargeId,
        amountMicros: RECORDING_ADDON_PRICE_MICROS,
        kind: 'recording_addon',
        description: `Call recording add-on: renewal, ${RECORDING_ADDON_PERIOD_DAYS} days from ${next.periodStart.slice(0, 10)}`,
        reference: accountId,
      });
    } catch (err) {
      if (!(err instanceof DomainError)) throw err;
      // the paying account (a sub-account's parent) was closed
      if (err.code === 'ACCOUNT_NOT_FOUND') return expire('account_closed');
      if (err.code !== 'INSUFFICIENT_BALANCE') throw err;
      const lapsed = await record(
        {
          type: 'RecordRecordingAddOnPaymentFailed',
          data: {
            accountId,
            period,
            neededMicros: Number(err.hints.neededMicros ?? RECORDING_ADDON_PRICE_MICROS),
            balanceMicros: Number(err.hints.balanceMicros ?? 0),
          },
        },
        'lapsed',
      );
      if (lapsed) this.log.warn({ accountId, period }, 'recording add-on renewal could not be paid; the add-on lapsed');
      return lapsed;
    }
    return record(
      { type: 'RenewRecordingAddOn', data: { accountId, period, chargeId, amountMicros: RECORDING_ADDON_PRICE_MICROS } },
      'renewed',
    );
  }
}
