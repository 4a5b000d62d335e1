import type { HistoryService } from '../../application/audit/history.js';
import type { Api } from '../http/api.js';
import { CallIdParams, ConversationIdParams, DeliveryIdParams, HistoryQuery, HistoryResponse, MessageIdParams } from './audit.schemas.js';

const at = (q: { at?: string | undefined }) => (q.at ? new Date(q.at).toISOString() : null);

/** The audit histories (docs/audit.md): every event of the resource's stream, or the record as of `?at=`. */
export function auditRoutes(api: Api, deps: { history: HistoryService }): void {
  const tag = 'audit';
  const description = 'every event of its stream in order, with who did it, the request and cause, and the status after each step';
  api.route({
    method: 'get',
    path: '/v1/messages/:message_id/history',
    tag,
    summary: `The history of a message: ${description}`,
    params: MessageIdParams,
    query: HistoryQuery,
    response: HistoryResponse,
    errors: [404],
    handler: ({ params, query, ctx }) => deps.history.history(ctx.accountId, 'message', params.message_id, at(query)),
  });
  api.route({
    method: 'get',
    path: '/v1/calls/:call_id/history',
    tag,
    summary: `The history of a call: ${description}`,
    params: CallIdParams,
    query: HistoryQuery,
    response: HistoryResponse,
    errors: [404],
    handler: ({ params, query, ctx }) => deps.history.history(ctx.accountId, 'call', params.call_id, at(query)),
  });
  api.route({
    method: 'get',
    path: '/v1/conversations/:conversation_id/history',
    tag,
    summary: `The history of a conversation: ${description}`,
    params: ConversationIdParams,
    query: HistoryQuery,
    response: HistoryResponse,
    errors: [404],
    handler: ({ params, query, ctx }) => deps.history.history(ctx.accountId, 'conversation', params.conversation_id, at(query)),
  });
  api.route({
    method: 'get',
    path: '/v1/webhooks/deliveries/:delivery_id/history',
    tag,
    summary: `The history of a webhook delivery: ${description}`,
    params: DeliveryIdParams,
    query: HistoryQuery,
    response: HistoryResponse,
    errors: [404],
    handler: ({ params, query, ctx }) => deps.history.history(ctx.accountId, 'webhook_delivery', params.delivery_id, at(query)),
  });
}
