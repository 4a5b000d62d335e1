import { expect } from 'chai';
import {
  activeAt,
  enableCharge,
  RECORDING_ADDON_PRICE_MICROS,
  type RecordingAddOnCommand,
  type RecordingAddOnEvent,
  recordingAddOnChargeId,
  recordingAddOnDecider,
  renewalPeriod,
} from '../../domain/recording-addon/recording-addon.decider.js';
import { deciderSpec } from '../support/decider-spec.js';

const { given } = deciderSpec(recordingAddOnDecider);
const accountId = 'acc_1';
const T0 = '2026-01-01T00:00:00.000Z';
const T30 = '2026-01-31T00:00:00.000Z'; // T0 + 30 days
const T60 = '2026-03-02T00:00:00.000Z'; // T30 + 30 days
const at = (now: string) => ({ now, accountId });
const price = RECORDING_ADDON_PRICE_MICROS;
const payment = (period: number) => ({ period, chargeId: recordingAddOnChargeId(accountId, period), amountMicros: price });

const enable = (now: string, pay: ReturnType<typeof payment> | null): RecordingAddOnCommand => ({
  type: 'EnableRecordingAddOn',
  data: { accountId, payment: pay },
  metadata: at(now),
});
const disable = (now: string): RecordingAddOnCommand => ({ type: 'DisableRecordingAddOn', data: { accountId }, metadata: at(now) });
const renew = (now: string, period: number): RecordingAddOnCommand => ({
  type: 'RenewRecordingAddOn',
  data: { accountId, ...payment(period) },
  metadata: at(now),
});
const paymentFailed = (now: string, period: number): RecordingAddOnCommand => ({
  type: 'RecordRecordingAddOnPaymentFailed',
  data: { accountId, period, neededMicros: price, balanceMicros: 1_000_000 },
  metadata: at(now),
});
const expire = (now: string, period: number, reason: 'disabled' | 'account_closed' = 'disabled'): RecordingAddOnCommand => ({
  type: 'ExpireRecordingAddOn',
  data: { accountId, period, reason },
  metadata: at(now),
});

const enabled = (period = 0, start = T0, end = T30): RecordingAddOnEvent => ({
  type: 'RecordingAddOnEnabled',
  data: { accountId, ...payment(period), periodStart: start, periodEnd: end, enabledAt: start },
});
const disabled = (when: string, until = T30): RecordingAddOnEvent => ({
  type: 'RecordingAddOnDisabled',
  data: { accountId, activeUntil: until, disabledAt: when },
});
const renewed = (period: number, start: string, end: string, when = start): RecordingAddOnEvent => ({
  type: 'RecordingAddOnRenewed',
  data: { accountId, ...payment(period), periodStart: start, periodEnd: end, renewedAt: when },
});
const lapsed = (period: number, paidThrough: string, when: string): RecordingAddOnEvent => ({
  type: 'RecordingAddOnLapsed',
  data: { accountId, period, neededMicros: price, balanceMicros: 1_000_000, paidThrough, lapsedAt: when },
});
const fold = (events: RecordingAddOnEvent[]) => events.reduce(recordingAddOnDecider.evolve, recordingAddOnDecider.initialState());

