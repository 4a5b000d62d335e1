/**
 * Speech synthesis (docs/speech.md): renders text as audio for recordings (and the web calls' audio).
 * Adapters: Debian's espeak-ng, offline; an OpenAI-compatible `/v1/audio/speech` endpoint.
 */
export type Pcm = Readonly<{
  /** signed 16-bit little-endian mono samples */
  samples: Int16Array;
  sampleRate: number;
}>;

export interface TextToSpeechPort {
  /** Renders `text` in `voice` (a catalogue voice id; the adapter maps it). Throws `SpeechUnavailableError`. */
  synthesize(text: string, o: Readonly<{ voice: string; wordsPerMinute?: number }>): Promise<Pcm>;
  /** what renders the audio, for the recording's metadata (`espeak-ng 1.51`, a model name) */
  describe(): string;
}

/** The engine is missing or failed (the message says which and how to fix it). */
export class SpeechUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SpeechUnavailableError';
  }
}
