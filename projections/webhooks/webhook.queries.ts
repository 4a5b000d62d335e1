import { type Kysely, type Selectable, sql } from 'kysely';
import type { Checkpoint } from '../../application/ports/event-store.port.js';
import type {
  AllTimeStats,
  DeliveryAttemptView,
  DeliveryCounts,
  DeliveryStats,
  DeliveryStatus,
  DeliveryView,
  WebhookNoticeView,
  WebhookQueries,
  WebhookView,
} from '../../application/webhooks/webhook.port.js';
import { DISABLE_AFTER_EXHAUSTED } from '../../domain/webhook/webhook.js';
import './webhook-notices.projector.js';
import type { WebhookStatus } from '../../domain/webhook/webhook.js';
import { NOT_KEPT, type ReadKeeper } from '../shared/kept-reads.js';
import type { ReadDb } from '../shared/read-db.js';
import type { WebhookDeliveriesTable, WebhooksTable } from './tables.js';
import { webhooksProjector } from './webhooks.projector.js';

const iso = (d: Date | string) => new Date(d).toISOString();
const isoOrNull = (d: Date | string | null) => (d === null ? null : iso(d));
const HOUR_MS = 3_600_000;
/** jsonb comes back parsed from `pg` and PGlite; a string is parsed here in case a driver leaves it as text */
const eventsOf = (v: unknown): readonly string[] => (typeof v === 'string' ? (JSON.parse(v) as string[]) : (v as string[]));

const toWebhook = (r: Selectable<WebhooksTable>, openSecret: (stored: string) => string): WebhookView => ({
  id: r.webhook_id,
  url: r.url,
  secret: openSecret(r.secret),
  status: r.status as WebhookStatus,
  contextLimit: r.context_limit,
  timeout: r.timeout_seconds,
  createdAt: iso(r.created_at),
  updatedAt: iso(r.updated_at),
  agentId: r.agent_id,
  consecutiveFailures: r.consecutive_failures,
  events: eventsOf(r.events),
  createdPosition: r.created_position,
});

/** successRate: delivered share of all deliveries in the window, in percent with one decimal (0 when none). */
const rate = (success: number, total: number) => (total === 0 ? 0 : Math.round((success / total) * 1000) / 10);

/** Webhook configurations and the delivery log of one account; every query filters on `account_id`. */
export class KyselyWebhookQueries implements WebhookQueries {
  /** `openSecret` turns the stored (sealed) signing secret into the plain one the views carry */
  constructor(
    private readonly db: Kysely<ReadDb>,
    /** how far a projector's read model reflects the log (`ReadModelWaiter.reflected`) */
    private readonly reflected: (projector: string) => Promise<Checkpoint>,
    private readonly openSecret: (stored: string) => string = (s) => s,
    /** this read model's answers kept until its next batch, where every batch is heard (docs/event-store.md#kept-reads) */
    private readonly kept: ReadKeeper = NOT_KEPT,
  ) {}

  private readonly view = (r: Selectable<WebhooksTable>): WebhookView => toWebhook(r, this.openSecret);

  private live(accountId: string) {
    return this.db.selectFrom('webhooks').selectAll().where('account_id', '=', accountId).where('deleted_at', 'is', null);
  }

  async master(accountId: string): Promise<WebhookView | null> {
    const r = await this.live(accountId).where('scope_key', '=', accountId).where('agent_id', 'is', null).executeTakeFirst();
    return r ? this.view(r) : null;
  }

  async ofAgent(accountId: string, agentId: string): Promise<WebhookView | null> {
    const r = await this.live(accountId).where('scope_key', '=', agentId).where('agent_id', '=', agentId).executeTakeFirst();
    return r ? this.view(r) : null;
  }

  async byId(accountId: string, webhookId: string): Promise<WebhookView | null> {
    const look = async () => {
      const r = await this.live(accountId).where('webhook_id', '=', webhookId).executeTakeFirst();
      return r ? this.view(r) : null;
    };
    // every delivery's send asks it
    return this.kept.read(`id\u0000${accountId}\u0000${webhookId}`, look, { keepMissing: false });
  }

