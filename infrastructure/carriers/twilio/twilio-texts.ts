import type { Kysely } from 'kysely';
import { z } from 'zod';
import {
  type OutboundSms,
  type SmsCarrierPort,
  SmsSubmissionError,
  type SubmittedSms,
} from '../../../application/messaging/sms-carrier.port.js';
import type { ClockPort } from '../../../application/ports/clock.port.js';
import type { LoggerPort } from '../../../application/ports/logger.port.js';
import type { ReadDb } from '../../../projections/shared/read-db.js';
import { twilioFailure } from './error-codes.js';
import { type TwilioApi, TwilioRefusal, twilioSid } from './twilio-api.js';

/** The carrier's own table (migration 160): what it handed to Twilio, per message key. */
export type TwilioSubmissionsTable = {
  idempotency_key: string;
  account_id: string;
  from_number: string;
  to_number: string;
  message_sid: string | null;
  refused_code: string | null;
  refused_reason: string | null;
  first_tried_at: Date | string;
  answered_at: Date | string | null;
};
export type TwilioDb = {
  twilio_submissions: TwilioSubmissionsTable;
};

/** What is read of a message in Twilio's answers (the rest is left unread). */
const Message = z.object({
  sid: twilioSid('SM|MM'),
  body: z.string().nullish(),
  num_media: z.string().nullish(),
  date_created: z.string().nullish(),
});
type Message = z.output<typeof Message>;
const MessagePage = z.object({ messages: z.array(Message).nullish() });

/** How far back (before its first try) a message found at Twilio may have been created and still be the one tried. */
const CLOCK_SKEW_MS = 60_000;
/** Messages between the same two numbers looked through for one whose answer was lost. */
const RECENT = 50;

export type TwilioTextsOptions = Readonly<{
  /** where Twilio reports each message's status (the platform's signed callback, docs/carriers.md#callbacks) */
  statusUrl: string;
  /** the 10DLC registration page named in the reasons of 30034 */
  registerUrl: string;
}>;

/**
 * Texts on Twilio (docs/carriers.md#texts): `POST …/Messages.json` with `From`, `To`, `Body`, every media URL as a
 * `MediaUrl`, and the platform's status callback. Twilio's refusal (a 4xx with its code) refuses the message with the
 * reason that code means (./error-codes.ts); no answer is an unknown outcome, and the transport submits again.
 *
 * Twilio takes no idempotency key for a message, so the key is kept here: the SID Twilio answered (a repeat answers
 * it and sends nothing), or its refusal (refused again). A key tried before whose answer never came is looked for
 * among the recent messages between the same two numbers (same body and media count, created since the first try,
 * not another key's) before it is sent again, so a lost answer does not send a text twice unless Twilio took it and
 * does not list it yet.
 */
export class TwilioTexts implements SmsCarrierPort {
  private readonly db: Kysely<ReadDb & TwilioDb>;

  constructor(
    private readonly api: TwilioApi,
    db: Kysely<ReadDb>,
    private readonly clock: ClockPort,
    private readonly log: LoggerPort,
    private readonly o: TwilioTextsOptions,
  ) {
    // the carrier's own table, on the same connection as the read side
    this.db = db.withTables<TwilioDb>();
  }

  async submit(m: OutboundSms): Promise<SubmittedSms> {
    const row = await this.db
      .selectFrom('twilio_submissions')
      .selectAll()
      .where('idempotency_key', '=', m.idempotencyKey)
      .executeTakeFirst();
    if (row?.message_sid) return { carrierMessageId: row.message_sid };
    if (row?.refused_reason) throw new SmsSubmissionError(row.refused_reason, row.refused_code);
    if (row) {
      const found = await this.lostAnswer(m, new Date(row.first_tried_at));
      if (found) {
        this.log.info({ idempotencyKey: m.idempotencyKey, sid: found }, 'twilio: a text whose answer was lost was found at Twilio');
        await this.answered(m.idempotencyKey, { message_sid: found });
        return { carrierMessageId: found };
      }
    } else {
      await this.db
        .insertInto('twilio_submissions')
        .values({
          idempotency_key: m.idempotencyKey,
          account_id: m.accountId,
          from_number: m.from,
          to_number: m.to,
          message_sid: null,
          refused_code: null,
          refused_reason: null,
          first_tried_at: this.clock.now().toISOString(),
          answered_at: null,
        })
        .onConflict((oc) => oc.column('idempotency_key').doNothing())
        .execute();
    }
    let sent: Message;
    try {
      sent = await this.api.post(
        'api',
        this.api.accountPath('Messages.json'),
        {
          To: m.to,
          From: m.from,
          Body: m.body,
          MediaUrl: m.mediaUrls.length ? m.mediaUrls : undefined,
          StatusCallback: this.o.statusUrl,
        },
        Message,
      );
    } catch (err) {
      if (!(err instanceof TwilioRefusal)) throw err;
      const failure = twilioFailure(err.code, { registerUrl: this.o.registerUrl });
      this.log.info({ idempotencyKey: m.idempotencyKey, code: err.code, status: err.status }, 'twilio refused a text');
      await this.answered(m.idempotencyKey, { refused_code: failure.code, refused_reason: failure.detail });
      throw new SmsSubmissionError(failure.detail, failure.code);
    }
    await this.answered(m.idempotencyKey, { message_sid: sent.sid });
    return { carrierMessageId: sent.sid };
  }

  /** Whether Twilio answered one of this platform's submissions with this message SID (a status callback's message). */
  async sentHere(messageSid: string): Promise<boolean> {
    const row = await this.db
      .selectFrom('twilio_submissions')
      .select('idempotency_key')
      .where('message_sid', '=', messageSid)
      .executeTakeFirst();
    return row !== undefined;
  }

  private async answered(key: string, set: Partial<TwilioSubmissionsTable>): Promise<void> {
    await this.db
      .updateTable('twilio_submissions')
      .set({ ...set, answered_at: this.clock.now().toISOString() })
      .where('idempotency_key', '=', key)
      .execute();
  }

  /** The SID of a message Twilio took for `m` although its answer never came back, if Twilio lists one. */
  private async lostAnswer(m: OutboundSms, firstTriedAt: Date): Promise<string | null> {
    const page = await this.api.get('api', this.api.accountPath('Messages.json'), MessagePage, {
      From: m.from,
      To: m.to,
      PageSize: RECENT,
    });
    const since = firstTriedAt.getTime() - CLOCK_SKEW_MS;
    for (const candidate of page.messages ?? []) {
      if ((candidate.body ?? '') !== m.body || Number(candidate.num_media ?? 0) !== m.mediaUrls.length) continue;
      if (Date.parse(candidate.date_created ?? '') < since) continue;
      // another key's message is not this one
      if (!(await this.sentHere(candidate.sid))) return candidate.sid;
    }
    return null;
  }
}
