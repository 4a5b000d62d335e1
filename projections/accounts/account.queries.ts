import { type Kysely, type Selectable, sql } from 'kysely';
import type {
  AccountQueries,
  AccountView,
  ApiKeyView,
  LedgerEntryView,
  Page,
  PageOf,
} from '../../application/accounts/account-queries.port.js';
import { CompiledOnce } from '../shared/compiled-once.js';
import { NOT_KEPT, type ReadKeeper } from '../shared/kept-reads.js';
import type { ReadDb } from '../shared/read-db.js';
import type { AccountsTable, ApiKeysTable } from './tables.js';

const iso = (d: Date | string) => new Date(d).toISOString();
const isoOrNull = (d: Date | string | null | undefined) => (d ? iso(d) : null);

const toAccount = (r: Selectable<AccountsTable>): AccountView => ({
  accountId: r.account_id,
  parentAccountId: r.parent_account_id,
  name: r.name,
  status: r.status,
  balanceMicros: Number(r.balance_micros),
  numberLimit: r.number_limit,
  numbersUsed: r.numbers_used,
  createdAt: iso(r.created_at),
});

const toKey = (r: Selectable<ApiKeysTable> & { last_used_at: Date | string | null }): ApiKeyView => ({
  keyId: r.key_id,
  accountId: r.account_id,
  name: r.name,
  prefix: r.prefix,
  createdAt: iso(r.created_at),
  revoked: r.revoked_at !== null,
  revokedAt: isoOrNull(r.revoked_at),
  lastUsedAt: isoOrNull(r.last_used_at),
});

export class KyselyAccountQueries implements AccountQueries {
  private readonly touched = new Map<string, number>();
  /** one statement on every authenticated request: the account comes along as one json column */
  private readonly byHash;

  constructor(
    private readonly db: Kysely<ReadDb>,
    /** this read model's answers kept until its next batch, where every batch is heard (docs/event-store.md#kept-reads) */
    private readonly kept: ReadKeeper = NOT_KEPT,
  ) {
    this.byHash = new CompiledOnce(db, (db, v: { keyHash: string }) =>
      this.keysQuery(db)
        .innerJoin('accounts', 'accounts.account_id', 'api_keys.account_id')
        .select(sql<Selectable<AccountsTable>>`to_jsonb(accounts)`.as('account'))
        .where('key_hash', '=', v.keyHash),
    );
  }

  private keysQuery(db = this.db) {
    return db
      .selectFrom('api_keys')
      .leftJoin('api_key_usage', 'api_key_usage.key_id', 'api_keys.key_id')
      .selectAll('api_keys')
      .select('api_key_usage.last_used_at');
  }

  async keyWithAccount(keyHash: string): Promise<{ key: ApiKeyView; account: AccountView } | null> {
    const look = async () => {
      const r = await this.byHash.executeTakeFirst({ keyHash });
      return r ? { key: toKey(r), account: toAccount(r.account) } : null;
    };
    // every authenticated request asks it; anyone can send any key: only found ones are kept (docs/accounts.md#api-keys)
    return this.kept.read(keyHash, look, { keepMissing: false });
  }

  async key(accountId: string, keyId: string): Promise<ApiKeyView | null> {
    const r = await this.keysQuery().where('api_keys.account_id', '=', accountId).where('api_keys.key_id', '=', keyId).executeTakeFirst();
    return r ? toKey(r) : null;
  }

  async keys(accountId: string): Promise<ApiKeyView[]> {
    return (
      await this.keysQuery()
        .where('api_keys.account_id', '=', accountId)
        .orderBy('api_keys.created_at')
        .orderBy('api_keys.key_id')
        .execute()
    ).map(toKey);
  }

  async get(accountId: string): Promise<AccountView | null> {
    const r = await this.db.selectFrom('accounts').selectAll().where('account_id', '=', accountId).executeTakeFirst();
    return r ? toAccount(r) : null;
  }

  async subAccounts(parentAccountId: string, page: Page): Promise<PageOf<AccountView>> {
    const base = this.db.selectFrom('accounts').where('parent_account_id', '=', parentAccountId).where('status', '=', 'active');
    const [rows, count] = await Promise.all([
      base.selectAll().orderBy('created_at').orderBy('account_id').limit(page.limit).offset(page.offset).execute(),
      base.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow(),
    ]);
    return { data: rows.map(toAccount), total: Number(count.n) };
  }

  async ledger(accountId: string, page: Page): Promise<PageOf<LedgerEntryView>> {
    const base = this.db.selectFrom('account_ledger').where('account_id', '=', accountId);
    const [rows, count] = await Promise.all([
      base.selectAll().orderBy('seq', 'desc').limit(page.limit).offset(page.offset).execute(),
      base.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow(),
    ]);
    return {
      data: rows.map((r) => ({
        id: r.entry_id,
        kind: r.kind,
        amountMicros: Number(r.amount_micros),
        balanceMicros: Number(r.balance_micros),
        description: r.description,
        reference: r.reference,
        at: iso(r.at),
      })),
      total: Number(count.n),
    };
  }

  async touchKey(keyId: string, at: Date): Promise<void> {
    const last = this.touched.get(keyId);
    if (last !== undefined && at.getTime() - last < 60_000) return;
    this.touched.set(keyId, at.getTime());
    await this.db
      .insertInto('api_key_usage')
      .values({ key_id: keyId, last_used_at: at })
      .onConflict((oc) => oc.column('key_id').doUpdateSet({ last_used_at: at }))
      .execute();
  }
}
