import { assertNever, type Command, type Decider, type Event } from '../shared/types.js';

/** The call-recording add-on (docs/recording-addon.md): $5.00 for each 30-day period, in integer micro-dollars. */
export const RECORDING_ADDON_PRICE_MICROS = 5_000_000;
export const RECORDING_ADDON_PERIOD_DAYS = 30;
const DAY_MS = 86_400_000;
export const RECORDING_ADDON_PERIOD_MS = RECORDING_ADDON_PERIOD_DAYS * DAY_MS;
/**
 * A subscription that renews stays active past its period end until the renewal job has charged it or let it
 * lapse, for at most this long: calls placed in the minute before the job's next pass are still recorded. When
 * the job decides within it, the next period starts at the old period end; after it, at the time of the renewal
 * (nothing is charged for days the add-on was off).
 */
export const RECORDING_ADDON_RENEWAL_GRACE_MS = DAY_MS;

/** One stream per account that has the add-on (the acting account; its charges go to the paying account). */
export const recordingAddOnStream = (accountId: string) => `recording_addon-${accountId}`;
/** One charge id per account and period: a retried enable, a concurrent one and the renewal of that period share it. */
export const recordingAddOnChargeId = (accountId: string, period: number) => `recording_addon:${accountId}:${period}`;

const plus = (iso: string, ms: number) => new Date(Date.parse(iso) + ms).toISOString();
const before = (a: string, b: string) => Date.parse(a) < Date.parse(b);

/** A period charged before the command: the ledger holds `chargeId` for `amountMicros`. */
export type RecordingAddOnPayment = { period: number; chargeId: string; amountMicros: number };
export type RecordingAddOnEndReason = 'disabled' | 'account_closed';

export type RecordingAddOnCommand =
  /**
   * While the add-on is active: nothing, or (disabled) it renews again, and `payment` is null. Otherwise starts the
   * period `payment` paid for, now; without a payment it records nothing (the caller charges, then enables).
   */
  | Command<'EnableRecordingAddOn', { accountId: string; payment: RecordingAddOnPayment | null }>
  /** Stops the renewal; the add-on stays active until the end of the period paid for (no refund). */
  | Command<'DisableRecordingAddOn', { accountId: string }>
  /** The renewal job charged the period after the current one (the add-on renewed when the job looked). */
  | Command<'RenewRecordingAddOn', { accountId: string } & RecordingAddOnPayment>
  /** The renewal job could not charge the next period: the add-on lapses. */
  | Command<'RecordRecordingAddOnPaymentFailed', { accountId: string; period: number; neededMicros: number; balanceMicros: number }>
  /** The period of an add-on that does not renew (disabled, or its account closed) has ended. */
  | Command<'ExpireRecordingAddOn', { accountId: string; period: number; reason: RecordingAddOnEndReason }>;

type PeriodData = { accountId: string; period: number; chargeId: string; amountMicros: number; periodStart: string; periodEnd: string };

export type RecordingAddOnEvent =
  | Event<'RecordingAddOnEnabled', PeriodData & { enabledAt: string }>
  /** enabled again while a disabled add-on's period was still running: it renews again, nothing is charged */
  | Event<'RecordingAddOnResumed', { accountId: string; periodEnd: string; resumedAt: string }>
  | Event<'RecordingAddOnDisabled', { accountId: string; activeUntil: string; disabledAt: string }>
  | Event<'RecordingAddOnRenewed', PeriodData & { renewedAt: string }>
  | Event<
      'RecordingAddOnLapsed',
      { accountId: string; period: number; neededMicros: number; balanceMicros: number; paidThrough: string; lapsedAt: string }
    >
  | Event<
      'RecordingAddOnExpired',
      { accountId: string; period: number; reason: RecordingAddOnEndReason; paidThrough: string; expiredAt: string }
    >;

export type RecordingAddOnState =
  | { status: 'none' }
  | {
      status: 'subscribed';
      accountId: string;
      /** periods paid so far, over the stream's whole life: the next period's number */
      periodsPaid: number;
      periodStart: string;
      periodEnd: string;
      /** false once disabled: the add-on ends with its period */
      renews: boolean;
    }
  | {
      status: 'ended';
      accountId: string;
      periodsPaid: number;
      paidThrough: string;
      reason: RecordingAddOnEndReason | 'payment_failed';
      endedAt: string;
    };

export const periodsPaidOf = (s: RecordingAddOnState): number => (s.status === 'none' ? 0 : s.periodsPaid);

/**
 * Whether calls placed at `at` are recorded, as the stream stands: within the current paid period, or, for an
 * add-on that renews, within the renewal grace after it. The read model answers the same rule
 * (projections/recording-addon/recording-addon.queries.ts), with earlier periods too.
 */
export function activeAt(s: RecordingAddOnState, at: string): boolean {
  if (s.status !== 'subscribed' || before(at, s.periodStart)) return false;
  if (before(at, s.periodEnd)) return true;
  return s.renews && before(at, plus(s.periodEnd, RECORDING_ADDON_RENEWAL_GRACE_MS));
}

/**
 * The charge an enable at `now` must make first, or null when the add-on is active (enabling it then charges
 * nothing). The enable command decides with the same rule.
 */
export function enableCharge(accountId: string, s: RecordingAddOnState, now: string): { period: number; chargeId: string } | null {
  if (activeAt(s, now)) return null;
  const period = periodsPaidOf(s);
  return { period, chargeId: recordingAddOnChargeId(accountId, period) };
}

