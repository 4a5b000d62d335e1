/** The agent's configuration, as stored in its events (field names follow the public API). */
export const VOICE_MODES = ['webhook', 'hosted'] as const;
export const MODEL_TIERS = ['turbo', 'balanced', 'max'] as const;
export const STT_MODES = ['fast', 'accurate'] as const;
export const AMBIENT_SOUNDS = ['none', 'office', 'coffee-shop', 'outdoor'] as const;
export const DENOISING_MODES = ['noise-cancellation', 'noise-and-background-speech-cancellation'] as const;
export const LANGUAGES = [
  'af-ZA',
  'ar-SA',
  'az-AZ',
  'bg-BG',
  'bs-BA',
  'ca-ES',
  'cs-CZ',
  'cy-GB',
  'da-DK',
  'de-DE',
  'el-GR',
  'en-AU',
  'en-GB',
  'en-IN',
  'en-NZ',
  'en-US',
  'es-419',
  'es-ES',
  'fa-IR',
  'fi-FI',
  'fil-PH',
  'fr-CA',
  'fr-FR',
  'gl-ES',
  'he-IL',
  'hi-IN',
  'hr-HR',
  'hu-HU',
  'hy-AM',
  'id-ID',
  'is-IS',
  'it-IT',
  'ja-JP',
  'kk-KZ',
  'kn-IN',
  'ko-KR',
  'lt-LT',
  'lv-LV',
  'mk-MK',
  'mr-IN',
  'ms-MY',
  'ne-NP',
  'nl-BE',
  'nl-NL',
  'no-NO',
  'pl-PL',
  'pt-BR',
  'pt-PT',
  'ro-RO',
  'ru-RU',
  'sk-SK',
  'sl-SI',
  'sr-RS',
  'sv-SE',
  'sw-KE',
  'ta-IN',
  'th-TH',
  'tr-TR',
  'uk-UA',
  'ur-IN',
  'vi-VN',
  'yue-CN',
  'zh-CN',
] as const;

export type VoiceMode = (typeof VOICE_MODES)[number];

export type CustomTool = Readonly<{
  name: string;
  description: string;
  url: string;
  method: 'GET' | 'POST';
  headers: Readonly<Record<string, string>> | null;
  parameters: Readonly<Record<string, unknown>> | null;
  timeoutMs: number | null;
  speakDuringExecution: boolean | null;
  executionMessage: string | null;
}>;

export type AgentConfig = Readonly<{
  name: string;
  description: string | null;
  voiceMode: VoiceMode;
  enableMessaging: boolean;
  modelTier: (typeof MODEL_TIERS)[number];
  systemPrompt: string | null;
  beginMessage: string | null;
  voice: string;
  transferNumber: string | null;
  customTools: readonly CustomTool[] | null;
  voicemailMessage: string | null;
  callScreeningIdentity: string | null;
  callScreeningPurpose: string | null;
  sttMode: (typeof STT_MODES)[number];
  ambientSound: (typeof AMBIENT_SOUNDS)[number];
  denoisingMode: (typeof DENOISING_MODES)[number];
  maxSilenceMs: number;
  voiceSpeed: number;
  interruptionSensitivity: number;
  enableBackchannel: boolean;
  language: (typeof LANGUAGES)[number];
}>;

export const AGENT_DEFAULTS = {
  description: null,
  voiceMode: 'webhook',
  enableMessaging: true,
  modelTier: 'balanced',
  systemPrompt: null,
  beginMessage: null,
  transferNumber: null,
  customTools: null,
  voicemailMessage: null,
  callScreeningIdentity: null,
  callScreeningPurpose: null,
  sttMode: 'fast',
  ambientSound: 'none',
  denoisingMode: 'noise-cancellation',
  maxSilenceMs: 600_000,
  voiceSpeed: 1,
  interruptionSensitivity: 0.8,
  enableBackchannel: true,
  language: 'en-US',
} as const satisfies Omit<AgentConfig, 'name' | 'voice'>;
