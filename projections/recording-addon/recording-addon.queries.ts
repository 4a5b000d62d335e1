import type { Kysely } from 'kysely';
import type { RecordingAddOnQueries, RecordingAddOnView } from '../../application/recording-addon/recording-addon-queries.port.js';
import { formatDollars } from '../../domain/account/money.js';
import {
  activeAt,
  RECORDING_ADDON_PERIOD_DAYS,
  RECORDING_ADDON_PRICE_MICROS,
  type RecordingAddOnState,
} from '../../domain/recording-addon/recording-addon.decider.js';
import type { ReadDb } from '../shared/read-db.js';
import type { RecordingAddOnsTable } from './tables.js';

const iso = (d: Date | string) => new Date(d).toISOString();

/** The row as the decider's state, for the one rule of when the add-on is active (`activeAt`). */
const stateOf = (r: RecordingAddOnsTable): RecordingAddOnState =>
  r.status === 'subscribed'
    ? {
        status: 'subscribed',
        accountId: r.account_id,
        periodsPaid: r.periods_paid,
        periodStart: iso(r.current_period_start),
        periodEnd: iso(r.current_period_end),
        renews: r.renews,
      }
    : { status: 'none' };

const price = {
  priceMicros: RECORDING_ADDON_PRICE_MICROS,
  price: formatDollars(RECORDING_ADDON_PRICE_MICROS).slice(1),
  periodDays: RECORDING_ADDON_PERIOD_DAYS,
};

/** The recording add-on of one account; every query filters on the account (docs/recording-addon.md). */
export class KyselyRecordingAddOnQueries implements RecordingAddOnQueries {
  constructor(private readonly db: Kysely<ReadDb>) {}

  private row(accountId: string) {
    return this.db.selectFrom('recording_addons').selectAll().where('account_id', '=', accountId).executeTakeFirst();
  }

  async isActive(accountId: string, at: Date): Promise<boolean> {
    const r = await this.row(accountId);
    if (!r) return false;
    // the current period, or the renewal grace after it
    if (activeAt(stateOf(r), at.toISOString())) return true;
    const earlier = await this.db
      .selectFrom('recording_addon_periods')
      .select('period')
      .where('account_id', '=', accountId)
      .where('starts_at', '<=', at)
      .where('ends_at', '>', at)
      .executeTakeFirst();
    return earlier !== undefined;
  }

  async view(accountId: string, at: Date): Promise<RecordingAddOnView> {
    const r = await this.row(accountId);
    if (!r)
      return { enabled: false, active: false, ...price, currentPeriodStart: null, currentPeriodEnd: null, renewsAt: null, endReason: null };
    const enabled = r.status === 'subscribed' && r.renews;
    return {
      enabled,
      active: activeAt(stateOf(r), at.toISOString()),
      ...price,
      currentPeriodStart: iso(r.current_period_start),
      currentPeriodEnd: iso(r.current_period_end),
      renewsAt: enabled ? iso(r.current_period_end) : null,
      endReason: enabled ? null : (r.end_reason as RecordingAddOnView['endReason']),
    };
  }

  async dueForRenewal(now: string, limit: number): Promise<{ accountId: string }[]> {
    const rows = await this.db
      .selectFrom('recording_addons')
      .select('account_id')
      .where('status', '=', 'subscribed')
      .where('current_period_end', '<=', now)
      .orderBy('current_period_end')
      .limit(limit)
      .execute();
    return rows.map((r) => ({ accountId: r.account_id }));
  }
}
