/** Kysely types of the recording add-on read model (migration 085, docs/recording-addon.md). */
export interface RecordingAddOnsTable {
  account_id: string;
  /** `subscribed` (a period was paid; see `renews`) or `ended` */
  status: string;
  renews: boolean;
  periods_paid: number;
  current_period_start: Date | string;
  current_period_end: Date | string;
  /** why it does not renew: `disabled`, `payment_failed`, `account_closed`; null while it renews */
  end_reason: string | null;
  updated_at: Date | string;
  revision: string | bigint;
}

/** Every period paid for, so that whether the add-on was active at a time is known for past times too. */
export interface RecordingAddOnPeriodsTable {
  account_id: string;
  period: number;
  starts_at: Date | string;
  ends_at: Date | string;
  charge_id: string;
  amount_micros: string | bigint;
}

declare module '../shared/read-db.js' {
  interface ReadDb {
    recording_addons: RecordingAddOnsTable;
    recording_addon_periods: RecordingAddOnPeriodsTable;
  }
}
