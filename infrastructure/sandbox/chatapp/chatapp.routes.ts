import type { MessagingInboundPort } from '../../../application/messaging/delivery/transport.port.js';
import { DomainError } from '../../../domain/shared/errors.js';
import { E164 } from '../../agents/agent.schemas.js';
import type { Api } from '../../http/api.js';
import { z } from '../../http/openapi.js';
import { InboundMediaUrls, QueryE164, sandboxRoute, saysSomething } from '../shared/http.js';
import type { SandboxChatPlatform } from './chat-platform.js';
import { magicRecipients } from './magic.js';

const InboundBody = z
  .object({
    phone_number_id: z.string().min(1).max(64).openapi({ description: "the platform's id of the number written to" }),
    from: E164.openapi({ description: 'the person writing' }),
    body: z.string().max(4096).default(''),
    media_urls: InboundMediaUrls.optional(),
    reaction: z
      .object({
        emoji: z.string().max(16).openapi({ description: 'an empty string takes a reaction back' }),
        message_id: z
          .string()
          .min(1)
          .max(200)
          .openapi({ description: "the platform's id (or this platform's id) of the message reacted to" }),
      })
      .optional(),
  })
  .refine(...saysSomething('a message'))
  .openapi('SandboxChatappInboundRequest');

const PlatformNumber = z.object({
  phoneNumberId: z.string(),
  phoneNumber: z.string(),
  verifiedName: z.string().nullable(),
  registered: z.boolean(),
});

/**
 * The sandbox chat platform's control API (docs/sandbox.md#chat-app-the-sandbox-chat-platform), mounted only while the
 * sandbox platform is in use: its business accounts and numbers (and adding one, for a dual-channel number), a message
 * from a person to a bound number, what it was asked to send with its statuses, the templates under review, and the
 * magic recipients.
 */
export function sandboxChatappRoutes(api: Api, d: { platform: SandboxChatPlatform; messages: () => MessagingInboundPort }): void {
  sandboxRoute(api, {
    method: 'get',
    path: '/sandbox/chatapp/business-accounts',
    summary:
      "The sandbox chat platform's business accounts and their numbers (any access token but one starting with `invalid` opens them)",
    response: z.object({
      data: z.array(
        z.object({ businessAccountId: z.string(), name: z.string(), paymentMethod: z.boolean(), numbers: z.array(PlatformNumber) }),
      ),
    }),
    handler: async () => ({ data: await d.platform.businessAccounts() }),
  });
  sandboxRoute(api, {
    method: 'post',
    path: '/sandbox/chatapp/business-accounts/:business_account_id/numbers',
    summary: 'Add a number to a sandbox business account (the E.164 of a native number makes it dual-channel once bound)',
    params: z.object({ business_account_id: z.string().min(1).max(64) }),
    body: z.object({ phone_number: E164, verified_name: z.string().min(1).max(100).nullish() }),
    errors: [404],
    response: z.object({
      businessAccountId: z.string(),
      phoneNumberId: z.string(),
      phoneNumber: z.string(),
      verifiedName: z.string().nullable(),
    }),
    handler: ({ params, body }) => d.platform.addNumber(params.business_account_id, body.phone_number, body.verified_name ?? null),
  });
  sandboxRoute(api, {
    method: 'post',
    path: '/sandbox/chatapp/inbound',
    status: 201,
    summary: 'A chat message (text, media or a reaction) from a person to a number of the sandbox platform, as the platform reports it',
    body: InboundBody,
    errors: [404],
    response: z.object({ messageId: z.string(), platformMessageId: z.string() }),
    handler: async ({ body }) => {
      const m = await d.platform.inbound({
        to: body.phone_number_id,
        from: body.from,
        body: body.body,
        mediaUrls: body.media_urls ?? [],
        reaction: body.reaction ? { reaction: body.reaction.emoji, target: body.reaction.message_id } : null,
      });
      const stored = await d.messages().message(m);
      if (!stored)
        throw new DomainError(
          'NOT_FOUND',
          `The platform number ${body.phone_number_id} is not bound here (or the channel is switched off, or the reacted message is unknown): the message was dropped`,
        );
      return { messageId: stored.messageId, platformMessageId: m.providerMessageId };
    },
  });
  sandboxRoute(api, {
    method: 'get',
    path: '/sandbox/chatapp/messages',
    summary: 'Messages the sandbox platform was asked to send, newest first, with their statuses',
    query: z.object({ to: QueryE164.optional(), limit: z.coerce.number().int().min(1).max(200).default(50) }),
    response: z.object({
      data: z.array(
        z.object({
          platformMessageId: z.string(),
          idempotencyKey: z.string(),
          phoneNumberId: z.string(),
          to: z.string(),
          kind: z.string(),
          body: z.string(),
          template: z.record(z.string(), z.unknown()).nullable(),
          status: z.string().openapi({ description: 'accepted, or refused at once (errorCode)' }),
          errorCode: z.number().int().nullable(),
          submittedAt: z.string(),
          statuses: z.array(
            z.object({ status: z.string(), errorCode: z.number().int().nullable(), dueAt: z.string(), reportedAt: z.string().nullable() }),
          ),
        }),
      ),
    }),
    handler: async ({ query }) => ({ data: await d.platform.messages(query) }),
  });
  sandboxRoute(api, {
    method: 'get',
    path: '/sandbox/chatapp/templates',
    summary: 'Templates submitted to the sandbox platform, newest first, with their review',
    query: z.object({ limit: z.coerce.number().int().min(1).max(200).default(50) }),
    response: z.object({
      data: z.array(
        z.object({
          platformTemplateId: z.string(),
          businessAccountId: z.string(),
          name: z.string(),
          language: z.string(),
          category: z.string(),
          status: z.string(),
          reason: z.string().nullable(),
          submittedAt: z.string(),
          decidesAt: z.string(),
        }),
      ),
    }),
    handler: async ({ query }) => ({ data: await d.platform.templates(query.limit) }),
  });
  sandboxRoute(api, {
    method: 'get',
    path: '/sandbox/chatapp/magic-recipients',
    summary: 'Recipients whose chat-app sends end in a fixed way: one per platform error code',
    response: z.object({
      data: z.array(
        z.object({
          phoneNumber: z.string(),
          outcome: z.string(),
          platformCode: z.number().int().nullable(),
          meaning: z.string().nullable(),
        }),
      ),
    }),
    handler: async () => ({ data: magicRecipients() }),
  });
}
