import type { NumberMessageQueries } from '../../application/messaging/message-queries.port.js';
import type { NumberQueries } from '../../application/numbers/number-queries.port.js';
import { DomainError } from '../../domain/shared/errors.js';
import type { Api } from '../http/api.js';
import { z } from '../http/openapi.js';
import { cursorQuery } from '../http/pagination.js';
import { NumberIdParams } from '../numbers/number.schemas.js';

export const MessageResponse = z
  .object({
    id: z.string(),
    from_: z.string(),
    to: z.string(),
    body: z.string(),
    direction: z.string(),
    channel: z.string().nullable(),
    receivedAt: z.string(),
    status: z.string().nullable(),
    conversationId: z.string().nullable(),
    mediaUrls: z.array(z.string()),
  })
  .openapi('MessageResponse');
export const MessageListResponse = z.object({ data: z.array(MessageResponse), hasMore: z.boolean() }).openapi('MessageListResponse');

/** A number's message history (docs/numbers.md): kept for released numbers too. */
export function messagingRoutes(api: Api, { messages, numbers }: { messages: NumberMessageQueries; numbers: NumberQueries }): void {
  api.route({
    method: 'get',
    path: '/v1/numbers/:number_id/messages',
    tag: 'numbers',
    summary: "The number's messages, newest first (cursor: before/after)",
    params: NumberIdParams,
    query: cursorQuery(),
    response: MessageListResponse,
    errors: [404],
    handler: async ({ params, query, ctx }) => {
      if (!(await numbers.get(ctx.accountId, params.number_id))) throw new DomainError('PHONE_NUMBER_NOT_FOUND', 'Phone number not found');
      const page = await messages.messages(ctx.accountId, params.number_id, query);
      return {
        hasMore: page.hasMore,
        data: page.data.map((m) => ({
          id: m.id,
          from_: m.from,
          to: m.to,
          body: m.body,
          direction: m.direction,
          channel: m.channel,
          receivedAt: m.at,
          status: m.status,
          conversationId: m.conversationId,
          mediaUrls: [...m.mediaUrls],
        })),
      };
    },
  });
}
