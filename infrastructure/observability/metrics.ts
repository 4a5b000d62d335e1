import client from 'prom-client';

/**
 * The platform's own cost counters on `/metrics` (docs/operations.md#what-an-operation-costs): what the database
 * and the event store did, counted where they do it, so that the cost of one text, one turn or one delivery can
 * be read off as the difference of two scrapes (`npm run bench:profile` does). prom-client's registry is global,
 * so a metric is registered once per process however many runtimes a test process starts.
 */
export const metric = <T>(name: string, make: () => T): T => (client.register.getSingleMetric(name) as T | undefined) ?? make();

export const costMetrics = {
  /** every statement sent to the database through Kysely, by its first keyword */
  statements: metric(
    'db_statements_total',
    () =>
      new client.Counter({
        name: 'db_statements_total',
        help: 'Statements sent to the database (through the query builder), by their first keyword',
        labelNames: ['verb'] as const,
      }),
  ),
  /** how long those statements took from send to answer (embedded: time the process's own thread spent in PGlite) */
  statementSeconds: metric(
    'db_statement_seconds_total',
    () => new client.Counter({ name: 'db_statement_seconds_total', help: 'Time from sending a statement to its answer, summed' }),
  ),
  /** round trips to the embedded database: a statement, or a pipelined batch (docs/event-store.md#pglite-on-its-own-thread) */
  embeddedMessages: metric(
    'db_embedded_messages_total',
    () =>
      new client.Counter({
        name: 'db_embedded_messages_total',
        help: 'Messages sent to the embedded database (PGlite): one statement each, or a pipelined batch of them',
      }),
  ),
  /** statements that appended events (one can carry many streams: docs/event-store.md#appending) */
  appendStatements: metric(
    'event_store_append_statements_total',
    () => new client.Counter({ name: 'event_store_append_statements_total', help: 'Statements that appended events' }),
  ),
  /** streams appended to (an append of one or more events to one stream) */
  appends: metric(
    'event_store_appends_total',
    () => new client.Counter({ name: 'event_store_appends_total', help: 'Appends to a stream (one or more events each) that wrote' }),
  ),
  events: metric(
    'event_store_events_appended_total',
    () => new client.Counter({ name: 'event_store_events_appended_total', help: 'Events appended' }),
  ),
  /** a subscription's reads of the log: `events` found some of its events, `empty` woke for nothing */
  subscriptionReads: metric(
    'event_store_subscription_reads_total',
    () =>
      new client.Counter({
        name: 'event_store_subscription_reads_total',
        help: "Reads of the log by a projector's or reactor's subscription, by subscription and whether it found events",
        labelNames: ['subscription', 'result'] as const,
      }),
  ),
};

/** Counts one statement, by its first keyword, and its time on `/metrics` (docs/operations.md#what-an-operation-costs). */
export function countStatement(sql: string, ms: number): void {
  let i = 0;
  while (i < sql.length && sql.charCodeAt(i) <= 32) i++;
  const m = /^[a-z]+/i.exec(sql.slice(i, i + 12));
  costMetrics.statements.inc({ verb: m ? m[0].toLowerCase() : 'other' });
  costMetrics.statementSeconds.inc(ms / 1000);
}
