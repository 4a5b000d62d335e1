export type Voice = Readonly<{
  voice_id: string;
  voice_name: string;
  provider: string;
  gender: 'male' | 'female' | 'neutral';
  accent: string | null;
  preview_audio_url: string | null;
}>;

/** Voices offered by the configured voice provider. */
export interface VoiceCataloguePort {
  list(): Promise<readonly Voice[]>;
  defaultVoiceId(): string;
}
