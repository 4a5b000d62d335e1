import { z } from 'zod';
import { storableText } from '../../../domain/shared/storable-text.js';
import { HttpClient, HttpClientError, readBody } from '../../http-client/client.js';
import { upstreamJson, upstreamText } from '../../http-client/upstream.js';

/** Twilio's answers are small (a page of 50 numbers is about 60 KiB): more than this is not read. */
const MAX_ANSWER_BYTES = 1024 * 1024;

/**
 * Twilio's REST API over HTTP (docs/carriers.md#twilio), in the shapes of Twilio's published OpenAPI documents: form
 * bodies (`application/x-www-form-urlencoded`, a list as the same key repeated), JSON answers, HTTP basic
 * authentication with the account SID and auth token or an API key SID and secret. Four hosts, each overridable
 * (TWILIO_API_BASE_URL, TWILIO_LOOKUPS_BASE_URL, TWILIO_TRUNKING_BASE_URL, TWILIO_MESSAGING_BASE_URL), so that tests point
 * them at the contract mock.
 *
 * Requests go through the platform's one outbound client (docs/security.md#outbound-requests), to any address (the
 * hosts are the operator's configuration). Credentials go in the Authorization header only: no error, log line or
 * answer of this client carries them.
 * Answers are upstream input (docs/input-rules.md#what-upstream-servers-answer): read up to 1 MiB and made storable,
 * Twilio's error words cut to 300 characters, since they may end up in a fact (a provisioning's abort), and every
 * success read with the schema of what the caller uses of it: a success that does not match says nothing of what
 * happened, an unknown outcome like no answer.
 */

export type TwilioHost = 'api' | 'lookups' | 'trunking' | 'messaging';

export type TwilioApiOptions = Readonly<{
  accountSid: string;
  /** who authenticates: the account (SID and auth token) or an API key (SID and secret) */
  username: string;
  password: string;
  baseUrls: Readonly<Record<TwilioHost, string>>;
  timeoutMs: number;
}>;

/** Twilio refused the request: a 4xx with Twilio's error code (`{code, message, more_info, status}`). */
export class TwilioRefusal extends Error {
  constructor(
    readonly status: number,
    /** Twilio's error code (21422, 21610, …); null when the answer carried none */
    readonly code: number | null,
    message: string,
  ) {
    super(message);
    this.name = 'TwilioRefusal';
  }
}

/**
 * No answer about the request: Twilio was unreachable, timed out, answered 5xx, or asked to slow down (429). The
 * request may or may not have taken effect.
 */
export class TwilioUnanswered extends Error {
  constructor(
    message: string,
    /** 429 or 5xx when Twilio answered, null when it did not */
    readonly status: number | null = null,
  ) {
    super(message);
    this.name = 'TwilioUnanswered';
  }
}

export type FormValue = string | number | boolean | readonly string[] | undefined;

/** Twilio's refusal (`{code, message, more_info, status}`), what of it is read: the code, as a number or digits. */
const ErrorBody = z.object({
  code: z
    .union([
      z.number().int(),
      z
        .string()
        .regex(/^\d{1,9}$/)
        .transform(Number),
    ])
    .nullish(),
  message: z.string().nullish(),
});

/** A Twilio SID: its two-letter prefix (`PN` a number, `SM`/`MM` a message, …) and 32 hex digits. */
export const twilioSid = (prefix: string) =>
  z.string().regex(new RegExp(`^(${prefix})[0-9a-fA-F]{32}$`), `a Twilio SID starting ${prefix}`);

/** A form body as Twilio reads it: unset fields left out, a list as its key repeated (`MediaUrl=a&MediaUrl=b`). */
export function formOf(fields: Readonly<Record<string, FormValue>>): URLSearchParams {
  const form = new URLSearchParams();
  for (const [k, v] of Object.entries(fields)) {
    if (v === undefined) continue;
    if (Array.isArray(v)) for (const item of v) form.append(k, item);
    else form.append(k, String(v));
  }
  return form;
}