  async candidates(accountId: string, agentIds: readonly string[]): Promise<WebhookView[]> {
    const scopes = [accountId, ...new Set(agentIds)];
    // one query for all: the agents' own (scope = agent id) and the master (scope = account id)
    const look = async () => (await this.live(accountId).where('scope_key', 'in', scopes).execute()).map(this.view);
    // every dispatched batch asks it, for its accounts; a copy, so that no caller changes what is kept
    const kept = await this.kept.read(`candidates\u0000${scopes.join('\u0000')}`, look, { keepMissing: true });
    return [...(kept ?? [])];
  }

  /** embedded, what was heard of the projector's batches, with no statement (docs/webhooks.md#how-deliveries-flow) */
  configCheckpoint(): Promise<string> {
    return this.reflected(webhooksProjector.name);
  }

  private async withAttempts(rows: Selectable<WebhookDeliveriesTable>[]): Promise<DeliveryView[]> {
    if (rows.length === 0) return [];
    const attempts = await this.db
      .selectFrom('webhook_delivery_attempts')
      .selectAll()
      .where('account_id', '=', rows[0]!.account_id)
      .where(
        'delivery_id',
        'in',
        rows.map((r) => r.delivery_id),
      )
      .orderBy('delivery_id')
      .orderBy('attempt')
      .execute();
    const byDelivery = new Map<string, DeliveryAttemptView[]>();
    for (const a of attempts) {
      const list = byDelivery.get(a.delivery_id) ?? [];
      list.push({
        attempt: a.attempt,
        status: a.status as 'success' | 'failed',
        httpStatus: a.http_status,
        errorMessage: a.error_message,
        responseBody: a.response_body,
        responseTimeMs: a.duration_ms,
        attemptedAt: iso(a.attempted_at),
        nextRetryAt: isoOrNull(a.next_retry_at),
      });
      byDelivery.set(a.delivery_id, list);
    }
    return rows.map((r) => ({
      id: r.delivery_id,
      messageId: r.message_id,
      eventType: r.event_type,
      channel: r.channel,
      status: r.status as DeliveryStatus,
      httpStatus: r.http_status,
      errorMessage: r.error_message,
      responseBody: r.response_body,
      attemptCount: r.attempt_count,
      lastAttemptAt: isoOrNull(r.last_attempt_at),
      nextRetryAt: isoOrNull(r.next_retry_at),
      createdAt: iso(r.created_at),
      webhookId: r.webhook_id,
      agentId: r.agent_id,
      test: r.test,
      attempts: byDelivery.get(r.delivery_id) ?? [],
    }));
  }

  async delivery(accountId: string, deliveryId: string): Promise<DeliveryView | null> {
    const rows = await this.db
      .selectFrom('webhook_deliveries')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('delivery_id', '=', deliveryId)
      .execute();
    return (await this.withAttempts(rows))[0] ?? null;
  }

  async failedSince(accountId: string, since: string, limit: number): Promise<{ ids: string[]; more: boolean }> {
    const rows = await this.db
      .selectFrom('webhook_deliveries')
      .select('delivery_id')
      .where('account_id', '=', accountId)
      .where('status', '=', 'failed')
      .where('test', '=', false)
      .where('finished_at', '>=', since)
      .orderBy('finished_at')
      .orderBy('delivery_id')
      .limit(limit + 1)
      .execute();
    return { ids: rows.slice(0, limit).map((r) => r.delivery_id), more: rows.length > limit };
  }

  async notices(accountId: string, limit: number): Promise<WebhookNoticeView[]> {
    const rows = await this.db
      .selectFrom('webhook_notices as n')
      .leftJoin('webhooks as w', (j) => j.onRef('w.webhook_id', '=', 'n.webhook_id').onRef('w.account_id', '=', 'n.account_id'))
      .select([
        'n.notice_id',
        'n.kind',
        'n.webhook_id',
        'n.consecutive_failures',
        'n.at',
        'n.mail_status',
        'n.mailed_to',
        'w.url',
        'w.agent_id',
      ])
      .where('n.account_id', '=', accountId)
      .orderBy('n.at', 'desc')
      .orderBy('n.notice_id', 'desc')
      .limit(limit)
      .execute();
    return rows.map((r) => {
      const kind = r.kind as WebhookNoticeView['kind'];
      const n = r.consecutive_failures;
      const message =
        kind === 'disable_warning'
          ? `${n} deliveries in a row failed every attempt: one more and the webhook is disabled (at ${DISABLE_AFTER_EXHAUSTED}).`
          : kind === 'disabled'
            ? `${n} deliveries in a row failed every attempt: the webhook is disabled. Configure it again to make it active.`
            : 'A delivery succeeded: the webhook is active again.';
      return {
        id: r.notice_id,
        kind,
        webhookId: r.webhook_id,
        agentId: r.agent_id ?? null,
        url: r.url ?? null,
        consecutiveFailures: n,
        message,
        email: r.mail_status ? { status: r.mail_status as 'pending' | 'sent' | 'no_address', to: r.mailed_to } : null,
        at: iso(r.at),
      };
    });
  }

