import { consentDecider, isOptedOut } from '../../domain/conversation/consent.decider.js';
import type { ConversationEvent } from '../../domain/conversation/conversation.decider.js';
import { type Failure, messageDecider } from '../../domain/message/message.decider.js';
import { phoneNumberDecider } from '../../domain/phone-number/phone-number.decider.js';
import { streams } from '../../domain/shared/streams.js';
import type { RecordedEvent } from '../ports/event-store.port.js';
import type { LoggerPort } from '../ports/logger.port.js';
import type { RegistrationStatusPort } from '../registration/registration-status.port.js';
import type { RequestContext } from '../shared/context.js';
import type { CommandExecutor } from '../shared/execute.js';
import { ProcessManager } from '../shared/process-manager.js';
import { failureOf, NOT_ENABLED_REASON, OPTED_OUT_REASON, SUBMISSION_ERROR_REASON, unregistered10dlcReason } from './failures.js';
import { type SmsCarrierPort, SmsSubmissionError } from './sms-carrier.port.js';

type Handled = Extract<ConversationEvent, { type: 'OutboundMessageAccepted' | 'InboundMessageReceived' }>;

/** Submissions whose outcome stayed unknown this many times fail the message (retryable for the sender). */
export const MAX_SUBMISSION_ERRORS = 3;

/** The channels the carrier carries; messages of other channels are delivered by their own channel's process manager. */
const CARRIER_CHANNELS: ReadonlySet<string> = new Set(['sms', 'mms']);

/**
 * Takes each message recorded on a conversation to its own stream (docs/messaging.md#message-lifecycle), and
 * hands outbound ones to the carrier: queued, then the checks that fail a message without sending it
 * (the recipient opted out; a US number without an approved 10DLC registration), then the submission, keyed by
 * the message id so that a crash between submission and record never sends twice. Inbound messages of every channel
 * get their own stream here; outbound ones only on the carrier's channels (docs/messaging.md#channels).
 */
export class MessageSender extends ProcessManager<Handled> {
  readonly name = 'message_sender';
  readonly handles = ['OutboundMessageAccepted', 'InboundMessageReceived'] as const;

  constructor(
    private readonly exec: CommandExecutor,
    private readonly carrier: SmsCarrierPort,
    private readonly registration: RegistrationStatusPort,
    private readonly log: LoggerPort,
    private readonly o: { registerUrl: string },
  ) {
    super();
  }

  protected instanceOf(e: RecordedEvent<Handled>): string {
    return e.data.messageId;
  }

  protected async react(e: RecordedEvent<Handled>, ctx: RequestContext): Promise<void> {
    const stream = streams.message(e.data.messageId);
    if (e.type === 'InboundMessageReceived') {
      const { keyword: _k, ...d } = e.data;
      await this.exec.execute(messageDecider, stream, { type: 'Receive', data: d }, ctx);
      return;
    }
    const d = e.data;
    if (!CARRIER_CHANNELS.has(d.channel)) return;
    const { sendStyle: _s, reengagement: _r, template: _t, ...facts } = d;
    const queued = await this.exec.execute(messageDecider, stream, { type: 'Queue', data: facts }, ctx);
    if (!queued.state.exists || queued.state.status !== 'queued') return;

    const blocked = await this.preflight(e, ctx);
    if (blocked.failure) return this.fail(ctx, d.messageId, blocked.failure);

    const carrierMessageIds: string[] = [];
    try {
      for (const [i, to] of blocked.recipients.entries()) {
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
      if (err instanceof SmsSubmissionError) return this.fail(ctx, d.messageId, failureOf(err.failureReason, err.errorCode));
      const r = await this.exec.execute(
        messageDecider,
        stream,
        { type: 'RecordSubmissionError', data: { messageId: d.messageId, error: String(err) } },
        ctx,
      );
      const errors = r.state.exists ? r.state.submissionErrors : MAX_SUBMISSION_ERRORS;
      if (errors >= MAX_SUBMISSION_ERRORS) return this.fail(ctx, d.messageId, failureOf(SUBMISSION_ERROR_REASON, null));
      this.log.warn({ err, messageId: d.messageId, attempt: errors }, 'carrier submission failed; retrying');
      throw err;
    }
    await this.exec.execute(messageDecider, stream, { type: 'RecordSubmission', data: { messageId: d.messageId, carrierMessageIds } }, ctx);
  }

  /** Who the message may go to, or why it fails without being sent. Automatic answers to STOP/HELP/START skip consent. */
  private async preflight(
    e: RecordedEvent<Extract<Handled, { type: 'OutboundMessageAccepted' }>>,
    ctx: RequestContext,
  ): Promise<{ recipients: string[]; failure: Failure | null }> {
    const d = e.data;
    const { state: n } = await this.exec.load(phoneNumberDecider, streams.phoneNumber(d.numberId));
    if (n.status !== 'active') return { recipients: [], failure: failureOf(NOT_ENABLED_REASON, null) };
    if (n.country === 'US' && (await this.registration.statusOf(ctx.accountId)) !== 'approved')
      return { recipients: [], failure: failureOf(unregistered10dlcReason(this.o.registerUrl), null) };
    if (d.kind === 'auto_reply') return { recipients: [...d.recipients], failure: null };
    const allowed: string[] = [];
    for (const to of d.recipients) {
      const { state } = await this.exec.load(consentDecider, streams.consent(ctx.accountId, to));
      if (!isOptedOut(state, d.numberId)) allowed.push(to);
    }
    if (allowed.length === 0) return { recipients: [], failure: failureOf(OPTED_OUT_REASON, null) };
    return { recipients: allowed, failure: null };
  }

  private async fail(ctx: RequestContext, messageId: string, f: Failure): Promise<void> {
    await this.exec.execute(messageDecider, streams.message(messageId), { type: 'Fail', data: { messageId, ...f } }, ctx);
  }
}
