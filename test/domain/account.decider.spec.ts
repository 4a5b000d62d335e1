import { expect } from 'chai';
import { type AccountCommand, type AccountEvent, accountDecider } from '../../domain/account/account.decider.js';
import { MAX_AMOUNT_MICROS, MAX_BALANCE_MICROS } from '../../domain/account/money.js';
import { DomainError } from '../../domain/shared/errors.js';
import { deciderSpec } from '../support/decider-spec.js';

const { given } = deciderSpec(accountDecider);
const metadata = { now: '2026-01-01T00:00:00.000Z', accountId: 'acc_1' };
const key = { keyId: 'key_1', name: 'default', prefix: 'avp_abcdef', keyHash: 'h1' };
const open = (initialKey: typeof key | null = key): AccountCommand => ({
  type: 'OpenAccount',
  metadata,
  data: { accountId: 'acc_1', name: 'Acme', parentAccountId: null, startingCreditMicros: 5_000_000, numberLimit: 10, initialKey },
});
const opened: AccountEvent = {
  type: 'AccountOpened',
  data: {
    accountId: 'acc_1',
    name: 'Acme',
    parentAccountId: null,
    startingCreditMicros: 5_000_000,
    numberLimit: 10,
    openedAt: metadata.now,
  },
};
const keyIssued: AccountEvent = { type: 'ApiKeyIssued', data: { accountId: 'acc_1', ...key, issuedAt: metadata.now } };

describe('Account decider', () => {
  it('opens an account together with its first key, in one decision', () => given([]).when(open()).then([opened, keyIssued]));
  it('opens an account without a key when none is asked for', () => given([]).when(open(null)).then([opened]));
  it('treats opening the same account again as a retry', () => given([opened, keyIssued]).when(open()).then([]));
  it('credits and records the balance after', () =>
    given([opened])
      .when({ type: 'CreditAccount', metadata, data: { accountId: 'acc_1', amountMicros: 2_500_000, reason: 'top-up' } })
      .then([
        {
          type: 'AccountCredited',
          data: { accountId: 'acc_1', amountMicros: 2_500_000, balanceMicros: 7_500_000, reason: 'top-up', creditedAt: metadata.now },
        },
      ]));
  it('adds successive credits to the balance', () =>
    given([
      opened,
      {
        type: 'AccountCredited',
        data: { accountId: 'acc_1', amountMicros: 1, balanceMicros: 5_000_001, reason: 'x', creditedAt: metadata.now },
      },
    ])
      .when({ type: 'CreditAccount', metadata, data: { accountId: 'acc_1', amountMicros: 9, reason: 'y' } })
      .then([
        {
          type: 'AccountCredited',
          data: { accountId: 'acc_1', amountMicros: 9, balanceMicros: 5_000_010, reason: 'y', creditedAt: metadata.now },
        },
      ]));
  it('refuses a credit that is not a positive whole number of micro-dollars', () => {
    given([opened])
      .when({ type: 'CreditAccount', metadata, data: { accountId: 'acc_1', amountMicros: 0, reason: 'x' } })
      .thenThrows('VALIDATION_ERROR');
    given([opened])
      .when({ type: 'CreditAccount', metadata, data: { accountId: 'acc_1', amountMicros: 1.5, reason: 'x' } })
      .thenThrows('VALIDATION_ERROR');
  });
  it('credits up to exactly the maximum balance', () => {
    const near: AccountEvent = {
      type: 'AccountCredited',
      data: {
        accountId: 'acc_1',
        amountMicros: 1,
        balanceMicros: MAX_BALANCE_MICROS - MAX_AMOUNT_MICROS,
        reason: 'x',
        creditedAt: metadata.now,
      },
    };
    given([opened, near])
      .when({ type: 'CreditAccount', metadata, data: { accountId: 'acc_1', amountMicros: MAX_AMOUNT_MICROS, reason: 'y' } })
      .then([
        {
          type: 'AccountCredited',
          data: {
            accountId: 'acc_1',
            amountMicros: MAX_AMOUNT_MICROS,
            balanceMicros: MAX_BALANCE_MICROS,
            reason: 'y',
            creditedAt: metadata.now,
          },
        },
      ]);
  });
  it('refuses a credit that would take the balance over the maximum, naming amountMicros', () => {
    const full: AccountEvent = {
      type: 'AccountCredited',
      data: { accountId: 'acc_1', amountMicros: 1, balanceMicros: MAX_BALANCE_MICROS, reason: 'x', creditedAt: metadata.now },
    };
    const run = () =>
      accountDecider.decide(
        { type: 'CreditAccount', metadata, data: { accountId: 'acc_1', amountMicros: 1, reason: 'y' } },
        [opened, full].reduce(accountDecider.evolve, accountDecider.initialState()),
      );
    expect(run)
      .to.throw(DomainError)
      .that.satisfies(
        (e: DomainError) => e.code === 'VALIDATION_ERROR' && e.details?.[0]?.field === 'amountMicros' && /maximum balance/.test(e.message),
      );
  });
  it('refuses a single credit or charge over the maximum amount, however large the balance', () => {
    given([opened])
      .when({ type: 'CreditAccount', metadata, data: { accountId: 'acc_1', amountMicros: MAX_AMOUNT_MICROS + 1, reason: 'x' } })
      .thenThrows('VALIDATION_ERROR');
    given([opened])
      .when({ type: 'CreditAccount', metadata, data: { accountId: 'acc_1', amountMicros: Number.MAX_SAFE_INTEGER, reason: 'x' } })
      .thenThrows('VALIDATION_ERROR');
    given([opened])
      .when({
        type: 'ChargeAccount',
        metadata,
        data: {
          accountId: 'acc_1',
          chargeId: 'c1',
          amountMicros: MAX_AMOUNT_MICROS + 1,
          kind: 'number_lookup',
          description: 'x',
          reference: null,
        },
      })
      .thenThrows('VALIDATION_ERROR');
  });
  it('refuses to open an account with a starting credit over the maximum balance', () =>
    given([])
      .when({ ...open(null), data: { ...(open(null).data as object), startingCreditMicros: MAX_BALANCE_MICROS + 1 } } as AccountCommand)
      .thenThrows('VALIDATION_ERROR'));
  it('refuses to credit an account that does not exist', () =>
    given([])
      .when({ type: 'CreditAccount', metadata, data: { accountId: 'acc_1', amountMicros: 1, reason: 'x' } })
      .thenThrows('ACCOUNT_NOT_FOUND'));
  it('revokes an active key once; revoking again is a no-op', () => {
    const revoke: AccountCommand = { type: 'RevokeApiKey', metadata, data: { accountId: 'acc_1', keyId: 'key_1' } };
    const revoked: AccountEvent = { type: 'ApiKeyRevoked', data: { accountId: 'acc_1', keyId: 'key_1', revokedAt: metadata.now } };
    given([opened, keyIssued]).when(revoke).then([revoked]);
    given([opened, keyIssued, revoked]).when(revoke).then([]);
  });
  it('refuses to revoke a key the account never had', () =>
    given([opened])
      .when({ type: 'RevokeApiKey', metadata, data: { accountId: 'acc_1', keyId: 'key_x' } })
      .thenThrows('API_KEY_NOT_FOUND'));
});

