import { performance } from 'node:perf_hooks';
import type { OutgoingWebhook, WebhookSenderPort } from '../../application/webhooks/webhook.port.js';
import type { AttemptResult } from '../../domain/webhook/webhook-delivery.decider.js';
import type { Destinations } from '../http-client/address-policy.js';
import { HttpClient, HttpClientError, readBody } from '../http-client/client.js';
import { webhookHeaders } from '../http-client/signing.js';
import { upstreamError, upstreamText } from '../http-client/upstream.js';

/** How much of a response body is read (the log keeps 1 KiB of it); the rest is discarded. */
const MAX_BODY_BYTES = 64 * 1024;

const retryAfterSeconds = (v: string | string[] | undefined): number | null => {
  const s = Array.isArray(v) ? v[0] : v;
  return s && /^\d{1,7}$/.test(s.trim()) ? Number(s.trim()) : null;
};

/**
 * Sends signed webhook POSTs through the one outbound client (infrastructure/http-client/client.ts): the body is
 * serialised once, signed, and those same bytes are written. A non-2xx answer, a network error, or no complete
 * answer within the deadline is a failed attempt. Redirects are not followed (a 3xx is a failure). Connections are
 * kept alive per host.
 */
export class HttpWebhookSender implements WebhookSenderPort {
  private readonly client: HttpClient;

  constructor(o: { destinations: Destinations }) {
    this.client = new HttpClient({ destinations: o.destinations, maxSockets: 64 });
  }

  async send(req: OutgoingWebhook): Promise<AttemptResult> {
    const started = performance.now();
    const failed = (
      errorMessage: string,
      httpStatus: number | null = null,
      responseBody: string | null = null,
      retryAfterS: number | null = null,
    ): AttemptResult => ({ ok: false, httpStatus, errorMessage, responseBody, durationMs: performance.now() - started, retryAfterS });

    const body = Buffer.from(req.body, 'utf8');
    let status: number | null = null;
    try {
      const answer = await this.client.request({
        method: 'POST',
        url: req.url,
        headers: webhookHeaders({ secret: req.secret, webhookId: req.webhookId, timestamp: req.timestamp, body }),
        body,
        timeouts: { head: req.deadlineMs, total: req.deadlineMs },
        ...(req.signal ? { signal: req.signal } : {}),
      });
      status = answer.status;
      // the receiver's answer is upstream input: decoded and made storable (docs/input-rules.md)
      const text = upstreamText(await readBody(answer, { maxBytes: MAX_BODY_BYTES, over: 'truncate' }));
      const responseBody = text.length ? text : null;
      if (status >= 200 && status < 300) return { ok: true, httpStatus: status, responseBody, durationMs: performance.now() - started };
      return failed(
        `HTTP ${status}${answer.statusText ? ` ${answer.statusText}` : ''}`,
        status,
        responseBody,
        retryAfterSeconds(answer.headers['retry-after']),
      );
    } catch (err) {
      if (!(err instanceof HttpClientError)) return failed(upstreamError(err), status);
      if (err.kind === 'timeout') return failed(`no complete answer within ${req.deadlineMs} ms`, status);
      if (err.kind === 'aborted') return failed('aborted: the worker is stopping', status);
      return failed(err.message, status);
    }
  }

  close(): void {
    this.client.close();
  }
}
