import type { Kysely, Selectable } from 'kysely';
import { sql } from 'kysely';
import type { RecordedEvent } from '../../application/ports/event-store.port.js';
import type { AgentEvent } from '../../domain/agent/agent.decider.js';
import type { ConsentEvent } from '../../domain/conversation/consent.decider.js';
import type { ConversationEvent } from '../../domain/conversation/conversation.decider.js';
import type { MessageEvent } from '../../domain/message/message.decider.js';
import { defineProjector, rowRevision } from '../shared/projector.js';
import type { ReadDb } from '../shared/read-db.js';
import type { ConversationsTable, MessageCarrierIdsTable, MessageReactionsTable, MessagesTable } from './tables.js';
import './tables.js';
import { guarded, guardedRow } from '../shared/guarded.js';
import { insertNew, RowFold } from '../shared/row-fold.js';

const PREVIEW = 160;
const preview = (body: string, media: readonly string[]) => (body ? body.slice(0, PREVIEW) : media.length > 0 ? '[media]' : '');

/** The conversation's row, guarded: matches only while it reflects an older revision of the conversation's stream. */
const conversation = guardedRow(
  (db) => db.updateTable('conversations'),
  (e: RecordedEvent<ConversationEvent>) => ({ conversation_id: e.data.conversationId }),
);

/** The message's row, guarded by the revision of the message's own stream. */
const message = guardedRow(
  (db) => db.updateTable('messages'),
  (e: RecordedEvent<MessageEvent>) => ({ message_id: e.data.messageId }),
  'message_revision',
);

type MessagePatch = {
  status?: string;
  updated_at?: string;
  failure_reason?: string | null;
  error_code?: string | null;
  failure_category?: string | null;
  retryable?: boolean | null;
  delivered_at?: string;
  read_at?: string;
};
type Moved<K extends MessageEvent['type']> = RecordedEvent<Extract<MessageEvent, { type: K }>>;
/** What each event of a message's own stream sets on its row (with the revision; the handlers and the batch both). */
const moves: { readonly [K in MessageEvent['type']]: (e: Moved<K>) => MessagePatch } = {
  MessageQueued: (e) => ({ status: 'queued', updated_at: e.data.queuedAt }),
  MessageReceived: () => ({}),
  MessageSubmitted: (e) => ({ status: 'sent', updated_at: e.data.submittedAt }),
  MessageSubmissionErrored: () => ({}),
  MessageFailed: ({ data: d }) => ({
    status: 'failed',
    failure_reason: d.failureReason,
    error_code: d.errorCode,
    failure_category: d.failureCategory,
    retryable: d.retryable,
    updated_at: d.failedAt,
  }),
  MessageReceiptRecorded: ({ data: d }) => (d.outcome === 'applied' && d.status === 'sent' ? { status: 'sent', updated_at: d.at } : {}),
  MessageDelivered: (e) => ({ status: 'delivered', delivered_at: e.data.deliveredAt, updated_at: e.data.deliveredAt }),
  MessageRead: (e) => ({ status: 'read', read_at: e.data.readAt, updated_at: e.data.readAt }),
  MessageReactionAdded: () => ({}),
};

const reactionRow = (e: Moved<'MessageReactionAdded'>): MessageReactionsTable => ({
  reaction_id: e.data.reactionId,
  account_id: e.metadata.accountId,
  message_id: e.data.messageId,
  reaction_type: e.data.reactionType,
  from_number: e.data.fromNumber,
  direction: e.data.direction,
  created_at: e.data.createdAt,
});

type Recorded = RecordedEvent<Extract<ConversationEvent, { type: 'OutboundMessageAccepted' | 'InboundMessageReceived' }>>;
type RowFacts = {
  direction: string;
  status: string;
  from_number: string;
  to_number: string;
  reply_to_message_id: string | null;
  kind: string;
  send_style: string | null;
  created_at: string;
  message_revision?: string;
};
const messageRow = (e: Recorded, o: RowFacts) => ({
  account_id: e.metadata.accountId,
  message_id: e.data.messageId,
  conversation_id: e.data.conversationId,
  phone_number_id: e.data.numberId,
  agent_id: e.data.agentId,
  channel: e.data.channel,
  body: e.data.body,
  media_urls: JSON.stringify(e.data.mediaUrls),
  failure_reason: null,
  updated_at: o.created_at,
  revision: rowRevision(e),
  encoding: e.data.encoding,
  segments: e.data.segments,
  error_code: null,
  failure_category: null,
  retryable: null,
  delivered_at: null,
  read_at: null,
  message_revision: '-1',
  ...o,
});