describe('Account decider: ledger and number slots', () => {
  const charge = (chargeId: string, amountMicros: number): AccountCommand => ({
    type: 'ChargeAccount',
    metadata,
    data: { accountId: 'acc_1', chargeId, amountMicros, kind: 'number_monthly', description: 'number', reference: 'pn_1' },
  });
  const charged = (chargeId: string, amountMicros: number, balanceMicros: number): AccountEvent => ({
    type: 'AccountCharged',
    data: {
      accountId: 'acc_1',
      chargeId,
      amountMicros,
      balanceMicros,
      kind: 'number_monthly',
      description: 'number',
      reference: 'pn_1',
      chargedAt: metadata.now,
    },
  });
  const reserve = (numberId: string, requiredBalanceMicros = 3_000_000): AccountCommand => ({
    type: 'ReserveNumberSlot',
    metadata,
    data: { accountId: 'acc_1', numberId, requiredBalanceMicros },
  });
  const reserved = (numberId: string, slotsUsed: number): AccountEvent => ({
    type: 'NumberSlotReserved',
    data: { accountId: 'acc_1', numberId, slotsUsed, reservedAt: metadata.now },
  });
  const limited: AccountEvent = { type: 'NumberLimitChanged', data: { accountId: 'acc_1', numberLimit: 1, changedAt: metadata.now } };

  it('charges and records the balance after', () =>
    given([opened])
      .when(charge('c1', 3_000_000))
      .then([charged('c1', 3_000_000, 2_000_000)]));
  it('charges the same charge id once', () =>
    given([opened, charged('c1', 3_000_000, 2_000_000)])
      .when(charge('c1', 3_000_000))
      .then([]));
  it('refuses a charge the balance does not cover', () =>
    given([opened, charged('c1', 3_000_000, 2_000_000)])
      .when(charge('c2', 3_000_000))
      .thenThrows('INSUFFICIENT_BALANCE'));
  it('reserves a slot when under the limit and the balance covers the number', () =>
    given([opened])
      .when(reserve('pn_1'))
      .then([reserved('pn_1', 1)]));
  it('treats reserving the same number again as a retry', () =>
    given([opened, reserved('pn_1', 1)])
      .when(reserve('pn_1'))
      .then([]));
  it('refuses a slot at the limit (before looking at the balance)', () =>
    given([opened, limited, reserved('pn_1', 1)])
      .when(reserve('pn_2', 999_000_000))
      .thenThrows('NUMBER_LIMIT_REACHED'));
  it('refuses a slot when the balance is short', () => given([opened]).when(reserve('pn_1', 6_000_000)).thenThrows('INSUFFICIENT_BALANCE'));
  it('gives a slot back after a failed provisioning, once', () => {
    const release: AccountCommand = {
      type: 'ReleaseNumberSlot',
      metadata,
      data: { accountId: 'acc_1', numberId: 'pn_1', reason: 'carrier error' },
    };
    const released: AccountEvent = {
      type: 'NumberSlotReleased',
      data: { accountId: 'acc_1', numberId: 'pn_1', slotsUsed: 0, reason: 'carrier error', releasedAt: metadata.now },
    };
    given([opened, reserved('pn_1', 1)])
      .when(release)
      .then([released]);
    given([opened, reserved('pn_1', 1), released])
      .when(release)
      .then([]);
    given([opened, limited, reserved('pn_1', 1), released])
      .when(reserve('pn_2'))
      .then([reserved('pn_2', 1)]);
  });
  it('activates a pending account once', () => {
    const pending: AccountEvent = { ...opened, data: { ...opened.data, pendingActivation: true } } as AccountEvent;
    const activate: AccountCommand = { type: 'ActivateAccount', metadata, data: { accountId: 'acc_1' } };
    given([pending])
      .when(activate)
      .then([{ type: 'AccountActivated', data: { accountId: 'acc_1', activatedAt: metadata.now } }]);
    given([opened]).when(activate).then([]);
  });
  it('treats a closed account as gone, and closing it again as a no-op', () => {
    const closed: AccountEvent = { type: 'AccountClosed', data: { accountId: 'acc_1', closedAt: metadata.now } };
    given([opened, closed]).when(charge('c1', 1)).thenThrows('ACCOUNT_NOT_FOUND');
    given([opened, closed])
      .when({ type: 'CloseAccount', metadata, data: { accountId: 'acc_1' } })
      .then([]);
  });
});

