import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { OutgoingWebhook, WebhookSenderPort } from '../../application/webhooks/webhook.port.js';
import type { AttemptResult } from '../../domain/webhook/webhook-delivery.decider.js';
import { closedWhileIdle, keepAliveAgents } from '../http-client/keep-alive.js';
import { upstreamError, upstreamHeader, upstreamText } from '../http-client/upstream.js';
import { addressAllowed, type Destinations, normaliseHost, notAllowedReason } from './address-policy.js';
import { webhookHeaders } from './signing.js';

/** How much of a response body is read (the log keeps 1 KiB of it); the rest is discarded. */
const MAX_BODY_BYTES = 64 * 1024;

class AddressNotAllowedError extends Error {
  readonly code = 'EADDRNOTALLOWED';
}

/**
 * A DNS lookup that refuses answers `destinations` does not allow: the address checked is the address
 * connected to, so a name that resolves differently at delivery time (DNS rebinding) cannot reach the
 * internal network.
 */
export const guardedLookup =
  (destinations: Destinations): LookupFunction =>
  (hostname, options, callback) => {
    dnsLookup(
      hostname,
      options as LookupOptions,
      (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => {
        if (err) {
          callback(err, '', 0);
          return;
        }
        const all = Array.isArray(address) ? address : [{ address, family: family ?? 4 }];
        const bad = all.find((a) => !addressAllowed(destinations, a.address));
        if (bad) {
          callback(new AddressNotAllowedError(`${hostname} resolves to ${notAllowedReason(bad.address, destinations)}`), '', 0);
          return;
        }
        (callback as (e: null, a: string | LookupAddress[], f?: number) => void)(null, address, family);
      },
    );
  };

const retryAfterSeconds = (v: string | string[] | undefined): number | null => {
  const s = Array.isArray(v) ? v[0] : v;
  return s && /^\d{1,7}$/.test(s.trim()) ? Number(s.trim()) : null;
};

const describe = (err: unknown): string => (err instanceof AddressNotAllowedError ? err.message : upstreamError(err));

/**
 * Sends signed webhook POSTs with node:http(s): the body is serialised once, signed, and those same bytes
 * are written. A non-2xx answer, a network error, or no complete answer within the deadline is a failed
 * attempt. Redirects are not followed (a 3xx is a failure). Connections are kept alive per host.
 */
export class HttpWebhookSender implements WebhookSenderPort {
  private readonly agents = keepAliveAgents(64);

  private readonly lookup: LookupFunction | null;

  constructor(private readonly o: { destinations: Destinations }) {
    this.lookup = o.destinations === 'any' ? null : guardedLookup(o.destinations);
  }

  send(req: OutgoingWebhook): Promise<AttemptResult> {
    const started = performance.now();
    const failed = (
      errorMessage: string,
      httpStatus: number | null = null,
      responseBody: string | null = null,
      retryAfterS: number | null = null,
    ): AttemptResult => ({ ok: false, httpStatus, errorMessage, responseBody, durationMs: performance.now() - started, retryAfterS });

    let url: URL;
    try {
      url = new URL(req.url);
    } catch {
      return Promise.resolve(failed('invalid URL'));
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return Promise.resolve(failed('URL must be http or https'));
    const host = normaliseHost(url.hostname);
    if (isIP(host) && !addressAllowed(this.o.destinations, host))
      return Promise.resolve(failed(notAllowedReason(host, this.o.destinations)));

    const body = Buffer.from(req.body, 'utf8');
    const headers = {
      ...webhookHeaders({ secret: req.secret, webhookId: req.webhookId, timestamp: req.timestamp, body }),
      'content-length': String(body.length),
    };
    const mod = url.protocol === 'https:' ? https : http;

    return new Promise<AttemptResult>((resolve) => {
      let settled = false;
      const finish = (r: AttemptResult) => {
        if (!settled) {
          settled = true;
          clearTimeout(timer);
          req.signal?.removeEventListener('abort', onAbort);
          resolve(r);
        }
      };
      let request: http.ClientRequest | undefined;
      const send = (retried: boolean) => {
        let answered = false;
        const current = mod.request(
          url,
          {
            method: 'POST',
            headers,
            agent: this.agents[url.protocol as 'http:' | 'https:'],
            ...(this.lookup ? { lookup: this.lookup } : {}),
          },
          (res) => {
            answered = true;
            const chunks: Buffer[] = [];
            let size = 0;
            res.on('data', (c: Buffer) => {
              if (size < MAX_BODY_BYTES) {
                chunks.push(c);
                size += c.length;
              }
            });
            res.on('end', () => {
              const status = res.statusCode ?? 0;
              // the receiver's answer is upstream input: decoded and made storable (docs/input-rules.md)
              const text = upstreamText(Buffer.concat(chunks).subarray(0, MAX_BODY_BYTES));
              const responseBody = text.length ? text : null;
              if (status >= 200 && status < 300)
                finish({ ok: true, httpStatus: status, responseBody, durationMs: performance.now() - started });
              else
                finish(
                  failed(
                    `HTTP ${status}${res.statusMessage ? ` ${upstreamHeader(res.statusMessage)}` : ''}`,
                    status,
                    responseBody,
                    retryAfterSeconds(res.headers['retry-after']),
                  ),
                );
            });
            res.on('error', (err) => finish(failed(describe(err), res.statusCode ?? null)));
          },
        );
        current.on('error', (err: NodeJS.ErrnoException) => {
          if (!retried && !settled && closedWhileIdle(current, err, answered)) send(true);
          else finish(failed(describe(err)));
        });
        request = current;
        current.end(body);
      };
      const timer = setTimeout(() => {
        finish(failed(`no complete answer within ${req.deadlineMs} ms`));
        request?.destroy();
      }, req.deadlineMs);
      const onAbort = () => {
        finish(failed('aborted: the worker is stopping'));
        request?.destroy();
      };
      if (req.signal?.aborted) onAbort();
      else {
        req.signal?.addEventListener('abort', onAbort, { once: true });
        send(false);
      }
    });
  }

  close(): void {
    this.agents['http:'].destroy();
    this.agents['https:'].destroy();
  }
}
