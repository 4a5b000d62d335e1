import type { IncomingMessage } from 'node:http';
import {
  type VoiceTurnRequest,
  type VoiceTurnResponse,
  VoiceWebhookError,
  type VoiceWebhookPort,
} from '../../application/calls/voice-webhook.port.js';
import type { Destinations } from '../http-client/address-policy.js';
import { discard, HttpClient, HttpClientError } from '../http-client/client.js';
import { webhookHeaders } from '../http-client/signing.js';
import { chunkDecoder, upstreamError, upstreamJson, upstreamText } from '../http-client/upstream.js';

/** A plain (non-streaming) answer is read up to this size; a streamed one line by line, each up to this size. */
const MAX_BYTES = 64 * 1024;
/** After the first byte, the whole answer must have arrived within this long (the longest webhook `timeout`). */
const MAX_ANSWER_MS = 120_000;

/**
 * Sends one signed voice turn (docs/calls.md#webhook-mode) through the one outbound client, with the same address
 * guard as other deliveries, and reads the answer as it streams: NDJSON line by line, anything else as one JSON body.
 */
export class HttpVoiceWebhookClient implements VoiceWebhookPort {
  private readonly client: HttpClient;

  constructor(destinations: Destinations) {
    this.client = new HttpClient({ destinations, maxSockets: 256 });
  }

  async post(req: VoiceTurnRequest): Promise<VoiceTurnResponse> {
    const body = Buffer.from(req.body, 'utf8');
    let answer: Awaited<ReturnType<HttpClient['request']>>;
    try {
      answer = await this.client.request({
        method: 'POST',
        url: req.url,
        headers: {
          ...webhookHeaders({ secret: req.secret, webhookId: req.webhookId, timestamp: req.timestamp, body }),
          accept: 'application/x-ndjson, application/json',
        },
        body,
        timeouts: { head: req.firstByteTimeoutMs, afterHead: MAX_ANSWER_MS },
        signal: req.signal,
      });
    } catch (err) {
      throw noTurn(err, req.firstByteTimeoutMs);
    }
    const status = answer.status;
    if (status < 200 || status >= 300) {
      discard(answer);
      throw new VoiceWebhookError(`HTTP ${status}${answer.statusText ? ` ${answer.statusText}` : ''}`, 'http', status);
    }
    const type = String(answer.headers['content-type'] ?? '').toLowerCase();
    const streaming = type.includes('ndjson') || type.includes('jsonl');
    return { httpStatus: status, streaming, objects: read(answer.body, streaming) };
  }

  close(): void {
    this.client.close();
  }
}

/** A turn that got no answer, in the port's words. */
function noTurn(err: unknown, firstByteTimeoutMs: number): VoiceWebhookError {
  if (!(err instanceof HttpClientError)) return new VoiceWebhookError(upstreamError(err), 'network');
  switch (err.kind) {
    case 'aborted':
      return new VoiceWebhookError('the turn was abandoned', 'network');
    case 'timeout':
      return new VoiceWebhookError(`no answer within ${Math.round(firstByteTimeoutMs / 1000)} s`, 'timeout');
    case 'invalid_url':
      return new VoiceWebhookError(
        err.message === 'invalid URL' ? 'invalid webhook URL' : 'webhook URL must be http or https',
        'not_allowed',
      );
    case 'not_allowed':
      return new VoiceWebhookError(err.message, 'not_allowed');
    default:
      return new VoiceWebhookError(err.message, 'network');
  }
}

async function* read(res: IncomingMessage, streaming: boolean): AsyncGenerator<unknown> {
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
  }
}
