import {
  ChatPlatformError,
  type ChatPlatformPort,
  type OutboundChat,
  type PlatformAuth,
  type PlatformNumber,
  type TemplateSubmission,
} from '../../application/chatapp/chat-platform.port.js';
import type { TemplateContent } from '../../domain/chatapp/template.decider.js';
import type { TemplateValues } from '../../domain/chatapp/template-body.js';
import { storableText } from '../../domain/shared/storable-text.js';
import { type HttpAnswer, HttpClient, readBody } from '../http-client/client.js';
import { upstreamError, upstreamJson, upstreamText } from '../http-client/upstream.js';

export type CloudPlatformOptions = Readonly<{
  /** the platform's Graph-style API root, version included (`https://…/v23.0`) */
  baseUrl: string;
  /** the value the platform expects in `messaging_product` */
  messagingProduct: string;
  timeoutMs: number;
}>;

type ErrorBody = { error?: { message?: string; code?: number; error_subcode?: number; error_data?: { details?: string } } };

/** `+1 555-010-0123`, `15550100123` → `+15550100123`: the platform shows numbers for people and sends digits. */
export const toE164 = (display: string): string => `+${display.replace(/\D/g, '')}`;
const digits = (e164: string): string => e164.replace(/\D/g, '');

/** The platform's API description wants a `User-Agent` of the form `name/1.2.3` when one is sent (and this client sends it). */
const USER_AGENT = 'agent-platform-chatapp/0.1.0';

/**
 * The real platform's cloud API over HTTP (docs/chatapp.md#the-platform), in its documented request and response
 * shapes: `GET /{business-account-id}` and `/{business-account-id}/phone_numbers`, `POST /{phone-number-id}/register`,
 * `POST /{business-account-id}/message_templates`, `POST /{phone-number-id}/messages`, each with the connection's token
 * as a bearer token. An answer with an `error` object is a refusal (ChatPlatformError with its code); no answer, a
 * 5xx or a timeout is an unknown outcome (a plain error: the caller tries again). The cloud API has no idempotency
 * key, so a send whose answer is lost may be sent twice when tried again.
 */
export class CloudChatPlatform implements ChatPlatformPort {
  // the operator configures the platform's address: any address, loopback included (a local test double)
  private readonly client = new HttpClient({ destinations: 'any', maxSockets: 16 });

  constructor(private readonly o: CloudPlatformOptions) {}

  private async call<T>(method: 'GET' | 'POST', path: string, token: string, body?: unknown): Promise<T> {
    let res: HttpAnswer;
    let bytes: Uint8Array;
    try {
      res = await this.client.request({
        method,
        url: `${this.o.baseUrl.replace(/\/+$/, '')}/${path}`,
        headers: {
          authorization: `Bearer ${token}`,
          'user-agent': USER_AGENT,
          ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        },
        ...(body !== undefined ? { body: Buffer.from(JSON.stringify(body), 'utf8') } : {}),
        timeouts: { head: this.o.timeoutMs, total: this.o.timeoutMs },
      });
      bytes = await readBody(res, { maxBytes: 1024 * 1024, over: 'truncate' });
    } catch (err) {
      throw new Error(`chat platform unreachable: ${method} ${path}: ${upstreamError(err)}`);
    }
    // the platform's answer is upstream input: bounded and storable (docs/input-rules.md#what-upstream-servers-answer)
    const text = upstreamText(bytes);
    let parsed: unknown = null;
    try {
      parsed = text ? upstreamJson(text) : null;
    } catch {
      /* not JSON: judged by the status below */
    }
    const error = (parsed as ErrorBody | null)?.error;
    // a 5xx is the platform's trouble, not an answer about the request: the outcome is unknown
    if (res.status >= 500) throw new Error(`chat platform answered ${res.status} to ${method} ${path}`);
    if (error || res.status < 200 || res.status >= 300)
      throw new ChatPlatformError(
        typeof error?.code === 'number' ? error.code : 100,
        storableText(String(error?.error_data?.details ?? error?.message ?? `HTTP ${res.status}`), 500),
      );
    return parsed as T;
  }

  async businessAccount(a: PlatformAuth): Promise<{ id: string; name: string | null }> {
    const r = await this.call<{ id: string; name?: string }>(
      'GET',
      `${encodeURIComponent(a.businessAccountId)}?fields=id,name`,
      a.accessToken,
    );
    return { id: r.id, name: r.name ?? null };
  }

  async phoneNumbers(a: PlatformAuth): Promise<PlatformNumber[]> {
    const out: PlatformNumber[] = [];
    let path: string | null = `${encodeURIComponent(a.businessAccountId)}/phone_numbers?fields=id,display_phone_number,verified_name`;
    for (let page = 0; path && page < 50; page++) {
      const r: {
        data: { id: string; display_phone_number: string; verified_name?: string }[];
        paging?: { cursors?: { after?: string }; next?: string };
      } = await this.call('GET', path, a.accessToken);
      for (const n of r.data)
        out.push({ phoneNumberId: n.id, phoneNumber: toE164(n.display_phone_number), verifiedName: n.verified_name ?? null });
      const after = r.paging?.next ? r.paging.cursors?.after : undefined;
      path = after
        ? `${encodeURIComponent(a.businessAccountId)}/phone_numbers?fields=id,display_phone_number,verified_name&after=${encodeURIComponent(after)}`
        : null;
    }
    return out;
  }

