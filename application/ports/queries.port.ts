import type { AgentConfig } from '../../domain/agent/agent.js';

export type Page = Readonly<{ limit: number; offset: number }>;
export type PageOf<T> = Readonly<{ data: T[]; total: number }>;

export type ApiKeyView = Readonly<{
  keyId: string; accountId: string; name: string; prefix: string; createdAt: string; revoked: boolean; revokedAt: string | null; lastUsedAt: string | null;
}>;
export type AccountView = Readonly<{
  accountId: string; parentAccountId: string | null; name: string; status: string; balanceMicros: number; numberLimit: number; numbersUsed: number; createdAt: string;
}>;

export type LedgerEntryView = Readonly<{ id: string; kind: string; amountMicros: number; balanceMicros: number; description: string; reference: string | null; at: string }>;

export interface AccountQueries {
  keyByHash(keyHash: string): Promise<ApiKeyView | null>;
  key(accountId: string, keyId: string): Promise<ApiKeyView | null>;
  keys(accountId: string): Promise<ApiKeyView[]>;
  get(accountId: string): Promise<AccountView | null>;
  subAccounts(parentAccountId: string, page: Page): Promise<PageOf<AccountView>>;
  ledger(accountId: string, page: Page): Promise<PageOf<LedgerEntryView>>;
  /** Operational, not event-sourced: when a key was last used (written at most once a minute per key). */
  touchKey(keyId: string, at: Date): Promise<void>;
}

export type AgentNumberView = Readonly<{ id: string; phoneNumber: string; status: string; type: string }>;
export type AgentView = AgentConfig & Readonly<{ id: string; createdAt: string; numbers: AgentNumberView[] }>;

export interface AgentQueries {
  list(accountId: string, page: Page): Promise<PageOf<AgentView>>;
  get(accountId: string, agentId: string): Promise<AgentView | null>;
}
