/**
 * Call recordings (docs/calls.md#recordings): the audio is rendered from the call's turns once the call has
 * ended, then stored. Two ports: the renderer (speech synthesis, mixed into one WAV) and the store.
 */

/** One utterance to render, `atMs` after the call was answered. */
export type RecordedTurn = Readonly<{
  speaker: 'agent' | 'caller';
  /** everything the speaker meant to say */
  text: string;
  atMs: number;
  /** an interrupted agent turn: only its first N words were heard (absent: all of them) */
  cutAfterWords?: number;
}>;

export interface RecordingRenderer {
  /**
   * Renders the turns into one WAV, the agent speaking in `agentVoice` (a catalogue voice id) and the caller in
   * another voice. Throws `SpeechUnavailableError` (text-to-speech.port.ts) when no speech engine can render.
   */
  render(turns: readonly RecordedTurn[], o: Readonly<{ agentVoice: string }>): Promise<Readonly<{ wav: Uint8Array; durationMs: number }>>;
}

export type StoredRecording = Readonly<{ callId: string; accountId: string; wav: Uint8Array; durationMs: number; createdAt: string }>;

export interface RecordingStore {
  /** Stores a call's recording; a call that has one keeps it (a repeated step stores nothing new). */
  put(r: StoredRecording): Promise<void>;
  get(callId: string): Promise<StoredRecording | null>;
}