  async registerNumber(a: Readonly<{ accessToken: string; phoneNumberId: string; pin: string | null }>): Promise<void> {
    // the cloud API registers a number only with its two-step verification PIN (it sets one when none is set yet):
    // refused here as the platform would refuse it (docs/chatapp.md#numbers)
    if (!a.pin) throw new ChatPlatformError(100, 'registering a number on the cloud API needs its six-digit two-step verification pin');
    await this.call('POST', `${encodeURIComponent(a.phoneNumberId)}/register`, a.accessToken, {
      messaging_product: this.o.messagingProduct,
      pin: a.pin,
    });
  }

  async submitTemplate(a: PlatformAuth & Readonly<{ template: TemplateContent }>): Promise<TemplateSubmission> {
    const r = await this.call<{ id: string; status?: string }>(
      'POST',
      `${encodeURIComponent(a.businessAccountId)}/message_templates`,
      a.accessToken,
      templateBody(a.template),
    );
    const status = (r.status ?? 'PENDING').toUpperCase();
    return {
      platformTemplateId: r.id,
      status: status === 'APPROVED' ? 'approved' : status === 'REJECTED' ? 'rejected' : 'pending',
      reason: null,
    };
  }

  async send(m: OutboundChat): Promise<{ platformMessageId: string }> {
    const r = await this.call<{ messages?: { id: string }[] }>('POST', `${encodeURIComponent(m.phoneNumberId)}/messages`, m.accessToken, {
      messaging_product: this.o.messagingProduct,
      recipient_type: 'individual',
      to: digits(m.to),
      ...messageBody(m.content),
    });
    const id = r.messages?.[0]?.id;
    if (!id) throw new Error('chat platform answered a send without a message id');
    return { platformMessageId: id };
  }
}

/** The platform's template creation body: components BODY (with examples), HEADER (text) and BUTTONS. */
export function templateBody(t: TemplateContent): Record<string, unknown> {
  const v = t.variables;
  const examples = t.examples;
  const body: Record<string, unknown> = { type: 'BODY', text: t.body };
  if (v.format === 'positional') {
    const list = Array.isArray(examples) ? examples : Array.from({ length: v.count }, (_, i) => `example ${i + 1}`);
    body.example = { body_text: [list] };
  } else if (v.format === 'named') {
    const values = examples && !Array.isArray(examples) ? (examples as Record<string, string>) : {};
    body.example = { body_text_named_params: v.names.map((n) => ({ param_name: n, example: values[n] ?? n })) };
  }
  const components: Record<string, unknown>[] = [];
  if (t.header) components.push({ type: 'HEADER', format: 'TEXT', text: t.header });
  components.push(body);
  if (t.buttons.length)
    components.push({
      type: 'BUTTONS',
      buttons: t.buttons.map((b) =>
        b.type === 'quick_reply'
          ? { type: 'QUICK_REPLY', text: b.text }
          : b.type === 'url'
            ? { type: 'URL', text: b.text, url: b.url }
            : { type: 'PHONE_NUMBER', text: b.text, phone_number: b.phoneNumber },
      ),
    });
  return {
    name: t.name,
    language: t.language,
    category: t.category.toUpperCase(),
    ...(v.format === 'named' ? { parameter_format: 'NAMED' } : v.format === 'positional' ? { parameter_format: 'POSITIONAL' } : {}),
    components,
  };
}

/** The platform's message body for each kind of content. */
export function messageBody(c: OutboundChat['content']): Record<string, unknown> {
  switch (c.kind) {
    case 'text':
      return { type: 'text', text: { preview_url: false, body: c.body } };
    case 'media': {
      // one media message carries one file; the first URL goes, with the body as its caption
      const link = c.mediaUrls[0]!;
      const type = /\.(jpe?g|png|webp)(\?|$)/i.test(link) ? 'image' : /\.(mp4|3gp)(\?|$)/i.test(link) ? 'video' : 'document';
      return { type, [type]: { link, ...(c.caption ? { caption: c.caption } : {}) } };
    }
    case 'template':
      return {
        type: 'template',
        template: {
          name: c.name,
          language: { policy: 'deterministic', code: c.language },
          components: templateParameters(c.values),
        },
      };
  }
}

const templateParameters = (values: TemplateValues | null) => {
  if (values === null || (Array.isArray(values) ? values.length === 0 : Object.keys(values).length === 0)) return [];
  const parameters = Array.isArray(values)
    ? values.map((text) => ({ type: 'text', text }))
    : Object.entries(values as Record<string, string>).map(([parameter_name, text]) => ({ type: 'text', parameter_name, text }));
  return [{ type: 'body', parameters }];
};
