import pLimit from 'p-limit';
import { z } from 'zod';
import type { AvailableNumber, CarrierPort, LineInfo, LineType, PurchasedNumber } from '../../../application/numbers/carrier.port.js';
import type { LoggerPort } from '../../../application/ports/logger.port.js';
import type { NanpCountry } from '../../../domain/phone-number/north-american-area-codes.js';
import { DomainError, type ErrorCode } from '../../../domain/shared/errors.js';
import { type TwilioApi, TwilioRefusal, TwilioUnanswered, twilioSid } from './twilio-api.js';

/** Twilio's error code for a number that someone else bought between the search and the purchase. */
const NUMBER_NOT_AVAILABLE = 21422;
/** Lookups asked at once by one request (a lookup takes up to 25 numbers, docs/numbers.md#lookup). */
const LOOKUP_CONCURRENCY = 4;

/** What is read of Twilio's answers (the rest is left unread): a number the account holds, … */
const IncomingNumber = z.object({
  sid: twilioSid('PN'),
  phone_number: z.string().regex(/^\+[1-9]\d{1,14}$/),
  friendly_name: z.string().nullish(),
  trunk_sid: z.string().nullish(),
});
type IncomingNumber = z.output<typeof IncomingNumber>;
/** … a page of them, or of numbers for sale … */
const IncomingPage = z.object({ incoming_phone_numbers: z.array(IncomingNumber).nullish() });
const AvailablePage = z.object({ available_phone_numbers: z.array(z.object({ phone_number: z.string() })).nullish() });
/** … and a Lookup v2 answer with line type intelligence. */
const Lookup = z.object({
  valid: z.boolean().nullish(),
  country_code: z.string().max(2).nullish(),
  line_type_intelligence: z
    .object({ type: z.string().nullish(), carrier_name: z.string().max(200).nullish(), error_code: z.number().nullish() })
    .nullish(),
});

export type TwilioNumbersOptions = Readonly<{
  /** where Twilio sends a number's inbound texts (the platform's signed callback, docs/carriers.md#callbacks) */
  smsUrl: string;
  /** the operator's Elastic SIP trunk that a number's calls join (TWILIO_SIP_TRUNK_SID); null: voice is left alone */
  sipTrunkSid: string | null;
  /** the Messaging Service of the operator's 10DLC campaign that a number joins (TWILIO_MESSAGING_SERVICE_SID) */
  messagingServiceSid: string | null;
}>;

/**
 * Line Intelligence's `type` as the platform's line types (docs/carriers.md#lookups): both kinds of VoIP are `voip`;
 * personal, shared-cost, UAN, voicemail and pager numbers, and anything Twilio adds later, are `unknown`.
 */
export const LINE_TYPE_OF: Readonly<Record<string, LineType>> = {
  mobile: 'mobile',
  landline: 'landline',
  fixedVoip: 'voip',
  nonFixedVoip: 'voip',
  tollFree: 'toll-free',
  premium: 'premium',
};

/** The FriendlyName a number bought under a provisioning key carries: how a purchase whose answer was lost is found. */
export const purchaseName = (idempotencyKey: string): string => `agent-platform ${idempotencyKey}`;

/**
 * Numbers and line-type lookups on Twilio (docs/carriers.md#numbers), the CarrierPort of `CARRIER=twilio`:
 *
 * - search: available local numbers of the country (and area code), SMS- and voice-capable;
 * - purchase: `IncomingPhoneNumbers` with the provisioning key in its FriendlyName. Twilio has no idempotency key for
 *   a purchase, so the key is found again by listing the account's numbers with that FriendlyName: a purchase whose
 *   answer was lost (a timeout, a crash) is found, never bought twice; a purchase that raced another of the same key
 *   keeps one number and releases the others;
 * - routing: the number's SMS webhook and its fallback (POST) to the platform's signed callback; with
 *   TWILIO_MESSAGING_SERVICE_SID the number joins that Messaging Service (the one of the operator's 10DLC campaign); and, with TWILIO_SIP_TRUNK_SID, the
 *   number joins that Elastic SIP trunk (its calls go to the SIP engine); without it voice is left as it is;
 * - release: every number the key holds is deleted (none: nothing to do);
 * - lookup: Lookup v2 with line type intelligence.
 *
 * A refusal, or no answer, fails the step as a DomainError (`SMS_PROVIDER_ERROR`, `TELEPHONY_PROVIDER_ERROR` for the
 * trunk, `NUMBER_UNAVAILABLE`): the number process then undoes the provisioning (releasing whatever the key holds) or
 * keeps the number active on a failed release, and never waits on Twilio for ever (docs/operations.md#isolated-work).
 * A purchase that was not answered counts as made when Twilio lists a number under its key.
 */
