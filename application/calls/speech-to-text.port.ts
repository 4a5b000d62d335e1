/**
 * Speech recognition (docs/speech.md#speech-recognition): turns a caller's utterance into text. The audio is
 * streamed in while the caller speaks, so an engine that decodes as it goes (pocketsphinx) has little left to do
 * when the utterance ends; one that needs the whole utterance (an HTTP transcription API) sends it at the end.
 * Adapters: Debian's pocketsphinx, offline; an OpenAI-compatible `/audio/transcriptions` endpoint.
 */
export type Recognition = Readonly<{
  /** the words heard, lower or mixed case as the engine gives them; '' when it heard none */
  text: string;
  /** the engine's confidence (0-1); null when it gives none */
  confidence: number | null;
}>;

/** One utterance being recognised. */
export interface RecognitionStream {
  /** more of the utterance: signed 16-bit mono samples at the port's `sampleRate` */
  write(samples: Int16Array): void;
  /** the utterance is over: its transcript. Rejects with `SpeechUnavailableError` when the engine fails. */
  finish(): Promise<Recognition>;
  /** the utterance is dropped (the call ended): frees the engine, settles nothing more */
  abort(): void;
}

export interface SpeechToTextPort {
  /** the rate the engine wants its samples at (16 kHz for both adapters) */
  readonly sampleRate: number;
  /** Starts recognising an utterance. Failures to start surface from `finish()`. */
  start(): RecognitionStream;
  /** what recognises (`pocketsphinx 5prealpha (en-us)`, a model name) */
  describe(): string;
}
