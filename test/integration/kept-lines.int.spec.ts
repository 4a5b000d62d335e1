import { expect } from 'chai';
import type { Kysely } from 'kysely';
import type { DatabaseHandle } from '../../infrastructure/db/database.js';
import { KyselyChatappQueries } from '../../projections/chatapp/chatapp.queries.js';
import { KyselyNumberQueries } from '../../projections/numbers/number.queries.js';
import { KeptReads } from '../../projections/shared/kept-reads.js';
import type { ReadDb } from '../../projections/shared/read-db.js';
import { freshDatabase } from '../support/stores.js';

/** The same database, counting the statements run through it. */
function counted(db: Kysely<ReadDb>): { db: Kysely<ReadDb>; statements: () => number } {
  let n = 0;
  const wrapped = db.withPlugin({
    transformQuery: (a) => {
      n++;
      return a.node;
    },
    transformResult: async (a) => a.result,
  });
  return { db: wrapped, statements: () => n };
}

/**
 * A send by agent asks for the agent's numbers and its chat-app lines (docs/event-store.md#kept-reads): both answers
 * are kept until the projector of their read model commits its next batch, and read again after it.
 */
describe("kept reads of an agent's sending lines", function () {
  this.timeout(60_000);
  let handle: DatabaseHandle;
  const account = 'acc_kept_lines';
  const now = '2026-05-04T10:00:00.000Z';
  before(async () => {
    handle = await freshDatabase();
  });
  after(() => handle.close());
  const kept = () => new KeptReads({ maxEntries: 100, maxAgeMs: 60_000, now: () => performance.now() });

  it("keeps an agent's numbers until the numbers' projector commits a batch", async () => {
    const c = counted(handle.db as unknown as Kysely<ReadDb>);
    const k = kept();
    const q = new KyselyNumberQueries(c.db, k);
    const agent = `agent_${crypto.randomUUID()}`;
    expect(await q.attachedTo(account, agent)).to.deep.equal([]);
    expect(await q.attachedTo(account, agent)).to.deep.equal([]);
    expect(c.statements()).to.equal(1);
    await (handle.db as unknown as Kysely<ReadDb>)
      .insertInto('phone_numbers')
      .values({
        account_id: account,
        number_id: `num_${agent}`,
        phone_number: '+13125550100',
        country: 'US',
        area_code: '312',
        type: 'local',
        status: 'active',
        agent_id: agent,
        attached_order: '1',
        active_order: '1',
        sip_trunk_id: null,
        carrier_id: null,
        renewal_status: 'active',
        paid_through: now,
        failure_code: null,
        requested_at: now,
        created_at: now,
        released_at: null,
        revision: '0',
      })
      .execute();
    // what the read model says is answered once its projector says it moved
    expect(await q.attachedTo(account, agent)).to.deep.equal([]);
    k.moved();
    expect(await q.attachedTo(account, agent)).to.deep.equal([`num_${agent}`]);
    expect(await q.attachedTo(account, agent)).to.deep.equal([`num_${agent}`]);
    expect(c.statements()).to.equal(2);
  });

  it("keeps an agent's chat-app lines, none included, per set of its numbers, until the chat-app projector commits a batch", async () => {
    const c = counted(handle.db as unknown as Kysely<ReadDb>);
    const k = kept();
    const q = new KyselyChatappQueries(c.db, k);
    const agent = `agent_${crypto.randomUUID()}`;
    expect(await q.boundLinesOf(account, { agentId: agent, lineIds: [] })).to.deep.equal([]);
    expect(await q.boundLinesOf(account, { agentId: agent, lineIds: [] })).to.deep.equal([]);
    expect(c.statements()).to.equal(1);
    // another set of numbers is another question
    expect(await q.boundLinesOf(account, { agentId: agent, lineIds: ['num_other'] })).to.deep.equal([]);
    expect(c.statements()).to.equal(2);
    await (handle.db as unknown as Kysely<ReadDb>)
      .insertInto('chatapp_numbers')
      .values({
        binding_id: `bind_${agent}`,
        account_id: account,
        connection_id: 'conn_1',
        phone_number_id: 'pn_1',
        phone_number: '+13125550199',
        verified_name: 'Kept',
        agent_id: agent,
        line_id: `bind_${agent}`,
        native_number_id: null,
        status: 'bound',
        failure_reason: null,
        created_at: now,
        updated_at: now,
        revision: '0',
      })
      .execute();
    expect(await q.boundLinesOf(account, { agentId: agent, lineIds: [] })).to.deep.equal([]);
    k.moved();
    const lines = await q.boundLinesOf(account, { agentId: agent, lineIds: [] });
    expect(lines.map((l) => l.phoneNumber)).to.deep.equal(['+13125550199']);
    expect(c.statements()).to.equal(3);
  });
});