export class TwilioNumbers implements CarrierPort {
  private readonly lookups = pLimit(LOOKUP_CONCURRENCY);

  constructor(
    private readonly api: TwilioApi,
    private readonly o: TwilioNumbersOptions,
    private readonly log: LoggerPort,
  ) {}

  async searchAvailable(q: { country: NanpCountry; areaCode: string | null; limit: number }): Promise<AvailableNumber[]> {
    const page = await this.refusing('SMS_PROVIDER_ERROR', 'search', () =>
      this.api.get('api', this.api.accountPath(`AvailablePhoneNumbers/${q.country}/Local.json`), AvailablePage, {
        AreaCode: q.areaCode ?? undefined,
        SmsEnabled: true,
        VoiceEnabled: true,
        PageSize: q.limit,
      }),
    );
    return (page.available_phone_numbers ?? [])
      .filter((n) => /^\+1\d{10}$/.test(n.phone_number))
      .slice(0, q.limit)
      .map((n) => ({ phoneNumber: n.phone_number, areaCode: n.phone_number.slice(2, 5), country: q.country }));
  }

  async findPurchase(idempotencyKey: string): Promise<PurchasedNumber | null> {
    const [held] = await this.held(idempotencyKey);
    return held ? { phoneNumber: held.phone_number, carrierRef: held.sid } : null;
  }

  async purchase(o: { phoneNumber: string; idempotencyKey: string; accountId: string }): Promise<PurchasedNumber> {
    const found = await this.findPurchase(o.idempotencyKey);
    if (found) return found;
    let bought: IncomingNumber;
    try {
      bought = await this.api.post(
        'api',
        this.api.accountPath('IncomingPhoneNumbers.json'),
        { PhoneNumber: o.phoneNumber, FriendlyName: purchaseName(o.idempotencyKey) },
        IncomingNumber,
      );
    } catch (err) {
      if (err instanceof TwilioRefusal && err.code === NUMBER_NOT_AVAILABLE) {
        // taken: by someone else, or by this very purchase (a request sent again on a new connection)
        const mine = await this.findPurchase(o.idempotencyKey);
        if (mine) return mine;
        throw new DomainError('NUMBER_UNAVAILABLE', `The requested number ${o.phoneNumber} is unavailable`);
      }
      if (!(err instanceof TwilioRefusal || err instanceof TwilioUnanswered)) throw err;
      // no answer: the purchase may have happened; if Twilio lists it under the key, it did
      if (err instanceof TwilioUnanswered) {
        const lost = await this.findPurchase(o.idempotencyKey).catch(() => null);
        if (lost) return lost;
      }
      // else the provisioning fails, and its undo releases whatever the key holds by then
      throw new DomainError('SMS_PROVIDER_ERROR', carrierMessage(err));
    }
    // a purchase of the same key that raced this one (its answer lost, tried again meanwhile): one number stays
    for (const extra of (await this.held(o.idempotencyKey)).filter((n) => n.sid !== bought.sid)) {
      this.log.warn({ idempotencyKey: o.idempotencyKey, sid: extra.sid }, 'twilio: a second number under one purchase key; released');
      await this.api.delete('api', this.api.accountPath(`IncomingPhoneNumbers/${extra.sid}.json`));
    }
    return { phoneNumber: bought.phone_number, carrierRef: bought.sid };
  }

