import { token } from '../capabilities/token.js';
import type { SandboxVoiceEngine } from '../providers/sandbox/sandbox-voice-engine.js';

/** The sandbox voice engine's token: bound in sandbox mode only; the calls capability aliases its voice engine to it. */
export const SANDBOX_VOICE = {
  Engine: token<SandboxVoiceEngine>('SandboxVoiceEngine'),
} as const;