/**
 * An inbound message's own stream begins with MessageReceived (its revision 0), which sets nothing else on its row: the
 * row reflects it from the start, so that its batch writes nothing (docs/messaging.md#delivery-one-pipeline).
 */
const RECEIVED_REVISION = '0';

/** A message's row as its conversation records it, accepted (outbound) or received (inbound). */
const newMessage = (e: Recorded) => {
  if (e.type === 'InboundMessageReceived') {
    const d = e.data;
    return messageRow(e, {
      direction: 'inbound',
      status: 'received',
      from_number: d.from,
      to_number: d.to,
      reply_to_message_id: null,
      kind: 'message',
      send_style: null,
      created_at: d.receivedAt,
      message_revision: RECEIVED_REVISION,
    });
  }
  const d = e.data;
  return messageRow(e, {
    direction: 'outbound',
    status: 'accepted',
    from_number: d.from,
    to_number: d.to,
    reply_to_message_id: d.replyToMessageId,
    kind: d.kind,
    send_style: d.sendStyle,
    created_at: d.acceptedAt,
  });
};

/** A new conversation's row. */
const conversationRow = (e: RecordedEvent<Extract<ConversationEvent, { type: 'ConversationStarted' }>>): Selectable<ConversationsTable> => {
  const d = e.data;
  return {
    account_id: d.accountId,
    conversation_id: d.conversationId,
    phone_number_id: d.numberId,
    phone_number: d.phoneNumber,
    agent_id: d.agentId,
    participant: d.participant,
    channel: d.channel,
    is_group: d.isGroup,
    group_id: d.groupId,
    group_name: d.groupName,
    group_icon_url: null,
    participants: d.participants ? JSON.stringify(d.participants) : null,
    message_count: 0,
    inbound_count: 0,
    outbound_since_reply: 0,
    reengagement_locked: false,
    last_message_at: d.startedAt,
    last_message_preview: '',
    conversation_state: null,
    created_at: d.startedAt,
    revision: rowRevision(e),
  };
};

/**
 * Conversations, messages (created from their conversation's record, then moved by the message's own stream),
 * reactions, carrier ids and the opt-outs in force (docs/messaging.md#reading).
 */
export const messagingProjector = defineProjector<
  ConversationEvent | MessageEvent | ConsentEvent | Extract<AgentEvent, { type: 'AgentDeleted' }>
