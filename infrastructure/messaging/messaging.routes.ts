import { createHash } from 'node:crypto';
import type { AgentQueries } from '../../application/agents/agent-queries.port.js';
import type {
  ConversationMessageView,
  ConversationQueries,
  ConversationView,
} from '../../application/messaging/conversation-queries.port.js';
import type { IdempotencyStorePort } from '../../application/messaging/idempotency.port.js';
import type { MessageChannels } from '../../application/messaging/message-channels.js';
import type { MessageCommands, SendAnswer } from '../../application/messaging/message-commands.js';
import type { NumberQueries } from '../../application/numbers/number-queries.port.js';
import type { ClockPort } from '../../application/ports/clock.port.js';
import type { IdsPort } from '../../application/ports/ids.port.js';
import type { RequestContext } from '../../application/shared/context.js';
import { DomainError } from '../../domain/shared/errors.js';
import type { Api } from '../http/api.js';
import { z } from '../http/openapi.js';
import { cursorEnvelope, cursorQuery, offsetEnvelope, offsetQuery, toOffsetPage } from '../http/pagination.js';
import { NumberIdParams } from '../numbers/number.schemas.js';
import {
  ConversationDetail,
  ConversationIdParams,
  ConversationSummary,
  MessageIdParams,
  MessageInConversation,
  SendMessageRequest,
  SendMessageResponse,
  SendReactionRequest,
  SendReactionResponse,
  SendTypingResponse,
  UpdateConversationRequest,
} from './messaging.schemas.js';

export type MessagingDeps = {
  commands: MessageCommands;
  queries: ConversationQueries;
  channels: MessageChannels;
  numbers: NumberQueries;
  agents: AgentQueries;
  idempotency: IdempotencyStorePort;
  clock: ClockPort;
  ids: IdsPort;
};

/**
 * A number's messages: the message record of a conversation's messages (docs/messaging.md#reading), with the public
 * list's own names beside it, `from_` and `to`, and `from` for clients that read that (docs/compatibility.md).
 */
export const MessageResponse = MessageInConversation.extend({ from_: z.string(), from: z.string(), to: z.string() }).openapi(
  'MessageResponse',
);

const IDEMPOTENCY_TTL_MS = 24 * 3600 * 1000;
const IdempotencyKey = z
  .string()
  .min(1)
  .max(255)
  .regex(/^[\x21-\x7e]+$/, 'must be 1-255 visible ASCII characters');

const notFound = () => new DomainError('CONVERSATION_NOT_FOUND', 'Conversation not found');

