import type { AccountEvent } from '../../domain/account/account.decider.js';
import {
  type PhoneNumberCommand,
  paidThrough,
  phoneNumberDecider,
  phoneNumberStream,
} from '../../domain/phone-number/phone-number.decider.js';
import { monthlyChargeId, NUMBER_MONTHLY_PRICE_MICROS } from '../../domain/phone-number/pricing.js';
import { DomainError } from '../../domain/shared/errors.js';
import type { Billing } from '../accounts/billing.js';
import type { LoggerPort } from '../ports/logger.port.js';
import type { RequestContext } from '../shared/context.js';
import type { CommandExecutor, CommandInput, ExecuteResult } from '../shared/execute.js';
import type { NumberQueries } from './number-queries.port.js';

export type RenewalPass = Readonly<{ renewed: number; paymentFailed: number }>;

/**
 * Monthly renewal : every active number costs $3.00 per month, counted from the day it was
 * provisioned (the first month is charged by provisioning). A scheduled worker calls `renewDue`; the time
 * comes from the Clock. Each period's charge id is `number_monthly:<numberId>:<period>`, so a repeated pass,
 * a second worker or a crash between charge and record never charges twice. A renewal the balance cannot
 * cover is flagged on the number (NumberRenewalPaymentFailed, `renewalStatus: payment_failed`), not released,
 * and retried on every pass until it is paid.
 */
export class NumberRenewals {
  constructor(
    private readonly exec: CommandExecutor,
    private readonly billing: Billing,
    private readonly queries: NumberQueries,
    private readonly log: LoggerPort,
  ) {}

  private load(numberId: string) {
    return this.exec.load(phoneNumberDecider, phoneNumberStream(numberId));
  }

  private record(ctx: RequestContext, cmd: CommandInput<PhoneNumberCommand>) {
    return this.exec.execute(phoneNumberDecider, phoneNumberStream(cmd.data.numberId), cmd, ctx);
  }

  async renewDue(batchSize = 200): Promise<RenewalPass> {
    const now = this.exec.now();
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
    const charges: ExecuteResult<AccountEvent, unknown>[] = [];
    try {
      return await this.renewPeriods(numberId, now, charges);
    } finally {
      // the pass shows whole: the number as its stream has it, and the ledger with the pass's last charge
      const { events } = await this.load(numberId);
      await this.exec.settle(events.slice(-1));
      const last = charges.at(-1);
      if (last) await this.exec.settleResult(last);
    }
  }

  private async renewPeriods(numberId: string, now: string, charges: ExecuteResult<AccountEvent, unknown>[]): Promise<RenewalPass> {
    let renewed = 0;
    for (let guard = 0; guard < 120; guard++) {
      const { state: s } = await this.load(numberId);
      if (s.status !== 'active' || s.releasing || paidThrough(s) > now) break;
      const period = s.periodsPaid;
      const chargeId = monthlyChargeId(numberId, period);
      const ctx: RequestContext = {
        accountId: s.accountId,
        requestId: null,
        correlationId: `renewal:${numberId}:${period}`,
        actor: 'system:number-renewal',
      };
      try {
        const paid = await this.billing.charge(ctx, s.accountId, {
          chargeId,
          amountMicros: NUMBER_MONTHLY_PRICE_MICROS,
          kind: 'number_monthly',
          reference: numberId,
          description: `Phone number ${s.phoneNumber}: month ${period + 1} (from ${paidThrough(s).slice(0, 10)})`,
        });
        charges.push(paid);
      } catch (err) {
        if (!(err instanceof DomainError && err.code === 'INSUFFICIENT_BALANCE')) throw err;
        const r = await this.record(ctx, {
          type: 'RecordRenewalPaymentFailed',
          data: {
            numberId,
            period,
            neededMicros: Number(err.hints.neededMicros ?? NUMBER_MONTHLY_PRICE_MICROS),
            balanceMicros: Number(err.hints.balanceMicros ?? 0),
          },
        });
        if (r.events.length) this.log.warn({ numberId, period }, 'number renewal could not be paid; flagged');
        return { renewed, paymentFailed: r.events.length };
      }
      await this.record(ctx, { type: 'RecordRenewal', data: { numberId, period, chargeId, amountMicros: NUMBER_MONTHLY_PRICE_MICROS } });
      renewed++;
    }
    return { renewed, paymentFailed: 0 };
  }
}