>({
  name: 'messaging_v1',
  tables: ['conversations', 'messages', 'message_reactions', 'message_carrier_ids', 'opt_outs'],
  batch: messagingBatch,
  // the batch reads its rows first, then writes them (docs/event-store.md#pipelined-batches)
  pipelined: true,
  on: {
    async ConversationStarted(db, e) {
      await db
        .insertInto('conversations')
        .values(conversationRow(e))
        .onConflict((oc) => oc.column('conversation_id').doNothing())
        .execute();
    },
    async OutboundMessageAccepted(db, e) {
      const d = e.data;
      await conversation(db, e, (eb) => ({
        agent_id: d.agentId,
        message_count: eb('message_count', '+', 1),
        outbound_since_reply: d.kind === 'message' ? eb('outbound_since_reply', '+', 1) : eb.ref('outbound_since_reply'),
        reengagement_locked: d.reengagement ? true : eb.ref('reengagement_locked'),
        last_message_at: d.acceptedAt,
        last_message_preview: preview(d.body, d.mediaUrls),
      }));
      await db
        .insertInto('messages')
        .values(newMessage(e))
        .onConflict((oc) => oc.column('message_id').doNothing())
        .execute();
    },
    async InboundMessageReceived(db, e) {
      const d = e.data;
      await conversation(db, e, (eb) => ({
        agent_id: d.agentId,
        message_count: eb('message_count', '+', 1),
        inbound_count: eb('inbound_count', '+', 1),
        outbound_since_reply: 0,
        reengagement_locked: false,
        last_message_at: sql`greatest(last_message_at, ${d.receivedAt}::timestamptz)`,
        last_message_preview: preview(d.body, d.mediaUrls),
      }));
      await db
        .insertInto('messages')
        .values(newMessage(e))
        .onConflict((oc) => oc.column('message_id').doNothing())
        .execute();
    },
    ConversationStateSet: (db, e) =>
      conversation(db, e, { conversation_state: e.data.state === null ? null : JSON.stringify(e.data.state) }),
    GroupRenamed: (db, e) => conversation(db, e, { group_name: e.data.groupName }),

    MessageQueued: (db, e) => message(db, e, moves.MessageQueued(e)),
    // the row reflects it from the start (RECEIVED_REVISION): nothing to write
    MessageReceived: async () => undefined,
    async MessageSubmitted(db, e) {
      await message(db, e, moves.MessageSubmitted(e));
      // keyed by the message's channel too (its row was written when it was accepted, earlier in this log)
      for (const c of e.data.carrierMessageIds)
        await db
          .insertInto('message_carrier_ids')
          .columns(['channel', 'carrier_message_id', 'account_id', 'message_id'])
          .expression(
            db
              .selectFrom('messages')
              .select((eb) => [
                'channel',
                eb.val(c).as('carrier_message_id'),
                eb.val(e.metadata.accountId).as('account_id'),
                eb.val(e.data.messageId).as('message_id'),
              ])
              .where('message_id', '=', e.data.messageId),
          )
          .onConflict((oc) => oc.columns(['channel', 'carrier_message_id']).doNothing())
          .execute();
    },
    MessageSubmissionErrored: (db, e) => message(db, e, moves.MessageSubmissionErrored(e)),
    MessageFailed: (db, e) => message(db, e, moves.MessageFailed(e)),
    MessageReceiptRecorded: (db, e) => message(db, e, moves.MessageReceiptRecorded(e)),
    MessageDelivered: (db, e) => message(db, e, moves.MessageDelivered(e)),
    MessageRead: (db, e) => message(db, e, moves.MessageRead(e)),
    async MessageReactionAdded(db, e) {
      await db
        .insertInto('message_reactions')
        .values(reactionRow(e))
        .onConflict((oc) => oc.column('reaction_id').doNothing())
        .execute();
      await message(db, e, moves.MessageReactionAdded(e));
    },

    async RecipientOptedOut(db, e) {
      const d = e.data;
      const row = { keyword: d.keyword, opted_out_at: d.at, opted_out: true, revision: rowRevision(e) };
      await db
        .insertInto('opt_outs')
        .values({ account_id: e.metadata.accountId, participant: d.recipient, number_id: d.numberId ?? '', ...row })
        .onConflict((oc) =>
          oc.columns(['account_id', 'participant', 'number_id']).doUpdateSet(row).where('opt_outs.revision', '<', rowRevision(e)),
        )
        .execute();
    },
    async RecipientOptedIn(db, e) {
      // the rows stay, marked lifted at this revision (docs/messaging.md#opt-out)
      const d = e.data;
      let q = guarded(db.updateTable('opt_outs'), { account_id: e.metadata.accountId, participant: d.recipient }, e).set({
        opted_out: false,
        revision: rowRevision(e),
      });
      if (d.numberId !== null) q = q.where('number_id', 'in', [d.numberId, '']);
      await q.execute();
    },
    async AgentDeleted(db, e) {
      // a deleted agent's conversations are kept with no agent (docs/messaging.md#reading); clearing twice is the same
      await db
        .updateTable('conversations')
        .set({ agent_id: null })
        .where('account_id', '=', e.data.accountId)
        .where('agent_id', '=', e.data.agentId)
        .execute();
    },
  },
});

type Handled = ConversationEvent | MessageEvent | ConsentEvent | Extract<AgentEvent, { type: 'AgentDeleted' }>;
type ConversationRow = Selectable<ConversationsTable>;
type MessageRow = Selectable<MessagesTable>;

