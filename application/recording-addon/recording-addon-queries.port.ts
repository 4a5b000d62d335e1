/** What a client sees of its recording add-on (docs/recording-addon.md#the-add-on-resource). */
export type RecordingAddOnView = Readonly<{
  /** it renews at the end of the current period */
  enabled: boolean;
  /** calls placed now are recorded */
  active: boolean;
  priceMicros: number;
  /** the price in dollars, `5.00` */
  price: string;
  periodDays: number;
  currentPeriodStart: string | null;
  /** the end of the last period paid for; null when the add-on was never enabled */
  currentPeriodEnd: string | null;
  /** when the next period is charged; null when it does not renew */
  renewsAt: string | null;
  /** why it does not renew: `disabled`, `payment_failed` (a renewal the balance could not cover), `account_closed` */
  endReason: 'disabled' | 'payment_failed' | 'account_closed' | null;
}>;

/**
 * The recording add-on as the read model has it. `isActive` is what the calls capability asks when a call is
 * placed: whether calls placed at `at` are recorded (a paid period covers `at`, or the renewal of an add-on
 * that renews is still being decided: docs/recording-addon.md#when-it-is-active).
 */
export interface RecordingAddOnQueries {
  isActive(accountId: string, at: Date): Promise<boolean>;
  view(accountId: string, at: Date): Promise<RecordingAddOnView>;
  /** Add-ons whose current period has ended at `now` (all accounts; for the renewal job), oldest first. */
  dueForRenewal(now: string, limit: number): Promise<{ accountId: string }[]>;
}
