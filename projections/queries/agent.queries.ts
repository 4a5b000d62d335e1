import type { Kysely } from 'kysely';
import type { AgentQueries, AgentView, Page, PageOf } from '../../application/ports/queries.port.js';
import type { AgentConfig } from '../../domain/agent/agent.js';
import type { AgentsTable, ReadDb } from '../shared/read-db.js';

const toView = (r: Pick<AgentsTable, 'agent_id' | 'config' | 'created_at'>): AgentView => ({
  id: r.agent_id,
  ...((typeof r.config === 'string' ? JSON.parse(r.config) : r.config) as AgentConfig),
  createdAt: new Date(r.created_at).toISOString(),
  numbers: [],
});

/** Agents of one account; deleted agents are gone from every read. */
export class KyselyAgentQueries implements AgentQueries {
  constructor(private readonly db: Kysely<ReadDb>) {}

  private live(accountId: string) {
    return this.db.selectFrom('agents').where('account_id', '=', accountId).where('deleted_at', 'is', null);
  }

  async list(accountId: string, page: Page): Promise<PageOf<AgentView>> {
    const [rows, count] = await Promise.all([
      this.live(accountId).select(['agent_id', 'config', 'created_at']).orderBy('created_at').orderBy('agent_id').limit(page.limit).offset(page.offset).execute(),
      this.live(accountId).select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow(),
    ]);
    return { data: rows.map(toView), total: Number(count.n) };
  }

  async get(accountId: string, agentId: string): Promise<AgentView | null> {
    const r = await this.live(accountId).select(['agent_id', 'config', 'created_at']).where('agent_id', '=', agentId).executeTakeFirst();
    return r ? toView(r) : null;
  }
}
