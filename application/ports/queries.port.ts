import type { AgentConfig } from '../../domain/agent/agent.js';

export type Page = Readonly<{ limit: number; offset: number }>;
export type PageOf<T> = Readonly<{ data: T[]; total: number }>;

export type ApiKeyView = Readonly<{ keyId: string; accountId: string; name: string; prefix: string; createdAt: string; revoked: boolean }>;
export type AccountView = Readonly<{
  accountId: string; parentAccountId: string | null; name: string; status: string; balanceMicros: number; numberLimit: number; numbersUsed: number; createdAt: string;
}>;

export interface AccountQueries {
  keyByHash(keyHash: string): Promise<ApiKeyView | null>;
  get(accountId: string): Promise<AccountView | null>;
}

export type AgentNumberView = Readonly<{ id: string; phoneNumber: string; status: string; type: string }>;
export type AgentView = AgentConfig & Readonly<{ id: string; createdAt: string; numbers: AgentNumberView[] }>;

export interface AgentQueries {
  list(accountId: string, page: Page): Promise<PageOf<AgentView>>;
  get(accountId: string, agentId: string): Promise<AgentView | null>;
}
