import { DomainError } from '../shared/errors.js';
import { assertNever, type Command, type Decider, type Event } from '../shared/types.js';

/** Money is integer micro-dollars everywhere ($1 = 1_000_000). */
export const MICROS_PER_DOLLAR = 1_000_000;
export const STARTING_CREDIT_MICROS = 5 * MICROS_PER_DOLLAR;
export const DEFAULT_NUMBER_LIMIT = 10;

export type AccountCommand =
  | Command<'OpenAccount', {
      accountId: string; name: string; parentAccountId: string | null; startingCreditMicros: number; numberLimit: number;
      /** a first key issued in the same append, so an account never exists without its key */
      initialKey: { keyId: string; name: string; prefix: string; keyHash: string } | null;
    }>
  | Command<'CreditAccount', { accountId: string; amountMicros: number; reason: string }>
  | Command<'IssueApiKey', { accountId: string; keyId: string; name: string; prefix: string; keyHash: string }>
  | Command<'RevokeApiKey', { accountId: string; keyId: string }>;

export type AccountEvent =
  | Event<'AccountOpened', { accountId: string; name: string; parentAccountId: string | null; startingCreditMicros: number; numberLimit: number; openedAt: string }>
  | Event<'AccountCredited', { accountId: string; amountMicros: number; balanceMicros: number; reason: string; creditedAt: string }>
  | Event<'ApiKeyIssued', { accountId: string; keyId: string; name: string; prefix: string; keyHash: string; issuedAt: string }>
  | Event<'ApiKeyRevoked', { accountId: string; keyId: string; revokedAt: string }>;

export type AccountState =
  | { status: 'none' }
  | { status: 'open'; accountId: string; parentAccountId: string | null; balanceMicros: number; keys: Readonly<Record<string, 'active' | 'revoked'>> };

export const accountEventTypes = ['AccountOpened', 'AccountCredited', 'ApiKeyIssued', 'ApiKeyRevoked'] as const;

const notFound = () => new DomainError('ACCOUNT_NOT_FOUND', 'Account not found');

export const accountDecider: Decider<AccountCommand, AccountEvent, AccountState> = {
  initialState: () => ({ status: 'none' }),

  decide: (cmd, s) => {
    const now = cmd.metadata.now;
    switch (cmd.type) {
      case 'OpenAccount':
        if (s.status !== 'none') return []; // the same id twice is a retry
        if (!Number.isSafeInteger(cmd.data.startingCreditMicros) || cmd.data.startingCreditMicros < 0) {
          throw new DomainError('VALIDATION_ERROR', 'startingCreditMicros must be a non-negative integer');
        }
        {
          const { initialKey, ...opened } = cmd.data;
          const events: AccountEvent[] = [{ type: 'AccountOpened', data: { ...opened, openedAt: now } }];
          if (initialKey) events.push({ type: 'ApiKeyIssued', data: { accountId: opened.accountId, ...initialKey, issuedAt: now } });
          return events;
        }
      case 'CreditAccount': {
        if (s.status !== 'open') throw notFound();
        if (!Number.isSafeInteger(cmd.data.amountMicros) || cmd.data.amountMicros <= 0) {
          throw new DomainError('VALIDATION_ERROR', 'amountMicros must be a positive integer', [
            { field: 'amountMicros', message: 'must be a positive integer number of micro-dollars', type: 'value_error' },
          ]);
        }
        const balanceMicros = s.balanceMicros + cmd.data.amountMicros;
        return [{ type: 'AccountCredited', data: { accountId: s.accountId, amountMicros: cmd.data.amountMicros, balanceMicros, reason: cmd.data.reason, creditedAt: now } }];
      }
      case 'IssueApiKey':
        if (s.status !== 'open') throw notFound();
        if (s.keys[cmd.data.keyId]) return [];
        return [{ type: 'ApiKeyIssued', data: { ...cmd.data, issuedAt: now } }];
      case 'RevokeApiKey':
        if (s.status !== 'open') throw notFound();
        if (!s.keys[cmd.data.keyId]) throw new DomainError('API_KEY_NOT_FOUND', 'API key not found');
        if (s.keys[cmd.data.keyId] === 'revoked') return [];
        return [{ type: 'ApiKeyRevoked', data: { accountId: s.accountId, keyId: cmd.data.keyId, revokedAt: now } }];
      default:
        return assertNever(cmd);
    }
  },

  evolve: (s, e) => {
    switch (e.type) {
      case 'AccountOpened':
        return { status: 'open', accountId: e.data.accountId, parentAccountId: e.data.parentAccountId, balanceMicros: e.data.startingCreditMicros, keys: {} };
      case 'AccountCredited':
        return s.status === 'open' ? { ...s, balanceMicros: e.data.balanceMicros } : s;
      case 'ApiKeyIssued':
        return s.status === 'open' ? { ...s, keys: { ...s.keys, [e.data.keyId]: 'active' } } : s;
      case 'ApiKeyRevoked':
        return s.status === 'open' ? { ...s, keys: { ...s.keys, [e.data.keyId]: 'revoked' } } : s;
      default:
        return s;
    }
  },
};
