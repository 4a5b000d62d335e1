import pLimit, { type LimitFunction } from 'p-limit';
import type { Recognition, RecognitionStream, SpeechToTextPort } from '../../application/calls/speech-to-text.port.js';
import { SpeechUnavailableError } from '../../application/calls/text-to-speech.port.js';
import { storableText } from '../../domain/shared/storable-text.js';
import { type HttpClient, multipart, readBody } from '../http-client/client.js';
import { upstreamText } from '../http-client/upstream.js';
import { excerpt, MAX_ANSWER_BYTES, refusal, SPEECH_API_CLIENT, type SpeechApi, unreachable } from './speech-api-errors.js';
import { encodeWav } from './wav.js';

/** The confidence in an answer's token log probabilities (gpt-4o transcription models) or segments' (verbose answers). */
export function confidenceOf(answer: { logprobs?: unknown; segments?: unknown }): number | null {
  const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null);
  const tokens = Array.isArray(answer.logprobs)
    ? answer.logprobs.map((t) => (t as { logprob?: unknown }).logprob).filter((v): v is number => typeof v === 'number')
    : [];
  const segments = Array.isArray(answer.segments)
    ? answer.segments.map((s) => (s as { avg_logprob?: unknown }).avg_logprob).filter((v): v is number => typeof v === 'number')
    : [];
  const m = mean(tokens) ?? mean(segments);
  return m === null ? null : Math.round(Math.min(1, Math.max(0, Math.exp(m))) * 1000) / 1000;
}

/**
 * Speech recognition by an OpenAI-compatible transcription API: POST `{baseUrl}/audio/transcriptions`, a
 * multipart form with the utterance as a 16 kHz WAV `file`, `model` and `response_format: json`, and a bearer key
 * when one is set. Such an API takes whole files, so the utterance is kept until it ends and sent then. The gpt-4o
 * transcription models are also asked for their token log probabilities, from which the confidence comes; other
 * models give none. At most `maxRequests` are in flight; each must be answered within `timeoutMs`.
 */
export class OpenAiSpeechToText implements SpeechToTextPort {
  readonly sampleRate = 16_000;
  private readonly url: string;
  private readonly limit: LimitFunction;
  private readonly timeoutMs: number;
  private readonly client: HttpClient = SPEECH_API_CLIENT;

  constructor(
    private readonly o: Readonly<{ baseUrl: string; apiKey?: string | undefined; model: string; timeoutMs?: number; maxRequests?: number }>,
  ) {
    this.url = `${o.baseUrl.replace(/\/+$/, '')}/audio/transcriptions`;
    this.limit = pLimit(o.maxRequests ?? 4);
    this.timeoutMs = o.timeoutMs ?? 30_000;
  }

  start(): RecognitionStream {
    const chunks: Int16Array[] = [];
    let dropped = false;
    return {
      write: (samples) => {
        if (!dropped) chunks.push(Int16Array.from(samples));
      },
      finish: () => {
        const total = chunks.reduce((n, c) => n + c.length, 0);
        const samples = new Int16Array(total);
        let at = 0;
        for (const c of chunks) {
          samples.set(c, at);
          at += c.length;
        }
        if (total === 0) return Promise.resolve({ text: '', confidence: null });
        return this.limit(() => this.post(encodeWav({ samples, sampleRate: this.sampleRate })));
      },
      abort: () => {
        dropped = true;
        chunks.length = 0;
      },
    };
  }

  describe(): string {
    return this.o.model;
  }

  private async post(wav: Buffer): Promise<Recognition> {
    const form = new FormData();
    form.append('file', new Blob([new Uint8Array(wav)], { type: 'audio/wav' }), 'utterance.wav');
    form.append('model', this.o.model);
    form.append('response_format', 'json');
    if (this.o.model.startsWith('gpt-4o')) form.append('include[]', 'logprobs');
    const headers: Record<string, string> = { accept: 'application/json' };
    if (this.o.apiKey) headers.authorization = `Bearer ${this.o.apiKey}`;
    let text: string;
    try {
      const { body, contentType } = await multipart(form);
      const res = await this.client.request({
        method: 'POST',
        url: this.url,
        headers: { ...headers, 'content-type': contentType },
        body,
        timeouts: { head: this.timeoutMs, total: this.timeoutMs },
      });
      text = upstreamText(await readBody(res, { maxBytes: MAX_ANSWER_BYTES, over: 'truncate' }));
      if (res.status < 200 || res.status >= 300) throw new SpeechUnavailableError(refusal(this.api, res.status, text));
    } catch (e) {
      if (e instanceof SpeechUnavailableError) throw e;
      throw new SpeechUnavailableError(unreachable(this.api, e));
    }
    let answer: { text?: unknown; logprobs?: unknown; segments?: unknown };
    try {
      answer = JSON.parse(text) as typeof answer;
    } catch {
      throw new SpeechUnavailableError(`transcription API ${this.url} (STT_MODEL=${this.o.model}) answered no JSON: ${excerpt(text)}`);
    }
    if (typeof answer?.text !== 'string')
      throw new SpeechUnavailableError(`transcription API ${this.url} (STT_MODEL=${this.o.model}) answered no text: ${excerpt(text)}`);
    // recognised speech is upstream input: storable before it becomes a caller turn (docs/input-rules.md)
    const words = storableText(answer.text.replace(/\s+/g, ' ').trim(), 10_000);
    return { text: words, confidence: words ? confidenceOf(answer) : null };
  }

  private get api(): SpeechApi {
    return {
      name: 'transcription API',
      url: this.url,
      settings: 'STT',
      model: this.o.model,
      apiKey: this.o.apiKey,
      timeoutMs: this.timeoutMs,
    };
  }
}
