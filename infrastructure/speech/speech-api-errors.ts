import { storableText } from '../../domain/shared/storable-text.js';
import { HttpClient, HttpClientError } from '../http-client/client.js';

/** How much of a speech API's answer is read (a transcription's JSON, an error's words). */
export const MAX_ANSWER_BYTES = 1024 * 1024;

/** The speech APIs' client: the operator configures their addresses (loopback included: a local server). */
export const SPEECH_API_CLIENT = new HttpClient({ destinations: 'any', maxSockets: 32 });

/** How much of an API's answer an error message shows. */
const BODY_EXCERPT = 200;

/** Which OpenAI-compatible speech API a message is about, for the words and the settings it points to. */
export type SpeechApi = Readonly<{
  /** "transcription API" or "speech API" */
  name: string;
  url: string;
  /** the settings' prefix: STT or TTS */
  settings: 'STT' | 'TTS';
  model: string;
  apiKey: string | undefined;
  timeoutMs: number;
}>;

/** The words for an answer that is not 2xx, with the setting most likely at fault. */
export function refusal(api: SpeechApi, status: number, text: string): string {
  const hint =
    status === 401 || status === 403
      ? api.apiKey
        ? ` (check ${api.settings}_API_KEY)`
        : ` (${api.settings}_API_KEY is not set)`
      : status === 404
        ? ` (check ${api.settings}_BASE_URL and ${api.settings}_MODEL)`
        : '';
  return `${api.name} ${api.url} (${api.settings}_MODEL=${api.model}) answered ${status}${hint}: ${excerpt(text)}`;
}

/** The words for a request that got no answer: a timeout, or the connection's error. */
export function unreachable(api: SpeechApi, e: unknown): string {
  if (e instanceof HttpClientError && e.kind === 'timeout') return `${api.name} ${api.url} did not answer within ${api.timeoutMs} ms`;
  const why = e instanceof HttpClientError ? (e.code ?? e.message) : e instanceof Error ? e.message : String(e);
  return `${api.name} ${api.url} could not be reached (${why}): check ${api.settings}_BASE_URL`;
}

/** The API's `{ error: { message } }` if it sent one, else the body's start, on one line. */
export function excerpt(text: string): string {
  let shown = text;
  try {
    const m = (JSON.parse(text) as { error?: { message?: unknown } }).error?.message;
    if (typeof m === 'string') shown = m;
  } catch {
    // not JSON: the raw body is shown
  }
  shown = shown.replace(/\s+/g, ' ').trim();
  if (shown === '') return '(empty body)';
  // an upstream error text: storable and short (docs/input-rules.md#what-upstream-servers-answer)
  return storableText(shown, BODY_EXCERPT + 1);
}
