import type { DeliveryReceipt, MessagingInboundPort } from '../../../application/messaging/delivery/transport.port.js';
import type { ClockPort } from '../../../application/ports/clock.port.js';
import type { LoggerPort } from '../../../application/ports/logger.port.js';
import type { ReceiptStatus } from '../../../domain/message/message.decider.js';
import { DomainError } from '../../../domain/shared/errors.js';
import { E164 } from '../../agents/agent.schemas.js';
import type { Api } from '../../http/api.js';
import { z } from '../../http/openapi.js';
import { twilioFailure } from './error-codes.js';
import { TWILIO_CALLBACK_PATHS } from './settings.js';
import { assertTwilioSignature } from './signature.js';
import { twilioSid } from './twilio-api.js';

/** A form as it arrives: every field a string (a repeated one a list), nothing nested. Read for good once signed. */
const Form = z.record(z.string(), z.union([z.string(), z.array(z.string())])).openapi('TwilioCallbackForm');

/** At most ten media per message, as Twilio sends them. */
const MAX_MEDIA = 10;

/** Twilio's inbound message webhook, the parameters this side reads (the rest is signed and passes). */
const InboundForm = z
  .object({
    MessageSid: twilioSid('SM|MM'),
    AccountSid: twilioSid('AC'),
    // as the sandbox carrier takes it: a phone's number (a short code's texts are not conversations of an agent)
    From: E164,
    To: E164,
    Body: z.string().max(10_000).default(''),
    NumMedia: z.coerce.number().int().min(0).max(MAX_MEDIA).default(0),
  })
  .catchall(z.unknown());

/** Twilio's message status callback. */
const StatusForm = z
  .object({
    MessageSid: twilioSid('SM|MM'),
    AccountSid: twilioSid('AC'),
    MessageStatus: z.string().min(1).max(32),
    ErrorCode: z
      .string()
      .regex(/^\d{1,6}$/)
      .optional(),
  })
  .catchall(z.unknown());

/** Twilio's statuses as receipts; the ones before `sent` (accepted, queued, sending, scheduled) say nothing new. */
const RECEIPT: Readonly<Record<string, ReceiptStatus>> = {
  sent: 'sent',
  delivered: 'delivered',
  read: 'read',
  undelivered: 'failed',
  failed: 'failed',
  canceled: 'failed',
};

/** How often, and how long apart, a status callback's message is looked for before it counts as unknown here. */
const RECEIPT_TRIES = 5;
const RECEIPT_RETRY_MS = 200;

/**
 * What every callback answers: empty TwiML (text/xml). Twilio runs the answer to an inbound message as instructions;
 * an empty <Response/> sends nothing back (an agent answers through the API). A status callback's answer is only
 * acknowledged, so both routes answer alike.
 */
export const EMPTY_TWIML = '<?xml version="1.0" encoding="UTF-8"?><Response/>';

export type TwilioCallbackDeps = Readonly<{
  messages: () => MessagingInboundPort;
  /** whether Twilio answered one of this platform's submissions with a message SID */
  sentHere: (messageSid: string) => Promise<boolean>;
  clock: ClockPort;
  log: LoggerPort;
  accountSid: string;
  authToken: string;
  publicUrl: string;
  registerUrl: string;
}>;

/**
 * Twilio's callbacks (docs/carriers.md#callbacks): the inbound message webhook every number's SMS URL (and fallback
 * URL) points at, and the status callback of every message sent. Each request is checked first: its
 * X-Twilio-Signature must sign it over PUBLIC_URL with the auth token, and it must be for this account; anything
 * else is a 403 and nothing is recorded. Then it goes to messaging's one inbound handler, keyed by Twilio's message
 * SID, so a callback delivered twice (or replayed) records nothing new.
 */
export function twilioCallbackRoutes(api: Api, d: TwilioCallbackDeps): void {
  /** A callback route: signed over PUBLIC_URL, for this account, then read with its schema and handled. */
  const callback = <S extends z.ZodType<{ AccountSid: string }>>(
    path: string,
    summary: string,
    schema: S,
    handle: (form: z.infer<S>) => Promise<void>,
  ) =>
    api.route({
      method: 'post',
      path,
      tag: 'carrier',
      auth: false,
      form: true,
      summary,
      body: Form,
      produces: 'text/xml',
      response: z.literal(EMPTY_TWIML),
      errors: [403, 413],
      handler: async ({ body, req }) => {
        assertTwilioSignature(
          { authToken: d.authToken, publicUrl: d.publicUrl },
          { originalUrl: req.originalUrl, signature: req.get('x-twilio-signature'), params: body },
        );
        const form = schema.parse(body);
        if (form.AccountSid !== d.accountSid) throw new DomainError('FORBIDDEN', 'The callback is for another Twilio account');
        await handle(form);
        return EMPTY_TWIML;
      },
    });

  callback(
    TWILIO_CALLBACK_PATHS.messages,
    "Twilio's inbound message webhook (signed with X-Twilio-Signature): a text or MMS to one of the platform's numbers",
    InboundForm,
    async (m) => {
      const mediaUrls: string[] = [];
      for (let i = 0; i < m.NumMedia; i++) {
        const url = z.string().url().max(2048).safeParse(m[`MediaUrl${i}`]);
        if (url.success) mediaUrls.push(url.data);
      }
      const stored = await d.messages().message({
        channel: 'sms',
        to: m.To,
        providerMessageId: m.MessageSid,
        from: m.From,
        body: m.Body,
        mediaUrls,
        receivedAt: d.clock.now().toISOString(),
        group: null,
        reaction: null,
      });
      if (!stored) d.log.info({ messageSid: m.MessageSid, to: m.To }, 'twilio: inbound message for no number of this platform: dropped');
    },
  );

  callback(
    TWILIO_CALLBACK_PATHS.status,
    "Twilio's message status callback (signed with X-Twilio-Signature): sent, delivered, read, undelivered or failed, with Twilio's error code",
    StatusForm,
    async (s) => {
      const status = RECEIPT[s.MessageStatus];
      if (!status) return;
      const code = s.ErrorCode === undefined ? null : Number(s.ErrorCode);
      const receipt: DeliveryReceipt = {
        channel: 'sms',
        providerMessageId: s.MessageSid,
        // Twilio reports each status of a message once; a repeat of it is the same receipt
        receiptId: `${s.MessageSid}:${s.MessageStatus}`,
        status,
        at: d.clock.now().toISOString(),
        failure: status === 'failed' ? twilioFailure(code, { registerUrl: d.registerUrl }) : null,
      };
      // A status can overtake the record of the send it is about (Twilio answers the send and may report `sent` at
      // once; the SID is kept, then the submission recorded): look again shortly. A SID this platform never sent
      // (another application on the Twilio account, a message from the console) is logged and ignored; one it sent
      // whose record never appears is a 500 (Twilio does not deliver a status callback twice).
      let ours = false;
      for (let attempt = 1; ; attempt++) {
        ours ||= await d.sentHere(s.MessageSid);
        if (ours)
          try {
            await d.messages().receipt(receipt);
            return;
          } catch (err) {
            if (err instanceof DomainError || attempt >= RECEIPT_TRIES) throw err;
          }
        else if (attempt >= RECEIPT_TRIES) {
          d.log.warn(
            { messageSid: s.MessageSid, status: s.MessageStatus },
            'twilio: status of a message this platform did not send: ignored',
          );
          return;
        }
        await new Promise((r) => setTimeout(r, RECEIPT_RETRY_MS * attempt));
      }
    },
  );
}
