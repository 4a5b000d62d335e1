import { expect } from 'chai';
import { type Kysely, sql } from 'kysely';
import { makeCheckpoint, type RecordedEvent, START } from '../../application/ports/event-store.port.js';
import { type DatabaseHandle, openDatabase } from '../../infrastructure/db/database.js';
import { migrateToLatest } from '../../infrastructure/db/migrate.js';
import { callsProjector } from '../../projections/calls/calls.projector.js';
import { messagingProjector } from '../../projections/messaging/messaging.projector.js';
import { CheckpointMovedError, ensureCheckpoint, runBatch } from '../../projections/shared/engine.js';
import type { BatchPipeline } from '../../projections/shared/pipelined-batch.js';
import { matched, type Projector } from '../../projections/shared/projector.js';
import type { ReadDb } from '../../projections/shared/read-db.js';

// A projector whose batches read before they write sends its writes and its checkpoint as one message, embedded and
// on a server (docs/event-store.md#pipelined-batches); anything else it does falls back to the usual transaction.

type Tally = { id: string; n: number };
const loose = (db: Kysely<ReadDb>) => db as unknown as Kysely<{ tallies: Tally }>;

const event = (i: number, id: string): RecordedEvent =>
  ({
    id: `e${i}`,
    type: 'Counted',
    streamName: `tally-${id}`,
    streamRevision: BigInt(i),
    checkpoint: makeCheckpoint(BigInt(i + 1), BigInt(i + 1)),
    data: { id },
    metadata: { accountId: 'acc', correlationId: 'c', causationId: null, requestId: null, actor: 't' },
    createdAt: new Date(0).toISOString(),
  }) as unknown as RecordedEvent;

/** Counts events per id: reads the tallies it will move, then writes them; `readAfterWrite` reads once more at the end. */
function tallyProjector(name: string, o: { readAfterWrite?: boolean } = {}): Projector {
  const applyBatch = async (db: Kysely<ReadDb>, events: readonly RecordedEvent[]) => {
    const ids = [...new Set(events.map((e) => (e.data as { id: string }).id))];
    const rows = await loose(db).selectFrom('tallies').selectAll().where('id', 'in', ids).execute();
    const n = new Map(rows.map((r) => [r.id, r.n]));
    for (const e of events) {
      const id = (e.data as { id: string }).id;
      n.set(id, (n.get(id) ?? 0) + 1);
    }
    for (const [id, count] of n)
      await loose(db)
        .insertInto('tallies')
        .values({ id, n: count })
        .onConflict((oc) => oc.column('id').doUpdateSet({ n: count }))
        .execute();
    if (o.readAfterWrite) await loose(db).selectFrom('tallies').select('id').execute();
  };
  return { name, handles: new Set(['Counted']), tables: [], pipelined: true, apply: (db, e) => applyBatch(db, [e]), applyBatch };
}

