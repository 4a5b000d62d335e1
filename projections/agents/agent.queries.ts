import type { Kysely } from 'kysely';
import type { Page, PageOf } from '../../application/accounts/account-queries.port.js';
import type { AgentQueries, AgentView } from '../../application/agents/agent-queries.port.js';
import type { AgentConfig } from '../../domain/agent/agent.js';
import type { ReadDb } from '../shared/read-db.js';
import type { AgentsTable } from './tables.js';

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

  /** The agents' active numbers in attach order (the first is the outbound default). */
  private async withNumbers(accountId: string, views: AgentView[]): Promise<AgentView[]> {
    if (views.length === 0) return views;
    const rows = await this.db
      .selectFrom('phone_numbers')
      .select(['agent_id', 'number_id', 'phone_number', 'status', 'type'])
      .where('account_id', '=', accountId)
      .where('status', '=', 'active')
      .where(
        'agent_id',
        'in',
        views.map((v) => v.id),
      )
      .orderBy('attached_order')
      .execute();
    return views.map((v) => ({
      ...v,
      numbers: rows
        .filter((r) => r.agent_id === v.id)
        .map((r) => ({ id: r.number_id, phoneNumber: r.phone_number ?? '', status: r.status, type: r.type })),
    }));
  }

  async list(accountId: string, page: Page): Promise<PageOf<AgentView>> {
    const [rows, count] = await Promise.all([
      this.live(accountId)
        .select(['agent_id', 'config', 'created_at'])
        .orderBy('created_at')
        .orderBy('agent_id')
        .limit(page.limit)
        .offset(page.offset)
        .execute(),
      this.live(accountId)
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .executeTakeFirstOrThrow(),
    ]);
    return { data: await this.withNumbers(accountId, rows.map(toView)), total: Number(count.n) };
  }

  async get(accountId: string, agentId: string): Promise<AgentView | null> {
    const r = await this.live(accountId).select(['agent_id', 'config', 'created_at']).where('agent_id', '=', agentId).executeTakeFirst();
    return r ? (await this.withNumbers(accountId, [toView(r)]))[0]! : null;
  }
}
