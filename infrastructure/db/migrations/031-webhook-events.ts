import { type Kysely, sql } from 'kysely';
import { DEFAULT_WEBHOOK_EVENTS } from '../../../domain/webhook/webhook.js';

/**
 * The events a webhook receives (docs/webhooks.md#choosing-events). Webhooks configured before the list
 * existed receive the default list, as their events read (infrastructure/event-store/upcasters.ts); from then
 * on the projector writes it.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const defaults = JSON.stringify(DEFAULT_WEBHOOK_EVENTS);
  await sql`alter table webhooks add column events jsonb not null default ${sql.lit(defaults)}::jsonb`.execute(db);
  await sql`alter table webhooks alter column events drop default`.execute(db);
}