describe('Account decider: snapshots (docs/event-store.md#snapshots)', () => {
  const charged = (chargeId: string, kind: 'number_monthly' | 'number_lookup', balanceMicros: number): AccountEvent => ({
    type: 'AccountCharged',
    data: {
      accountId: 'acc_1',
      chargeId,
      amountMicros: 10,
      balanceMicros,
      kind,
      description: kind,
      reference: null,
      chargedAt: metadata.now,
    },
  });
  const history: AccountEvent[] = [
    opened,
    keyIssued,
    charged('number_monthly:pn_1:0', 'number_monthly', 990),
    charged('number_lookup:1', 'number_lookup', 980),
    { type: 'ApiKeyRevoked', data: { accountId: 'acc_1', keyId: 'key_1', revokedAt: metadata.now } },
  ];
  const fold = (events: AccountEvent[]) => events.reduce(accountDecider.evolve, accountDecider.initialState());
  const codec = accountDecider.snapshot!;

  it('folds from a snapshot that went through JSON to the same state as from the start', () => {
    const s = fold(history);
    expect(codec.decode(JSON.parse(JSON.stringify(codec.encode(s))))).to.deep.equal(s);
    expect(codec.decode(JSON.parse(JSON.stringify(codec.encode(accountDecider.initialState()))))).to.deep.equal({ status: 'none' });
  });

  it('still charges a remembered charge id once after a snapshot', () => {
    const restored = codec.decode(JSON.parse(JSON.stringify(codec.encode(fold(history)))));
    const again: AccountCommand = {
      type: 'ChargeAccount',
      metadata,
      data: {
        accountId: 'acc_1',
        chargeId: 'number_monthly:pn_1:0',
        amountMicros: 10,
        kind: 'number_monthly',
        description: 'n',
        reference: null,
      },
    };
    expect(accountDecider.decide(again, restored)).to.deep.equal([]);
  });

  it('keeps what retried charges need only: a lookup charge id, new for every request, is not kept; a month is kept per number', () => {
    const s = fold([...history, charged('a2p_registration:acc_1:1', 'number_monthly', 970)]);
    expect(s.status === 'open' && [...s.charges]).to.deep.equal(['a2p_registration:acc_1:1']);
    expect(s.status === 'open' && s.monthsCharged).to.deep.equal({ pn_1: 0 });
  });

  it('keeps one figure per number however many months it was charged, and still charges each month once', () => {
    const months = Array.from({ length: 24 }, (_, p) => charged(`number_monthly:pn_1:${p}`, 'number_monthly', 1000 - p));
    const s = codec.decode(JSON.parse(JSON.stringify(codec.encode(fold([opened, ...months])))));
    expect(s.status === 'open' && s.monthsCharged).to.deep.equal({ pn_1: 23 });
    const charge = (chargeId: string): AccountCommand => ({
      type: 'ChargeAccount',
      metadata,
      data: { accountId: 'acc_1', chargeId, amountMicros: 10, kind: 'number_monthly', description: 'n', reference: 'pn_1' },
    });
    expect(accountDecider.decide(charge('number_monthly:pn_1:7'), s)).to.deep.equal([]);
    expect(accountDecider.decide(charge('number_monthly:pn_1:23'), s)).to.deep.equal([]);
    expect(accountDecider.decide(charge('number_monthly:pn_1:24'), s).map((e) => e.type)).to.deep.equal(['AccountCharged']);
    expect(accountDecider.decide(charge('number_monthly:pn_2:0'), s).map((e) => e.type)).to.deep.equal(['AccountCharged']);
  });
});
