import { monthlyChargeOf } from '../phone-number/pricing.js';
import { DomainError } from '../shared/errors.js';
import { assertNever, type Command, type Decider, type Event } from '../shared/types.js';
import { formatDollars, MAX_AMOUNT_MICROS, MAX_BALANCE_MICROS } from './money.js';

/** The stream of an account: its plan, balance, ledger, keys, limits: `<category>-<id>` (docs/event-store.md#aggregates-and-events). */
export const accountStream = (id: string) => `account-${id}`;

/** Money is integer micro-dollars everywhere ($1 = 1_000_000). */
export const MICROS_PER_DOLLAR = 1_000_000;
export const STARTING_CREDIT_MICROS = 5 * MICROS_PER_DOLLAR;
export const DEFAULT_NUMBER_LIMIT = 10;

/** What a charge is for; the ledger and usage group by it. */
export type ChargeKind = 'number_monthly' | 'number_lookup' | 'recording_addon' | 'a2p_registration';

type Key = { keyId: string; name: string; prefix: string; keyHash: string };

export type AccountCommand =
  | Command<
      'OpenAccount',
      {
        accountId: string;
        name: string;
        parentAccountId: string | null;
        startingCreditMicros: number;
        numberLimit: number;
        /** a first key issued in the same append, so an account never exists without its key */
        initialKey: Key | null;
        /** self-service sign-up: the account stays invisible (keys refused) until ActivateAccount */
        pendingActivation?: boolean;
        owner?: { userId: string; email: string; projectId: string } | null;
      }
    >
  | Command<'ActivateAccount', { accountId: string }>
  | Command<'RenameAccount', { accountId: string; name: string }>
  | Command<'CloseAccount', { accountId: string }>
  | Command<'CreditAccount', { accountId: string; amountMicros: number; reason: string }>
  /** Idempotent by chargeId: the same charge twice is charged once. Refused (402) when the balance is short. */
  | Command<
      'ChargeAccount',
      { accountId: string; chargeId: string; amountMicros: number; kind: ChargeKind; description: string; reference: string | null }
    >
  | Command<'IssueApiKey', { accountId: string } & Key>
  | Command<'RevokeApiKey', { accountId: string; keyId: string }>
  | Command<'SetNumberLimit', { accountId: string; numberLimit: number }>
  /**
   * Holds one of the account's number slots for a number being provisioned. The account owns the limit, so
   * two concurrent provisionings cannot both take the last slot (optimistic concurrency on this stream).
   * Checks the limit (409) and then that the balance covers `requiredBalanceMicros` (402), in that order.
   */
  | Command<'ReserveNumberSlot', { accountId: string; numberId: string; requiredBalanceMicros: number }>
  /** Gives a slot back when provisioning failed before the number became the account's. */
  | Command<'ReleaseNumberSlot', { accountId: string; numberId: string; reason: string }>;

export type AccountEvent =
  | Event<
      'AccountOpened',
      {
        accountId: string;
        name: string;
        parentAccountId: string | null;
        startingCreditMicros: number;
        numberLimit: number;
        openedAt: string;
        pendingActivation?: boolean;
        owner?: { userId: string; email: string; projectId: string } | null;
      }
    >
  | Event<'AccountActivated', { accountId: string; activatedAt: string }>
  | Event<'AccountRenamed', { accountId: string; name: string; renamedAt: string }>
  | Event<'AccountClosed', { accountId: string; closedAt: string }>
  | Event<'AccountCredited', { accountId: string; amountMicros: number; balanceMicros: number; reason: string; creditedAt: string }>
  | Event<
      'AccountCharged',
      {
        accountId: string;
        chargeId: string;
        amountMicros: number;
        balanceMicros: number;
        kind: ChargeKind;
        description: string;
        reference: string | null;
        chargedAt: string;
      }
    >
  | Event<'ApiKeyIssued', { accountId: string; keyId: string; name: string; prefix: string; keyHash: string; issuedAt: string }>
  | Event<'ApiKeyRevoked', { accountId: string; keyId: string; revokedAt: string }>
  | Event<'NumberLimitChanged', { accountId: string; numberLimit: number; changedAt: string }>
  | Event<'NumberSlotReserved', { accountId: string; numberId: string; slotsUsed: number; reservedAt: string }>
  | Event<'NumberSlotReleased', { accountId: string; numberId: string; slotsUsed: number; reason: string; releasedAt: string }>;