/** The period a renewal decided at `now` pays for: from the old end within the grace, else from `now`. */
export function renewalPeriod(s: { periodEnd: string }, now: string): { periodStart: string; periodEnd: string } {
  const periodStart = before(now, plus(s.periodEnd, RECORDING_ADDON_RENEWAL_GRACE_MS)) ? s.periodEnd : now;
  return { periodStart, periodEnd: plus(periodStart, RECORDING_ADDON_PERIOD_MS) };
}

/** A subscription whose current period has ended by `now` and whose next step (renew, lapse or expire) is due. */
const due = (s: RecordingAddOnState, period: number, now: string) =>
  s.status === 'subscribed' && s.periodsPaid === period && !before(now, s.periodEnd);

export const recordingAddOnEventTypes = [
  'RecordingAddOnEnabled',
  'RecordingAddOnResumed',
  'RecordingAddOnDisabled',
  'RecordingAddOnRenewed',
  'RecordingAddOnLapsed',
  'RecordingAddOnExpired',
] as const satisfies readonly RecordingAddOnEvent['type'][];

export const recordingAddOnDecider: Decider<RecordingAddOnCommand, RecordingAddOnEvent, RecordingAddOnState> = {
  initialState: () => ({ status: 'none' }),

  decide: (cmd, s) => {
    const now = cmd.metadata.now;
    const { accountId } = cmd.data;
    switch (cmd.type) {
      case 'EnableRecordingAddOn': {
        if (s.status === 'subscribed' && activeAt(s, now))
          return s.renews ? [] : [{ type: 'RecordingAddOnResumed', data: { accountId, periodEnd: s.periodEnd, resumedAt: now } }];
        const payment = cmd.data.payment;
        // unpaid (the caller saw the add-on active, and its period ended since), or paid for a period another
        // request has recorded since (the charge id made this one's charge a no-op): nothing to start
        if (payment === null || payment.period !== periodsPaidOf(s)) return [];
        const { period, chargeId, amountMicros } = payment;
        const periodEnd = plus(now, RECORDING_ADDON_PERIOD_MS);
        return [
          {
            type: 'RecordingAddOnEnabled',
            data: { accountId, period, chargeId, amountMicros, periodStart: now, periodEnd, enabledAt: now },
          },
        ];
      }
      case 'DisableRecordingAddOn':
        if (s.status !== 'subscribed' || !s.renews) return [];
        return [{ type: 'RecordingAddOnDisabled', data: { accountId, activeUntil: s.periodEnd, disabledAt: now } }];
      case 'RenewRecordingAddOn': {
        // paid, so recorded even when the add-on was disabled since the job looked: it then ends with this period
        if (s.status !== 'subscribed' || !due(s, cmd.data.period, now)) return [];
        const { period, chargeId, amountMicros } = cmd.data;
        return [
          { type: 'RecordingAddOnRenewed', data: { accountId, period, chargeId, amountMicros, ...renewalPeriod(s, now), renewedAt: now } },
        ];
      }
      case 'RecordRecordingAddOnPaymentFailed': {
        if (s.status !== 'subscribed' || !s.renews || !due(s, cmd.data.period, now)) return [];
        const { period, neededMicros, balanceMicros } = cmd.data;
        return [
          {
            type: 'RecordingAddOnLapsed',
            data: { accountId, period, neededMicros, balanceMicros, paidThrough: s.periodEnd, lapsedAt: now },
          },
        ];
      }
      case 'ExpireRecordingAddOn': {
        if (s.status !== 'subscribed' || !due(s, cmd.data.period, now)) return [];
        // enabled again since the job looked: the renewal takes it
        if (cmd.data.reason === 'disabled' && s.renews) return [];
        return [
          {
            type: 'RecordingAddOnExpired',
            data: { accountId, period: cmd.data.period, reason: cmd.data.reason, paidThrough: s.periodEnd, expiredAt: now },
          },
        ];
      }
      default:
        return assertNever(cmd);
    }
  },

  evolve: (s, e) => {
    switch (e.type) {
      case 'RecordingAddOnEnabled':
        return {
          status: 'subscribed',
          accountId: e.data.accountId,
          periodsPaid: e.data.period + 1,
          periodStart: e.data.periodStart,
          periodEnd: e.data.periodEnd,
          renews: true,
        };
      case 'RecordingAddOnRenewed':
        return s.status === 'subscribed'
          ? { ...s, periodsPaid: e.data.period + 1, periodStart: e.data.periodStart, periodEnd: e.data.periodEnd }
          : s;
      case 'RecordingAddOnResumed':
        return s.status === 'subscribed' ? { ...s, renews: true } : s;
      case 'RecordingAddOnDisabled':
        return s.status === 'subscribed' ? { ...s, renews: false } : s;
      case 'RecordingAddOnLapsed':
        return s.status === 'subscribed'
          ? {
              status: 'ended',
              accountId: s.accountId,
              periodsPaid: s.periodsPaid,
              paidThrough: s.periodEnd,
              reason: 'payment_failed',
              endedAt: e.data.lapsedAt,
            }
          : s;
      case 'RecordingAddOnExpired':
        return s.status === 'subscribed'
          ? {
              status: 'ended',
              accountId: s.accountId,
              periodsPaid: s.periodsPaid,
              paidThrough: s.periodEnd,
              reason: e.data.reason,
              endedAt: e.data.expiredAt,
            }
          : s;
      default:
        return assertNever(e);
    }
  },
};
