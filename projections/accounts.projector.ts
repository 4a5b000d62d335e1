import type { Kysely } from 'kysely';
import type { RecordedEvent } from '../application/ports/event-store.port.js';
import type { AccountEvent } from '../domain/account/account.decider.js';
import { accountEventTypes } from '../domain/account/account.decider.js';
import { alreadyApplied, type Projector } from './shared/projector.js';
import type { ReadDb } from './shared/read-db.js';

/** accounts + api_keys, both from the account stream; the account row's revision guards replays. */
export const accountsProjector: Projector = {
  name: 'accounts_v1',
  handles: new Set<string>(accountEventTypes),
  tables: ['accounts', 'api_keys'],
  async apply(db: Kysely<ReadDb>, raw: RecordedEvent) {
    const e = raw as unknown as RecordedEvent<AccountEvent>;
    const revision = String(e.streamRevision);
    if (e.type === 'AccountOpened') {
      await db.insertInto('accounts').values({
        account_id: e.data.accountId, parent_account_id: e.data.parentAccountId, name: e.data.name, status: 'active',
        balance_micros: String(e.data.startingCreditMicros), number_limit: e.data.numberLimit, created_at: e.data.openedAt, revision,
      }).onConflict((oc) => oc.column('account_id').doNothing()).execute();
      return;
    }
    const row = await db.selectFrom('accounts').select('revision').where('account_id', '=', e.data.accountId).executeTakeFirst();
    if (!row || alreadyApplied(row.revision, e)) return;
    switch (e.type) {
      case 'AccountCredited':
        await db.updateTable('accounts').set({ balance_micros: String(e.data.balanceMicros) }).where('account_id', '=', e.data.accountId).execute();
        break;
      case 'ApiKeyIssued':
        await db.insertInto('api_keys').values({
          key_id: e.data.keyId, account_id: e.data.accountId, name: e.data.name, prefix: e.data.prefix, key_hash: e.data.keyHash,
          created_at: e.data.issuedAt, revoked_at: null,
        }).execute();
        break;
      case 'ApiKeyRevoked':
        await db.updateTable('api_keys').set({ revoked_at: e.data.revokedAt }).where('key_id', '=', e.data.keyId).execute();
        break;
    }
    await db.updateTable('accounts').set({ revision }).where('account_id', '=', e.data.accountId).execute();
  },
};
