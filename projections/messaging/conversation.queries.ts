import { type Kysely, type Selectable, sql } from 'kysely';
import type {
  ConversationMessageView,
  ConversationQueries,
  ConversationView,
  CursorQuery,
  OptOutView,
  ReactionView,
} from '../../application/messaging/conversation-queries.port.js';
import type { Page, PageOf } from '../../application/shared/page.js';
import type { HistoryItem } from '../../domain/webhook/webhook.js';
import { CompiledOnce } from '../shared/compiled-once.js';
import type { ReadDb } from '../shared/read-db.js';
import type { ConversationsTable, MessagesTable } from './tables.js';

const iso = (d: Date | string) => new Date(d).toISOString();
const isoOrNull = (d: Date | string | null) => (d === null ? null : iso(d));
const json = <T>(v: unknown): T => (typeof v === 'string' ? JSON.parse(v) : v) as T;

const toConversation = (r: Selectable<ConversationsTable>): ConversationView => ({
  id: r.conversation_id,
  accountId: r.account_id,
  agentId: r.agent_id,
  phoneNumberId: r.phone_number_id,
  phoneNumber: r.phone_number,
  participant: r.participant,
  channel: r.channel,
  isGroup: r.is_group,
  groupId: r.group_id,
  groupName: r.group_name,
  groupIconUrl: r.group_icon_url,
  participants: r.participants === null ? null : json<string[]>(r.participants),
  lastMessageAt: iso(r.last_message_at),
  lastMessagePreview: r.last_message_preview,
  messageCount: r.message_count,
  createdAt: iso(r.created_at),
  conversationState: r.conversation_state === null ? null : json<Record<string, unknown>>(r.conversation_state),
  inboundCount: r.inbound_count,
  outboundSinceReply: r.outbound_since_reply,
  reengagementLocked: r.reengagement_locked,
});

const toMessage = (r: Selectable<MessagesTable>, reactions: ReactionView[]): ConversationMessageView => ({
  id: r.message_id,
  conversationId: r.conversation_id,
  phoneNumberId: r.phone_number_id,
  agentId: r.agent_id,
  body: r.body,
  fromNumber: r.from_number,
  toNumber: r.to_number,
  direction: r.direction === 'inbound' ? 'inbound' : 'outbound',
  channel: r.channel,
  status: r.status,
  failureReason: r.failure_reason,
  errorCode: r.error_code,
  failureCategory: r.failure_category,
  retryable: r.retryable,
  encoding: r.encoding,
  segments: r.segments,
  mediaUrls: json<string[]>(r.media_urls) ?? [],
  receivedAt: iso(r.created_at),
  deliveredAt: isoOrNull(r.delivered_at),
  readAt: isoOrNull(r.read_at),
  replyToMessageId: r.reply_to_message_id,
  reactions,
});

/** Conversations and messages from the messaging read models (docs/messaging.md#reading). */
/** provider ids remembered (docs/messaging.md#receipts): a message's second receipt finds it without a statement */
const PROVIDER_IDS_KEPT = 10_000;

export class KyselyConversationQueries implements ConversationQueries {
  /** provider id (and the channels asked) → its message: a row of `message_carrier_ids` never changes once written */
  private readonly providerIds = new Map<string, { accountId: string; messageId: string }>();

  /**
   * The recent messages of a dispatched batch's conversations, for their webhooks' payloads (every inbound text;
   * docs/event-store.md#compiled-once): each conversation's newest, read through its index whatever its history's
   * length (docs/webhooks.md#payload-context), in the order of the conversations given, newest first.
   */
  private readonly recent;
  /** the caller-written state of a dispatched batch's conversations (every inbound text) */
  private readonly states;