/** A stable text of a JSON value: object keys sorted, so two equal bodies hash alike. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v && typeof v === 'object')
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  return JSON.stringify(v ?? null);
}

/** Text messaging over HTTP (docs/messaging.md). */
export function messagingRoutes(api: Api, d: MessagingDeps): void {
  const tag = 'messages';

  api.route({
    method: 'post',
    path: '/v1/messages',
    tag,
    summary:
      'Send a message (SMS, MMS with media, or by the chat-app channel, a template included); 201 once accepted, delivery follows asynchronously',
    body: SendMessageRequest,
    status: 201,
    response: SendMessageResponse,
    errors: [400, 403, 404, 409, 429],
    handler: async ({ body, ctx, req, res }) => {
      const input = {
        agentId: body.agent_id ?? null,
        numberId: body.number_id ?? null,
        fromNumber: body.from_number ?? null,
        toNumber: body.to_number ?? null,
        recipients: body.recipients ?? null,
        body: body.body,
        mediaUrls: [...new Set([...(body.media_url ? [body.media_url] : []), ...(body.media_urls ?? [])])],
        replyToMessageId: body.reply_to_message_id ?? null,
        sendStyle: body.send_style ?? null,
        channel: body.channel ?? null,
        template: body.template
          ? { name: body.template.name, language: body.template.language, variables: body.template.variables ?? null }
          : null,
      };
      const rawKey = req.get('Idempotency-Key');
      if (rawKey === undefined) return d.commands.send(ctx, input);
      const key = IdempotencyKey.safeParse(rawKey);
      if (!key.success)
        throw new DomainError('VALIDATION_ERROR', 'Invalid Idempotency-Key header', [
          { field: 'header.Idempotency-Key', message: key.error.issues[0]?.message ?? 'invalid', type: 'value_error' },
        ]);
      return sendOnce(d, ctx, key.data, canonical(req.body), input, () => res.setHeader('Idempotent-Replayed', 'true'));
    },
  });

  api.route({
    method: 'post',
    path: '/v1/messages/:message_id/reactions',
    tag,
    summary: 'React to a message',
    params: MessageIdParams,
    body: SendReactionRequest,
    response: SendReactionResponse,
    errors: [404],
    handler: ({ params, body, ctx }) => d.commands.react(ctx, params.message_id, body.reaction),
  });

  api.route({
    method: 'get',
    path: '/v1/conversations',
    tag: 'conversations',
    summary: 'List conversations, most recent activity first',
    query: offsetQuery(),
    response: offsetEnvelope(ConversationSummary),
    handler: async ({ query, ctx }) => {
      const page = await d.queries.list(ctx.accountId, query);
      return toOffsetPage({ data: page.data.map(summary), total: page.total }, query);
    },
  });

  api.route({
    method: 'get',
    path: '/v1/agents/:agent_id/conversations',
    tag: 'conversations',
    summary: "List an agent's conversations, most recent activity first",
    params: z.object({ agent_id: z.string().min(1).max(100) }),
    query: offsetQuery(),
    response: offsetEnvelope(ConversationSummary),
    errors: [404],
    handler: async ({ params, query, ctx }) => {
      if (!(await d.agents.get(ctx.accountId, params.agent_id))) throw new DomainError('AGENT_NOT_FOUND', 'Agent not found');
      const page = await d.queries.list(ctx.accountId, query, { agentId: params.agent_id });
      return toOffsetPage({ data: page.data.map(summary), total: page.total }, query);
    },
  });

  const detail = async (ctx: RequestContext, c: ConversationView, limit: number) => {
    const page = await d.queries.messages(ctx.accountId, c.id, { limit });
    const messages = await withReplies(d.queries, ctx.accountId, [...page.data].reverse());
    return { ...summary(c), messages, capabilities: await capabilities(d, ctx, c) };
  };

  api.route({
    method: 'get',
    path: '/v1/conversations/:conversation_id',
    tag: 'conversations',
    summary: 'A conversation with its latest messages (oldest first) and what can be sent in it now',
    params: ConversationIdParams,
    query: z.object({ message_limit: z.coerce.number().int().min(1).max(200).default(50) }),
    response: ConversationDetail,
    errors: [404],
    handler: async ({ params, query, ctx }) => {
      const c = await d.queries.get(ctx.accountId, params.conversation_id);
      if (!c) throw notFound();
      return detail(ctx, c, query.message_limit);
    },
  });

  api.route({
    method: 'patch',
    path: '/v1/conversations/:conversation_id',
    tag: 'conversations',
    summary: "Set the conversation's state (sent with every webhook payload) or a group's name",
    params: ConversationIdParams,
    body: UpdateConversationRequest,
    response: ConversationDetail,
    errors: [404],
    handler: async ({ params, body, ctx }) => {
      const state = body.conversationState !== undefined ? body.conversationState : body.metadata;
      const groupName = body.groupName !== undefined ? body.groupName : body.group_name;
      await d.commands.update(ctx, params.conversation_id, {
        ...(state !== undefined ? { state } : {}),
        ...(groupName !== undefined ? { groupName } : {}),
      });
      const c = await d.queries.get(ctx.accountId, params.conversation_id);
      if (!c) throw notFound();
      return detail(ctx, c, 50);
    },
  });

  api.route({
    method: 'get',
    path: '/v1/conversations/:conversation_id/messages',
    tag: 'conversations',
    summary: "A conversation's messages, newest first (cursor: before/after)",
    params: ConversationIdParams,
    query: cursorQuery(),
    response: cursorEnvelope(MessageInConversation),
    errors: [404],
    handler: async ({ params, query, ctx }) => {
      if (!(await d.queries.get(ctx.accountId, params.conversation_id))) throw notFound();
      const page = await d.queries.messages(ctx.accountId, params.conversation_id, query);
      return { data: await withReplies(d.queries, ctx.accountId, page.data), hasMore: page.hasMore };
    },
  });

  api.route({
    method: 'post',
    path: '/v1/conversations/:conversation_id/typing',
    tag: 'conversations',
    summary: 'Show a typing indicator where the channel has one (imessage); elsewhere answered `unsupported`',
    params: ConversationIdParams,
    response: SendTypingResponse,
    errors: [404],
    handler: async ({ params, ctx }) => {
      const c = await d.queries.get(ctx.accountId, params.conversation_id);
      if (!c) throw notFound();
      const channel = d.channels.ofConversation(c.channel);
      const status = channel?.typing ? await channel.typing(ctx, c) : 'unsupported';
      return { conversationId: c.id, channel: channel?.name ?? c.channel, status };
    },
  });

  api.route({
    method: 'get',
    path: '/v1/numbers/:number_id/messages',
    tag: 'numbers',
    summary: "The number's messages, newest first (cursor: before/after); kept after the number is released",
    params: NumberIdParams,
    query: cursorQuery(),
    response: cursorEnvelope(MessageResponse).openapi('MessageListResponse'),
    errors: [404],
    handler: async ({ params, query, ctx }) => {
      if (!(await d.numbers.get(ctx.accountId, params.number_id)))
        throw new DomainError('PHONE_NUMBER_NOT_FOUND', 'Phone number not found');
      const page = await d.queries.numberMessages(ctx.accountId, params.number_id, query);
      const data = await withReplies(d.queries, ctx.accountId, page.data);
      return { hasMore: page.hasMore, data: data.map((m) => ({ ...m, from_: m.fromNumber, from: m.fromNumber, to: m.toNumber })) };
    },
  });
}