export type OpenAccountState = {
  status: 'open' | 'closed';
  activated: boolean;
  accountId: string;
  parentAccountId: string | null;
  balanceMicros: number;
  numberLimit: number;
  keys: Readonly<Record<string, 'active' | 'revoked'>>;
  /** slots held by numbers (lifetime: a released number keeps its slot; a failed provisioning gives it back) */
  slots: Readonly<Record<string, 'held' | 'returned'>>;
  slotsUsed: number;
  /**
   * ids of the charges applied, so a retried charge applies once (docs/event-store.md#snapshots): lookup charges, new per
   * request, are not kept, and a number's monthly charges are kept as `monthsCharged`
   */
  charges: ReadonlySet<string>;
  /** per number, the last billing period charged: its periods are charged in order, so one figure answers for all */
  monthsCharged: Readonly<Record<string, number>>;
};
export type AccountState = { status: 'none' } | OpenAccountState;

export const accountEventTypes = [
  'AccountOpened',
  'AccountActivated',
  'AccountRenamed',
  'AccountClosed',
  'AccountCredited',
  'AccountCharged',
  'ApiKeyIssued',
  'ApiKeyRevoked',
  'NumberLimitChanged',
  'NumberSlotReserved',
  'NumberSlotReleased',
] as const satisfies readonly AccountEvent['type'][];

const notFound = () => new DomainError('ACCOUNT_NOT_FOUND', 'Account not found');
const positiveMicros = (n: number, field: string) => {
  if (!Number.isSafeInteger(n) || n <= 0) {
    throw new DomainError('VALIDATION_ERROR', `${field} must be a positive integer`, [
      { field, message: 'must be a positive integer number of micro-dollars', type: 'value_error' },
    ]);
  }
  if (n > MAX_AMOUNT_MICROS) {
    const message = `must be at most ${MAX_AMOUNT_MICROS} micro-dollars (${formatDollars(MAX_AMOUNT_MICROS)}) at a time`;
    throw new DomainError('VALIDATION_ERROR', `${field} ${message}`, [{ field, message, type: 'less_than_equal' }]);
  }
};
/** Refused before anything is written: a balance over the maximum could no longer be summed exactly. */
const withinMaxBalance = (balanceAfter: number, field: string) => {
  if (balanceAfter > MAX_BALANCE_MICROS) {
    const message = `would take the balance to ${formatDollars(balanceAfter)}, over the maximum balance of ${formatDollars(MAX_BALANCE_MICROS)}`;
    throw new DomainError('VALIDATION_ERROR', `This credit ${message}`, [{ field, message, type: 'less_than_equal' }]);
  }
};
export const insufficientBalance = (neededMicros: number, balanceMicros: number) =>
  new DomainError(
    'INSUFFICIENT_BALANCE',
    `Insufficient balance: this needs ${formatDollars(neededMicros)} and the current balance is ${formatDollars(balanceMicros)}.`,
    undefined,
    { neededMicros, balanceMicros },
  );

/**
 * Why the account cannot hold one more number slot now, or null: the limit first (409), then a balance below
 * `requiredBalanceMicros` (402). ReserveNumberSlot decides with it; a request may ask it up front to refuse
 * before it records anything.
 */
export function numberSlotRefusal(s: AccountState, requiredBalanceMicros: number): DomainError | null {
  if (s.status !== 'open') return notFound();
  if (s.slotsUsed >= s.numberLimit) {
    return new DomainError(
      'NUMBER_LIMIT_REACHED',
      `Phone number limit reached: this account may provision ${s.numberLimit} numbers.`,
      undefined,
      { limit: s.numberLimit },
    );
  }
  if (s.balanceMicros < requiredBalanceMicros) return insufficientBalance(requiredBalanceMicros, s.balanceMicros);
  return null;
}

