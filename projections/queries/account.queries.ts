import type { Kysely } from 'kysely';
import type { AccountQueries, AccountView, ApiKeyView } from '../../application/ports/queries.port.js';
import type { ReadDb } from '../shared/read-db.js';

const iso = (d: Date | string) => new Date(d).toISOString();

export class KyselyAccountQueries implements AccountQueries {
  constructor(private readonly db: Kysely<ReadDb>) {}

  async keyByHash(keyHash: string): Promise<ApiKeyView | null> {
    const r = await this.db.selectFrom('api_keys').selectAll().where('key_hash', '=', keyHash).executeTakeFirst();
    return r ? { keyId: r.key_id, accountId: r.account_id, name: r.name, prefix: r.prefix, createdAt: iso(r.created_at), revoked: r.revoked_at !== null } : null;
  }

  async get(accountId: string): Promise<AccountView | null> {
    const r = await this.db.selectFrom('accounts').selectAll().where('account_id', '=', accountId).executeTakeFirst();
    return r ? {
      accountId: r.account_id, parentAccountId: r.parent_account_id, name: r.name, status: r.status,
      balanceMicros: Number(r.balance_micros), numberLimit: r.number_limit, numbersUsed: r.numbers_used, createdAt: iso(r.created_at),
    } : null;
  }
}