/** a jsonb value as the fold keeps it: JSON text, written back as it was read */
const jsonText = (v: unknown): string | null => (v === null || v === undefined ? null : JSON.stringify(v));
const later = (stored: Date | string, at: string): Date | string => (Date.parse(at) > new Date(stored).getTime() ? at : stored);

/**
 * The handlers above, set-based for a batch (docs/messaging.md#the-read-models-in-batches): the conversations and
 * messages the batch names are read once, the batch is folded over them in memory in log order with the handlers'
 * rules (create once; move only while the row reflects an older revision of its stream), and the rows that changed
 * are written back in one upsert per table, the new reactions and carrier ids in one insert each. An agent's
 * deletion (which clears the agent of rows the batch may not have read) writes what was folded before it, runs its
 * handler, and folds the rest afresh; opt-outs (their own table, rare) run their handlers in turn.
 * test/projections/messaging-batch.spec.ts holds the batch to the handlers applied one by one.
 */
const conversationRows: ReadonlySet<string> = new Set<Handled['type']>([
  'ConversationStarted',
  'OutboundMessageAccepted',
  'InboundMessageReceived',
  'ConversationStateSet',
  'GroupRenamed',
]);

/** What a message recorded on its conversation does to the conversation's row (the handlers' updates, in memory). */
const recordedOn = (c: ConversationRow, e: Recorded): Partial<ConversationRow> => {
  const common = {
    agent_id: e.data.agentId,
    message_count: c.message_count + 1,
    last_message_preview: preview(e.data.body, e.data.mediaUrls),
  };
  if (e.type === 'InboundMessageReceived')
    return {
      ...common,
      inbound_count: c.inbound_count + 1,
      outbound_since_reply: 0,
      reengagement_locked: false,
      last_message_at: later(c.last_message_at, e.data.receivedAt),
    };
  const d = e.data;
  return {
    ...common,
    outbound_since_reply: d.kind === 'message' ? c.outbound_since_reply + 1 : c.outbound_since_reply,
    reengagement_locked: d.reengagement ? true : c.reengagement_locked,
    last_message_at: d.acceptedAt,
  };
};

async function messagingBatch(db: Kysely<ReadDb>, events: readonly RecordedEvent<Handled>[]): Promise<void> {
  for (let from = 0; from < events.length; ) {
    const cut = events.findIndex((e, i) => i >= from && e.type === 'AgentDeleted');
    const to = cut === -1 ? events.length : cut;
    await foldRun(db, events.slice(from, to));
    if (cut === -1) break;
    const deleted = events[cut] as RecordedEvent<Extract<AgentEvent, { type: 'AgentDeleted' }>>;
    await messagingProjector.apply(db, deleted);
    from = cut + 1;
  }
}

/** The statements the handlers write for one event (a carrier id is an insert of its own). */
const handlerStatements = (e: RecordedEvent<Handled>): number =>
  e.type === 'OutboundMessageAccepted' || e.type === 'InboundMessageReceived' || e.type === 'MessageReactionAdded'
    ? 2
    : e.type === 'MessageSubmitted'
      ? 1 + e.data.carrierMessageIds.length
      : e.type === 'MessageReceived'
        ? 0
        : 1;

/**
 * The statements the fold writes at most: a read and an upsert of each table it moves, an insert of the new
 * reactions and one of the carrier ids, and the opt-outs' own (their handlers, as one by one).
 */
const foldStatements = (events: readonly RecordedEvent<Handled>[]): number => {
  const consent = (e: RecordedEvent<Handled>) => e.type === 'RecipientOptedOut' || e.type === 'RecipientOptedIn';
  const has = (type: Handled['type']) => events.some((e) => e.type === type);
  const conversationsMoved = events.some((e) => conversationRows.has(e.type));
  const messagesMoved = events.some((e) => 'messageId' in e.data && !consent(e));
  return (
    (conversationsMoved ? 2 : 0) +
    (messagesMoved ? 2 : 0) +
    (has('MessageReactionAdded') ? 1 : 0) +
    (has('MessageSubmitted') ? 1 : 0) +
    events.filter(consent).length
  );
};