/**
 * One send per Idempotency-Key (docs/messaging.md#idempotency-keys): the key is claimed first; the message id
 * derives from it, so a request cut short after its message was recorded records nothing new when retried.
 * Only an accepted send's answer is kept (a refusal sent nothing; retrying it may succeed later).
 */
async function sendOnce(
  d: MessagingDeps,
  ctx: RequestContext,
  key: string,
  body: string,
  input: Parameters<MessageCommands['send']>[1],
  replayed: () => void,
): Promise<SendAnswer> {
  const requestHash = createHash('sha256').update(body).digest('hex');
  const now = d.clock.now();
  const claim = await d.idempotency.claim({
    accountId: ctx.accountId,
    key,
    requestHash,
    now: now.toISOString(),
    since: new Date(now.getTime() - IDEMPOTENCY_TTL_MS).toISOString(),
  });
  if (claim.kind !== 'claimed' && claim.requestHash !== requestHash)
    throw new DomainError(
      'IDEMPOTENCY_KEY_REUSED',
      'This Idempotency-Key was used with another request body in the last 24 hours; use a new key',
    );
  if (claim.kind === 'in_progress')
    throw new DomainError('IDEMPOTENCY_KEY_IN_USE', 'A request with this Idempotency-Key is still being answered; retry shortly');
  if (claim.kind === 'answered') {
    replayed();
    return claim.answer.body as SendAnswer;
  }
  try {
    const answer = await d.commands.send(ctx, { ...input, messageId: d.ids.derived('msg', ctx.accountId, 'idempotency', key) });
    await d.idempotency.complete({ accountId: ctx.accountId, key, answer: { status: 201, body: answer } });
    return answer;
  } catch (err) {
    await d.idempotency.release({ accountId: ctx.accountId, key }).catch(() => undefined);
    throw err;
  }
}

const summary = (c: ConversationView) => ({
  id: c.id,
  agentId: c.agentId,
  phoneNumberId: c.phoneNumberId,
  phoneNumber: c.phoneNumber,
  participant: c.participant,
  channel: c.channel,
  isGroup: c.isGroup,
  groupId: c.groupId,
  groupName: c.groupName,
  groupIconUrl: c.groupIconUrl,
  participants: c.participants ? c.participants.map((p) => ({ identifier: p, name: null })) : null,
  lastMessageAt: c.lastMessageAt,
  lastMessagePreview: c.lastMessagePreview,
  messageCount: c.messageCount,
  metadata: c.conversationState,
  conversationState: c.conversationState,
  createdAt: c.createdAt,
});

/** Messages as a conversation shows them, with the message each replies to. */
async function withReplies(q: ConversationQueries, accountId: string, messages: ConversationMessageView[]) {
  const parents = new Map<string, ConversationMessageView | null>();
  for (const m of messages)
    if (m.replyToMessageId && !parents.has(m.replyToMessageId))
      parents.set(m.replyToMessageId, await q.message(accountId, m.replyToMessageId));
  return messages.map((m) => {
    const parent = m.replyToMessageId ? parents.get(m.replyToMessageId) : null;
    return {
      id: m.id,
      body: m.body,
      fromNumber: m.fromNumber,
      toNumber: m.toNumber,
      direction: m.direction,
      senderIdentifier: m.direction === 'inbound' ? m.fromNumber : null,
      channel: m.channel,
      status: m.status,
      failureReason: m.failureReason,
      errorCode: m.errorCode,
      failureCategory: m.failureCategory,
      retryable: m.retryable,
      encoding: m.encoding,
      segments: m.segments,
      deliveredAt: m.deliveredAt,
      readAt: m.readAt,
      mediaUrl: m.mediaUrls[0] ?? null,
      mediaUrls: m.mediaUrls,
      content: null,
      receivedAt: m.receivedAt,
      reactions: m.reactions,
      replyTo: parent ? { messageId: parent.id, message: parent.body, mediaUrls: parent.mediaUrls } : null,
      conversationId: m.conversationId,
    };
  });
}

/** What the caller can do in the conversation now, as its channels say (docs/messaging.md#reading). */
async function capabilities(d: MessagingDeps, ctx: RequestContext, c: ConversationView) {
  const n = await d.numbers.get(ctx.accountId, c.phoneNumberId);
  const line = {
    numberId: c.phoneNumberId,
    phoneNumber: c.phoneNumber,
    agentId: c.agentId,
    native: n ? { country: n.country } : null,
    field: 'number_id' as const,
  };
  return d.channels.capabilities(c, line, d.clock.now().toISOString());
}
