import type { MessagingInboundPort } from '../../application/messaging/delivery/transport.port.js';
import {
  type OutboundSms,
  type SmsCarrierPort,
  SmsSubmissionError,
  type SubmittedSms,
} from '../../application/messaging/sms-carrier.port.js';
import { type FailureCode, failureText } from '../../domain/message/failure-reasons.js';
import { DomainError } from '../../domain/shared/errors.js';
import { type Capability, token } from '../../infrastructure/capabilities/capability.js';
import type { Api } from '../../infrastructure/http/api.js';
import { z } from '../../infrastructure/http/openapi.js';
import { MESSAGING } from '../../infrastructure/messaging/tokens.js';
import { SANDBOX } from '../../infrastructure/sandbox/tokens.js';

/**
 * A toy carrier for texts, built as docs/adding-a-channel.md#a-carrier-for-texts says a live one is (a folder
 * `infrastructure/carriers/<name>/`): the adapter of the texts' carrier port, the mapping of its error codes to the
 * reasons of docs/message-failures.md, its signed callback routes handing what it reports to messaging's inbound port,
 * and a module contributing it as a carrier. test/integration/adding-a-carrier.int.spec.ts runs texts through it with
 * CARRIER=toy; nothing of the delivery pipeline changes.
 */

// ---- infrastructure/carriers/toy/error-codes.ts --------------------------------------------------------------------

/** The carrier's codes, each the reason of docs/message-failures.md it means (an unknown code: the catalogue's default). */
const CODES: Readonly<Record<string, FailureCode>> = { '21610': 'RECIPIENT_OPTED_OUT', '30003': 'HANDSET_UNREACHABLE_OR_OFF' };
export const reasonOf = (code: string): string | null => (CODES[code] ? failureText(CODES[code]) : null);

// ---- infrastructure/carriers/toy/toy-carrier.ts ----------------------------------------------------------------------

/** A recipient the toy carrier refuses at once, with its code 21610 (the recipient unsubscribed). */
export const REFUSED_RECIPIENT = '+17735550990';

export class ToyCarrier implements SmsCarrierPort {
  readonly sent: OutboundSms[] = [];

  async submit(m: OutboundSms): Promise<SubmittedSms> {
    if (m.to === REFUSED_RECIPIENT) throw new SmsSubmissionError(reasonOf('21610') ?? '', '21610');
    // idempotent by the key, as the port asks: the same message is never sent twice
    const known = this.sent.findIndex((s) => s.idempotencyKey === m.idempotencyKey);
    if (known >= 0) return { carrierMessageId: `TOY${known}` };
    this.sent.push(m);
    return { carrierMessageId: `TOY${this.sent.length - 1}` };
  }
}

// ---- infrastructure/carriers/toy/callbacks.routes.ts -----------------------------------------------------------------

export const TOY_SIGNATURE = 'signed-by-the-toy-carrier';
const STATUSES = { sent: 'sent', delivered: 'delivered', read: 'read', undelivered: 'failed', failed: 'failed' } as const;

function toyCallbackRoutes(api: Api, d: { messages: () => MessagingInboundPort }): void {
  const signed = (header: string | undefined) => {
    if (header !== TOY_SIGNATURE) throw new DomainError('FORBIDDEN', 'The callback is not signed by the toy carrier');
  };
  api.route({
    method: 'post',
    path: '/toy-carrier/status',
    tag: 'toy-carrier',
    auth: false,
    summary: "The toy carrier's status callback",
    body: z.object({
      MessageSid: z.string(),
      MessageStatus: z.enum(['sent', 'delivered', 'read', 'undelivered', 'failed']),
      ErrorCode: z.string().optional(),
    }),
    response: z.object({ ok: z.boolean() }),
    errors: [403],
    handler: async ({ body, req }) => {
      signed(req.get('x-toy-signature'));
      await d.messages().receipt({
        channel: 'sms',
        providerMessageId: body.MessageSid,
        receiptId: `${body.MessageSid}:${body.MessageStatus}`,
        status: STATUSES[body.MessageStatus],
        at: new Date().toISOString(),
        failure: body.ErrorCode ? { code: body.ErrorCode, detail: reasonOf(body.ErrorCode) } : null,
      });
      return { ok: true };
    },
  });
  api.route({
    method: 'post',
    path: '/toy-carrier/inbound',
    tag: 'toy-carrier',
    auth: false,
    summary: "The toy carrier's inbound text callback",
    body: z.object({ MessageSid: z.string(), From: z.string(), To: z.string(), Body: z.string() }),
    response: z.object({ messageId: z.string().nullable() }),
    errors: [403],
    handler: async ({ body, req }) => {
      signed(req.get('x-toy-signature'));
      const stored = await d.messages().message({
        channel: 'sms',
        to: body.To,
        providerMessageId: body.MessageSid,
        from: body.From,
        body: body.Body,
        mediaUrls: [],
        receivedAt: new Date().toISOString(),
        group: null,
        reaction: null,
      });
      return { messageId: stored?.messageId ?? null };
    },
  });
}

// ---- infrastructure/carriers/toy/module.ts ---------------------------------------------------------------------------

export const TOY = { Carrier: token<ToyCarrier>('ToyCarrier') } as const;

export const toyCarrier = {
  name: 'toy-carrier',
  bind: (b) => b.value(TOY.Carrier, new ToyCarrier()),
  // its numbers stay the sandbox kit's: the toy only carries texts
  carriers: () => [{ name: 'toy', numbers: (r) => r(SANDBOX.Carrier), texts: (r) => r(TOY.Carrier) }],
  routes: { public: (api, r) => toyCallbackRoutes(api, { messages: () => r(MESSAGING.Inbound) }) },
} as const satisfies Capability;
