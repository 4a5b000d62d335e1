import { expect } from 'chai';
import { sql } from 'kysely';
import type { DatabaseHandle, Db } from '../../infrastructure/db/database.js';
import { BETWEEN_TABLES_MS, due, EmbeddedMaintenance, SAMPLED_TABLES } from '../../infrastructure/db/embedded-maintenance.js';
import { createLogger } from '../../infrastructure/logger.js';
import { freshDatabase } from '../support/stores.js';

const activity = (live: number, dead: number, modified: number) => ({
  relname: 't',
  n_live_tup: live,
  n_dead_tup: dead,
  n_mod_since_analyze: modified,
});

/** PostgreSQL's autovacuum thresholds, applied by the platform to PGlite (docs/event-store.md#embedded-maintenance). */
describe('embedded maintenance', function () {
  this.timeout(60_000);

  describe('thresholds', () => {
    it('analyzes after 50 + 10% of the rows changed', () => {
      expect(due(activity(1000, 0, 150))).to.deep.equal({ analyze: false, vacuum: false });
      expect(due(activity(1000, 0, 151))).to.deep.equal({ analyze: true, vacuum: false });
    });

    it('vacuums (and analyzes) once 50 + 20% are dead, not for rows inserted', () => {
      expect(due(activity(1000, 250, 0))).to.deep.equal({ analyze: false, vacuum: false });
      expect(due(activity(1000, 251, 0))).to.deep.equal({ analyze: true, vacuum: true });
      expect(due(activity(1000, 0, 1200))).to.deep.equal({ analyze: true, vacuum: false });
    });
  });

  describe('on PGlite', () => {
    let h: DatabaseHandle;
    let maintenance: EmbeddedMaintenance<Db>;
    before(async function () {
      // on a server, PostgreSQL's own autovacuum does this work, and its counters belong to other connections
      if (process.env.DATABASE_URL) this.skip();
      h = await freshDatabase();
      maintenance = new EmbeddedMaintenance(h.db, createLogger('silent'), 60_000);
    });
    after(() => h?.close());

    const planned = async () =>
      Number(
        (await sql<{ reltuples: number }>`select reltuples from pg_class where relname = 'sandbox_sms_receipts'`.execute(h.db)).rows[0]!
          .reltuples,
      );
    const insert = (from: number, to: number) =>
      sql`insert into sandbox_sms_receipts (receipt_id, copy, carrier_message_id, status, happened_at, due_at)
          select 'r' || g, 0, 'm' || g, 'sent', now(), now() from generate_series(${from}::int, ${to}::int) g`.execute(h.db);

    it('analyzes a table that grew, leaves it until it changes enough again, and vacuums it once many rows are dead', async () => {
      await maintenance.runOnce(); // whatever the migrations left
      await insert(1, 2000);
      // never analyzed: the planner does not know the table's size
      expect(await planned()).to.be.lessThan(1);

      const first = await maintenance.runOnce();
      expect(first.vacuumed).not.to.include('sandbox_sms_receipts');
      expect(first.analyzed).to.include('sandbox_sms_receipts');
      expect(await planned()).to.equal(2000);

      await insert(2001, 2100); // 100 rows: under 50 + 10% of 2,000
      const second = await maintenance.runOnce();
      expect(second.analyzed).not.to.include('sandbox_sms_receipts');

      // 1,000 rows updated: 1,000 dead rows, past 50 + 20% of 2,100
      await sql`update sandbox_sms_receipts set reported_at = now() where receipt_id in (select 'r' || g from generate_series(1, 1000) g)`.execute(
        h.db,
      );
      const third = await maintenance.runOnce();
      expect(third.vacuumed).to.include('sandbox_sms_receipts');
      const dead = await sql<{ n: string }>`select n_dead_tup as n from pg_stat_user_tables where relname = 'sandbox_sms_receipts'`.execute(
        h.db,
      );
      expect(Number(dead.rows[0]!.n)).to.equal(0);
    });

    it('analyzes the events table from a smaller sample, which keeps fewer common values', async () => {
      // 40 event types, the first 20 common: the default sample would keep all 40 as common values
      await sql`insert into events (transaction_id, event_id, stream_name, stream_category, stream_revision, event_type, data, metadata, created_at)
          select pg_current_xact_id(), gen_random_uuid(), 'bench-' || g, 'bench', 0, 'Type' || (g % 40), '{}'::jsonb, '{}'::jsonb, now()
            from generate_series(1, 4000) g`.execute(h.db);
      const pass = await maintenance.runOnce();
      expect(pass.analyzed).to.include('events');
      const stats = await sql<{ common: number; bounds: number }>`
        select coalesce(array_length(most_common_vals::text::text[], 1), 0) as common,
               coalesce(array_length(histogram_bounds::text::text[], 1), 0) as bounds
          from pg_stats where tablename = 'events' and attname = 'event_type'`.execute(h.db);
      const { common, bounds } = stats.rows[0]!;
      expect(common + bounds).to.be.greaterThan(0);
      // a statistics target of 10: at most 10 common values and 11 histogram bounds (the default's 100 keeps all 40)
      expect(SAMPLED_TABLES.events).to.equal(10);
      expect(common).to.be.at.most(10);
      expect(bounds).to.be.at.most(11);
      // the target was the transaction's own: a later analysis of another table samples as usual
      const after = await sql<{ t: string }>`select current_setting('default_statistics_target') as t`.execute(h.db);
      expect(after.rows[0]!.t).to.equal('100');
    });

    it('leaves a pause between two tables of one pass, for the statements of others to run in', async () => {
      await insert(10_001, 16_000);
      await sql`insert into events (transaction_id, event_id, stream_name, stream_category, stream_revision, event_type, data, metadata, created_at)
          select pg_current_xact_id(), gen_random_uuid(), 'pause-' || g, 'pause', 0, 'Paused', '{}'::jsonb, '{}'::jsonb, now()
            from generate_series(1, 8000) g`.execute(h.db);
      // each table's statement is logged as it ends
      const ended: { table: string; at: number }[] = [];
      const recording = {
        debug: (o: object) => ended.push({ table: (o as { table: string }).table, at: performance.now() }),
        info() {},
        warn() {},
        error() {},
      };
      const pass = await new EmbeddedMaintenance(h.db, recording, 60_000).runOnce();
      expect(pass.analyzed).to.include.members(['events', 'sandbox_sms_receipts']);
      expect(ended.map((e) => e.table)).to.deep.equal(pass.analyzed);
      for (let i = 1; i < ended.length; i++)
        expect(ended[i]!.at - ended[i - 1]!.at, `${ended[i - 1]!.table} → ${ended[i]!.table}`).to.be.at.least(BETWEEN_TABLES_MS);
    });
  });
});
