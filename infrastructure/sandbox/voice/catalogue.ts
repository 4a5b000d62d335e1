import { injectable } from 'inversify';
import type { Voice, VoiceCataloguePort } from '../../../application/agents/voice-catalogue.port.js';

const VOICES: readonly Voice[] = [
  { voice_id: 'sandbox-aria', voice_name: 'Aria', provider: 'sandbox', gender: 'female', accent: 'American', preview_audio_url: null },
  { voice_id: 'sandbox-miles', voice_name: 'Miles', provider: 'sandbox', gender: 'male', accent: 'American', preview_audio_url: null },
  { voice_id: 'sandbox-isla', voice_name: 'Isla', provider: 'sandbox', gender: 'female', accent: 'British', preview_audio_url: null },
  { voice_id: 'sandbox-arjun', voice_name: 'Arjun', provider: 'sandbox', gender: 'male', accent: 'Indian', preview_audio_url: null },
  { voice_id: 'sandbox-sol', voice_name: 'Sol', provider: 'sandbox', gender: 'neutral', accent: 'Australian', preview_audio_url: null },
];

/** The sandbox voice provider's catalogue: a fixed list, the first voice being the default. */
@injectable()
export class SandboxVoiceCatalogue implements VoiceCataloguePort {
  async list(): Promise<readonly Voice[]> {
    return VOICES;
  }
  defaultVoiceId(): string {
    return VOICES[0]!.voice_id;
  }
}
