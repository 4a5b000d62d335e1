import { LOOKUP_PRICE_MICROS } from '../../domain/phone-number/pricing.js';
import type { Billing } from '../accounts/billing.js';
import type { ClockPort } from '../ports/clock.port.js';
import type { IdsPort } from '../ports/ids.port.js';
import type { RequestContext } from '../shared/context.js';
import type { CarrierPort, LineInfo } from './carrier.port.js';
import type { LookupCachePort } from './lookup-cache.port.js';

export type LookupResult = LineInfo & Readonly<{ cached: boolean; lookedUpAt: string }>;
export type LookupAnswer = Readonly<{ data: LookupResult[]; chargedNumbers: number; chargedMicros: number }>;

/**
 * Line-type lookup (docs/numbers.md#lookup): $0.009 per number looked up at the carrier, through the account ledger.
 * Each account keeps what it paid for for `cacheTtlSeconds`: a number it looked up within that time is
 * answered from the cache and not charged again. A number repeated within one request counts once. The
 * charge is one ledger entry per request, taken after the carrier answered; when the balance cannot cover
 * the numbers to look up the answer is 402 and nothing is charged (and nothing is cached).
 */
export class NumberLookup {
  constructor(
    private readonly ids: IdsPort,
    private readonly clock: ClockPort,
    private readonly carrier: CarrierPort,
    private readonly cache: LookupCachePort,
    private readonly billing: Billing,
    private readonly o: { cacheTtlSeconds: number },
  ) {}

  async lookup(ctx: RequestContext, phoneNumbers: readonly string[]): Promise<LookupAnswer> {
    const unique = [...new Set(phoneNumbers)];
    const now = this.clock.now();
    const freshSince = new Date(now.getTime() - this.o.cacheTtlSeconds * 1000).toISOString();
    const cached = this.o.cacheTtlSeconds > 0 ? await this.cache.get(ctx.accountId, unique, freshSince) : new Map();
    const misses = unique.filter((n) => !cached.has(n));
    const cost = misses.length * LOOKUP_PRICE_MICROS;

    const fresh = new Map<string, LineInfo>();
    if (misses.length > 0) {
      // refuse before paying the carrier when the balance clearly cannot cover it
      await this.billing.assertCanPay(ctx.accountId, cost);
      const infos = await Promise.all(misses.map((n) => this.carrier.lookup(n)));
      for (const [i, n] of misses.entries()) fresh.set(n, infos[i]!);
      await this.billing.charge(
        ctx,
        ctx.accountId,
        {
          chargeId: `number_lookup:${this.ids.uuid()}`,
          amountMicros: cost,
          kind: 'number_lookup',
          description: `Number lookup: ${misses.length} number${misses.length === 1 ? '' : 's'}`,
          reference: ctx.requestId,
        },
        { readYourWrites: true },
      );
      await this.cache.put(
        ctx.accountId,
        infos.map((info) => ({ info, lookedUpAt: now.toISOString() })),
      );
    }
    const data = unique.map((n): LookupResult => {
      const hit = cached.get(n);
      if (hit) return { ...hit.info, cached: true, lookedUpAt: hit.lookedUpAt };
      return { ...fresh.get(n)!, cached: false, lookedUpAt: now.toISOString() };
    });
    return { data, chargedNumbers: misses.length, chargedMicros: cost };
  }
}
