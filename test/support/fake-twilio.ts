import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { getExpectedTwilioSignature } from 'twilio/lib/webhooks/webhooks.js';
import { AREA_CODES } from '../../domain/phone-number/north-american-area-codes.js';
import type { ContractMock } from './prism.js';

/**
 * Twilio, as far as the carrier adapter speaks to it (docs/testing.md#the-twilio-carrier), for what a mock of Twilio's
 * published API documents cannot show: state (the numbers bought, their names, routes and trunk; the messages sent),
 * refusals with Twilio's error codes, lost answers, and the signed callbacks Twilio makes. **Every request first goes to
 * the contract mock of its document** (api, lookups or trunking: test/support/prism.ts), which checks it against the
 * document; a request the document refuses is answered with the mock's refusal (and fails the test through
 * `useContractMock`). An accepted request is answered from this fake's state, laid over the mock's answer, so that
 * each answer has the document's shape (its example) with this world's values.
 *
 * The world: every US/CA area code has 20 numbers for sale, +1 NPA 555 0100-0119, except 907 which has none. Line
 * types by the last digit (`LOOKUP_TYPES`); numbers of 13 digits or more are invalid. Callbacks (`inbound`, `status`)
 * are signed as Twilio signs them (X-Twilio-Signature with the auth token, over the public URL the platform gave) and
 * sent to the platform's real address (`deliverTo`), as through a proxy behind that public URL.
 */

export const FAKE_ACCOUNT_SID = `AC${'0123456789abcdef'.repeat(2)}`;
export const FAKE_AUTH_TOKEN = 'fake-twilio-auth-token-0123456789';
export const FAKE_TRUNK_SID = `TK${'fedcba9876543210'.repeat(2)}`;
export const FAKE_MESSAGING_SERVICE_SID = `MG${'00112233445566778899aabbccddeeff'}`;

/** Lookup v2 line types the fake answers, by a number's last digit. */
export const LOOKUP_TYPES: Readonly<Record<string, string>> = {
  '0': 'mobile',
  '1': 'landline',
  '2': 'fixedVoip',
  '3': 'nonFixedVoip',
  '4': 'tollFree',
  '5': 'premium',
  '6': 'personal',
  '7': 'sharedCost',
  '8': 'mobile',
  '9': 'unknown',
};

export type FakeNumber = {
  sid: string;
  phone_number: string;
  friendly_name: string;
  sms_url: string | null;
  sms_method: string | null;
  sms_fallback_url: string | null;
  trunk_sid: string | null;
  date_created: string;
};
export type FakeMessage = {
  sid: string;
  from: string;
  to: string;
  body: string;
  media: string[];
  status: string;
  status_callback: string | null;
  date_created: string;
};
export type FakeRequest = Readonly<{ operation: string; method: string; path: string; form: URLSearchParams; query: URLSearchParams }>;

type Answer = { status: number; body?: unknown; lose?: 'drop' | 'hang' | 'garble' };
/**
 * A refusal with Twilio's code; the effect with its answer lost (the connection drops), never given (it hangs until
 * the caller gives up) or garbled (a success whose body is `{}`); or (a list) an answer that does not see recent
 * changes yet.
 */
type Fault = { status: number; code: number; message: string } | 'lose-answer' | 'hang' | 'garble' | 'stale';

const hex = (n: number) => randomBytes(n).toString('hex');
const sidOf = (prefix: string) => `${prefix}${hex(16)}`;
const twilioError = (status: number, code: number, message: string): Answer => ({
  status,
  body: { code, message, more_info: `https://www.twilio.com/docs/errors/${code}`, status },
});

type Doc = 'api' | 'lookups' | 'trunking' | 'messaging';

/**
 * The operation a request is, by the documents' operationIds (the mock routes by the same paths); those of the
 * documents other than the main API's are named with their document (`lookups.FetchPhoneNumber`), since the documents
 * reuse ids.
 */
