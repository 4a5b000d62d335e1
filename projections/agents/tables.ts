/** Kysely types of the agents read model (migration 002). */

export interface AgentsTable {
  agent_id: string;
  account_id: string;
  name: string;
  config: unknown;
  created_at: Date | string;
  deleted_at: Date | string | null;
  revision: string | bigint;
}

declare module '../shared/read-db.js' {
  interface ReadDb {
    agents: AgentsTable;
  }
}
