import type { TextToSpeechPort } from '../../application/calls/text-to-speech.port.js';
import type { Config } from '../config/config.js';
import { EspeakTextToSpeech } from './espeak-tts.js';
import { OpenAiTextToSpeech } from './openai-tts.js';

export type SpeechConfig = Pick<Config, 'TTS_PROVIDER' | 'ESPEAK_PATH' | 'TTS_BASE_URL' | 'TTS_API_KEY' | 'TTS_MODEL'>;

/** The speech adapter `TTS_PROVIDER` names (docs/speech.md#configuration). */
export function textToSpeechFromConfig(cfg: SpeechConfig): TextToSpeechPort {
  switch (cfg.TTS_PROVIDER) {
    case 'espeak':
      return new EspeakTextToSpeech({ path: cfg.ESPEAK_PATH });
    case 'openai':
      return new OpenAiTextToSpeech({ baseUrl: cfg.TTS_BASE_URL, apiKey: cfg.TTS_API_KEY, model: cfg.TTS_MODEL });
  }
}
