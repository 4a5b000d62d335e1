import {
  type CompletionRequest,
  LanguageModelError,
  type LanguageModelPort,
  type ModelTier,
} from '../../application/calls/language-model.port.js';
import { storableText } from '../../domain/shared/storable-text.js';
import { HttpClient, HttpClientError, readBody } from '../http-client/client.js';
import { chunkDecoder, upstreamText } from '../http-client/upstream.js';

/** The model's client: the operator configures its address (loopback included: a local server). */
const LLM_CLIENT = new HttpClient({ destinations: 'any', maxSockets: 64 });

export type OpenAiChatModelOptions = Readonly<{
  /** `LLM_BASE_URL`, such as `https://api.openai.com/v1`; requests go to `<baseUrl>/chat/completions` */
  baseUrl: string;
  /** `LLM_API_KEY`; the adapter refuses to exist without one */
  apiKey: string | undefined;
  /** `LLM_MODEL_TURBO`, `LLM_MODEL_BALANCED`, `LLM_MODEL_MAX` */
  models: Readonly<Record<ModelTier, string>>;
  /** `LLM_TIMEOUT_MS`: no first fragment within this long fails the turn */
  timeoutMs: number;
}>;

/** How much of an error answer is read, and how much of it the error message keeps. */
const MAX_ERROR_BODY_BYTES = 16 * 1024;
const EXCERPT_CHARS = 200;

/** a provider's error text is upstream input: storable and short (docs/input-rules.md#what-upstream-servers-answer) */
const excerpt = (text: string) => storableText(text.replace(/\s+/gu, ' ').trim(), EXCERPT_CHARS + 1);

/** The most telling part of a failure: the client's words for it, or the socket error an error carries in `cause`. */
const reason = (err: unknown): string => {
  const cause = (err as { cause?: { code?: unknown; message?: unknown } } | null)?.cause;
  const code = typeof cause?.code === 'string' ? cause.code : '';
  const message = typeof cause?.message === 'string' ? cause.message : '';
  if (code || message) return code && !message.includes(code) ? `${code}${message ? `: ${message}` : ''}` : message;
  return err instanceof Error ? err.message : String(err);
};

/**
 * One server-sent event stream, parsed as the HTML standard says (the subset chat completions use): lines end with
 * CRLF, LF or CR; `data:` lines of one event are joined by LF; a blank line ends an event; comments (`:`) and the
 * other fields are ignored.
 */
class SseParser {
  private buffer = '';
  private data: string[] = [];

  /** The events completed by this chunk of text. */
  push(text: string): string[] {
    this.buffer += text;
    const events: string[] = [];
    for (;;) {
      const m = /\r\n|\r|\n/u.exec(this.buffer);
      // a CR at the very end may be the first half of a CRLF: wait for the next chunk
      if (m === null || (m[0] === '\r' && m.index === this.buffer.length - 1)) break;
      const line = this.buffer.slice(0, m.index);
      this.buffer = this.buffer.slice(m.index + m[0].length);
      if (line === '') {
        const data = this.data.join('\n');
        if (data !== '') events.push(data); // an event without data is not dispatched
        this.data = [];
      } else if (line === 'data' || line.startsWith('data:')) {
        const value = line.slice(5);
        this.data.push(value.startsWith(' ') ? value.slice(1) : value);
      }
    }
    return events;
  }

  /** The event left open when the stream ended without its blank line (after the last text, if any). */
  end(last = ''): string[] {
    const events = this.push(`${last}\n\n`);
    this.buffer = '';
    return events;
  }
}

type Chunk = {
  choices?: { delta?: { content?: unknown }; finish_reason?: unknown }[];
  error?: { message?: unknown };
};

/**
 * Hosted mode's language model over an OpenAI-compatible chat-completions API (docs/language-model.md#openai-compatible):
 * `POST <baseUrl>/chat/completions` with `stream: true`, each `choices[0].delta.content` yielded as soon as its event
 * arrives. Every failure is a `LanguageModelError`; the caller's signal aborts the request and ends the stream quietly.
 */
export class OpenAiChatModel implements LanguageModelPort {
  private readonly url: string;
  private readonly apiKey: string;

  constructor(private readonly o: OpenAiChatModelOptions) {
    if (!o.apiKey) throw new Error('invalid configuration:\n  LLM_API_KEY: required when LLM_PROVIDER=openai');
    this.apiKey = o.apiKey;
    this.url = `${o.baseUrl.replace(/\/+$/u, '')}/chat/completions`;
  }

