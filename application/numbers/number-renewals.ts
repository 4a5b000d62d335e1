import type { AccountCommands } from '../accounts/account-commands.js';
import { paidThrough } from '../../domain/phone-number/phone-number.decider.js';
import { monthlyChargeId, NUMBER_MONTHLY_PRICE_MICROS } from '../../domain/phone-number/pricing.js';
import { DomainError } from '../../domain/shared/errors.js';
import type { ClockPort } from '../ports/clock.port.js';
import type { EventStorePort } from '../ports/event-store.port.js';
import type { IdsPort } from '../ports/ids.port.js';
import type { LoggerPort } from '../ports/logger.port.js';
import type { NumberQueries } from '../ports/number-queries.port.js';
import type { ReadModelsPort } from '../ports/read-models.port.js';
import { NumberStream } from './number-stream.js';

export type RenewalPass = Readonly<{ renewed: number; paymentFailed: number }>;

/**
 * Monthly renewal (issue 3): every active number costs $3.00 per month, counted from the day it was
 * provisioned (the first month is charged by provisioning). A scheduled worker calls `renewDue`; the time
 * comes from the Clock. Each period's charge id is `number_monthly:<numberId>:<period>`, so a repeated pass,
 * a second worker or a crash between charge and record never charges twice. A renewal the balance cannot
 * cover is flagged on the number (NumberRenewalPaymentFailed, `renewalStatus: payment_failed`), not released,
 * and retried on every pass until it is paid.
 */
export class NumberRenewals {
  private readonly numbers: NumberStream;

  constructor(
    store: EventStorePort,
    ids: IdsPort,
    private readonly clock: ClockPort,
    private readonly accounts: AccountCommands,
    private readonly queries: NumberQueries,
    private readonly readModels: ReadModelsPort,
    private readonly log: LoggerPort,
  ) {
    this.numbers = new NumberStream(store, ids);
  }

  async renewDue(batchSize = 200): Promise<RenewalPass> {
    const now = this.clock.now().toISOString();
    let renewed = 0;
    let paymentFailed = 0;
    for (const n of await this.queries.dueForRenewal(now, batchSize)) {
      try {
        const r = await this.renew(n.numberId, now);
        renewed += r.renewed;
        paymentFailed += r.paymentFailed;
      } catch (err) {
        this.log.error({ err, numberId: n.numberId }, 'number renewal failed; retried on the next pass');
      }
    }
    return { renewed, paymentFailed };
  }

  /**
   * Charges every period of one number that has started by `now` (oldest first), stopping at the first unpaid
   * one, and returns once the read model shows the number as its stream has it.
   */
  async renew(numberId: string, now: string): Promise<RenewalPass> {
    try {
      return await this.renewPeriods(numberId, now);
    } finally {
      const { events } = await this.numbers.load(numberId);
      const last = events.at(-1);
      if (last) await this.readModels.waitFor(last.checkpoint, [last.type]);
    }
  }

  private async renewPeriods(numberId: string, now: string): Promise<RenewalPass> {
    let renewed = 0;
    for (let guard = 0; guard < 120; guard++) {
      const { state: s } = await this.numbers.load(numberId);
      if (s.status !== 'active' || s.releasing || paidThrough(s) > now) break;
      const period = s.periodsPaid;
      const chargeId = monthlyChargeId(numberId, period);
      const metadata = { accountId: s.accountId, correlationId: `renewal:${numberId}:${period}`, causationId: null, requestId: null, actor: 'system:number-renewal' };
      const ctx = { accountId: s.accountId, requestId: null, correlationId: metadata.correlationId, actor: metadata.actor };
      try {
        await this.accounts.charge(ctx, s.accountId, {
          chargeId, amountMicros: NUMBER_MONTHLY_PRICE_MICROS, kind: 'number_monthly', reference: numberId,
          description: `Phone number ${s.phoneNumber}: month ${period + 1} (from ${paidThrough(s).slice(0, 10)})`,
        });
      } catch (err) {
        if (!(err instanceof DomainError && err.code === 'INSUFFICIENT_BALANCE')) throw err;
        const r = await this.numbers.run({
          type: 'RecordRenewalPaymentFailed',
          data: { numberId, period, neededMicros: Number(err.hints.neededMicros ?? NUMBER_MONTHLY_PRICE_MICROS), balanceMicros: Number(err.hints.balanceMicros ?? 0) },
          metadata: { now, accountId: s.accountId },
        }, metadata);
        if (r.events.length) this.log.warn({ numberId, period }, 'number renewal could not be paid; flagged');
        return { renewed, paymentFailed: r.events.length };
      }
      await this.numbers.run({ type: 'RecordRenewal', data: { numberId, period, chargeId, amountMicros: NUMBER_MONTHLY_PRICE_MICROS }, metadata: { now, accountId: s.accountId } }, metadata);
      renewed++;
    }
    return { renewed, paymentFailed: 0 };
  }
}
