import type { MessagingInboundPort } from '../../../application/messaging/delivery/transport.port.js';
import type { ClockPort } from '../../../application/ports/clock.port.js';
import type { RichEventsPort } from '../../../application/rich/rich-provider.port.js';
import { DomainError } from '../../../domain/shared/errors.js';
import { E164 } from '../../agents/agent.schemas.js';
import type { Api } from '../../http/api.js';
import { z } from '../../http/openapi.js';
import { sandboxRoute } from '../shared/http.js';
import type { SandboxRichProvider } from './rich-provider.js';
import { positionAt, RICH_MAGIC, SHARING_CONTACTS, sandboxCapabilities } from './rules.js';

/** A `+` left unencoded in a query string or path arrives as a space. */
const LooseE164 = z.preprocess((v) => (typeof v === 'string' && /^ ?\d+$/.test(v) ? `+${v.trim()}` : v), E164);

/** The rules as data: who can receive what, the magic recipients, and the contacts who share a location now. */
export const sandboxRichRules = (now: Date) => ({
  capabilities:
    'imessage: a valid mobile number (lookup rules) whose last digit is 0, 1 or 2; sms: a valid mobile, VoIP, toll-free or unknown-type number',
  magic: Object.entries(RICH_MAGIC).map(([phoneNumber, m]) => ({ phoneNumber, ...m })),
  sharingContacts: SHARING_CONTACTS.map((c) => ({ phoneNumber: c.phoneNumber, description: c.description, now: positionAt(c, now) })),
});

/**
 * The sandbox rich-messaging provider's control API (docs/sandbox.md#rich-messaging-the-sandbox-provider), mounted only
 * while the sandbox provider is in use: the numbers it serves (adding one makes that native number a rich line here),
 * what it was asked to send with its statuses, the contact cards and backgrounds it holds, typing indicators and
 * reactions it was given, and its number rules.
 */
