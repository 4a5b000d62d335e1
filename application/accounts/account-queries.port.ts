import type { Page, PageOf } from '../shared/page.js';

export type { Page, PageOf };

export type ApiKeyView = Readonly<{
  keyId: string;
  accountId: string;
  name: string;
  prefix: string;
  createdAt: string;
  revoked: boolean;
  revokedAt: string | null;
  lastUsedAt: string | null;
}>;
export type AccountView = Readonly<{
  accountId: string;
  parentAccountId: string | null;
  name: string;
  status: string;
  balanceMicros: number;
  numberLimit: number;
  numbersUsed: number;
  createdAt: string;
}>;

export type LedgerEntryView = Readonly<{
  id: string;
  kind: string;
  amountMicros: number;
  balanceMicros: number;
  description: string;
  reference: string | null;
  at: string;
}>;

export interface AccountQueries {
  /** the key with this hash and the account it belongs to, in one look-up (every authenticated request makes it) */
  keyWithAccount(keyHash: string): Promise<{ key: ApiKeyView; account: AccountView } | null>;
  key(accountId: string, keyId: string): Promise<ApiKeyView | null>;
  keys(accountId: string): Promise<ApiKeyView[]>;
  get(accountId: string): Promise<AccountView | null>;
  subAccounts(parentAccountId: string, page: Page): Promise<PageOf<AccountView>>;
  ledger(accountId: string, page: Page): Promise<PageOf<LedgerEntryView>>;
  /** Operational, not event-sourced: when a key was last used (written at most once a minute per key). */
  touchKey(keyId: string, at: Date): Promise<void>;
}