  constructor(private readonly db: Kysely<ReadDb>) {
    this.recent = new CompiledOnce(db, (db, v: { accountIds: readonly string[]; conversationIds: readonly string[]; limit: number }) =>
      db
        .selectFrom(
          sql<{
            account_id: string;
            conversation_id: string;
            n: string;
          }>`unnest(${v.accountIds}::text[], ${v.conversationIds}::text[]) with ordinality`.as<'q'>(sql`q(account_id, conversation_id, n)`),
        )
        .innerJoinLateral(
          (eb) =>
            eb
              .selectFrom('messages')
              .select(['account_id', 'conversation_id', 'message_id', 'body', 'direction', 'channel', 'created_at'])
              .whereRef('messages.account_id', '=', 'q.account_id')
              .whereRef('messages.conversation_id', '=', 'q.conversation_id')
              .orderBy('created_at', 'desc')
              .orderBy('message_id', 'desc')
              .limit(v.limit)
              .as('m'),
          (join) => join.onTrue(),
        )
        .select(['m.account_id', 'm.conversation_id', 'm.message_id', 'm.body', 'm.direction', 'm.channel', 'm.created_at'])
        .orderBy('q.n')
        .orderBy('m.created_at', 'desc')
        .orderBy('m.message_id', 'desc'),
    );
    this.states = new CompiledOnce(db, (db, v: { accountIds: readonly string[]; conversationIds: readonly string[] }) =>
      db
        .selectFrom('conversations')
        .select(['account_id', 'conversation_id', 'conversation_state'])
        .where((eb) => eb('account_id', '=', eb.fn.any(eb.val(v.accountIds))))
        .where((eb) => eb('conversation_id', '=', eb.fn.any(eb.val(v.conversationIds)))),
    );
  }

  async list(accountId: string, page: Page, o: { agentId?: string } = {}): Promise<PageOf<ConversationView>> {
    let q = this.db.selectFrom('conversations').where('account_id', '=', accountId);
    if (o.agentId) q = q.where('agent_id', '=', o.agentId);
    const [rows, count] = await Promise.all([
      q.selectAll().orderBy('last_message_at', 'desc').orderBy('conversation_id').limit(page.limit).offset(page.offset).execute(),
      q.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow(),
    ]);
    return { data: rows.map(toConversation), total: Number(count.n) };
  }

  async get(accountId: string, conversationId: string): Promise<ConversationView | null> {
    const r = await this.db
      .selectFrom('conversations')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('conversation_id', '=', conversationId)
      .executeTakeFirst();
    return r ? toConversation(r) : null;
  }

  messages(accountId: string, conversationId: string, q: CursorQuery) {
    return this.page(accountId, 'conversation_id', conversationId, q);
  }

  numberMessages(accountId: string, numberId: string, q: CursorQuery) {
    return this.page(accountId, 'phone_number_id', numberId, q);
  }

  private async page(accountId: string, column: 'conversation_id' | 'phone_number_id', id: string, q: CursorQuery) {
    let query = this.db.selectFrom('messages').selectAll().where('account_id', '=', accountId).where(column, '=', id);
    if (q.before) query = query.where('created_at', '<', q.before);
    if (q.after) query = query.where('created_at', '>', q.after);
    const rows = await query
      .orderBy('created_at', 'desc')
      .orderBy('message_id', 'desc')
      .limit(q.limit + 1)
      .execute();
    const page = rows.slice(0, q.limit);
    const reactions = await this.reactionsOf(page.map((r) => r.message_id));
    return { data: page.map((r) => toMessage(r, reactions.get(r.message_id) ?? [])), hasMore: rows.length > q.limit };
  }

  private async reactionsOf(messageIds: string[]): Promise<Map<string, ReactionView[]>> {
    const out = new Map<string, ReactionView[]>();
    if (messageIds.length === 0) return out;
    const rows = await this.db
      .selectFrom('message_reactions')
      .selectAll()
      .where('message_id', 'in', messageIds)
      .orderBy('created_at')
      .execute();
    for (const r of rows) {
      const list = out.get(r.message_id) ?? [];
      list.push({
        id: r.reaction_id,
        reactionType: r.reaction_type,
        fromNumber: r.from_number,
        direction: r.direction,
        createdAt: iso(r.created_at),
      });
      out.set(r.message_id, list);
    }
    return out;
  }

  async message(accountId: string, messageId: string): Promise<ConversationMessageView | null> {
    const r = await this.db
      .selectFrom('messages')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('message_id', '=', messageId)
      .executeTakeFirst();
    if (!r) return null;
    return toMessage(r, (await this.reactionsOf([messageId])).get(messageId) ?? []);
  }

