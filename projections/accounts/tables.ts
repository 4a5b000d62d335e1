/** Kysely types of the accounts read models: accounts, their ledger, API keys and their use (migrations 002-004). */

export interface AccountsTable {
  account_id: string;
  parent_account_id: string | null;
  name: string;
  status: string;
  balance_micros: string | bigint;
  number_limit: number;
  numbers_used: number;
  owner_email: string | null;
  project_id: string | null;
  created_at: Date | string;
  revision: string | bigint;
}
export interface AccountLedgerTable {
  entry_id: string;
  account_id: string;
  /** the account stream's revision: the ledger's true order */
  seq: string | bigint;
  /** `credit` or a ChargeKind */
  kind: string;
  /** positive for credits, negative for charges */
  amount_micros: string | bigint;
  balance_micros: string | bigint;
  description: string;
  reference: string | null;
  at: Date | string;
}
export interface ApiKeysTable {
  key_id: string;
  account_id: string;
  name: string;
  prefix: string;
  key_hash: string;
  created_at: Date | string;
  revoked_at: Date | string | null;
}
export interface ApiKeyUsageTable {
  key_id: string;
  last_used_at: Date | string;
}

declare module '../shared/read-db.js' {
  interface ReadDb {
    accounts: AccountsTable;
    account_ledger: AccountLedgerTable;
    api_keys: ApiKeysTable;
    api_key_usage: ApiKeyUsageTable;
  }
}
