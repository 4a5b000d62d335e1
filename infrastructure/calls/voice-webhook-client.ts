import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import {
  type VoiceTurnRequest,
  type VoiceTurnResponse,
  VoiceWebhookError,
  type VoiceWebhookPort,
} from '../../application/calls/voice-webhook.port.js';
import { closedWhileIdle, keepAliveAgents } from '../http-client/keep-alive.js';
import { chunkDecoder, upstreamError, upstreamHeader, upstreamJson, upstreamText } from '../http-client/upstream.js';
import { addressAllowed, type Destinations, normaliseHost, notAllowedReason } from '../webhooks/address-policy.js';
import { guardedLookup } from '../webhooks/http-sender.js';
import { webhookHeaders } from '../webhooks/signing.js';

/** A plain (non-streaming) answer is read up to this size; a streamed one line by line, each up to this size. */
const MAX_BYTES = 64 * 1024;
/** After the first byte, the whole answer must have arrived within this long (the longest webhook `timeout`). */
const MAX_ANSWER_MS = 120_000;

/**
 * Sends one signed voice turn (docs/calls.md#webhook-mode) with node:http(s), through the same address guard as
 * other deliveries, and reads the answer as it streams: NDJSON line by line, anything else as one JSON body.
 */
export class HttpVoiceWebhookClient implements VoiceWebhookPort {
  private readonly agents = keepAliveAgents(256);
  private readonly lookup: LookupFunction | null;

  constructor(private readonly destinations: Destinations) {
    this.lookup = destinations === 'any' ? null : guardedLookup(destinations);
  }

  post(req: VoiceTurnRequest): Promise<VoiceTurnResponse> {
    // an abort listener added now would never fire: without this check the turn would still be sent
    if (req.signal.aborted) return Promise.reject(new VoiceWebhookError('the turn was abandoned', 'network'));
    let url: URL;
    try {
      url = new URL(req.url);
    } catch {
      return Promise.reject(new VoiceWebhookError('invalid webhook URL', 'not_allowed'));
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      return Promise.reject(new VoiceWebhookError('webhook URL must be http or https', 'not_allowed'));
    const host = normaliseHost(url.hostname);
    if (isIP(host) && !addressAllowed(this.destinations, host))
      return Promise.reject(new VoiceWebhookError(notAllowedReason(host, this.destinations), 'not_allowed'));

    const body = Buffer.from(req.body, 'utf8');
    const headers = {
      ...webhookHeaders({ secret: req.secret, webhookId: req.webhookId, timestamp: req.timestamp, body }),
      accept: 'application/x-ndjson, application/json',
      'content-length': String(body.length),
    };
    const mod = url.protocol === 'https:' ? https : http;
    return new Promise<VoiceTurnResponse>((resolve, reject) => {
      const abort = new AbortController();
      const onAbort = () => abort.abort();
      req.signal.addEventListener('abort', onAbort, { once: true });
      const firstByte = setTimeout(() => {
        reject(new VoiceWebhookError(`no answer within ${Math.round(req.firstByteTimeoutMs / 1000)} s`, 'timeout'));
        abort.abort();
      }, req.firstByteTimeoutMs);
      const done = () => {
        clearTimeout(firstByte);
        req.signal.removeEventListener('abort', onAbort);
      };
      const send = (retried: boolean) => {
        let answered = false;
        const request = mod.request(
          url,
          {
            method: 'POST',
            headers,
            agent: this.agents[url.protocol as 'http:' | 'https:'],
            signal: abort.signal,
            ...(this.lookup ? { lookup: this.lookup } : {}),
          },
          (res) => {
            answered = true;
            clearTimeout(firstByte);
            const status = res.statusCode ?? 0;
            if (status < 200 || status >= 300) {
              res.resume();
              done();
              reject(
                new VoiceWebhookError(`HTTP ${status}${res.statusMessage ? ` ${upstreamHeader(res.statusMessage)}` : ''}`, 'http', status),
              );
              return;
            }
            const type = String(res.headers['content-type'] ?? '').toLowerCase();
            const streaming = type.includes('ndjson') || type.includes('jsonl');
            const overall = setTimeout(() => abort.abort(), MAX_ANSWER_MS);
            const finish = () => {
              clearTimeout(overall);
              done();
            };
            resolve({ httpStatus: status, streaming, objects: read(res, streaming, finish) });
          },
        );
        request.on('error', (err: NodeJS.ErrnoException) => {
          if (!retried && !req.signal.aborted && closedWhileIdle(request, err, answered)) {
            send(true);
            return;
          }
          done();
          if (req.signal.aborted) reject(new VoiceWebhookError('the turn was abandoned', 'network'));
          else if (err.code === 'EADDRNOTALLOWED') reject(new VoiceWebhookError(err.message, 'not_allowed'));
          else reject(new VoiceWebhookError(upstreamError(err), 'network'));
        });
        request.end(body);
      };
      send(false);
    });
  }

  close(): void {
    this.agents['http:'].destroy();
    this.agents['https:'].destroy();
  }
}

/** The answer's objects, storable (docs/input-rules.md#what-upstream-servers-answer): NUL and lone surrogates replaced. */
async function* read(res: http.IncomingMessage, streaming: boolean, finish: () => void): AsyncGenerator<unknown> {
  const parse = (text: string) => {
    try {
      return upstreamJson(text);
    } catch {
      throw new VoiceWebhookError(`the answer is not JSON: ${upstreamText(Buffer.from(text), 80)}`, 'malformed');
    }
  };
  try {
    if (!streaming) {
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const c of res as AsyncIterable<Buffer>) {
        size += c.length;
        if (size > MAX_BYTES) throw new VoiceWebhookError(`the answer is over ${MAX_BYTES} bytes`, 'malformed');
        chunks.push(c);
      }
      const text = Buffer.concat(chunks).toString('utf8').trim();
      if (text) yield parse(text);
      return;
    }
    let pending = '';
    const decoder = chunkDecoder();
    for await (const c of res as AsyncIterable<Buffer>) {
      pending += decoder.write(c);
      if (pending.length > MAX_BYTES && !pending.includes('\n'))
        throw new VoiceWebhookError(`a line of the answer is over ${MAX_BYTES} bytes`, 'malformed');
      let nl = pending.indexOf('\n');
      while (nl >= 0) {
        const line = pending.slice(0, nl).trim();
        pending = pending.slice(nl + 1);
        if (line) yield parse(line);
        nl = pending.indexOf('\n');
      }
    }
    pending += decoder.end();
    if (pending.trim()) yield parse(pending.trim());
  } catch (err) {
    if (err instanceof VoiceWebhookError) throw err;
    throw new VoiceWebhookError(`the answer broke off: ${upstreamError(err)}`, 'network');
  } finally {
    res.destroy();
    finish();
  }
}
