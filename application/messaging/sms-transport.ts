import { consentDecider, consentStream, isOptedOut } from '../../domain/conversation/consent.decider.js';
import type { Channel } from '../../domain/conversation/conversation.decider.js';
import { segmentsOf } from '../../domain/message/encoding.js';
import type { Failure } from '../../domain/message/message.decider.js';
import { phoneNumberDecider, phoneNumberStream } from '../../domain/phone-number/phone-number.decider.js';
import type { NumberQueries } from '../numbers/number-queries.port.js';
import type { IdsPort } from '../ports/ids.port.js';
import type { LoggerPort } from '../ports/logger.port.js';
import type { RegistrationStatusPort } from '../registration/registration-status.port.js';
import type { RequestContext } from '../shared/context.js';
import type { CommandExecutor } from '../shared/execute.js';
import {
  DeliveryRefused,
  type InboundLine,
  type MessageTransport,
  type OutboundMessage,
  type Preflight,
  type ProviderFailure,
} from './delivery/transport.port.js';
import { failureOf, NOT_ENABLED_REASON, OPTED_OUT_REASON, SUBMISSION_ERROR_REASON, unregistered10dlcReason } from './failures.js';
import { type SmsCarrierPort, SmsSubmissionError } from './sms-carrier.port.js';
import { textConversationId } from './sms-channel.js';

export const CARRIER_ACTOR = 'system:carrier';

/**
 * Texts (SMS, and MMS with media) through the carrier (docs/messaging.md#sending-post-v1messages): the transport of the
 * native numbers. Before a submission, a message fails without being sent when its number is no longer active, when
 * the number is in the US and its account has no approved 10DLC registration, or when every recipient opted out
 * (automatic answers to STOP/HELP/START skip consent); a group message is one submission per recipient, each keyed by
 * the message id and the recipient's place. The carrier (`SmsCarrierPort`: the sandbox kit's, or a live one) maps
 * its failures to the reasons of docs/message-failures.md; inbound texts go to the account's active number of that
 * E.164 and are read for consent keywords.
 */
export class SmsTransport implements MessageTransport {
  readonly channel = 'sms';
  readonly carries = ['sms', 'mms'] as const;
  readonly actor = CARRIER_ACTOR;
  readonly conversationChannel = 'native';
  readonly unanswered: Failure = failureOf(SUBMISSION_ERROR_REASON, null);
  readonly texts = { measure: segmentsOf, readsKeywords: true } as const;

  constructor(
    private readonly exec: CommandExecutor,
    private readonly ids: IdsPort,
    private readonly carrier: SmsCarrierPort,
    private readonly registration: RegistrationStatusPort,
    private readonly numbers: NumberQueries,
    private readonly log: LoggerPort,
    private readonly o: { registerUrl: string },
  ) {}

  async preflight(d: OutboundMessage, ctx: RequestContext): Promise<Preflight> {
    const { state: n } = await this.exec.state(phoneNumberDecider, phoneNumberStream(d.numberId));
    if (n.status !== 'active') return { failure: failureOf(NOT_ENABLED_REASON, null) };
    if (n.country === 'US' && (await this.registration.statusOf(ctx.accountId)) !== 'approved')
      return { failure: failureOf(unregistered10dlcReason(this.o.registerUrl), null) };
    if (d.kind === 'auto_reply') return { failure: null, recipients: d.recipients };
    const allowed: string[] = [];
    for (const to of d.recipients) {
      const { state } = await this.exec.state(consentDecider, consentStream(ctx.accountId, to));
      if (!isOptedOut(state, d.numberId)) allowed.push(to);
    }
    if (allowed.length === 0) return { failure: failureOf(OPTED_OUT_REASON, null) };
    return { failure: null, recipients: allowed };
  }

  async submit(d: OutboundMessage, recipients: readonly string[], ctx: RequestContext): Promise<readonly string[]> {
    const carrierMessageIds: string[] = [];
    try {
      for (const [i, to] of recipients.entries()) {
        const key = d.recipients.length > 1 ? `${d.messageId}:${i}` : d.messageId;
        const r = await this.carrier.submit({
          idempotencyKey: key,
          accountId: ctx.accountId,
          from: d.from,
          to,
          body: d.body,
          mediaUrls: d.mediaUrls,
        });
        carrierMessageIds.push(r.carrierMessageId);
      }
    } catch (err) {
      if (err instanceof SmsSubmissionError) throw new DeliveryRefused(failureOf(err.failureReason, err.errorCode));
      throw err;
    }
    return carrierMessageIds;
  }

  failure(f: ProviderFailure): Failure {
    return failureOf(f.detail ?? '', f.code);
  }

  async line(address: string): Promise<InboundLine | null> {
    const n = await this.numbers.activeByPhoneNumber(address);
    // a released or unknown number: the text belongs to no account here
    if (!n) this.log.warn({ to: address }, 'inbound text for a number that is not active here: dropped');
    return n ? { accountId: n.accountId, numberId: n.id, phoneNumber: n.phoneNumber, agentId: n.agentId } : null;
  }

  conversationId(line: InboundLine, participant: string): string {
    return textConversationId(this.ids, line.accountId, line.numberId, participant);
  }

  inboundMessageId(providerMessageId: string): string {
    return this.ids.derived('msg', 'inbound', providerMessageId);
  }

  inboundReactionId(providerMessageId: string): string {
    return this.ids.derived('rxn', 'inbound', providerMessageId);
  }

  inboundChannel(mediaUrls: readonly string[]): Channel {
    return mediaUrls.length > 0 ? 'mms' : 'sms';
  }
}
