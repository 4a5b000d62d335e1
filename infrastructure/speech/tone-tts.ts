import type { Pcm, TextToSpeechPort } from '../../application/calls/text-to-speech.port.js';

const RATE = 8000;
/** 40 ms of tone per character, between 0.2 s and 3 s */
const MS_PER_CHAR = 40;

/**
 * A voice that costs nothing (`TTS_PROVIDER=tone`, docs/speech.md#the-instant-recogniser-and-the-tone-voice): a
 * 440 Hz tone at -12 dBFS whose length follows the text (40 ms a character, 0.2 to 3 s). For load tests, where
 * the audio only has to be there, and for checking a line's audio path end to end.
 */
export class ToneTextToSpeech implements TextToSpeechPort {
  async synthesize(text: string): Promise<Pcm> {
    const ms = Math.min(3000, Math.max(200, text.trim().length * MS_PER_CHAR));
    const samples = new Int16Array((RATE * ms) / 1000);
    const amplitude = 32767 * 10 ** (-12 / 20);
    for (let i = 0; i < samples.length; i++) samples[i] = Math.round(amplitude * Math.sin((2 * Math.PI * 440 * i) / RATE));
    return { samples, sampleRate: RATE };
  }

  describe(): string {
    return 'tone (440 Hz)';
  }
}