/** Why the account cannot pay `amountMicros` now, or null (a pre-check before paying an upstream provider). */
/** A charge applied before: its id remembered, or a number's month at or before the last one charged. */
function alreadyCharged(s: OpenAccountState, chargeId: string): boolean {
  const month = monthlyChargeOf(chargeId);
  if (month) return month.period <= (s.monthsCharged[month.numberId] ?? -1);
  return s.charges.has(chargeId);
}

export function chargeRefusal(s: AccountState, amountMicros: number): DomainError | null {
  if (s.status !== 'open') return notFound();
  return s.balanceMicros < amountMicros ? insufficientBalance(amountMicros, s.balanceMicros) : null;
}

export const accountDecider: Decider<AccountCommand, AccountEvent, AccountState> = {
  initialState: () => ({ status: 'none' }),

  decide: (cmd, s) => {
    const now = cmd.metadata.now;
    if (cmd.type === 'OpenAccount') {
      if (s.status !== 'none') return []; // the same id twice is a retry
      if (!Number.isSafeInteger(cmd.data.startingCreditMicros) || cmd.data.startingCreditMicros < 0) {
        throw new DomainError('VALIDATION_ERROR', 'startingCreditMicros must be a non-negative integer');
      }
      withinMaxBalance(cmd.data.startingCreditMicros, 'startingCreditMicros');
      const { initialKey, ...opened } = cmd.data;
      const events: AccountEvent[] = [{ type: 'AccountOpened', data: { ...opened, openedAt: now } }];
      if (initialKey) events.push({ type: 'ApiKeyIssued', data: { accountId: opened.accountId, ...initialKey, issuedAt: now } });
      return events;
    }
    if (s.status === 'none') throw notFound();
    if (s.status === 'closed') {
      if (cmd.type === 'CloseAccount') return [];
      throw notFound();
    }
    const accountId = s.accountId;
    switch (cmd.type) {
      case 'ActivateAccount':
        return s.activated ? [] : [{ type: 'AccountActivated', data: { accountId, activatedAt: now } }];
      case 'RenameAccount':
        return [{ type: 'AccountRenamed', data: { accountId, name: cmd.data.name, renamedAt: now } }];
      case 'CloseAccount':
        return [{ type: 'AccountClosed', data: { accountId, closedAt: now } }];
      case 'CreditAccount': {
        positiveMicros(cmd.data.amountMicros, 'amountMicros');
        withinMaxBalance(s.balanceMicros + cmd.data.amountMicros, 'amountMicros');
        return [
          {
            type: 'AccountCredited',
            data: {
              accountId,
              amountMicros: cmd.data.amountMicros,
              balanceMicros: s.balanceMicros + cmd.data.amountMicros,
              reason: cmd.data.reason,
              creditedAt: now,
            },
          },
        ];
      }
      case 'ChargeAccount': {
        if (alreadyCharged(s, cmd.data.chargeId)) return [];
        positiveMicros(cmd.data.amountMicros, 'amountMicros');
        if (s.balanceMicros < cmd.data.amountMicros) throw insufficientBalance(cmd.data.amountMicros, s.balanceMicros);
        const { chargeId, amountMicros, kind, description, reference } = cmd.data;
        return [
          {
            type: 'AccountCharged',
            data: {
              accountId,
              chargeId,
              amountMicros,
              kind,
              description,
              reference,
              balanceMicros: s.balanceMicros - amountMicros,
              chargedAt: now,
            },
          },
        ];
      }
      case 'IssueApiKey': {
        if (s.keys[cmd.data.keyId]) return [];
        const { keyId, name, prefix, keyHash } = cmd.data;
        return [{ type: 'ApiKeyIssued', data: { accountId, keyId, name, prefix, keyHash, issuedAt: now } }];
      }
      case 'RevokeApiKey':
        if (!s.keys[cmd.data.keyId]) throw new DomainError('API_KEY_NOT_FOUND', 'API key not found');
        if (s.keys[cmd.data.keyId] === 'revoked') return [];
        return [{ type: 'ApiKeyRevoked', data: { accountId, keyId: cmd.data.keyId, revokedAt: now } }];
      case 'SetNumberLimit':
        if (!Number.isSafeInteger(cmd.data.numberLimit) || cmd.data.numberLimit < 0)
          throw new DomainError('VALIDATION_ERROR', 'numberLimit must be a non-negative integer');
        if (cmd.data.numberLimit === s.numberLimit) return [];
        return [{ type: 'NumberLimitChanged', data: { accountId, numberLimit: cmd.data.numberLimit, changedAt: now } }];
      case 'ReserveNumberSlot': {
        if (s.slots[cmd.data.numberId] === 'held') return [];
        const refused = numberSlotRefusal(s, cmd.data.requiredBalanceMicros);
        if (refused) throw refused;
        return [
          { type: 'NumberSlotReserved', data: { accountId, numberId: cmd.data.numberId, slotsUsed: s.slotsUsed + 1, reservedAt: now } },
        ];
      }
      case 'ReleaseNumberSlot':
        if (s.slots[cmd.data.numberId] !== 'held') return [];
        return [
          {
            type: 'NumberSlotReleased',
            data: { accountId, numberId: cmd.data.numberId, slotsUsed: s.slotsUsed - 1, reason: cmd.data.reason, releasedAt: now },
          },
        ];
      default:
        return assertNever(cmd);
    }
  },

  evolve: (s, e) => {
    if (e.type === 'AccountOpened') {
      return {
        status: 'open',
        activated: e.data.pendingActivation !== true,
        accountId: e.data.accountId,
        parentAccountId: e.data.parentAccountId,
        balanceMicros: e.data.startingCreditMicros,
        numberLimit: e.data.numberLimit,
        keys: {},
        slots: {},
        slotsUsed: 0,
        charges: new Set(),
        monthsCharged: {},
      };
    }
    if (s.status === 'none') return s;
    switch (e.type) {
      case 'AccountActivated':
        return { ...s, activated: true };
      case 'AccountRenamed':
        return s;
      case 'AccountClosed':
        return { ...s, status: 'closed' };
      case 'AccountCredited':
        return { ...s, balanceMicros: e.data.balanceMicros };
      case 'AccountCharged': {
        // a lookup's charge id is new for every request, so it is never asked about again: not remembered
        if (e.data.kind === 'number_lookup') return { ...s, balanceMicros: e.data.balanceMicros };
        const month = monthlyChargeOf(e.data.chargeId);
        if (month)
          return {
            ...s,
            balanceMicros: e.data.balanceMicros,
            monthsCharged: { ...s.monthsCharged, [month.numberId]: Math.max(month.period, s.monthsCharged[month.numberId] ?? -1) },
          };
        return { ...s, balanceMicros: e.data.balanceMicros, charges: new Set(s.charges).add(e.data.chargeId) };
      }
      case 'ApiKeyIssued':
        return { ...s, keys: { ...s.keys, [e.data.keyId]: 'active' } };
      case 'ApiKeyRevoked':
        return { ...s, keys: { ...s.keys, [e.data.keyId]: 'revoked' } };
      case 'NumberLimitChanged':
        return { ...s, numberLimit: e.data.numberLimit };
      case 'NumberSlotReserved':
        return { ...s, slots: { ...s.slots, [e.data.numberId]: 'held' }, slotsUsed: e.data.slotsUsed };
      case 'NumberSlotReleased':
        return { ...s, slots: { ...s.slots, [e.data.numberId]: 'returned' }, slotsUsed: e.data.slotsUsed };
      default:
        return assertNever(e);
    }
  },

  // an account gains an event for every lookup charge: loads fold from a snapshot (docs/event-store.md#snapshots)
  snapshot: {
    version: 2,
    encode: (s) => (s.status === 'none' ? s : { ...s, charges: [...s.charges] }),
    decode: (json) => {
      const s = json as AccountState | (Omit<OpenAccountState, 'charges'> & { charges: string[] });
      return s.status === 'none' ? s : { ...s, charges: new Set(s.charges) };
    },
  },
};
