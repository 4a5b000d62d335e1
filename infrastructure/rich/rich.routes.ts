import type { RichCapabilities } from '../../application/rich/rich-capabilities.js';
import type { RichCommands } from '../../application/rich/rich-commands.js';
import { E164 } from '../agents/agent.schemas.js';
import { normalizePhone } from '../contacts/contact.schemas.js';
import type { Api } from '../http/api.js';
import { z } from '../http/openapi.js';

/** A phone number as people write it (a `+` sent unencoded in a query string arrives as a space), normalized to E.164. */
const Phone = z.preprocess((v) => normalizePhone(typeof v === 'string' && /^ \d/.test(v) ? `+${v.trim()}` : v), E164);
const NameField = z.string().trim().max(100).nullish();
const ImageUrl = z.url({ protocol: /^https?$/ }).max(2048);

const ContactCapabilitiesResponse = z
  .object({
    phoneNumber: z.string(),
    capabilities: z.object({ imessage: z.boolean(), sms: z.boolean() }).openapi('ContactCapabilityFlags'),
    checkedAt: z.string(),
  })
  .openapi('ContactCapabilitiesResponse');

const ContactCardResponse = z
  .object({ firstName: z.string().nullable(), lastName: z.string().nullable(), displayName: z.string().nullable(), hasAvatar: z.boolean() })
  .openapi('ContactCardResponse');

const ContactCardWriteRequest = z
  .object({
    firstName: NameField,
    lastName: NameField,
    displayName: NameField,
    avatarUrl: ImageUrl.nullish().openapi({
      description: 'an image fetched once: JPEG, PNG, GIF, WebP or HEIC (checked by content), at most 10 MB, from a public address',
    }),
  })
  .openapi('ContactCardWriteRequest');

const SetBackgroundRequest = z
  .object({
    image_url: ImageUrl.openapi({ description: 'JPEG, PNG, GIF, WebP or HEIC (checked by content), at most 10 MB, from a public address' }),
  })
  .openapi('SetBackgroundRequest');

const SetBackgroundResponse = z
  .object({
    conversationId: z.string(),
    channel: z.string(),
    hasBackground: z.boolean(),
    backgroundId: z.string().nullable(),
    backgroundVersion: z.number().int().nullable(),
    changed: z.boolean().openapi({ description: 'false when the same image was already the background' }),
  })
  .openapi('SetBackgroundResponse');

const LocationResponse = z
  .object({
    phoneNumber: z.string(),
    latitude: z.number().nullable(),
    longitude: z.number().nullable(),
    status: z.enum(['active', 'not_sharing']),
    lastUpdated: z.number().int().openapi({ description: "Unix seconds of the provider's last position" }),
  })
  .openapi('LocationResponse');

const LocationRefreshResponse = z.object({ success: z.boolean(), pollAfterSeconds: z.number().int() }).openapi('LocationRefreshResponse');

const NumberIdParams = z.object({ number_id: z.string().min(1).max(100) });
const ConversationIdParams = z.object({ conversation_id: z.string().min(1).max(100) });

/** The rich-messaging channel's public operations (docs/rich-messaging.md). */
export function richRoutes(api: Api, d: { commands: RichCommands; capabilities: RichCapabilities }): void {
  api.route({
    method: 'get',
    path: '/v1/contacts/capabilities',
    tag: 'contacts',
    summary: 'What a phone number can receive now (imessage, sms): a live check through the rich provider, cached briefly',
    query: z.object({ phone_number: Phone.openapi({ description: 'E.164 (URL-encode + as %2B)' }) }),
    response: ContactCapabilitiesResponse,
    errors: [422, 502],
    handler: async ({ query, ctx }) => {
      const c = await d.capabilities.ofNumber(ctx, query.phone_number);
      return { phoneNumber: c.phoneNumber, capabilities: { imessage: c.imessage, sms: c.sms }, checkedAt: c.checkedAt };
    },
  });

  api.route({
    method: 'get',
    path: '/v1/numbers/:number_id/contact-card',
    tag: 'contactCards',
    summary: "The number's contact card on the rich channel (all null when none is set)",
    params: NumberIdParams,
    response: ContactCardResponse,
    errors: [404],
    handler: ({ params, ctx }) => d.commands.card(ctx, params.number_id),
  });
  api.route({
    method: 'put',
    path: '/v1/numbers/:number_id/contact-card',
    tag: 'contactCards',
    summary: "Creates or replaces the number's contact card (the avatar is fetched once, checked and kept)",
    params: NumberIdParams,
    body: ContactCardWriteRequest,
    response: ContactCardResponse,
    errors: [404, 502],
    handler: ({ params, body, ctx }) =>
      d.commands.putCard(ctx, params.number_id, {
        firstName: body.firstName ?? null,
        lastName: body.lastName ?? null,
        displayName: body.displayName ?? null,
        avatarUrl: body.avatarUrl ?? null,
      }),
  });
  api.route({
    method: 'delete',
    path: '/v1/numbers/:number_id/contact-card',
    tag: 'contactCards',
    summary: "Removes the number's contact card (none set: nothing to do)",
    params: NumberIdParams,
    status: 204,
    response: z.undefined(),
    errors: [404],
    handler: async ({ params, ctx }) => {
      await d.commands.deleteCard(ctx, params.number_id);
    },
  });

  api.route({
    method: 'post',
    path: '/v1/conversations/:conversation_id/background',
    tag: 'conversations',
    summary: 'Sets the chat background of an imessage conversation (fetched, checked by content, handed to the provider)',
    params: ConversationIdParams,
    body: SetBackgroundRequest,
    response: SetBackgroundResponse,
    errors: [404, 502],
    handler: ({ params, body, ctx }) => d.commands.setBackground(ctx, params.conversation_id, body.image_url),
  });
  api.route({
    method: 'delete',
    path: '/v1/conversations/:conversation_id/background',
    tag: 'conversations',
    summary: 'Clears the chat background (none set: nothing to do)',
    params: ConversationIdParams,
    status: 204,
    response: z.undefined(),
    errors: [404],
    handler: async ({ params, ctx }) => {
      await d.commands.removeBackground(ctx, params.conversation_id);
    },
  });

  api.route({
    method: 'post',
    path: '/v1/location/refresh',
    tag: 'location',
    summary: 'Asks the provider for the locations contacts share with the account’s rich lines; read them after pollAfterSeconds',
    response: LocationRefreshResponse,
    errors: [422],
    handler: ({ ctx }) => d.commands.refreshLocations(ctx),
  });
  api.route({
    method: 'get',
    path: '/v1/location/:phone_number',
    tag: 'location',
    summary: 'The location a contact shares with the account’s rich lines, as of the last refresh',
    params: z.object({ phone_number: Phone }),
    response: LocationResponse,
    errors: [404],
    handler: ({ params, ctx }) => d.commands.location(ctx, params.phone_number),
  });
}
