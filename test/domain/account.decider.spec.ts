import { accountDecider, type AccountCommand, type AccountEvent } from '../../domain/account/account.decider.js';
import { deciderSpec } from '../support/decider-spec.js';

const { given } = deciderSpec(accountDecider);
const metadata = { now: '2026-01-01T00:00:00.000Z', accountId: 'acc_1' };
const key = { keyId: 'key_1', name: 'default', prefix: 'avp_abcdef', keyHash: 'h1' };
const open = (initialKey: typeof key | null = key): AccountCommand => ({
  type: 'OpenAccount', metadata,
  data: { accountId: 'acc_1', name: 'Acme', parentAccountId: null, startingCreditMicros: 5_000_000, numberLimit: 10, initialKey },
});
const opened: AccountEvent = {
  type: 'AccountOpened',
  data: { accountId: 'acc_1', name: 'Acme', parentAccountId: null, startingCreditMicros: 5_000_000, numberLimit: 10, openedAt: metadata.now },
};
const keyIssued: AccountEvent = { type: 'ApiKeyIssued', data: { accountId: 'acc_1', ...key, issuedAt: metadata.now } };

describe('Account decider', () => {
  it('opens an account together with its first key, in one decision', () =>
    given([]).when(open()).then([opened, keyIssued]));
  it('opens an account without a key when none is asked for', () =>
    given([]).when(open(null)).then([opened]));
  it('treats opening the same account again as a retry', () =>
    given([opened, keyIssued]).when(open()).then([]));
  it('credits and records the balance after', () =>
    given([opened]).when({ type: 'CreditAccount', metadata, data: { accountId: 'acc_1', amountMicros: 2_500_000, reason: 'top-up' } })
      .then([{ type: 'AccountCredited', data: { accountId: 'acc_1', amountMicros: 2_500_000, balanceMicros: 7_500_000, reason: 'top-up', creditedAt: metadata.now } }]));
  it('adds successive credits to the balance', () =>
    given([opened, { type: 'AccountCredited', data: { accountId: 'acc_1', amountMicros: 1, balanceMicros: 5_000_001, reason: 'x', creditedAt: metadata.now } }])
      .when({ type: 'CreditAccount', metadata, data: { accountId: 'acc_1', amountMicros: 9, reason: 'y' } })
      .then([{ type: 'AccountCredited', data: { accountId: 'acc_1', amountMicros: 9, balanceMicros: 5_000_010, reason: 'y', creditedAt: metadata.now } }]));
  it('refuses a credit that is not a positive whole number of micro-dollars', () => {
    given([opened]).when({ type: 'CreditAccount', metadata, data: { accountId: 'acc_1', amountMicros: 0, reason: 'x' } }).thenThrows('VALIDATION_ERROR');
    given([opened]).when({ type: 'CreditAccount', metadata, data: { accountId: 'acc_1', amountMicros: 1.5, reason: 'x' } }).thenThrows('VALIDATION_ERROR');
  });
  it('refuses to credit an account that does not exist', () =>
    given([]).when({ type: 'CreditAccount', metadata, data: { accountId: 'acc_1', amountMicros: 1, reason: 'x' } }).thenThrows('ACCOUNT_NOT_FOUND'));
  it('revokes an active key once; revoking again is a no-op', () => {
    const revoke: AccountCommand = { type: 'RevokeApiKey', metadata, data: { accountId: 'acc_1', keyId: 'key_1' } };
    const revoked: AccountEvent = { type: 'ApiKeyRevoked', data: { accountId: 'acc_1', keyId: 'key_1', revokedAt: metadata.now } };
    given([opened, keyIssued]).when(revoke).then([revoked]);
    given([opened, keyIssued, revoked]).when(revoke).then([]);
  });
  it('refuses to revoke a key the account never had', () =>
    given([opened]).when({ type: 'RevokeApiKey', metadata, data: { accountId: 'acc_1', keyId: 'key_x' } }).thenThrows('API_KEY_NOT_FOUND'));
});
