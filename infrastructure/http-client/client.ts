import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import http, { type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { addressAllowed, type Destinations, normaliseHost, notAllowedReason } from './address-policy.js';
import { closedWhileIdle, keepAliveAgents } from './keep-alive.js';
import { upstreamError, upstreamHeader } from './upstream.js';

/**
 * The one outbound HTTP client (docs/security.md#outbound-requests): every request the platform makes to a server it
 * does not run goes through it, whether the URL comes from a customer (webhooks, voice webhooks, images to fetch) or
 * from the operator's configuration (the chat platform's cloud API, the language model, the speech APIs). It applies
 * the address policy to the URL and again to the address really connected to, follows no redirect (a 3xx is an
 * answer), keeps connections alive per host and sends a request once more when it was written on a kept-alive socket
 * the server had just closed, bounds the time to the answer and to its end, and reads answers as upstream input
 * (bounded, decoded, storable: upstream.ts).
 */

/** Why a request got no answer (an error status is an answer, not this). */
export type NoAnswerKind = 'invalid_url' | 'not_allowed' | 'timeout' | 'aborted' | 'network' | 'too_large';

export class HttpClientError extends Error {
  constructor(
    readonly kind: NoAnswerKind,
    message: string,
    /** the socket's error code (ECONNREFUSED, …) for a network error */
    readonly code: string | null = null,
  ) {
    super(message);
    this.name = 'HttpClientError';
  }
}

export type HttpRequest = Readonly<{
  method: 'GET' | 'POST' | 'DELETE';
  url: string;
  headers?: Readonly<Record<string, string>>;
  body?: Uint8Array;
  timeouts: Readonly<{
    /** the answer's status line and headers must arrive within this (ms) */
    head: number;
    /** the whole answer, body included, must have arrived within this since the request started (ms) */
    total?: number;
    /** the body must have arrived within this since the head did (ms) */
    afterHead?: number;
  }>;
  /** aborts the request, and the reading of its answer */
  signal?: AbortSignal;
}>;

export type HttpAnswer = Readonly<{
  status: number;
  /** the status line's words, storable and short */
  statusText: string;
  headers: IncomingHttpHeaders;
  /** the body as it arrives; read it with `readBody` (or iterate it) */
  body: IncomingMessage;
}>;

class AddressNotAllowedError extends Error {
  readonly code = 'EADDRNOTALLOWED';
}

/**
 * A DNS lookup that refuses answers `destinations` does not allow: the address checked is the address connected
 * to, so a name that resolves differently at request time (DNS rebinding) cannot reach the internal network.
 */
const guardedLookup =
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

/** A socket's failure as this client reports it. */
const noAnswer = (err: NodeJS.ErrnoException): HttpClientError =>
  err instanceof HttpClientError
    ? err
    : err instanceof AddressNotAllowedError
      ? new HttpClientError('not_allowed', err.message)
      : new HttpClientError('network', upstreamError(err), err.code ?? null);

export class HttpClient {
  private readonly agents: ReturnType<typeof keepAliveAgents>;
  private readonly lookup: LookupFunction | null;

  constructor(private readonly o: Readonly<{ destinations: Destinations; maxSockets: number }>) {
    this.agents = keepAliveAgents(o.maxSockets);
    this.lookup = o.destinations === 'any' ? null : guardedLookup(o.destinations);
  }

  /** Sends the request; resolves with the answer's head (its body streams on), rejects with HttpClientError. */
  request(r: HttpRequest): Promise<HttpAnswer> {
    let url: URL;
    try {
      url = new URL(r.url);
    } catch {
      return Promise.reject(new HttpClientError('invalid_url', 'invalid URL'));
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      return Promise.reject(new HttpClientError('invalid_url', 'URL must be http or https'));
    const host = normaliseHost(url.hostname);
    if (isIP(host) && !addressAllowed(this.o.destinations, host))
      return Promise.reject(new HttpClientError('not_allowed', notAllowedReason(host, this.o.destinations)));
    if (r.signal?.aborted) return Promise.reject(new HttpClientError('aborted', 'aborted before it was sent'));
    const scheme = url.protocol === 'https:' ? 'https:' : 'http:';
    const mod = scheme === 'https:' ? https : http;
    const headers = { ...r.headers, ...(r.body ? { 'content-length': String(r.body.length) } : {}) };

    return new Promise<HttpAnswer>((resolve, reject) => {
      let request: http.ClientRequest | undefined;
      let answer: IncomingMessage | undefined;
      let settled = false;
      const timers: NodeJS.Timeout[] = [];
      const done = () => {
        for (const t of timers) clearTimeout(t);
        r.signal?.removeEventListener('abort', onAbort);
      };
      /** ends the exchange: before the head, the promise rejects; after it, the body stream fails with the error */
      const stop = (err: HttpClientError) => {
        if (!settled) {
          settled = true;
          done();
          reject(err);
          request?.destroy();
        } else if (answer && !answer.complete) {
          done();
          answer.destroy(err);
        }
      };
      const onAbort = () => stop(new HttpClientError('aborted', 'aborted'));
      r.signal?.addEventListener('abort', onAbort, { once: true });
      timers.push(setTimeout(() => stop(new HttpClientError('timeout', `no answer within ${r.timeouts.head} ms`)), r.timeouts.head));
      if (r.timeouts.total !== undefined) {
        const total = r.timeouts.total;
        timers.push(setTimeout(() => stop(new HttpClientError('timeout', `no complete answer within ${total} ms`)), total));
      }

      const send = (retried: boolean) => {
        let answered = false;
        const current = mod.request(
          url,
          { method: r.method, headers, agent: this.agents[scheme], ...(this.lookup ? { lookup: this.lookup } : {}) },
          (res) => {
            answered = true;
            answer = res;
            if (settled) return void res.destroy();
            settled = true;
            clearTimeout(timers[0]);
            if (r.timeouts.afterHead !== undefined) {
              const after = r.timeouts.afterHead;
              timers.push(setTimeout(() => stop(new HttpClientError('timeout', `the answer did not end within ${after} ms`)), after));
            }
            res.on('close', done);
            resolve({ status: res.statusCode ?? 0, statusText: upstreamHeader(res.statusMessage) ?? '', headers: res.headers, body: res });
          },
        );
        current.on('error', (err: NodeJS.ErrnoException) => {
          if (!retried && !settled && closedWhileIdle(current, err, answered)) return send(true);
          if (!settled) stop(noAnswer(err));
        });
        request = current;
        current.end(r.body);
      };
      send(false);
    });
  }

  close(): void {
    this.agents['http:'].destroy();
    this.agents['https:'].destroy();
  }
}

/**
 * An answer's body, at most `maxBytes`: beyond it, `truncate` keeps the first `maxBytes` (and reads the rest to its
 * end, so the connection can be reused), `refuse` stops at once with HttpClientError `too_large`.
 */
export async function readBody(a: HttpAnswer, o: Readonly<{ maxBytes: number; over: 'truncate' | 'refuse' }>): Promise<Uint8Array> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const c of a.body as AsyncIterable<Buffer>) {
      if (size + c.length > o.maxBytes) {
        if (o.over === 'refuse') throw new HttpClientError('too_large', `the answer is larger than ${o.maxBytes} bytes`);
        if (size < o.maxBytes) chunks.push(c.subarray(0, o.maxBytes - size));
        size = o.maxBytes;
        continue;
      }
      chunks.push(c);
      size += c.length;
    }
  } catch (err) {
    a.body.destroy();
    throw noAnswer(err as NodeJS.ErrnoException);
  }
  return new Uint8Array(Buffer.concat(chunks));
}

/** Drops an answer's body unread (a refusal's, a redirect's). */
export const discard = (a: HttpAnswer): void => {
  a.body.resume();
};

/** A form as the bytes and the content type of a `multipart/form-data` body, encoded by the platform's own encoder. */
export async function multipart(form: FormData): Promise<{ body: Uint8Array; contentType: string }> {
  const encoded = new Request('http://multipart.invalid/', { method: 'POST', body: form });
  return { body: new Uint8Array(await encoded.arrayBuffer()), contentType: encoded.headers.get('content-type') ?? 'multipart/form-data' };
}