  async messageIdByProviderId(channels: readonly string[], providerMessageId: string) {
    if (channels.length === 0) return null;
    const key = `${channels.join(' ')}\u0000${providerMessageId}`;
    const kept = this.providerIds.get(key);
    if (kept) return kept;
    const r = await this.db
      .selectFrom('message_carrier_ids')
      .select(['account_id', 'message_id'])
      .where('channel', 'in', [...channels])
      .where('carrier_message_id', '=', providerMessageId)
      .executeTakeFirst();
    if (!r) return null;
    const found = { accountId: r.account_id, messageId: r.message_id };
    if (this.providerIds.size >= PROVIDER_IDS_KEPT) this.providerIds.delete(this.providerIds.keys().next().value!);
    this.providerIds.set(key, found);
    return found;
  }

  async optOuts(accountId: string, participant: string): Promise<OptOutView[]> {
    const rows = await this.db
      .selectFrom('opt_outs')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('participant', '=', participant)
      .where('opted_out', '=', true)
      .orderBy('opted_out_at')
      .execute();
    return rows.map((r) => ({ numberId: r.number_id === '' ? null : r.number_id, keyword: r.keyword, at: iso(r.opted_out_at) }));
  }

  async latestChannel(accountId: string, numberId: string, participant: string): Promise<string | null> {
    const r = await this.db
      .selectFrom('conversations')
      .select('channel')
      .where('account_id', '=', accountId)
      .where('phone_number_id', '=', numberId)
      .where('participant', '=', participant)
      .orderBy('last_message_at', 'desc')
      .orderBy('conversation_id')
      .limit(1)
      .executeTakeFirst();
    return r?.channel ?? null;
  }

  async latestLine(accountId: string, numberIds: readonly string[], participant: string): Promise<string | null> {
    if (numberIds.length === 0) return null;
    const r = await this.db
      .selectFrom('conversations')
      .select('phone_number_id')
      .where('account_id', '=', accountId)
      .where('phone_number_id', 'in', [...numberIds])
      .where('participant', '=', participant)
      .orderBy('last_message_at', 'desc')
      .orderBy('conversation_id')
      .limit(1)
      .executeTakeFirst();
    return r?.phone_number_id ?? null;
  }

  /**
   * `recentHistory` of webhook payloads, for several at once: per query the latest `limit` messages of its
   * conversation but its own, oldest first, in one statement for all (the latest `limit + 1` of each conversation,
   * ranked in the database, leave the latest `limit` once its own is left out).
   */
  async recentHistories(
    queries: readonly Readonly<{ accountId: string; conversationId: string; limit: number; excludeMessageId: string | null }>[],
  ): Promise<HistoryItem[][]> {
    const asked = queries.filter((q) => q.limit > 0);
    if (asked.length === 0) return queries.map(() => []);
    const conversations = [...new Map(asked.map((q) => [`${q.accountId}\u0000${q.conversationId}`, q])).values()];
    const rows = await this.recent.execute({
      accountIds: conversations.map((q) => q.accountId),
      conversationIds: conversations.map((q) => q.conversationId),
      // one more than asked, for the message a payload leaves out
      limit: Math.max(...asked.map((q) => q.limit)) + 1,
    });
    const latest = new Map<string, typeof rows>(); // newest first, per conversation
    for (const r of rows) {
      const key = `${r.account_id}\u0000${r.conversation_id}`;
      latest.set(key, [...(latest.get(key) ?? []), r]);
    }
    return queries.map((q) =>
      q.limit <= 0
        ? []
        : (latest.get(`${q.accountId}\u0000${q.conversationId}`) ?? [])
            .filter((r) => r.message_id !== q.excludeMessageId)
            .slice(0, q.limit)
            .reverse()
            .map((r) => ({
              messageId: r.message_id,
              content: r.body,
              direction: r.direction,
              channel: r.channel ?? 'sms',
              at: iso(r.created_at),
            })),
    );
  }

  /** The caller-written state of several conversations at once, by conversation id; an account's own only. */
  async conversationStates(
    wanted: readonly Readonly<{ accountId: string; conversationId: string }>[],
  ): Promise<Map<string, Record<string, unknown> | null>> {
    const out = new Map<string, Record<string, unknown> | null>();
    if (wanted.length === 0) return out;
    const rows = await this.states.execute({
      accountIds: [...new Set(wanted.map((w) => w.accountId))],
      conversationIds: [...new Set(wanted.map((w) => w.conversationId))],
    });
    for (const r of rows)
      out.set(
        `${r.account_id}\u0000${r.conversation_id}`,
        r.conversation_state === null ? null : json<Record<string, unknown>>(r.conversation_state),
      );
    return out;
  }
}
