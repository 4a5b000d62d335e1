import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { type Kysely, sql } from 'kysely';
import { type Checkpoint, compareCheckpoints, type RecordedEvent } from '../../application/ports/event-store.port.js';
import { ProjectionEngine } from '../../projections/shared/engine.js';
import type { BatchPipeline } from '../../projections/shared/pipelined-batch.js';
import type { Projector } from '../../projections/shared/projector.js';
import type { ReadDb } from '../../projections/shared/read-db.js';
import { ev } from '../support/fixtures.js';
import { eventually } from '../support/numbers.js';
import { type StoreUnderTest, storeUnderTest } from '../support/stores.js';

// Embedded, a projector's batch that neither read nor wrote sends nothing: its checkpoint is stored a moment later,
// with the next batch that writes, or when the projector stops (docs/event-store.md#untouched-batches).

const silent = { debug() {}, info() {}, warn() {}, error() {} };

describe('untouched batches', function () {
  this.timeout(30_000);
  let sut: StoreUnderTest;
  let db: Kysely<ReadDb>;
  let sent = 0;
  let pipeline: BatchPipeline;
  before(async () => {
    sut = await storeUnderTest();
    db = sut.handle.readDb;
    await sql`create table if not exists untouched_rows (event_id text primary key)`.execute(db);
    pipeline = async (statements) => {
      sent++;
      await sut.handle.pipeline!(statements);
    };
  });
  after(async () => {
    await sql`drop table if exists untouched_rows`.execute(db);
    await sut.close();
  });

  /** writes a row for the events whose data says `keep`, and nothing (reading nothing) for the others */
  const keeper = (type: string): Projector => {
    const applyBatch = async (trx: Kysely<ReadDb>, events: readonly RecordedEvent[]) => {
      for (const e of events)
        if ((e.data as { keep?: boolean }).keep)
          await (trx as unknown as Kysely<{ untouched_rows: { event_id: string } }>)
            .insertInto('untouched_rows')
            .values({ event_id: e.id })
            .execute();
    };
    return {
      name: `untouched_${randomUUID().slice(0, 8)}`,
      handles: new Set([type]),
      tables: [],
      pipelined: true,
      apply: (trx, e) => applyBatch(trx, [e]),
      applyBatch,
    };
  };
  const stored = async (name: string) =>
    (await db.selectFrom('projection_checkpoints').select('checkpoint').where('name', '=', name).executeTakeFirstOrThrow()).checkpoint;
  const rows = async () => (await sql<{ n: number }>`select count(*)::int as n from untouched_rows`.execute(db)).rows[0]!.n;

  async function running(p: Projector, storeUntouchedAfterMs: number) {
    const engine = new ProjectionEngine(sut.store, db, [p], silent, { pipeline, storeUntouchedAfterMs });
    const heard: Checkpoint[] = [];
    engine.onAdvanced((_, c) => heard.push(c));
    await engine.start();
    const append = async (...keep: boolean[]) => {
      const r = await sut.store.appendToStream(
        `untouched-${randomUUID()}`,
        keep.map((k) => ev([...p.handles][0]!, { keep: k })),
        { expectedRevision: 'no_stream' },
      );
      // every batch is told, untouched or not: read-your-writes waits on that
      await eventually(async () => heard.some((c) => compareCheckpoints(c, r.checkpoint) >= 0) || undefined, 'the batch told');
      return r.checkpoint;
    };
    return { engine, append };
  }

  it('stores the checkpoint of untouched batches with the next batch that writes, or at stop; sends nothing for them', async () => {
    const p = keeper(`Untouched${randomUUID().slice(0, 8)}`);
    const { engine, append } = await running(p, 60_000);
    try {
      const start = await stored(p.name);
      sent = 0;
      await append(false, false);
      await append(false);
      expect(sent, 'nothing sent for them').to.equal(0);
      expect(await stored(p.name)).to.equal(start);
      const kept = await append(false, true);
      expect(sent).to.equal(1);
      expect(await rows()).to.equal(1);
      expect(await stored(p.name), 'stored from where it was, past the untouched ones').to.equal(kept);
      const last = await append(false);
      expect(await stored(p.name)).to.equal(kept);
      await engine.stop();
      expect(await stored(p.name), 'stored at stop').to.equal(last);
    } finally {
      await engine.stop();
    }
  });

  it('stores it a moment after, when nothing else comes', async () => {
    const p = keeper(`Untouched${randomUUID().slice(0, 8)}`);
    const { engine, append } = await running(p, 50);
    try {
      const last = await append(false);
      await eventually(async () => (await stored(p.name)) === last || undefined, 'the untouched checkpoint stored');
    } finally {
      await engine.stop();
    }
  });
});
