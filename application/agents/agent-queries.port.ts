import type { AgentConfig } from '../../domain/agent/agent.js';
import type { Page, PageOf } from '../shared/page.js';

export type AgentNumberView = Readonly<{ id: string; phoneNumber: string; status: string; type: string }>;
export type AgentView = AgentConfig & Readonly<{ id: string; createdAt: string; numbers: AgentNumberView[] }>;

export interface AgentQueries {
  list(accountId: string, page: Page): Promise<PageOf<AgentView>>;
  get(accountId: string, agentId: string): Promise<AgentView | null>;
}