function operationOf(method: string, path: string): { doc: Doc; op: string; sid?: string; pn?: string } | null {
  const acc = /^\/2010-04-01\/Accounts\/[^/]+\/(.+)$/.exec(path)?.[1];
  if (acc !== undefined) {
    if (method === 'GET' && /^AvailablePhoneNumbers\/[^/]+\/Local\.json$/.test(acc))
      return { doc: 'api', op: 'ListAvailablePhoneNumberLocal' };
    if (acc === 'IncomingPhoneNumbers.json')
      return { doc: 'api', op: method === 'POST' ? 'CreateIncomingPhoneNumber' : 'ListIncomingPhoneNumber' };
    const pn = /^IncomingPhoneNumbers\/(PN[0-9a-fA-F]{32})\.json$/.exec(acc)?.[1];
    if (pn) return { doc: 'api', op: method === 'DELETE' ? 'DeleteIncomingPhoneNumber' : 'UpdateIncomingPhoneNumber', sid: pn };
    if (acc === 'Messages.json') return { doc: 'api', op: method === 'POST' ? 'CreateMessage' : 'ListMessage' };
    return { doc: 'api', op: `${method} ${acc}` };
  }
  if (path.startsWith('/v2/PhoneNumbers/')) return { doc: 'lookups', op: 'lookups.FetchPhoneNumber' };
  const trunk = /^\/v1\/Trunks\/([^/]+)\/PhoneNumbers$/.exec(path)?.[1];
  if (trunk) return { doc: 'trunking', op: method === 'POST' ? 'trunking.CreatePhoneNumber' : 'trunking.ListPhoneNumber', sid: trunk };
  const service = /^\/v1\/Services\/([^/]+)\/PhoneNumbers(?:\/([^/]+))?$/.exec(path);
  if (service?.[2]) return { doc: 'messaging', op: 'messaging.FetchPhoneNumber', sid: service[1]!, pn: service[2] };
  if (service)
    return { doc: 'messaging', op: method === 'POST' ? 'messaging.CreatePhoneNumber' : 'messaging.ListPhoneNumber', sid: service[1]! };
  return null;
}

export type FakeTwilio = Awaited<ReturnType<typeof startFakeTwilio>>;

