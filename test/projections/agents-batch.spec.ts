import { expect } from 'chai';
import type { RecordedEvent } from '../../application/ports/event-store.port.js';
import { agentsProjector } from '../../projections/agents/agents.projector.js';
import { type Draft, draftedLog } from '../support/drafted-log.js';
import { seededRandom } from '../support/fixtures.js';
import { scratchSchemas } from '../support/scratch-schemas.js';

/** Random agents' histories (created, updated, the voice mode switched, deleted), interleaved as a log holds them. */
function history(seed: number): RecordedEvent[] {
  const rnd = seededRandom(seed);
  let clock = Date.parse('2026-05-01T08:00:00.000Z');
  const at = () => {
    clock += Math.floor(rnd() * 60_000);
    return new Date(clock).toISOString();
  };
  const things: Draft[][] = [];
  for (let i = 0; i < 40; i++) {
    const agentId = `agt_${seed}_${i}`;
    const accountId = `acc_${i % 3}`;
    const e = (type: string, data: Record<string, unknown>): Draft => ({
      stream: `agent-${agentId}`,
      type,
      data: { agentId, ...data },
      accountId,
    });
    const events: Draft[] = [
      e('AgentCreated', { accountId, config: { name: `Agent ${i}`, voiceMode: 'pipeline', prompt: `p${i}` }, createdAt: at() }),
    ];
    for (let k = 0; k < Math.floor(rnd() * 4); k++) {
      const voice = rnd() < 0.3;
      events.push(
        e('AgentUpdated', { changes: { name: `Agent ${i}.${k}`, ...(voice ? { voiceMode: 'realtime' } : {}) }, updatedAt: at() }),
      );
      if (voice) events.push(e('AgentVoiceModeSwitched', { from: 'pipeline', to: 'realtime', switchedAt: at() }));
    }
    if (rnd() < 0.3) events.push(e('AgentDeleted', { accountId, name: `Agent ${i}`, deletedAt: at() }));
    // some agents' first events are not in the log (their creation lies before it)
    things.push(rnd() < 0.1 ? events.slice(1) : events);
  }
  const { log, push } = draftedLog();
  const queues = things.filter((q) => q.length > 0);
  while (queues.length > 0) {
    // runs of creations side by side, as a burst of new agents lands in one batch
    const qi = rnd() < 0.5 ? 0 : Math.floor(rnd() * queues.length);
    const d = queues[qi]!.shift()!;
    if (queues[qi]!.length === 0) queues.splice(qi, 1);
    push(d, new Date(clock).toISOString());
  }
  return log;
}

/**
 * The agents projector's batches, which insert the agents created one after another in one statement, against its
 * handlers applied one event at a time: random batches, some applied twice (a replay), leave the same table.
 */
describe('agents projector: a batch equals its events one at a time', function () {
  this.timeout(120_000);
  let scratch: Awaited<ReturnType<typeof scratchSchemas>>;
  before(async () => {
    scratch = await scratchSchemas(['oracle_agents', 'batch_agents'], ['agents']);
  });
  after(() => scratch.close());

  for (const seed of [1, 2, 3]) {
    it(`history ${seed}: creations, updates, switches and deletions in random batches with replays`, async () => {
      const log = history(seed);
      const rnd = seededRandom(seed * 7919);
      await scratch.fresh();
      const { db } = scratch;
      const oracle = db.withSchema('oracle_agents');
      for (const e of log) await agentsProjector.apply(oracle, e);

      let statements = 0;
      for (let i = 0; i < log.length; ) {
        const n = 1 + Math.floor(rnd() * 30);
        const batch = log.slice(i, i + n);
        const counted = db.withSchema('batch_agents').withPlugin({
          transformQuery: (a) => {
            statements++;
            return a.node;
          },
          transformResult: async (a) => a.result,
        });
        await agentsProjector.applyBatch(counted, batch);
        if (rnd() < 0.2) await agentsProjector.applyBatch(db.withSchema('batch_agents'), batch); // a replay changes nothing
        i += n;
      }
      const expected = await scratch.dump('oracle_agents');
      expect(expected.agents!.length, 'agents').to.be.greaterThan(30);
      expect(
        expected.agents!.some((r) => (r as { deleted_at: unknown }).deleted_at !== null),
        'a deleted agent',
      ).to.equal(true);
      expect(await scratch.dump('batch_agents')).to.deep.equal(expected);
      // creations side by side went together: fewer statements than events
      expect(statements).to.be.lessThan(log.length);
    });
  }
});