async function foldRun(db: Kysely<ReadDb>, events: readonly RecordedEvent<Handled>[]): Promise<void> {
  // a batch of a few events (a text alone, one at a time) costs fewer statements one by one
  if (events.reduce((n, e) => n + handlerStatements(e), 0) <= foldStatements(events)) {
    for (const e of events) await messagingProjector.apply(db, e);
    return;
  }
  const conversations = new RowFold<ConversationRow>(
    'conversations',
    'conversation_id',
    [
      'agent_id',
      'message_count',
      'inbound_count',
      'outbound_since_reply',
      'reengagement_locked',
      'last_message_at',
      'last_message_preview',
      'conversation_state',
      'group_name',
    ],
    { decode: (r) => ({ ...r, participants: jsonText(r.participants), conversation_state: jsonText(r.conversation_state) }) },
  );
  const messages = new RowFold<MessageRow>(
    'messages',
    'message_id',
    ['status', 'updated_at', 'failure_reason', 'error_code', 'failure_category', 'retryable', 'delivered_at', 'read_at'],
    { guard: 'message_revision', decode: (r) => ({ ...r, media_urls: jsonText(r.media_urls) }) },
  );
  // the conversations the batch's conversation events move, the messages any event names (created ones too: a replay),
  // read together: the second is sent without waiting for the first one's answer
  await Promise.all([
    conversations.load(
      db,
      events.flatMap((e) => (conversationRows.has(e.type) && 'conversationId' in e.data ? [e.data.conversationId] : [])),
    ),
    messages.load(
      db,
      events.flatMap((e) => ('messageId' in e.data ? [e.data.messageId] : [])),
    ),
  ]);
  const reactions = new Map<string, MessageReactionsTable>();
  const carrierIds = new Map<string, MessageCarrierIdsTable>();

  for (const e of events) {
    const revision = rowRevision(e);
    switch (e.type) {
      case 'ConversationStarted':
        conversations.create(conversationRow(e));
        break;
      case 'OutboundMessageAccepted':
      case 'InboundMessageReceived': {
        const c = conversations.get(e.data.conversationId);
        if (c) conversations.move(e.data.conversationId, revision, recordedOn(c, e));
        messages.create(newMessage(e));
        break;
      }
      case 'ConversationStateSet':
        conversations.move(e.data.conversationId, revision, {
          conversation_state: e.data.state === null ? null : JSON.stringify(e.data.state),
        });
        break;
      case 'GroupRenamed':
        conversations.move(e.data.conversationId, revision, { group_name: e.data.groupName });
        break;
      case 'MessageSubmitted': {
        messages.move(e.data.messageId, revision, moves.MessageSubmitted(e));
        const m = messages.get(e.data.messageId);
        // keyed by the message's channel, as the handler's insert reads it from the message's row
        if (m)
          for (const c of e.data.carrierMessageIds) {
            const key = `${m.channel}\u0000${c}`;
            if (!carrierIds.has(key))
              carrierIds.set(key, {
                channel: m.channel!,
                carrier_message_id: c,
                account_id: e.metadata.accountId,
                message_id: e.data.messageId,
              });
          }
        break;
      }
      case 'MessageReactionAdded':
        if (!reactions.has(e.data.reactionId)) reactions.set(e.data.reactionId, reactionRow(e));
        messages.move(e.data.messageId, revision, moves.MessageReactionAdded(e));
        break;
      case 'MessageQueued':
      case 'MessageReceived':
      case 'MessageSubmissionErrored':
      case 'MessageFailed':
      case 'MessageReceiptRecorded':
      case 'MessageDelivered':
      case 'MessageRead':
        messages.move(e.data.messageId, revision, (moves[e.type] as (x: typeof e) => MessagePatch)(e));
        break;
      case 'RecipientOptedOut':
      case 'RecipientOptedIn':
        // their own table, which nothing else in the batch writes: in turn, with their handlers
        await messagingProjector.apply(db, e);
        break;
      case 'AgentDeleted':
        break;
    }
  }
  await conversations.write(db);
  await messages.write(db);
  await insertNew(
    db,
    'message_reactions',
    ['reaction_id'],
    [...reactions.values()].map((r) => ({ ...r })),
  );
  await insertNew(
    db,
    'message_carrier_ids',
    ['channel', 'carrier_message_id'],
    [...carrierIds.values()].map((r) => ({ ...r })),
  );
}