  describe(tier: ModelTier): string {
    return this.o.models[tier];
  }

  async *stream(req: CompletionRequest): AsyncIterable<string> {
    const caller = req.signal;
    if (caller?.aborted) return;
    const http = new AbortController();
    const stop = () => http.abort();
    caller?.addEventListener('abort', stop, { once: true });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      http.abort();
    }, this.o.timeoutMs);
    let stage = `cannot reach ${this.url}`;

    try {
      const res = await LLM_CLIENT.request({
        method: 'POST',
        url: this.url,
        headers: { authorization: `Bearer ${this.apiKey}`, 'content-type': 'application/json', accept: 'text/event-stream' },
        body: Buffer.from(
          JSON.stringify({
            model: this.o.models[req.tier],
            messages: req.messages.map((m) => ({ role: m.role, content: m.content })),
            stream: true,
          }),
          'utf8',
        ),
        // the answer's first words must come within timeoutMs: the timer above; this one only stops a silent socket
        timeouts: { head: this.o.timeoutMs + 1000 },
        signal: http.signal,
      });
      stage = 'the connection to the model was lost';

      if (res.status < 200 || res.status >= 300) {
        const body = errorExcerpt(await readBody(res, { maxBytes: MAX_ERROR_BODY_BYTES, over: 'truncate' }));
        throw new LanguageModelError(`the model answered ${res.status}${body ? `: ${body}` : ''}`);
      }

      const decoder = chunkDecoder();
      const sse = new SseParser();
      let answered = false;
      let finished = false;
      const chunks = (res.body as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
      for (;;) {
        const read = await chunks.next();
        for (const data of read.done ? sse.end(decoder.end()) : sse.push(decoder.write(read.value))) {
          if (data === '[DONE]') return;
          const chunk = parseChunk(data);
          if (chunk.finished) finished = true;
          if (chunk.text === '') continue;
          if (!answered) {
            answered = true;
            clearTimeout(timer);
          }
          // the model's words are upstream input: they reach the call's facts storable
          yield storableText(chunk.text);
          if (caller?.aborted) return;
        }
        if (read.done) {
          if (finished) return;
          throw new LanguageModelError('the stream ended before the model finished its answer');
        }
      }
    } catch (err) {
      if (caller?.aborted) return; // the caller stopped listening: nothing to report
      if (err instanceof LanguageModelError) throw err;
      if (timedOut || (err instanceof HttpClientError && err.kind === 'timeout'))
        throw new LanguageModelError(`no answer within ${this.o.timeoutMs} ms`);
      throw new LanguageModelError(`${stage}: ${reason(err)}`);
    } finally {
      clearTimeout(timer);
      caller?.removeEventListener('abort', stop);
      // a stream left before its end (an error, [DONE], the caller stopped early) closes its request rather than
      // leaving the socket to the server; after a complete response this does nothing
      http.abort();
    }
  }
}

function parseChunk(data: string): { text: string; finished: boolean } {
  let chunk: Chunk;
  try {
    chunk = JSON.parse(data) as Chunk;
  } catch {
    throw new LanguageModelError(`malformed event from the model: ${excerpt(data)}`);
  }
  if (chunk === null || typeof chunk !== 'object') throw new LanguageModelError(`malformed event from the model: ${excerpt(data)}`);
  if (chunk.error !== undefined && chunk.error !== null) {
    const message = typeof chunk.error?.message === 'string' ? chunk.error.message : JSON.stringify(chunk.error);
    throw new LanguageModelError(`the model failed: ${excerpt(message)}`);
  }
  const choice = Array.isArray(chunk.choices) ? chunk.choices[0] : undefined;
  const content = choice?.delta?.content;
  return {
    text: typeof content === 'string' ? content : '',
    finished: choice?.finish_reason !== undefined && choice.finish_reason !== null,
  };
}

/** The start of an error answer, for the error message (the rest is not downloaded): the API's own words when it sent them. */
function errorExcerpt(bytes: Uint8Array): string {
  const text = upstreamText(bytes);
  try {
    const message = (JSON.parse(text) as { error?: { message?: unknown } })?.error?.message;
    if (typeof message === 'string') return excerpt(message);
  } catch {
    // not JSON: the text itself
  }
  return excerpt(text);
}
