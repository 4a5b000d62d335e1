import type { SpeechToTextPort } from '../../application/calls/speech-to-text.port.js';
import type { TextToSpeechPort } from '../../application/calls/text-to-speech.port.js';
import type { Config } from '../config/config.js';
import { EspeakTextToSpeech } from './espeak-tts.js';
import { InstantSpeechToText } from './instant-stt.js';
import { OpenAiSpeechToText } from './openai-stt.js';
import { OpenAiTextToSpeech } from './openai-tts.js';
import { PocketsphinxSpeechToText } from './pocketsphinx-stt.js';
import { ToneTextToSpeech } from './tone-tts.js';

export type SpeechConfig = Pick<Config, 'TTS_PROVIDER' | 'ESPEAK_PATH' | 'TTS_BASE_URL' | 'TTS_API_KEY' | 'TTS_MODEL'>;

/** The speech adapter `TTS_PROVIDER` names (docs/speech.md#configuration). */
export function textToSpeechFromConfig(cfg: SpeechConfig): TextToSpeechPort {
  switch (cfg.TTS_PROVIDER) {
    case 'espeak':
      return new EspeakTextToSpeech({ path: cfg.ESPEAK_PATH });
    case 'openai':
      return new OpenAiTextToSpeech({ baseUrl: cfg.TTS_BASE_URL, apiKey: cfg.TTS_API_KEY, model: cfg.TTS_MODEL });
    case 'tone':
      return new ToneTextToSpeech();
  }
}

export type RecognitionConfig = Pick<
  Config,
  'STT_PROVIDER' | 'POCKETSPHINX_PATH' | 'POCKETSPHINX_MODEL_DIR' | 'STT_BASE_URL' | 'STT_API_KEY' | 'STT_MODEL'
>;

/** The recognition adapter `STT_PROVIDER` names (docs/speech.md#speech-recognition). */
export function speechToTextFromConfig(cfg: RecognitionConfig): SpeechToTextPort {
  switch (cfg.STT_PROVIDER) {
    case 'pocketsphinx':
      return new PocketsphinxSpeechToText({ path: cfg.POCKETSPHINX_PATH, modelDir: cfg.POCKETSPHINX_MODEL_DIR });
    case 'openai':
      return new OpenAiSpeechToText({ baseUrl: cfg.STT_BASE_URL, apiKey: cfg.STT_API_KEY, model: cfg.STT_MODEL });
    case 'instant':
      return new InstantSpeechToText();
  }
}