export function sandboxRichRoutes(
  api: Api,
  d: { provider: SandboxRichProvider; events: () => RichEventsPort; messages: () => MessagingInboundPort; clock: ClockPort },
): void {
  const Line = z.object({ phoneNumber: z.string(), addedAt: z.string() });
  sandboxRoute(api, {
    method: 'get',
    path: '/sandbox/rich/lines',
    summary: 'The numbers the sandbox rich provider serves',
    response: z.object({ data: z.array(Line) }),
    handler: async () => ({ data: await d.provider.lines() }),
  });
  sandboxRoute(api, {
    method: 'post',
    path: '/sandbox/rich/lines',
    summary: 'The provider starts serving a number (a native number of the platform becomes a rich line)',
    body: z.object({ phone_number: LooseE164 }),
    response: z.object({ phoneNumber: z.string(), numberId: z.string().nullable() }),
    handler: async ({ body }) => {
      await d.provider.addLine(body.phone_number);
      const r = await d.events().lineActivated(body.phone_number);
      return { phoneNumber: body.phone_number, numberId: r?.numberId ?? null };
    },
  });
  sandboxRoute(api, {
    method: 'delete',
    path: '/sandbox/rich/lines/:phone_number',
    summary: 'The provider stops serving a number',
    params: z.object({ phone_number: LooseE164 }),
    response: z.object({ phoneNumber: z.string(), numberId: z.string().nullable(), removed: z.boolean() }),
    handler: async ({ params }) => {
      const removed = await d.provider.removeLine(params.phone_number);
      const r = await d.events().lineDeactivated(params.phone_number);
      return { phoneNumber: params.phone_number, numberId: r?.numberId ?? null, removed };
    },
  });
  sandboxRoute(api, {
    method: 'post',
    path: '/sandbox/rich/inbound',
    status: 201,
    summary: 'A person sends a message to a line the provider serves, as the provider reports it',
    body: z
      .object({
        from: LooseE164,
        to: LooseE164.openapi({ description: 'the line' }),
        body: z.string().max(4096).default(''),
        media_urls: z.array(z.url().max(2048)).max(20).optional(),
      })
      .refine((b) => b.body.trim() !== '' || (b.media_urls?.length ?? 0) > 0, {
        message: 'a message needs a body or media_urls',
        path: ['body'],
      }),
    errors: [404],
    response: z.object({ messageId: z.string(), providerMessageId: z.string() }),
    handler: async ({ body }) => {
      const served = (await d.provider.lines()).some((l) => l.phoneNumber === body.to);
      if (!served) throw new DomainError('NOT_FOUND', `The sandbox rich provider does not serve ${body.to}`);
      const m = await d.provider.inbound({ from: body.from, to: body.to, body: body.body, mediaUrls: body.media_urls ?? [] });
      // answered once the read models show it, so the channel's choice for the next send follows it
      const stored = await d.messages().message(m, { readYourWrites: true });
      if (!stored) throw new DomainError('NOT_FOUND', `${body.to} is not a rich line of the platform: the message was dropped`);
      return { messageId: stored.messageId, providerMessageId: m.providerMessageId };
    },
  });
  sandboxRoute(api, {
    method: 'get',
    path: '/sandbox/rich/messages',
    summary: 'Messages the sandbox rich provider was given, newest first, with their statuses',
    query: z.object({ to: LooseE164.optional(), limit: z.coerce.number().int().min(1).max(200).default(50) }),
    response: z.object({
      data: z.array(
        z.object({
          providerMessageId: z.string(),
          idempotencyKey: z.string(),
          from: z.string(),
          to: z.string(),
          body: z.string(),
          mediaUrls: z.array(z.string()),
          sendStyle: z.string().nullable(),
          replyTo: z.string().nullable(),
          submittedAt: z.string(),
          statuses: z.array(z.object({ status: z.string(), dueAt: z.string(), reportedAt: z.string().nullable() })),
        }),
      ),
    }),
    handler: async ({ query }) => ({ data: await d.provider.messages(query) }),
  });
  sandboxRoute(api, {
    method: 'get',
    path: '/sandbox/rich/contact-cards/:phone_number',
    summary: 'The contact card the provider holds for a line (with the avatar it was given: type, size, digest)',
    params: z.object({ phone_number: LooseE164 }),
    errors: [404],
    response: z.object({
      line: z.string(),
      version: z.number().int(),
      card: z.object({ firstName: z.string().nullable(), lastName: z.string().nullable(), displayName: z.string().nullable() }).nullable(),
      avatar: z.object({ contentType: z.string(), bytes: z.number().int(), sha256: z.string() }).nullable(),
      updatedAt: z.string(),
    }),
    handler: async ({ params }) => {
      const c = await d.provider.contactCard(params.phone_number);
      if (!c) throw new DomainError('NOT_FOUND', `The sandbox rich provider holds no contact card for ${params.phone_number}`);
      return c;
    },
  });
  sandboxRoute(api, {
    method: 'get',
    path: '/sandbox/rich/backgrounds',
    summary: 'Chat backgrounds the provider holds (set or cleared), newest first',
    query: z.object({ line: LooseE164.optional() }),
    response: z.object({
      data: z.array(
        z.object({
          line: z.string(),
          participant: z.string(),
          status: z.string(),
          contentType: z.string().nullable(),
          bytes: z.number().int().nullable(),
          sha256: z.string().nullable(),
          updatedAt: z.string(),
        }),
      ),
    }),
    handler: async ({ query }) => ({ data: await d.provider.backgrounds(query.line) }),
  });
  sandboxRoute(api, {
    method: 'get',
    path: '/sandbox/rich/actions',
    summary: 'Typing indicators and reactions the provider was given, newest first',
    query: z.object({ limit: z.coerce.number().int().min(1).max(200).default(50) }),
    response: z.object({
      data: z.array(
        z.object({ kind: z.string(), from: z.string(), to: z.string(), detail: z.record(z.string(), z.unknown()), at: z.string() }),
      ),
    }),
    handler: async ({ query }) => ({ data: await d.provider.actions(query.limit) }),
  });
  sandboxRoute(api, {
    method: 'get',
    path: '/sandbox/rich/rules',
    summary:
      "The sandbox rich provider's number rules: capabilities, magic recipients, and the contacts sharing a location (where they are now)",
    query: z.object({ phone_number: LooseE164.optional() }),
    response: z.object({
      capabilities: z.string(),
      magic: z.array(z.object({ phoneNumber: z.string(), outcome: z.string(), description: z.string() })),
      sharingContacts: z.array(
        z.object({
          phoneNumber: z.string(),
          description: z.string(),
          now: z.object({ latitude: z.number(), longitude: z.number() }).nullable(),
        }),
      ),
      number: z.object({ phoneNumber: z.string(), imessage: z.boolean(), sms: z.boolean() }).optional(),
    }),
    handler: async ({ query }) => ({
      ...sandboxRichRules(d.clock.now()),
      ...(query.phone_number ? { number: { phoneNumber: query.phone_number, ...sandboxCapabilities(query.phone_number) } } : {}),
    }),
  });
}
