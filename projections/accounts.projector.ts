import type { Kysely } from 'kysely';
import type { RecordedEvent } from '../application/ports/event-store.port.js';
import { accountEventTypes, type AccountEvent } from '../domain/account/account.decider.js';
import { assertNever } from '../domain/shared/types.js';
import { alreadyApplied, type Projector } from './shared/projector.js';
import type { ReadDb } from './shared/read-db.js';

/** accounts, api_keys and the ledger, all from the account stream; the account row's revision guards replays. */
export const accountsProjector: Projector = {
  name: 'accounts_v1',
  handles: new Set<string>(accountEventTypes),
  tables: ['accounts', 'api_keys', 'account_ledger'],
  async apply(db: Kysely<ReadDb>, raw: RecordedEvent) {
    const e = raw as unknown as RecordedEvent<AccountEvent>;
    const revision = String(e.streamRevision);
    const id = e.data.accountId;
    if (e.type === 'AccountOpened') {
      await db.insertInto('accounts').values({
        account_id: id, parent_account_id: e.data.parentAccountId, name: e.data.name, status: e.data.pendingActivation ? 'pending' : 'active',
        owner_email: e.data.owner?.email ?? null, project_id: e.data.owner?.projectId ?? null,
        balance_micros: String(e.data.startingCreditMicros), number_limit: e.data.numberLimit, numbers_used: 0, created_at: e.data.openedAt, revision,
      }).onConflict((oc) => oc.column('account_id').doNothing()).execute();
      if (e.data.startingCreditMicros > 0) {
        await db.insertInto('account_ledger').values({
          entry_id: e.id, account_id: id, seq: revision, kind: 'credit', amount_micros: String(e.data.startingCreditMicros),
          balance_micros: String(e.data.startingCreditMicros), description: 'starting credit', reference: null, at: e.data.openedAt,
        }).onConflict((oc) => oc.column('entry_id').doNothing()).execute();
      }
      return;
    }
    const row = await db.selectFrom('accounts').select('revision').where('account_id', '=', id).executeTakeFirst();
    if (!row || alreadyApplied(row.revision, e)) return;
    const account = db.updateTable('accounts').where('account_id', '=', id);
    switch (e.type) {
      case 'AccountActivated':
        await account.set({ status: 'active', revision }).execute();
        return;
      case 'AccountRenamed':
        await account.set({ name: e.data.name, revision }).execute();
        return;
      case 'AccountClosed':
        await account.set({ status: 'closed', revision }).execute();
        return;
      case 'AccountCredited':
        await account.set({ balance_micros: String(e.data.balanceMicros), revision }).execute();
        await db.insertInto('account_ledger').values({
          entry_id: e.id, account_id: id, seq: revision, kind: 'credit', amount_micros: String(e.data.amountMicros), balance_micros: String(e.data.balanceMicros),
          description: e.data.reason, reference: null, at: e.data.creditedAt,
        }).execute();
        return;
      case 'AccountCharged':
        await account.set({ balance_micros: String(e.data.balanceMicros), revision }).execute();
        await db.insertInto('account_ledger').values({
          entry_id: e.id, account_id: id, seq: revision, kind: e.data.kind, amount_micros: String(-e.data.amountMicros), balance_micros: String(e.data.balanceMicros),
          description: e.data.description, reference: e.data.reference, at: e.data.chargedAt,
        }).execute();
        return;
      case 'ApiKeyIssued':
        await db.insertInto('api_keys').values({
          key_id: e.data.keyId, account_id: id, name: e.data.name, prefix: e.data.prefix, key_hash: e.data.keyHash, created_at: e.data.issuedAt, revoked_at: null,
        }).execute();
        await account.set({ revision }).execute();
        return;
      case 'ApiKeyRevoked':
        await db.updateTable('api_keys').set({ revoked_at: e.data.revokedAt }).where('key_id', '=', e.data.keyId).execute();
        await account.set({ revision }).execute();
        return;
      case 'NumberLimitChanged':
        await account.set({ number_limit: e.data.numberLimit, revision }).execute();
        return;
      case 'NumberSlotReserved':
      case 'NumberSlotReleased':
        await account.set({ numbers_used: e.data.slotsUsed, revision }).execute();
        return;
      default:
        assertNever(e);
    }
  },
};