  async configureRouting(o: { idempotencyKey: string; phoneNumber: string }): Promise<void> {
    const number = (await this.held(o.idempotencyKey)).find((n) => n.phone_number === o.phoneNumber);
    if (!number) throw new DomainError('SMS_PROVIDER_ERROR', `Carrier error: ${o.phoneNumber} is not held under this provisioning`);
    await this.refusing('SMS_PROVIDER_ERROR', 'messaging', () =>
      this.api.post(
        'api',
        this.api.accountPath(`IncomingPhoneNumbers/${number.sid}.json`),
        {
          SmsUrl: this.o.smsUrl,
          SmsMethod: 'POST',
          // Twilio does not deliver an inbound text twice: should the platform fail to take it, Twilio tries this once
          SmsFallbackUrl: this.o.smsUrl,
          SmsFallbackMethod: 'POST',
        },
        z.unknown(),
      ),
    );
    const service = this.o.messagingServiceSid;
    if (service) {
      const member = await this.refusing('SMS_PROVIDER_ERROR', 'the Messaging Service', () =>
        this.api.get('messaging', `/v1/Services/${service}/PhoneNumbers/${number.sid}`, z.unknown()).then(
          () => true,
          (err: unknown) => {
            if (err instanceof TwilioRefusal && err.status === 404) return false;
            throw err;
          },
        ),
      );
      if (!member)
        await this.refusing('SMS_PROVIDER_ERROR', 'the Messaging Service', () =>
          this.api.post('messaging', `/v1/Services/${service}/PhoneNumbers`, { PhoneNumberSid: number.sid }, z.unknown()),
        );
    }
    const trunk = this.o.sipTrunkSid;
    if (!trunk || number.trunk_sid === trunk) return;
    await this.refusing('TELEPHONY_PROVIDER_ERROR', 'the SIP trunk', () =>
      this.api.post('trunking', `/v1/Trunks/${trunk}/PhoneNumbers`, { PhoneNumberSid: number.sid }, z.unknown()),
    );
  }

  async release(o: { idempotencyKey: string }): Promise<void> {
    for (const n of await this.held(o.idempotencyKey))
      await this.refusing('SMS_PROVIDER_ERROR', 'release', () =>
        this.api.delete('api', this.api.accountPath(`IncomingPhoneNumbers/${n.sid}.json`)),
      );
  }

  lookup(phoneNumber: string): Promise<LineInfo> {
    return this.lookups(async () => {
      let r: z.output<typeof Lookup>;
      try {
        r = await this.api.get('lookups', `/v2/PhoneNumbers/${encodeURIComponent(phoneNumber)}`, Lookup, {
          Fields: 'line_type_intelligence',
        });
      } catch (err) {
        // a number Twilio cannot read at all
        if (err instanceof TwilioRefusal && err.status === 404)
          return { phoneNumber, valid: false, lineType: 'unknown', country: null, carrierName: null, rcsSupported: false };
        // a lookup is answered while the request waits: no answer is a failed lookup, nothing is charged
        if (err instanceof TwilioRefusal || err instanceof TwilioUnanswered)
          throw new DomainError('SMS_PROVIDER_ERROR', carrierMessage(err));
        throw err;
      }
      const lti = r.line_type_intelligence ?? null;
      const valid = r.valid === true;
      return {
        phoneNumber,
        valid,
        lineType: valid && lti && !lti.error_code ? (LINE_TYPE_OF[lti.type ?? ''] ?? 'unknown') : 'unknown',
        country: valid ? (r.country_code ?? null) : null,
        carrierName: valid ? (lti?.carrier_name ?? null) : null,
        // Lookup v2 says nothing of RCS: no number is known to support it (docs/carriers.md#lookups)
        rcsSupported: false,
      };
    });
  }

  /** The account's numbers bought under `idempotencyKey` (by their FriendlyName), oldest first. */
  private async held(idempotencyKey: string): Promise<IncomingNumber[]> {
    const name = purchaseName(idempotencyKey);
    const page = await this.refusing('SMS_PROVIDER_ERROR', 'number list', () =>
      this.api.get('api', this.api.accountPath('IncomingPhoneNumbers.json'), IncomingPage, {
        FriendlyName: name,
        PageSize: 20,
      }),
    );
    // the filter is Twilio's; the exact name is checked here too
    return (page.incoming_phone_numbers ?? []).filter((n) => n.friendly_name === name);
  }

  /** Runs a Twilio call, a refusal or no answer becoming the DomainError `code` (the step fails, and is undone). */
  private async refusing<T>(code: ErrorCode, what: string, call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (err) {
      if (err instanceof TwilioRefusal || err instanceof TwilioUnanswered) throw new DomainError(code, `${carrierMessage(err)} (${what})`);
      throw err;
    }
  }
}

/** What a failure says to the API's client: Twilio's code and words (no credential is ever in them). */
const carrierMessage = (err: TwilioRefusal | TwilioUnanswered): string => `Carrier error: ${err.message}`;
