import type { MessagingInboundPort } from '../../../application/messaging/delivery/transport.port.js';
import { DomainError } from '../../../domain/shared/errors.js';
import { E164 } from '../../agents/agent.schemas.js';
import type { Api } from '../../http/api.js';
import { z } from '../../http/openapi.js';
import { InboundMediaUrls, QueryE164, sandboxRoute, saysSomething } from '../shared/http.js';
import { magicNumbers } from './magic.js';
import type { SandboxSmsCarrier } from './sms-carrier.js';

const InboundBody = z
  .object({
    from: E164,
    to: E164.openapi({ description: "the platform's number the text was sent to" }),
    body: z.string().max(1600),
    media_urls: InboundMediaUrls.optional(),
    group: z
      .object({
        participants: z.array(E164).min(1).max(50).openapi({ description: 'the sender and the platform number are added when missing' }),
        name: z.string().max(200).nullish(),
      })
      .optional(),
    reaction: z
      .object({
        reactionType: z.string().min(1).max(64),
        messageId: z
          .string()
          .min(1)
          .max(200)
          .openapi({ description: "the platform's message id, or the carrier's, of the message reacted to" }),
      })
      .optional(),
  })
  .refine(...saysSomething('a text'))
  .openapi('SandboxInboundRequest');

const Receipt = z.object({
  receiptId: z.string(),
  copy: z.number().int(),
  status: z.string(),
  failureReason: z.string().nullable(),
  errorCode: z.string().nullable(),
  at: z.string(),
  dueAt: z.string(),
  reportedAt: z.string().nullable(),
});
const Submission = z
  .object({
    carrierMessageId: z.string(),
    idempotencyKey: z.string(),
    accountId: z.string(),
    from: z.string(),
    to: z.string(),
    body: z.string(),
    mediaUrls: z.array(z.string()),
    status: z.string().openapi({ description: 'accepted, refused (at submission) or lost (a first attempt that sent nothing)' }),
    failureReason: z.string().nullable(),
    errorCode: z.string().nullable(),
    rateLimited: z.boolean(),
    submittedAt: z.string(),
    receipts: z.array(Receipt),
  })
  .openapi('SandboxSmsSubmission');

/**
 * The sandbox control API of the SMS carrier (mounted only with PROVIDER_MODE=sandbox): inject an inbound text
 * as if a phone had sent it, see what the carrier was asked to send and the receipts it reported, and the
 * magic recipient numbers.
 */
export function sandboxSmsRoutes(
  api: Api,
  { carrier, messages }: { carrier: SandboxSmsCarrier; messages: () => MessagingInboundPort },
): void {
  sandboxRoute(api, {
    method: 'post',
    path: '/sandbox/inbound',
    status: 201,
    summary: "A text (media, group message or reaction) from a phone to one of the platform's numbers, through the carrier",
    body: InboundBody,
    errors: [404],
    response: z.object({ messageId: z.string(), carrierMessageId: z.string() }),
    handler: async ({ body }) => {
      const group = body.group
        ? { participants: [...new Set([body.from, body.to, ...body.group.participants])], name: body.group.name ?? null }
        : null;
      const sms = carrier.inbound({
        from: body.from,
        to: body.to,
        body: body.body,
        mediaUrls: body.media_urls ?? [],
        group,
        reaction: body.reaction ? { reaction: body.reaction.reactionType, target: body.reaction.messageId } : null,
      });
      const stored = await messages().message(sms);
      if (!stored) throw new DomainError('NOT_FOUND', `${body.to} is not an active number of the platform: the text was dropped`);
      return { messageId: stored.messageId, carrierMessageId: sms.providerMessageId };
    },
  });
  sandboxRoute(api, {
    method: 'get',
    path: '/sandbox/messages',
    summary: 'Texts the sandbox carrier was asked to send, newest first, with their receipts',
    query: z.object({
      to: QueryE164.optional(),
      from: QueryE164.optional(),
      limit: z.coerce.number().int().min(1).max(200).default(50),
    }),
    response: z.object({ data: z.array(Submission) }),
    handler: async ({ query }) => ({ data: await carrier.messages(query) }),
  });
  sandboxRoute(api, {
    method: 'get',
    path: '/sandbox/messages/magic-numbers',
    summary: 'Recipient numbers with a fixed outcome: receipt behaviours and one number per failure reason',
    response: z.object({
      data: z.array(
        z.object({
          phoneNumber: z.string(),
          outcome: z.string(),
          category: z.string().nullable(),
          errorCode: z.string().nullable(),
          failureReason: z.string().nullable(),
        }),
      ),
    }),
    handler: async () => ({ data: magicNumbers() }),
  });
}
