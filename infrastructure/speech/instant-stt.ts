import type { Recognition, RecognitionStream, SpeechToTextPort } from '../../application/calls/speech-to-text.port.js';

/**
 * A recogniser that costs nothing (`STT_PROVIDER=instant`, docs/speech.md#the-instant-recogniser-and-the-tone-voice):
 * it transcribes no words, and answers at once when an utterance ends with a transcript that says how long the
 * caller spoke (`[speech 1.24 s]`), so every utterance is a turn. For load tests of the platform itself, and for
 * agents that only need to know that the caller spoke; a real deployment uses pocketsphinx or a transcription API.
 */
export class InstantSpeechToText implements SpeechToTextPort {
  readonly sampleRate = 16_000;

  start(): RecognitionStream {
    let samples = 0;
    return {
      write: (s) => {
        samples += s.length;
      },
      finish: async (): Promise<Recognition> => ({ text: `[speech ${(samples / this.sampleRate).toFixed(2)} s]`, confidence: null }),
      abort: () => undefined,
    };
  }

  describe(): string {
    return 'instant (no recognition: the utterance length)';
  }
}