  async deliveries(accountId: string, q: { limit: number; offset: number; since: string | null }) {
    let base = this.db.selectFrom('webhook_deliveries').where('account_id', '=', accountId);
    if (q.since) base = base.where('created_at', '>=', q.since);
    const [rows, count] = await Promise.all([
      base.selectAll().orderBy('created_at', 'desc').orderBy('delivery_id', 'desc').limit(q.limit).offset(q.offset).execute(),
      base.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow(),
    ]);
    return { items: await this.withAttempts(rows), total: Number(count.n) };
  }

  async agentDeliveries(accountId: string, agentId: string, limit: number): Promise<DeliveryView[]> {
    const rows = await this.db
      .selectFrom('webhook_deliveries')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('webhook_agent_id', '=', agentId)
      .orderBy('created_at', 'desc')
      .orderBy('delivery_id', 'desc')
      .limit(limit)
      .execute();
    return this.withAttempts(rows);
  }

  async stats(accountId: string, since: string, now: string): Promise<DeliveryStats> {
    const hour = sql<string>`to_char(date_trunc('hour', created_at at time zone 'UTC'), 'YYYY-MM-DD"T"HH24":00:00.000Z"')`;
    const rows = await this.db
      .selectFrom('webhook_deliveries')
      .select(['event_type', 'status', hour.as('hour'), (eb) => eb.fn.countAll<string>().as('n')])
      .where('account_id', '=', accountId)
      .where('test', '=', false)
      .where('created_at', '>=', since)
      .groupBy(['event_type', 'status', sql`3`])
      .execute();
    const empty = (): { total: number; success: number; failed: number; pending: number } => ({
      total: 0,
      success: 0,
      failed: 0,
      pending: 0,
    });
    const totals = empty();
    const byEventType: Record<string, DeliveryCounts> = {};
    const hours = new Map<string, ReturnType<typeof empty>>();
    // every hour of the window, oldest first, so the series has no holes
    for (let t = Math.floor(Date.parse(since) / HOUR_MS) * HOUR_MS; t <= Date.parse(now); t += HOUR_MS)
      hours.set(new Date(t).toISOString(), empty());
    for (const r of rows) {
      const n = Number(r.n);
      const key = r.status === 'success' || r.status === 'failed' ? r.status : 'pending';
      byEventType[r.event_type] ??= empty();
      const ev = byEventType[r.event_type] as ReturnType<typeof empty>;
      const h = hours.get(r.hour) ?? empty();
      hours.set(r.hour, h);
      for (const c of [totals, ev, h]) {
        c.total += n;
        c[key] += n;
      }
    }
    return {
      ...totals,
      successRate: rate(totals.success, totals.total),
      byEventType,
      byHour: [...hours.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([h, c]) => ({ hour: h, ...c })),
    };
  }

  async allTime(accountId: string): Promise<AllTimeStats> {
    const rows = await this.db
      .selectFrom('webhook_deliveries')
      .select(['status', (eb) => eb.fn.countAll<string>().as('n')])
      .where('account_id', '=', accountId)
      .where('test', '=', false)
      .groupBy('status')
      .execute();
    const get = (s: string) => Number(rows.find((r) => r.status === s)?.n ?? 0);
    const total = rows.reduce((t, r) => t + Number(r.n), 0);
    return { total, success: get('success'), failed: get('failed'), successRate: rate(get('success'), total) };
  }
}
