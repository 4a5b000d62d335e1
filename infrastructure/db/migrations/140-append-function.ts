import { type Kysely, sql } from 'kysely';

/**
 * The append as one server-side function (docs/event-store.md#appending): the stream row's compare-and-set and
 * the events insert run in one statement, so an append is one round trip instead of five (BEGIN, the
 * idempotency read, the compare-and-set, the insert, COMMIT). Every guarantee stays where it was: the stream
 * row serialises writers of one stream, `(stream_name, stream_revision)` and `event_id` stay unique, and each
 * row carries `pg_current_xact_id()` for the readers' visibility rule.
 *
 * It answers one row: `ok` with the last revision and checkpoint written; `replay` when the compare-and-set
 * failed because these very event ids are already the stream's (a client retry): the same answer as the first
 * time, nothing written; `conflict` with the stream's current revision (-1: no stream) otherwise. Event ids
 * that exist elsewhere raise the unique violation, which the adapter sorts out on its slow path.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create or replace function append_events(
      p_stream text, p_category text, p_mode text, p_expected bigint,
      p_ids uuid[], p_types text[], p_data jsonb[], p_metadata jsonb[], p_created_at timestamptz
    ) returns table (outcome text, revision bigint, global_position bigint, transaction_id text)
    language plpgsql as $fn$
    #variable_conflict use_column
    declare
      n constant bigint := cardinality(p_ids);
      v_last bigint;
      v_pos bigint;
      v_found bigint;
      v_bases bigint;
    begin
      if p_mode = 'no_stream' then
        insert into streams as s (stream_name, revision) values (p_stream, n - 1)
          on conflict (stream_name) do nothing
          returning s.revision into v_last;
      elsif p_mode = 'any' then
        insert into streams as s (stream_name, revision) values (p_stream, n - 1)
          on conflict (stream_name) do update set revision = s.revision + n
          returning s.revision into v_last;
      else -- 'exact' (p_expected) or 'stream_exists'
        update streams as s set revision = s.revision + n
         where s.stream_name = p_stream and (p_mode = 'stream_exists' or s.revision = p_expected)
         returning s.revision into v_last;
      end if;

      if v_last is null then
        -- the compare-and-set failed: a retry of an append that is already stored, or a real conflict
        select count(*), count(distinct e.stream_revision - u.ord), max(e.stream_revision), max(e.global_position)
          into v_found, v_bases, v_last, v_pos
          from unnest(p_ids) with ordinality as u(id, ord)
          join events e on e.event_id = u.id and e.stream_name = p_stream;
        if v_found = n and v_bases = 1 then
          return query select 'replay'::text, v_last, v_pos,
            (select e.transaction_id::text from events e where e.global_position = v_pos);
          return;
        end if;
        return query select 'conflict'::text, coalesce((select s.revision from streams s where s.stream_name = p_stream), -1::bigint),
          null::bigint, null::text;
        return;
      end if;

      with ins as (
        insert into events (transaction_id, event_id, stream_name, stream_category, stream_revision, event_type, data, metadata, created_at)
        select pg_current_xact_id(), u.id, p_stream, p_category, v_last - n + u.ord, u.type, u.data, u.meta, p_created_at
          from unnest(p_ids, p_types, p_data, p_metadata) with ordinality as u(id, type, data, meta, ord)
         order by u.ord
        returning events.global_position
      )
      select max(ins.global_position) into v_pos from ins;
      return query select 'ok'::text, v_last, v_pos, pg_current_xact_id()::text;
    end
    $fn$`.execute(db);

  // Appends to several streams in one statement, so in one transaction and one commit: each stream's append is
  // checked and answered on its own (a conflict does not stop the others); streams are taken in name order,
  // so two concurrent batches never wait on each other's rows in a cycle.
  await sql`
    create or replace function append_events_many(p_appends jsonb, p_created_at timestamptz)
    returns table (idx int, outcome text, revision bigint, global_position bigint, transaction_id text)
    language plpgsql as $fn$
    #variable_conflict use_column
    declare
      a record;
    begin
      for a in
        select (x.ord - 1)::int as i, x.v from jsonb_array_elements(p_appends) with ordinality as x(v, ord)
         order by x.v->>'stream', x.ord
      loop
        return query select a.i, r.outcome, r.revision, r.global_position, r.transaction_id
          from append_events(
            a.v->>'stream', a.v->>'category', a.v->>'mode', (a.v->>'expected')::bigint,
            array(select (e.v->>'id')::uuid from jsonb_array_elements(a.v->'events') with ordinality e(v, o) order by e.o),
            array(select e.v->>'type' from jsonb_array_elements(a.v->'events') with ordinality e(v, o) order by e.o),
            array(select e.v->'data' from jsonb_array_elements(a.v->'events') with ordinality e(v, o) order by e.o),
            array(select e.v->'metadata' from jsonb_array_elements(a.v->'events') with ordinality e(v, o) order by e.o),
            p_created_at) r;
      end loop;
    end
    $fn$`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop function if exists append_events_many(jsonb, timestamptz)`.execute(db);
  await sql`drop function if exists append_events(text, text, text, bigint, uuid[], text[], jsonb[], jsonb[], timestamptz)`.execute(db);
}