export async function startFakeTwilio(o: {
  mocks: Readonly<Record<Doc, () => ContractMock>>;
  accountSid?: string;
  authToken?: string;
  trunkSid?: string;
  messagingServiceSid?: string;
}) {
  const accountSid = o.accountSid ?? FAKE_ACCOUNT_SID;
  const authToken = o.authToken ?? FAKE_AUTH_TOKEN;
  const trunkSid = o.trunkSid ?? FAKE_TRUNK_SID;
  const serviceSid = o.messagingServiceSid ?? FAKE_MESSAGING_SERVICE_SID;
  /** the numbers (their SIDs) in the Messaging Service */
  const inService = new Set<string>();
  const numbers = new Map<string, FakeNumber>();
  const messages = new Map<string, FakeMessage>();
  const requests: FakeRequest[] = [];
  const faults = new Map<string, Fault[]>();
  /** recipients whose texts Twilio refuses at once, with its code */
  const refuseTo = new Map<string, number>();
  let deliverTo: string | null = null;

  const forSale = (areaCode: string): string[] => {
    if (areaCode === '907') return [];
    const taken = new Set([...numbers.values()].map((n) => n.phone_number));
    return Array.from({ length: 20 }, (_, i) => `+1${areaCode}555${String(100 + i).padStart(4, '0')}`).filter((n) => !taken.has(n));
  };

  /** The mock's answer to the same request: the document's verdict, and its example as the shape of ours. */
  async function throughMock(doc: Doc, req: IncomingMessage, raw: string) {
    const headers: Record<string, string> = {};
    for (const h of ['authorization', 'content-type', 'accept', 'user-agent'])
      if (typeof req.headers[h] === 'string') headers[h] = req.headers[h] as string;
    const res = await fetch(`${o.mocks[doc]().url}${req.url}`, {
      method: req.method ?? 'GET',
      headers,
      ...(raw && req.method !== 'GET' ? { body: raw } : {}),
    });
    const text = await res.text();
    let body: any = null;
    try {
      body = text ? JSON.parse(text) : null;
    } catch {
      body = text;
    }
    return { status: res.status, body, contentType: res.headers.get('content-type') ?? 'application/json' };
  }

  function answer(
    op: string,
    sid: string | undefined,
    pn: string | undefined,
    path: string,
    q: URLSearchParams,
    form: URLSearchParams,
    example: any,
  ): Answer {
    const queued = faults.get(op);
    const fault = queued?.shift();
    if (fault && typeof fault === 'object') return twilioError(fault.status, fault.code, fault.message);
    const lose = fault === 'lose-answer' ? 'drop' : fault === 'hang' || fault === 'garble' ? fault : undefined;
    const stale = fault === 'stale';
    const done = (a: Answer): Answer => (lose ? { ...a, lose } : a);
    switch (op) {
      case 'ListAvailablePhoneNumberLocal': {
        const country = /AvailablePhoneNumbers\/([A-Z]{2})\//.exec(path)?.[1] ?? 'US';
        const wanted = q.get('AreaCode');
        const codes = wanted ? [wanted] : [...AREA_CODES.values()].filter((a) => a.country === country).map((a) => a.areaCode);
        const size = Number(q.get('PageSize') ?? 50);
        const found: string[] = [];
        for (const code of codes) {
          if (AREA_CODES.get(code)?.country !== country) continue;
          found.push(...forSale(code));
          if (found.length >= size) break;
        }
        const item = example.available_phone_numbers?.[0] ?? {};
        return done({
          status: 200,
          body: {
            ...example,
            available_phone_numbers: found.slice(0, size).map((n) => ({
              ...item,
              phone_number: n,
              friendly_name: n,
              iso_country: country,
              capabilities: { voice: true, sms: true, mms: true, fax: false },
            })),
          },
        });
      }
      case 'CreateIncomingPhoneNumber': {
        const phone = form.get('PhoneNumber') ?? '';
        if (!forSale(phone.slice(2, 5)).includes(phone)) return twilioError(400, 21422, 'PhoneNumber Requested is not available');
        const n: FakeNumber = {
          sid: sidOf('PN'),
          phone_number: phone,
          friendly_name: form.get('FriendlyName') ?? phone,
          sms_url: form.get('SmsUrl'),
          sms_method: form.get('SmsMethod'),
          sms_fallback_url: form.get('SmsFallbackUrl'),
          trunk_sid: null,
          date_created: new Date().toUTCString(),
        };
        numbers.set(n.sid, n);
        return done({ status: 201, body: { ...example, ...n } });
      }
      case 'ListIncomingPhoneNumber': {
        const name = q.get('FriendlyName');
        const phone = q.get('PhoneNumber');
        const item = example.incoming_phone_numbers?.[0] ?? {};
        const list = stale
          ? []
          : [...numbers.values()].filter((n) => (!name || n.friendly_name === name) && (!phone || n.phone_number === phone));
        return done({ status: 200, body: { ...example, incoming_phone_numbers: list.map((n) => ({ ...item, ...n })) } });
      }
      case 'UpdateIncomingPhoneNumber': {
        const n = sid ? numbers.get(sid) : undefined;
        if (!n) return twilioError(404, 20404, `The requested resource ${path} was not found`);
        if (form.has('SmsUrl')) n.sms_url = form.get('SmsUrl');
        if (form.has('SmsMethod')) n.sms_method = form.get('SmsMethod');
        if (form.has('SmsFallbackUrl')) n.sms_fallback_url = form.get('SmsFallbackUrl');
        if (form.has('FriendlyName')) n.friendly_name = form.get('FriendlyName')!;
        return done({ status: 200, body: { ...example, ...n } });
      }
      case 'DeleteIncomingPhoneNumber': {
        if (!sid || !numbers.delete(sid)) return twilioError(404, 20404, `The requested resource ${path} was not found`);
        inService.delete(sid);
        return done({ status: 204 });
      }
      case 'messaging.FetchPhoneNumber': {
        if (sid !== serviceSid || !pn || !inService.has(pn)) return twilioError(404, 20404, `The requested resource ${path} was not found`);
        return done({ status: 200, body: { ...example, sid: pn, service_sid: serviceSid, phone_number: numbers.get(pn)?.phone_number } });
      }
      case 'messaging.CreatePhoneNumber': {
        const n = numbers.get(form.get('PhoneNumberSid') ?? '');
        if (sid !== serviceSid || !n) return twilioError(404, 20404, `The requested resource ${path} was not found`);
        if (inService.has(n.sid)) return twilioError(409, 21710, 'Phone Number is already in the Messaging Service');
        inService.add(n.sid);
        return done({ status: 201, body: { ...example, sid: n.sid, service_sid: serviceSid, phone_number: n.phone_number } });
      }
      case 'trunking.CreatePhoneNumber': {
        if (sid !== trunkSid) return twilioError(404, 20404, `The requested resource ${path} was not found`);
        const n = numbers.get(form.get('PhoneNumberSid') ?? '');
        if (!n) return twilioError(404, 20404, 'The phone number was not found');
        if (n.trunk_sid === trunkSid) return twilioError(409, 21711, 'The phone number is already associated with this trunk');
        n.trunk_sid = trunkSid;
        return done({ status: 201, body: { ...example, sid: n.sid, trunk_sid: trunkSid, phone_number: n.phone_number } });
      }
      case 'lookups.FetchPhoneNumber': {
        const phone = decodeURIComponent(path.slice('/v2/PhoneNumbers/'.length));
        const valid = /^\+[1-9]\d{7,11}$/.test(phone);
        const type = LOOKUP_TYPES[phone.at(-1) ?? ''] ?? 'unknown';
        return done({
          status: 200,
          body: {
            ...example,
            phone_number: phone,
            valid,
            validation_errors: valid ? [] : ['TOO_LONG'],
            country_code: valid ? (phone.startsWith('+44') ? 'GB' : (AREA_CODES.get(phone.slice(2, 5))?.country ?? 'US')) : null,
            line_type_intelligence: valid
              ? {
                  type,
                  carrier_name: type === 'unknown' ? null : `Fake ${type} carrier`,
                  mobile_country_code: '310',
                  mobile_network_code: '456',
                  error_code: null,
                }
              : null,
          },
        });
      }
      case 'CreateMessage': {
        const from = form.get('From') ?? '';
        const to = form.get('To') ?? '';
        if (![...numbers.values()].some((n) => n.phone_number === from))
          return twilioError(
            400,
            21606,
            "The 'From' phone number provided is not a valid message-capable Twilio phone number for this destination/account",
          );
        const refused = refuseTo.get(to);
        if (refused !== undefined) return twilioError(400, refused, `Refused by the fake for ${to}`);
        const m: FakeMessage = {
          sid: sidOf('SM'),
          from,
          to,
          body: form.get('Body') ?? '',
          media: form.getAll('MediaUrl'),
          status: 'queued',
          status_callback: form.get('StatusCallback'),
          date_created: new Date().toUTCString(),
        };
        messages.set(m.sid, m);
        return done({ status: 201, body: messageBody(example, m) });
      }
      case 'ListMessage': {
        const item = example.messages?.[0] ?? {};
        const list = [...messages.values()]
          .filter((m) => (!q.get('To') || m.to === q.get('To')) && (!q.get('From') || m.from === q.get('From')))
          .reverse();
        return done({ status: 200, body: { ...example, messages: list.map((m) => messageBody(item, m)) } });
      }
      default:
        return twilioError(404, 20404, `The fake does not serve ${op}`);
    }
  }

  const messageBody = (example: any, m: FakeMessage) => ({
    ...example,
    sid: m.sid,
    from: m.from,
    to: m.to,
    body: m.body,
    status: m.status,
    num_media: String(m.media.length),
    date_created: m.date_created,
    error_code: null,
    error_message: null,
    messaging_service_sid: null,
    account_sid: accountSid,
  });

  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        const url = new URL(req.url ?? '/', 'http://fake');
        const method = (req.method ?? 'GET').toUpperCase();
        const found = operationOf(method, url.pathname);
        const form = new URLSearchParams(raw);
        requests.push({ operation: found?.op ?? `${method} ${url.pathname}`, method, path: url.pathname, form, query: url.searchParams });
        if (!found) {
          res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify(twilioError(404, 20404, 'Not found').body));
          return;
        }
        const mock = await throughMock(found.doc, req, raw);
        if (mock.status >= 400) {
          // the document refuses the request (useContractMock fails the test): Twilio would not have taken it either
          res
            .writeHead(mock.status, { 'content-type': mock.contentType, connection: 'close' })
            .end(typeof mock.body === 'string' ? mock.body : JSON.stringify(mock.body));
          return;
        }
        const a = answer(found.op, found.sid, found.pn, url.pathname, url.searchParams, form, mock.body ?? {});
        // the effect happened; the answer never arrives
        if (a.lose === 'drop') req.socket.destroy();
        if (a.lose === 'garble') {
          res.writeHead(a.status, { 'content-type': 'application/json', connection: 'close' }).end('{}');
          return;
        }
        if (a.lose) return;
        // a connection per request: a lost answer is then lost for good (the platform's client sends a request again
        // only when a kept-alive connection was closed under it, docs/security.md#outbound-requests)
        if (a.status === 204) res.writeHead(204, { connection: 'close' }).end();
        else res.writeHead(a.status, { 'content-type': 'application/json', connection: 'close' }).end(JSON.stringify(a.body));
      })().catch((err: unknown) => {
        res.writeHead(500, { 'content-type': 'text/plain' }).end(String(err));
      });
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  /** Posts a callback as Twilio does: form-encoded, signed over the URL the platform gave, sent to its real address. */
  async function callback(publicUrl: string, params: Record<string, string>, o2: { signature?: string } = {}) {
    if (!deliverTo) throw new Error('fake Twilio: deliverTo(appUrl) first');
    const target = new URL(publicUrl);
    const signature = o2.signature ?? getExpectedTwilioSignature(authToken, publicUrl, params);
    const res = await fetch(`${deliverTo}${target.pathname}${target.search}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        'x-twilio-signature': signature,
        'i-twilio-idempotency-token': hex(8),
      },
      body: new URLSearchParams(params).toString(),
    });
    return { status: res.status, type: res.headers.get('content-type'), text: await res.text() };
  }

  return {
    url,
    accountSid,
    authToken,
    trunkSid,
    messagingServiceSid: serviceSid,
    numbers,
    messages,
    /** the SIDs of the numbers in the Messaging Service */
    inService,
    requests,
    refuseTo,
    /** the next `times` requests of an operation are refused with Twilio's code, or performed with their answer lost */
    fail(operation: string, fault: Fault, times = 1) {
      faults.set(operation, [...(faults.get(operation) ?? []), ...Array.from({ length: times }, () => fault)]);
    },
    /** an operation's requests so far */
    sent: (operation: string) => requests.filter((r) => r.operation === operation),
    /** where callbacks really go: the platform's address behind its public URL */
    deliverTo(appUrl: string) {
      deliverTo = appUrl;
    },
    byPhone: (phone: string) => [...numbers.values()].find((n) => n.phone_number === phone),
    /** someone texts one of the numbers: Twilio's inbound webhook to the number's SmsUrl */
    inbound(m: { from: string; to: string; body: string; mediaUrls?: string[]; messageSid?: string }, o2: { signature?: string } = {}) {
      const n = [...numbers.values()].find((x) => x.phone_number === m.to);
      if (!n?.sms_url) throw new Error(`fake Twilio: ${m.to} has no SMS URL`);
      const media = m.mediaUrls ?? [];
      const params: Record<string, string> = {
        ToCountry: 'US',
        SmsMessageSid: m.messageSid ?? sidOf(media.length ? 'MM' : 'SM'),
        NumMedia: String(media.length),
        From: m.from,
        To: m.to,
        Body: m.body,
        NumSegments: '1',
        MessageSid: '',
        AccountSid: accountSid,
        ApiVersion: '2010-04-01',
      };
      params.MessageSid = params.SmsMessageSid!;
      for (const [i, u] of media.entries()) {
        params[`MediaUrl${i}`] = u;
        params[`MediaContentType${i}`] = 'image/jpeg';
      }
      return { messageSid: params.MessageSid, send: () => callback(n.sms_url!, params, o2) };
    },
    /** Twilio reports a message's status to the StatusCallback it was sent with */
    status(sid: string, status: string, o2: { errorCode?: number; signature?: string } = {}) {
      const m = messages.get(sid);
      if (!m?.status_callback) throw new Error(`fake Twilio: ${sid} has no status callback`);
      m.status = status;
      const params: Record<string, string> = {
        AccountSid: accountSid,
        ApiVersion: '2010-04-01',
        From: m.from,
        To: m.to,
        MessageSid: sid,
        SmsSid: sid,
        MessageStatus: status,
        SmsStatus: status,
        ...(o2.errorCode !== undefined ? { ErrorCode: String(o2.errorCode) } : {}),
      };
      return callback(m.status_callback, params, o2);
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((ok) => server.close(() => ok()));
    },
  };
}