export class TwilioApi {
  private readonly authorization: string;
  // the operator configures Twilio's hosts: any address, loopback included (the contract mock in the tests)
  private readonly client = new HttpClient({ destinations: 'any', maxSockets: 16 });

  constructor(private readonly o: TwilioApiOptions) {
    this.authorization = `Basic ${Buffer.from(`${o.username}:${o.password}`).toString('base64')}`;
  }

  get accountSid(): string {
    return this.o.accountSid;
  }

  /** `/2010-04-01/Accounts/{AccountSid}/<rest>` on the main API host. */
  accountPath(rest: string): string {
    return `/2010-04-01/Accounts/${this.o.accountSid}/${rest}`;
  }

  /** GET, its answer read with `answer` (what the caller uses of it). */
  get<S extends z.ZodType>(
    host: TwilioHost,
    path: string,
    answer: S,
    query: Readonly<Record<string, FormValue>> = {},
  ): Promise<z.output<S>> {
    const q = formOf(query).toString();
    return this.call('GET', host, q ? `${path}?${q}` : path, answer);
  }

  /** POST of a form, its answer read with `answer`. */
  post<S extends z.ZodType>(host: TwilioHost, path: string, fields: Readonly<Record<string, FormValue>>, answer: S): Promise<z.output<S>> {
    return this.call('POST', host, path, answer, formOf(fields));
  }

  /** DELETE; a 404 (already gone) answers false, a deletion true. */
  async delete(host: TwilioHost, path: string): Promise<boolean> {
    try {
      await this.call('DELETE', host, path, z.unknown());
      return true;
    } catch (err) {
      if (err instanceof TwilioRefusal && err.status === 404) return false;
      throw err;
    }
  }

  private async call<S extends z.ZodType>(
    method: 'GET' | 'POST' | 'DELETE',
    host: TwilioHost,
    path: string,
    answer: S,
    form?: URLSearchParams,
  ): Promise<z.output<S>> {
    const what = `${method} ${host} ${path.split('?')[0]}`;
    let status: number;
    let text: string;
    try {
      const res = await this.client.request({
        method,
        url: `${this.o.baseUrls[host].replace(/\/+$/, '')}${path}`,
        headers: {
          authorization: this.authorization,
          accept: 'application/json',
          'user-agent': 'agent-voice-platform/0.1.0 (twilio-carrier)',
          ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
        },
        ...(form ? { body: Buffer.from(form.toString(), 'utf8') } : {}),
        timeouts: { head: this.o.timeoutMs, total: this.o.timeoutMs },
      });
      status = res.status;
      text = upstreamText(await readBody(res, { maxBytes: MAX_ANSWER_BYTES, over: 'truncate' }));
    } catch (err) {
      // no answer, or one cut off: the request may or may not have taken effect
      throw new TwilioUnanswered(`Twilio unreachable: ${what}: ${err instanceof HttpClientError ? err.message : String(err)}`);
    }
    if (status === 429 || status >= 500) throw new TwilioUnanswered(`Twilio answered ${status} to ${what}`, status);
    const ok = status >= 200 && status < 300;
    let parsed: unknown = null;
    try {
      parsed = text ? upstreamJson(text) : null;
    } catch {
      // a success whose words cannot be read says nothing of what happened: an unknown outcome
      if (ok) throw new TwilioUnanswered(`Twilio answered ${status} to ${what} with a body that is not JSON`, status);
    }
    if (!ok) {
      const e = ErrorBody.safeParse(parsed);
      const code = (e.success ? e.data.code : null) ?? null;
      const words = e.success && e.data.message ? storableText(e.data.message, 300) : `HTTP ${status}`;
      throw new TwilioRefusal(status, code, `Twilio refused ${what}: ${code ?? status} ${words}`);
    }
    const read = answer.safeParse(parsed);
    // a success whose answer lacks what the platform needs of it: what happened is as unknown as with no answer
    if (!read.success) throw new TwilioUnanswered(`Twilio answered ${status} to ${what} with a body this platform cannot read`, status);
    return read.data;
  }

  /** Drops the kept-alive connections (at shutdown). */
  close(): void {
    this.client.close();
  }
}
