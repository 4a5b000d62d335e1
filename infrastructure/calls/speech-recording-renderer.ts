import type { RecordedTurn, RecordingRenderer } from '../../application/calls/recordings.port.js';
import type { TextToSpeechPort } from '../../application/calls/text-to-speech.port.js';
import { renderRecording } from '../speech/recording.js';

/** The caller's voice in recordings; `renderRecording` picks another one when the agent speaks in it. */
const CALLER_VOICE = 'sandbox-miles';

/**
 * Call recordings rendered by the configured speech engine (docs/calls.md#recordings): every turn synthesised
 * and mixed at its offset into one 16 kHz mono WAV (infrastructure/speech/recording.ts).
 */
export class SpeechRecordingRenderer implements RecordingRenderer {
  constructor(
    private readonly tts: TextToSpeechPort,
    /** the speed the call's speech was timed at (the sandbox voice engine's); absent: the engine's own */
    private readonly o: Readonly<{ wordsPerMinute?: number }> = {},
  ) {}

  async render(turns: readonly RecordedTurn[], o: Readonly<{ agentVoice: string }>) {
    const r = await renderRecording(
      this.tts,
      turns.map((t) => ({
        speaker: t.speaker,
        text: t.text,
        voice: t.speaker === 'agent' ? o.agentVoice : CALLER_VOICE,
        atMs: t.atMs,
        cutAfterWords: t.cutAfterWords ?? null,
      })),
      this.o.wordsPerMinute === undefined ? {} : { wordsPerMinute: this.o.wordsPerMinute },
    );
    return { wav: r.wav, durationMs: r.durationMs };
  }
}
