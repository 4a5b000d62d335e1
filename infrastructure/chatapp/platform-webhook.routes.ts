import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Request } from 'express';
import type { ChatappEventsPort, TemplateReview } from '../../application/chatapp/chat-platform.port.js';
import type { DeliveryReceipt, InboundMessage, MessagingInboundPort } from '../../application/messaging/delivery/transport.port.js';
import { DomainError } from '../../domain/shared/errors.js';
import type { Api } from '../http/api.js';
import { z } from '../http/openapi.js';
import { toE164 } from './cloud-chat-platform.js';

/** The callback's payload as the platform documents it; only what this side reads is named, the rest passes. */
const Err = z.object({
  code: z.number(),
  title: z.string().optional(),
  message: z.string().optional(),
  error_data: z.object({ details: z.string().optional() }).optional(),
});
const Media = z.object({ id: z.string(), caption: z.string().optional() }).passthrough();
const Message = z
  .object({
    from: z.string(),
    id: z.string(),
    timestamp: z.string(),
    type: z.string(),
    text: z.object({ body: z.string() }).optional(),
    reaction: z.object({ message_id: z.string(), emoji: z.string().optional() }).optional(),
    button: z.object({ text: z.string() }).optional(),
    interactive: z
      .object({ button_reply: z.object({ title: z.string() }).optional(), list_reply: z.object({ title: z.string() }).optional() })
      .passthrough()
      .optional(),
    image: Media.optional(),
    video: Media.optional(),
    document: Media.optional(),
    audio: Media.optional(),
    sticker: Media.optional(),
  })
  .passthrough();
const Status = z.object({ id: z.string(), status: z.string(), timestamp: z.string(), errors: z.array(Err).optional() }).passthrough();
const Change = z.object({
  field: z.string(),
  value: z
    .object({
      metadata: z.object({ phone_number_id: z.string() }).passthrough().optional(),
      messages: z.array(Message).optional(),
      statuses: z.array(Status).optional(),
      event: z.string().optional(),
      message_template_id: z.union([z.string(), z.number()]).optional(),
      reason: z.string().nullish(),
    })
    .passthrough(),
});
export const PlatformCallback = z
  .object({ entry: z.array(z.object({ id: z.string().optional(), changes: z.array(Change) }).passthrough()) })
  .passthrough()
  .openapi('ChatappPlatformCallback');

const at = (unixSeconds: string) => new Date(Number(unixSeconds) * 1000).toISOString();
const MEDIA_TYPES = ['image', 'video', 'document', 'audio', 'sticker'] as const;

/** What one callback reports: messages and statuses as messaging's inbound port takes them, reviews as the capability's. */
export function readCallback(
  payload: z.infer<typeof PlatformCallback>,
  o: { mediaUrl: (mediaId: string) => string },
): { inbound: InboundMessage[]; statuses: DeliveryReceipt[]; reviews: TemplateReview[] } {
  const out = { inbound: [] as InboundMessage[], statuses: [] as DeliveryReceipt[], reviews: [] as TemplateReview[] };
  for (const entry of payload.entry)
    for (const change of entry.changes) {
      const v = change.value;
      if (
        change.field === 'message_template_status_update' &&
        v.message_template_id !== undefined &&
        (v.event === 'APPROVED' || v.event === 'REJECTED')
      )
        out.reviews.push({
          platformTemplateId: String(v.message_template_id),
          approved: v.event === 'APPROVED',
          reason: v.event === 'REJECTED' ? (v.reason ?? 'rejected by the platform') : null,
        });
      if (change.field !== 'messages' || !v.metadata) continue;
      const phoneNumberId = v.metadata.phone_number_id;
      for (const m of v.messages ?? []) {
        const media = MEDIA_TYPES.map((t) => m[t]).find((x) => x !== undefined);
        const body =
          m.text?.body ??
          media?.caption ??
          m.button?.text ??
          m.interactive?.button_reply?.title ??
          m.interactive?.list_reply?.title ??
          (media || m.reaction ? '' : `[${m.type}]`);
        out.inbound.push({
          channel: 'chatapp',
          to: phoneNumberId,
          providerMessageId: m.id,
          from: toE164(m.from),
          body,
          mediaUrls: media ? [o.mediaUrl(media.id)] : [],
          receivedAt: at(m.timestamp),
          group: null,
          reaction: m.type === 'reaction' && m.reaction ? { reaction: m.reaction.emoji ?? '', target: m.reaction.message_id } : null,
        });
      }
      for (const s of v.statuses ?? []) {
        if (s.status !== 'sent' && s.status !== 'delivered' && s.status !== 'read' && s.status !== 'failed') continue;
        const e = s.errors?.[0];
        out.statuses.push({
          channel: 'chatapp',
          providerMessageId: s.id,
          // the platform gives a status no id of its own: a repeated callback repeats this one
          receiptId: `${s.id}:${s.status}`,
          status: s.status,
          at: at(s.timestamp),
          failure: e ? { code: String(e.code), detail: e.error_data?.details ?? e.message ?? e.title ?? '' } : null,
        });
      }
    }
  return out;
}