describe('pipelined projector batches', function () {
  this.timeout(60_000);
  let h: DatabaseHandle;
  let sent: number;
  let pipeline: BatchPipeline;
  before(async function () {
    if (process.env.EVENTSTORE_URL) this.skip(); // the read models' database is the same as in (b)
    const url = process.env.DATABASE_URL;
    h = await openDatabase(url ? { databaseUrl: url, poolSize: 1 } : { thread: process.env.PGLITE_THREAD !== 'false' });
    await migrateToLatest(h.db as never);
    await sql`drop table if exists tallies`.execute(h.db);
    await h.readDb.deleteFrom('projection_checkpoints').where('name', 'like', 'tally_%').execute();
    await sql`create table tallies (id text primary key, n int not null check (n < 100))`.execute(h.db);
    pipeline = async (statements) => {
      sent++;
      await h.pipeline!(statements);
    };
  });
  beforeEach(async () => {
    sent = 0;
    if (h) await sql`truncate tallies`.execute(h.db);
  });
  after(async () => {
    if (!h) return;
    await sql`drop table if exists tallies`.execute(h.db);
    await h.close();
  });

  const tallies = async () =>
    Object.fromEntries((await loose(h.readDb).selectFrom('tallies').selectAll().orderBy('id').execute()).map((r) => [r.id, r.n]));
  const checkpoint = async (name: string) =>
    (await h.readDb.selectFrom('projection_checkpoints').select('checkpoint').where('name', '=', name).executeTakeFirstOrThrow())
      .checkpoint;

  it('writes the rows and moves the checkpoint in one message', async () => {
    const p = tallyProjector('tally_one');
    const from = await ensureCheckpoint(h.readDb, p.name);
    const batch = [event(0, 'a'), event(1, 'b'), event(2, 'a')];
    expect(await runBatch(h.readDb, p, from, batch, pipeline)).to.equal('stored');
    const to = batch[2]!.checkpoint;
    expect(sent).to.equal(1);
    expect(await tallies()).to.deep.equal({ a: 2, b: 1 });
    expect(await checkpoint(p.name)).to.equal(to);
    await runBatch(h.readDb, p, to, [event(3, 'b')], pipeline);
    expect(await tallies()).to.deep.equal({ a: 2, b: 2 });
  });

  it('applies a batch that reads after it wrote the usual way, with the same result', async () => {
    const p = tallyProjector('tally_reads_after', { readAfterWrite: true });
    const from = await ensureCheckpoint(h.readDb, p.name);
    const batch = [event(0, 'a'), event(1, 'a')];
    expect(await runBatch(h.readDb, p, from, batch, pipeline)).to.equal('stored');
    const to = batch[1]!.checkpoint;
    expect(sent).to.equal(0);
    expect(await tallies()).to.deep.equal({ a: 2 });
    expect(await checkpoint(p.name)).to.equal(to);
  });

  it('applies a batch that asks what a write matched (`matched`) the usual way, never as if it matched nothing', async () => {
    await loose(h.readDb).insertInto('tallies').values({ id: 'a', n: 1 }).execute();
    const p: Projector = {
      name: 'tally_matched',
      handles: new Set(['Counted']),
      tables: [],
      pipelined: true,
      apply: async () => undefined,
      // moves 'a', and only if that matched a row, writes 'b'
      applyBatch: async (db) => {
        if (await matched(loose(db).updateTable('tallies').set({ n: 2 }).where('id', '=', 'a')))
          await loose(db).insertInto('tallies').values({ id: 'b', n: 1 }).execute();
      },
    };
    const from = await ensureCheckpoint(h.readDb, p.name);
    expect(await runBatch(h.readDb, p, from, [event(0, 'a')], pipeline)).to.equal('stored');
    const to = event(0, 'a').checkpoint;
    expect(sent).to.equal(0);
    expect(await tallies()).to.deep.equal({ a: 2, b: 1 });
    expect(await checkpoint(p.name)).to.equal(to);
  });

  it('writes nothing when the checkpoint moved elsewhere', async () => {
    const p = tallyProjector('tally_moved');
    await ensureCheckpoint(h.readDb, p.name);
    const err = await runBatch(h.readDb, p, makeCheckpoint(7n, 7n), [event(0, 'a')], pipeline).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).to.be.instanceOf(CheckpointMovedError);
    expect(sent).to.equal(1);
    expect(await tallies()).to.deep.equal({});
    expect(await checkpoint(p.name)).to.equal(START);
  });

  it('keeps none of the batch when one of its writes fails', async () => {
    const p = tallyProjector('tally_fails');
    const from = await ensureCheckpoint(h.readDb, p.name);
    // 'b' passes the check's limit of 100, 'a' comes first and would be written
    const batch = [event(0, 'a'), ...Array.from({ length: 100 }, (_, i) => event(i + 1, 'b'))];
    const err = await runBatch(h.readDb, p, from, batch, pipeline).then(
      () => null,
      (e: { code?: string }) => e,
    );
    expect((err as { code?: string }).code).to.equal('23514');
    expect(await tallies()).to.deep.equal({});
    expect(await checkpoint(p.name)).to.equal(START);
    // and the connection goes on
    await runBatch(h.readDb, p, from, [event(0, 'a')], pipeline);
    expect(await tallies()).to.deep.equal({ a: 1 });
  });
  it('with leaveUntouched, sends nothing for a batch that neither read nor wrote, and leaves its checkpoint', async () => {
    // writes only the events about 'a'; reads only when told to
    const picky = (name: string, reads: boolean): Projector => {
      const applyBatch = async (db: Kysely<ReadDb>, events: readonly RecordedEvent[]) => {
        if (reads) await loose(db).selectFrom('tallies').select('id').execute();
        for (const e of events)
          if ((e.data as { id: string }).id === 'a')
            await loose(db)
              .insertInto('tallies')
              .values({ id: `${name}-${e.id}`, n: 1 })
              .execute();
      };
      return { name, handles: new Set(['Counted']), tables: [], pipelined: true, apply: (db, e) => applyBatch(db, [e]), applyBatch };
    };
    const p = picky('tally_untouched', false);
    const from = await ensureCheckpoint(h.readDb, p.name);
    expect(await runBatch(h.readDb, p, from, [event(0, 'b'), event(1, 'c')], pipeline, { leaveUntouched: true })).to.equal('untouched');
    expect(sent).to.equal(0);
    expect(await checkpoint(p.name)).to.equal(from);
    // the next batch that writes moves the checkpoint from where it is stored, past both
    expect(await runBatch(h.readDb, p, from, [event(2, 'a')], pipeline, { leaveUntouched: true })).to.equal('stored');
    expect(sent).to.equal(1);
    expect(await checkpoint(p.name)).to.equal(event(2, 'a').checkpoint);
    // without leaveUntouched (a server), and for a batch that read, the checkpoint is stored as before
    expect(await runBatch(h.readDb, p, event(2, 'a').checkpoint, [event(3, 'b')], pipeline)).to.equal('stored');
    expect(await checkpoint(p.name)).to.equal(event(3, 'b').checkpoint);
    const reader = picky('tally_untouched_reads', true);
    const start = await ensureCheckpoint(h.readDb, reader.name);
    expect(await runBatch(h.readDb, reader, start, [event(4, 'b')], pipeline, { leaveUntouched: true })).to.equal('stored');
    expect(await checkpoint(reader.name)).to.equal(event(4, 'b').checkpoint);
  });

  it("messaging_v1: an inbound message's MessageReceived sends nothing (its row reflects it from the start)", async () => {
    const from = await ensureCheckpoint(h.readDb, messagingProjector.name);
    const received = {
      ...event(0, 'm'),
      type: 'MessageReceived',
      streamName: 'message-msg_untouched',
      data: { messageId: 'msg_untouched', conversationId: 'conv_untouched' },
    } as unknown as RecordedEvent;
    expect(await runBatch(h.readDb, messagingProjector, from, [received], pipeline, { leaveUntouched: true })).to.equal('untouched');
    expect(sent).to.equal(0);
  });

  it('calls_v1: a call, its turns and its end go as one message, the same rows as applied event by event', async () => {
    const callId = 'call_pipelined';
    let position = 100;
    const e = (type: string, data: Record<string, unknown>, revision: number): RecordedEvent =>
      ({
        id: `${callId}-${revision}`,
        type,
        streamName: `call-${callId}`,
        streamRevision: BigInt(revision),
        checkpoint: makeCheckpoint(BigInt(++position), BigInt(position)),
        data: { callId, ...data },
        metadata: { accountId: 'acc_calls', correlationId: 'c', causationId: null, requestId: null, actor: 't' },
        createdAt: new Date(0).toISOString(),
      }) as unknown as RecordedEvent;
    const at = (s: number) => new Date(Date.UTC(2026, 10, 28, 12, 0, s)).toISOString();
    const settings = { recording: false, mode: 'webhook', voice: 'alloy', unknownVariables: [], metadata: { team: 'a' } };
    const placed = { accountId: 'acc_calls', agentId: 'agt_1', numberId: 'num_1', direction: 'inbound', settings };
    const caller = (k: number, words: string) => ({
      turnId: `t${k}`,
      transcript: words,
      confidence: 0.9,
      startedAt: at(k),
      endedAt: at(k + 1),
    });
    const agent = (k: number, words: string, spoken: string) => ({
      turnId: `t${k}`,
      text: words,
      spoken,
      interrupted: spoken !== words,
      source: 'webhook',
      replyTo: `t${k - 1}`,
      silentReason: null,
      latency: { requestMs: 3.4, firstByteMs: 12.6, speechStartMs: 0.4, recognitionMs: null, synthesisMs: null },
      actions: [{ type: 'transfer', value: '+15550100', outcome: 'refused', detail: 'no' }],
      startedAt: at(k),
      endedAt: at(k + 1),
    });
    const batch = [
      e('CallPlaced', { ...placed, from: '+15550001', to: '+15550002', placedAt: at(0) }, 0),
      e('CallAnswered', { at: at(1), answeredBy: 'human', engineCallId: 'eng_1' }, 1),
      e('CallerTurnRecorded', caller(2, 'Hello there'), 2),
      e('AgentTurnRecorded', agent(3, 'Hi, how can I help?', 'Hi, how'), 3),
      e('CallerTurnRecorded', caller(4, '   '), 4),
      e(
        'CallEnded',
        {
          endedAt: at(9),
          durationSeconds: 8,
          reason: 'user_hangup',
          detail: null,
          answeredAt: at(1),
          answeredBy: 'human',
          summary: null,
          userSentiment: null,
          callSuccessful: null,
          recording: false,
        },
        5,
      ),
    ];
    const rows = async () => ({
      calls: await h.readDb.selectFrom('calls').selectAll().where('call_id', '=', callId).execute(),
      turns: await h.readDb.selectFrom('call_turns').selectAll().where('call_id', '=', callId).orderBy('seq').execute(),
    });
    const clear = async () => {
      await h.readDb.deleteFrom('call_turns').where('call_id', '=', callId).execute();
      await h.readDb.deleteFrom('calls').where('call_id', '=', callId).execute();
    };

    await ensureCheckpoint(h.readDb, callsProjector.name);
    const from = (await checkpoint(callsProjector.name)) as string;
    await runBatch(h.readDb, callsProjector, from, batch, pipeline);
    expect(sent).to.equal(1);
    const piped = await rows();
    expect(piped.turns.map((t) => [t.seq, t.turn_id, t.role, t.spoken])).to.deep.equal([
      [1, 't2', 'user', 'Hello there'],
      [2, 't3', 'agent', 'Hi, how'],
      [3, 't4', 'user', '   '],
    ]);
    expect(piped.calls[0]).to.include({ turn_count: 3, last_transcript_snippet: 'Hi, how', status: 'completed' });
    // a replay of the batch (its checkpoint put back) matches no row: nothing changes
    await h.readDb.updateTable('projection_checkpoints').set({ checkpoint: from }).where('name', '=', callsProjector.name).execute();
    await runBatch(h.readDb, callsProjector, from, batch, pipeline);
    expect(await rows()).to.deep.equal(piped);

    await clear();
    for (const ev of batch) await callsProjector.apply(h.readDb, ev);
    expect(await rows()).to.deep.equal(piped);
    await clear();
  });
});
