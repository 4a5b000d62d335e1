import pLimit, { type LimitFunction } from 'p-limit';
import { type Pcm, SpeechUnavailableError, type TextToSpeechPort } from '../../application/calls/text-to-speech.port.js';
import { readBody } from '../http-client/client.js';
import { upstreamText } from '../http-client/upstream.js';
import { MAX_ANSWER_BYTES, refusal, SPEECH_API_CLIENT, type SpeechApi, unreachable } from './speech-api-errors.js';
import { decodeWav, WavFormatError } from './wav.js';

/** The speech API's voices (`voice` of POST /audio/speech); one of them passed as a voice id is used as it is. */
const API_VOICES = new Set(['alloy', 'ash', 'ballad', 'coral', 'echo', 'fable', 'onyx', 'nova', 'sage', 'shimmer', 'verse']);

/** The voice catalogue's ids on the speech API's voices (docs/speech.md#voices). */
export const OPENAI_VOICES: Readonly<Record<string, string>> = {
  'sandbox-aria': 'nova',
  'sandbox-miles': 'onyx',
  'sandbox-isla': 'fable',
  'sandbox-arjun': 'echo',
  'sandbox-sol': 'alloy',
};

/** A catalogue id, an API voice name as it is, anything else the catalogue's default voice (Aria's). */
export const openAiVoiceFor = (voiceId: string): string =>
  OPENAI_VOICES[voiceId] ?? (API_VOICES.has(voiceId) ? voiceId : OPENAI_VOICES['sandbox-aria']!);

/** the words a minute of the API's `speed: 1` (its range is 0.25–4) */
const WPM_AT_SPEED_1 = 160;

/** The longest WAV an answer may be: minutes of speech at the API's rate. */
const MAX_AUDIO_BYTES = 64 * 1024 * 1024;

/**
 * Speech from an OpenAI-compatible speech API: POST `{baseUrl}/audio/speech` with
 * `{ model, input, voice, response_format: 'wav' }` and a bearer key, the WAV answer decoded. Without a key no
 * `Authorization` header is sent (a local compatible server may need none). At most `maxRequests` are in flight;
 * each must be answered in full within `timeoutMs`.
 */
export class OpenAiTextToSpeech implements TextToSpeechPort {
  private readonly url: string;
  private readonly limit: LimitFunction;
  private readonly timeoutMs: number;

  constructor(
    private readonly o: Readonly<{ baseUrl: string; apiKey?: string | undefined; model: string; timeoutMs?: number; maxRequests?: number }>,
  ) {
    this.url = `${o.baseUrl.replace(/\/+$/, '')}/audio/speech`;
    this.limit = pLimit(o.maxRequests ?? 4);
    this.timeoutMs = o.timeoutMs ?? 30_000;
  }

  synthesize(text: string, o: Readonly<{ voice: string; wordsPerMinute?: number }>): Promise<Pcm> {
    const body: Record<string, unknown> = { model: this.o.model, input: text, voice: openAiVoiceFor(o.voice), response_format: 'wav' };
    if (o.wordsPerMinute !== undefined) body.speed = Math.min(4, Math.max(0.25, o.wordsPerMinute / WPM_AT_SPEED_1));
    return this.limit(() => this.post(body));
  }

  describe(): string {
    return this.o.model;
  }

  private async post(body: Record<string, unknown>): Promise<Pcm> {
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'audio/wav' };
    if (this.o.apiKey) headers.authorization = `Bearer ${this.o.apiKey}`;
    let audio: Uint8Array;
    try {
      const res = await SPEECH_API_CLIENT.request({
        method: 'POST',
        url: this.url,
        headers,
        body: Buffer.from(JSON.stringify(body), 'utf8'),
        timeouts: { head: this.timeoutMs, total: this.timeoutMs },
      });
      if (res.status < 200 || res.status >= 300) {
        const words = upstreamText(await readBody(res, { maxBytes: MAX_ANSWER_BYTES, over: 'truncate' }).catch(() => new Uint8Array()));
        throw new SpeechUnavailableError(refusal(this.api, res.status, words));
      }
      audio = await readBody(res, { maxBytes: MAX_AUDIO_BYTES, over: 'refuse' });
    } catch (e) {
      if (e instanceof SpeechUnavailableError) throw e;
      throw new SpeechUnavailableError(unreachable(this.api, e));
    }
    try {
      return decodeWav(audio);
    } catch (e) {
      if (e instanceof WavFormatError) {
        throw new SpeechUnavailableError(
          `speech API ${this.url} (TTS_MODEL=${this.o.model}) answered audio that is not a 16-bit WAV: ${e.message}`,
        );
      }
      throw e;
    }
  }

  private get api(): SpeechApi {
    return { name: 'speech API', url: this.url, settings: 'TTS', model: this.o.model, apiKey: this.o.apiKey, timeoutMs: this.timeoutMs };
  }
}