/** `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the raw body with the app secret>`, checked in constant time. */
export function signatureValid(appSecret: string, rawBody: Buffer, header: string | undefined): boolean {
  if (!header?.startsWith('sha256=')) return false;
  const expected = Buffer.from(createHmac('sha256', appSecret).update(rawBody).digest('hex'));
  const given = Buffer.from(header.slice('sha256='.length).toLowerCase());
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/**
 * The real platform's webhook callback (docs/chatapp.md#receiving-from-the-real-platform): the subscription handshake
 * (GET, echoes `hub.challenge` when `hub.verify_token` is CHATAPP_VERIFY_TOKEN) and the signed reports (POST: inbound
 * messages, statuses, template reviews): messages and statuses to messaging's inbound port, reviews to the capability's
 * events port. Mounted only with CHATAPP_APP_SECRET set.
 * A report that cannot be recorded answers 500, and the platform delivers it again.
 */
export function platformWebhookRoutes(
  api: Api,
  d: {
    events: () => ChatappEventsPort;
    messages: () => MessagingInboundPort;
    appSecret: string;
    verifyToken: string | undefined;
    mediaUrl: (mediaId: string) => string;
  },
): void {
  const path = '/integrations/chatapp/webhook';
  api.route({
    method: 'get',
    path,
    tag: 'chatapp',
    auth: false,
    summary: "The platform's webhook subscription handshake: answers hub.challenge when hub.verify_token matches",
    query: z.object({
      'hub.mode': z.string().optional(),
      'hub.verify_token': z.string().optional(),
      'hub.challenge': z.string().max(200).optional(),
    }),
    errors: [403],
    response: z.number().int(),
    handler: async ({ query }) => {
      const challenge = query['hub.challenge'] ?? '';
      if (
        !d.verifyToken ||
        query['hub.mode'] !== 'subscribe' ||
        query['hub.verify_token'] !== d.verifyToken ||
        !/^\d{1,15}$/.test(challenge)
      )
        throw new DomainError('FORBIDDEN', 'The verify token does not match CHATAPP_VERIFY_TOKEN');
      // the platform reads the answer as the challenge itself: a bare number is the same text in JSON
      return Number(challenge);
    },
  });
  api.route({
    method: 'post',
    path,
    tag: 'chatapp',
    auth: false,
    summary: "The platform's signed reports: inbound messages, statuses of sent messages, template reviews",
    body: PlatformCallback,
    errors: [403],
    response: z.object({ received: z.number().int() }),
    handler: async ({ body, req }) => {
      const raw = (req as Request & { rawBody?: Buffer }).rawBody ?? Buffer.alloc(0);
      if (!signatureValid(d.appSecret, raw, req.get('x-hub-signature-256')))
        throw new DomainError('FORBIDDEN', 'The X-Hub-Signature-256 header does not sign this body with CHATAPP_APP_SECRET');
      const r = readCallback(body, { mediaUrl: d.mediaUrl });
      const messages = d.messages();
      for (const m of r.inbound) await messages.message(m);
      for (const s of r.statuses) await messages.receipt(s);
      for (const t of r.reviews) await d.events().templateReviewed(t);
      return { received: r.inbound.length + r.statuses.length + r.reviews.length };
    },
  });
}