describe('RecordingAddOn decider', () => {
  describe('enable', () => {
    it('starts a 30-day period paid for by the charge', () =>
      given([])
        .when(enable(T0, payment(0)))
        .then([enabled(0, T0, T30)]));
    it('records nothing without a payment while the add-on is not active', () => given([]).when(enable(T0, null)).then([]));
    it('is a no-op while active and renewing', () => given([enabled()]).when(enable('2026-01-10T00:00:00.000Z', null)).then([]));
    it('is a no-op when a concurrent enable recorded the period first (the charge id made the second charge a no-op)', () =>
      given([enabled()])
        .when(enable('2026-01-01T00:00:01.000Z', payment(0)))
        .then([]));
    it('renews again, charging nothing, when a disabled add-on is enabled within its period', () =>
      given([enabled(), disabled('2026-01-05T00:00:00.000Z')])
        .when(enable('2026-01-06T00:00:00.000Z', null))
        .then([{ type: 'RecordingAddOnResumed', data: { accountId, periodEnd: T30, resumedAt: '2026-01-06T00:00:00.000Z' } }]));
    it('starts a new, numbered period once a disabled add-on has run out', () =>
      given([enabled(), disabled('2026-01-05T00:00:00.000Z')])
        .when(enable('2026-02-10T00:00:00.000Z', payment(1)))
        .then([enabled(1, '2026-02-10T00:00:00.000Z', '2026-03-12T00:00:00.000Z')]));
    it('starts a new period after a lapse', () =>
      given([enabled(), lapsed(1, T30, T30)])
        .when(enable('2026-02-03T00:00:00.000Z', payment(1)))
        .then([enabled(1, '2026-02-03T00:00:00.000Z', '2026-03-05T00:00:00.000Z')]));
  });

  describe('disable', () => {
    it('stops the renewal and keeps the add-on active until its period ends', () =>
      given([enabled()])
        .when(disable('2026-01-05T00:00:00.000Z'))
        .then([disabled('2026-01-05T00:00:00.000Z')]));
    it('is a no-op when already disabled', () =>
      given([enabled(), disabled('2026-01-05T00:00:00.000Z')])
        .when(disable('2026-01-06T00:00:00.000Z'))
        .then([]));
    it('is a no-op when never enabled', () => given([]).when(disable(T0)).then([]));
    it('is a no-op after a lapse', () =>
      given([enabled(), lapsed(1, T30, T30)])
        .when(disable(T60))
        .then([]));
  });

  describe('renewal', () => {
    it('is not due before the period ends', () => given([enabled()]).when(renew('2026-01-30T23:59:59.999Z', 1)).then([]));
    it('charges the next period from the old period end (no drift)', () =>
      given([enabled()])
        .when(renew('2026-01-31T00:01:00.000Z', 1))
        .then([renewed(1, T30, T60, '2026-01-31T00:01:00.000Z')]));
    it('renews each period once', () =>
      given([enabled(), renewed(1, T30, T60)])
        .when(renew('2026-01-31T00:02:00.000Z', 1))
        .then([]));
    it('starts the next period at the renewal when it is decided after the grace (the days between are not charged)', () =>
      given([enabled()])
        .when(renew('2026-02-05T00:00:00.000Z', 1))
        .then([renewed(1, '2026-02-05T00:00:00.000Z', '2026-03-07T00:00:00.000Z')]));
    it('records a paid renewal even when the add-on was disabled since the job looked', () => {
      const when = '2026-01-31T00:00:30.000Z';
      given([enabled(), disabled(when)])
        .when(renew(when, 1))
        .then([renewed(1, T30, T60, when)]);
      const s = fold([enabled(), disabled(when), renewed(1, T30, T60, when)]);
      expect(s).to.include({ status: 'subscribed', renews: false, periodEnd: T60, periodsPaid: 2 });
    });
    it('lapses when the balance cannot cover the next period', () =>
      given([enabled()])
        .when(paymentFailed('2026-01-31T00:01:00.000Z', 1))
        .then([lapsed(1, T30, '2026-01-31T00:01:00.000Z')]));
    it('records a lapse once', () =>
      given([enabled(), lapsed(1, T30, T30)])
        .when(paymentFailed('2026-01-31T00:02:00.000Z', 1))
        .then([]));
    it('does not lapse before the period ends', () => given([enabled()]).when(paymentFailed('2026-01-20T00:00:00.000Z', 1)).then([]));
  });

  describe('expiry', () => {
    it('ends a disabled add-on when its period has ended', () =>
      given([enabled(), disabled('2026-01-05T00:00:00.000Z')])
        .when(expire(T30, 1))
        .then([{ type: 'RecordingAddOnExpired', data: { accountId, period: 1, reason: 'disabled', paidThrough: T30, expiredAt: T30 } }]));
    it('does not end a disabled add-on before its period ends', () =>
      given([enabled(), disabled('2026-01-05T00:00:00.000Z')])
        .when(expire('2026-01-30T00:00:00.000Z', 1))
        .then([]));
    it('leaves an add-on enabled again since the job looked to the renewal', () => given([enabled()]).when(expire(T30, 1)).then([]));
    it('ends a renewing add-on whose account was closed', () =>
      given([enabled()])
        .when(expire(T30, 1, 'account_closed'))
        .then([
          { type: 'RecordingAddOnExpired', data: { accountId, period: 1, reason: 'account_closed', paidThrough: T30, expiredAt: T30 } },
        ]));
  });

  describe('when it is active', () => {
    it('is never active before it was enabled', () => expect(activeAt(fold([]), T0)).to.equal(false));
    it('is active from the start of its period to its end, exclusive', () => {
      const s = fold([enabled()]);
      expect([activeAt(s, '2025-12-31T23:59:59.999Z'), activeAt(s, T0), activeAt(s, '2026-01-30T23:59:59.999Z')]).to.deep.equal([
        false,
        true,
        true,
      ]);
    });
    it('stays active for a day past the period end while its renewal is being decided', () => {
      const s = fold([enabled()]);
      expect([activeAt(s, T30), activeAt(s, '2026-01-31T23:59:59.999Z'), activeAt(s, '2026-02-01T00:00:00.000Z')]).to.deep.equal([
        true,
        true,
        false,
      ]);
    });
    it('ends exactly at the period end once disabled (no grace: it does not renew)', () => {
      const s = fold([enabled(), disabled('2026-01-05T00:00:00.000Z')]);
      expect([activeAt(s, '2026-01-30T23:59:59.999Z'), activeAt(s, T30)]).to.deep.equal([true, false]);
    });
    it('is not active after a lapse', () => expect(activeAt(fold([enabled(), lapsed(1, T30, T30)]), T30)).to.equal(false));
    it('asks for the charge of the next period number only when not active', () => {
      expect(enableCharge(accountId, fold([]), T0)).to.deep.equal({ period: 0, chargeId: 'recording_addon:acc_1:0' });
      expect(enableCharge(accountId, fold([enabled()]), '2026-01-10T00:00:00.000Z')).to.equal(null);
      expect(enableCharge(accountId, fold([enabled(), lapsed(1, T30, T30)]), T60)).to.deep.equal({
        period: 1,
        chargeId: 'recording_addon:acc_1:1',
      });
    });
    it('renews from the old end within the grace, from the renewal after it', () => {
      expect(renewalPeriod({ periodEnd: T30 }, '2026-01-31T12:00:00.000Z')).to.deep.equal({ periodStart: T30, periodEnd: T60 });
      expect(renewalPeriod({ periodEnd: T30 }, '2026-02-01T00:00:00.000Z')).to.deep.equal({
        periodStart: '2026-02-01T00:00:00.000Z',
        periodEnd: '2026-03-03T00:00:00.000Z',
      });
    });
  });
});
