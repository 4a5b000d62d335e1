import type { Kysely } from 'kysely';
import type { RecordedEvent } from '../../application/ports/event-store.port.js';
import type { AccountEvent } from '../../domain/account/account.decider.js';
import { guardedRow } from '../shared/guarded.js';
import { defineProjector, matched, rowRevision } from '../shared/projector.js';
import type { ReadDb } from '../shared/read-db.js';

/** The account row, guarded: matches only while the row reflects an older revision of the stream. */
const account = guardedRow(
  (db) => db.updateTable('accounts'),
  (e: RecordedEvent<AccountEvent>) => ({ account_id: e.data.accountId }),
);

type BalanceEvent = RecordedEvent<Extract<AccountEvent, { type: 'AccountCredited' | 'AccountCharged' }>>;

/** A ledger line (credits positive, charges negative), written only when the guarded balance update matched. */
async function ledgerEntry(
  db: Kysely<ReadDb>,
  e: BalanceEvent,
  line: { kind: string; amountMicros: number; description: string; reference: string | null; at: string },
): Promise<void> {
  if (!(await matched(account.where(db, e).set({ balance_micros: String(e.data.balanceMicros), revision: rowRevision(e) })))) return;
  await db
    .insertInto('account_ledger')
    .values({
      entry_id: e.id,
      account_id: e.data.accountId,
      seq: rowRevision(e),
      kind: line.kind,
      amount_micros: String(line.amountMicros),
      balance_micros: String(e.data.balanceMicros),
      description: line.description,
      reference: line.reference,
      at: line.at,
    })
    .execute();
}

/**
 * accounts, api_keys and the ledger, all from the account stream. The account row's revision guards replays
 * for all three tables: the ledger and key writes happen only when the guarded account update matched.
 */
export const accountsProjector = defineProjector<AccountEvent>({
  name: 'accounts_v1',
  tables: ['accounts', 'api_keys', 'account_ledger'],
  on: {
    async AccountOpened(db, e) {
      const revision = rowRevision(e);
      await db
        .insertInto('accounts')
        .values({
          account_id: e.data.accountId,
          parent_account_id: e.data.parentAccountId,
          name: e.data.name,
          status: e.data.pendingActivation ? 'pending' : 'active',
          owner_email: e.data.owner?.email ?? null,
          project_id: e.data.owner?.projectId ?? null,
          balance_micros: String(e.data.startingCreditMicros),
          number_limit: e.data.numberLimit,
          numbers_used: 0,
          created_at: e.data.openedAt,
          revision,
        })
        .onConflict((oc) => oc.column('account_id').doNothing())
        .execute();
      if (e.data.startingCreditMicros > 0) {
        await db
          .insertInto('account_ledger')
          .values({
            entry_id: e.id,
            account_id: e.data.accountId,
            seq: revision,
            kind: 'credit',
            amount_micros: String(e.data.startingCreditMicros),
            balance_micros: String(e.data.startingCreditMicros),
            description: 'starting credit',
            reference: null,
            at: e.data.openedAt,
          })
          .onConflict((oc) => oc.column('entry_id').doNothing())
          .execute();
      }
    },
    AccountActivated: (db, e) => account(db, e, { status: 'active' }),
    AccountRenamed: (db, e) => account(db, e, { name: e.data.name }),
    AccountClosed: (db, e) => account(db, e, { status: 'closed' }),
    async AccountCredited(db, e) {
      await ledgerEntry(db, e, {
        kind: 'credit',
        amountMicros: e.data.amountMicros,
        description: e.data.reason,
        reference: null,
        at: e.data.creditedAt,
      });
    },
    async AccountCharged(db, e) {
      const d = e.data;
      await ledgerEntry(db, e, {
        kind: d.kind,
        amountMicros: -d.amountMicros,
        description: d.description,
        reference: d.reference,
        at: d.chargedAt,
      });
    },
    async ApiKeyIssued(db, e) {
      if (!(await matched(account.where(db, e).set({ revision: rowRevision(e) })))) return;
      await db
        .insertInto('api_keys')
        .values({
          key_id: e.data.keyId,
          account_id: e.data.accountId,
          name: e.data.name,
          prefix: e.data.prefix,
          key_hash: e.data.keyHash,
          created_at: e.data.issuedAt,
          revoked_at: null,
        })
        .execute();
    },
    async ApiKeyRevoked(db, e) {
      if (!(await matched(account.where(db, e).set({ revision: rowRevision(e) })))) return;
      await db.updateTable('api_keys').set({ revoked_at: e.data.revokedAt }).where('key_id', '=', e.data.keyId).execute();
    },
    NumberLimitChanged: (db, e) => account(db, e, { number_limit: e.data.numberLimit }),
    NumberSlotReserved: (db, e) => account(db, e, { numbers_used: e.data.slotsUsed }),
    NumberSlotReleased: (db, e) => account(db, e, { numbers_used: e.data.slotsUsed }),
  },
});
