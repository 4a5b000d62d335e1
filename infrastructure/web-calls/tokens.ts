import type { SpeechToTextPort } from '../../application/calls/speech-to-text.port.js';
import type { TextToSpeechPort } from '../../application/calls/text-to-speech.port.js';
import { token } from '../capabilities/token.js';
import type { WebCallGateway } from './web-call-gateway.js';

/** The web calls capability's tokens (its module binds them). */
export const WEB_CALLS = {
  /** recognises callers' speech (STT_PROVIDER) */
  SpeechToText: token<SpeechToTextPort>('WebCallSpeechToText'),
  /** speaks the agent's replies (TTS_PROVIDER) */
  TextToSpeech: token<TextToSpeechPort>('WebCallTextToSpeech'),
  /** the WebSocket edge */
  Gateway: token<WebCallGateway>('WebCallGateway'),
} as const;
