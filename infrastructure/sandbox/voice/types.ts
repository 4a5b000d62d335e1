import type { AnsweredBy, DialFailure, LegEndReason } from '../../../application/calls/voice-engine.port.js';
import type { VoicePersona } from './magic.js';

/**
 * The sandbox voice engine's shapes (docs/sandbox.md#voice): its timing, what the sandbox API shows of a call, and
 * the errors of the sandbox controls.
 */

/** How fast the simulated phone network and far ends are (SANDBOX_VOICE_*, docs/sandbox.md#speech-takes-time). */
export type SandboxVoiceTiming = Readonly<{
  /** the default speaking rate of agent playbacks, and the far end's rate */
  wordsPerMinute: number;
  /** how long an outbound call rings before its far end answers */
  ringMs: number;
  /** the far end's pause before it answers the agent */
  replyPauseMs: number;
}>;

/** How many ended legs stay inspectable by default (the newest). */
export const KEEP_ENDED_LEGS = 500;
/** The voicemail's message limit, in words at the far end's rate (two minutes at 165 words a minute). */
export const VOICEMAIL_MAX_WORDS = 330;

export type PlaybackState = 'queued' | 'playing' | 'finished' | 'cut' | 'dropped';

/** One agent playback as the far end heard it. */
export type SandboxPlaybackView = Readonly<{
  playbackId: string;
  text: string;
  voice: string;
  wordsPerMinute: number;
  /** the words heard: all of them when finished, those spoken before the cut when cut, '' when dropped or queued */
  heard: string;
  state: PlaybackState;
  queuedAt: string;
  startedAt: string | null;
  endedAt: string | null;
}>;

/** One thing the far end said. */
export type SandboxUtteranceView = Readonly<{
  utteranceId: string;
  text: string;
  /** what was said: `text`, or its first words when the utterance was cut (the call ended, a key cut a menu prompt) */
  transcript: string;
  /** whether the agent was speaking when it began (the far end talked over the agent) */
  overAgent: boolean;
  /** from the sandbox API (`say`), not from the persona */
  fromSandboxApi: boolean;
  startedAt: string;
  endedAt: string | null;
}>;

export type SandboxBridgeAttempt = Readonly<{ sipUri: string; outcome: string; at: string }>;

export type SandboxLegStatus = 'dialing' | 'ringing' | 'answered' | 'failed' | 'ended';

/** A leg as the far end sees it (docs/sandbox.md#voice). */
export type SandboxCallView = Readonly<{
  callId: string;
  engineCallId: string;
  direction: 'outbound' | 'inbound';
  from: string;
  to: string;
  /** who is at the far end: a persona by its number, or `driven` (an inbound caller that speaks only through the sandbox API) */
  persona: VoicePersona | 'driven';
  /** what the far end is doing now, e.g. `talker: 2 of 4 lines said`, `voicemail: recording` */
  stage: string;
  status: SandboxLegStatus;
  answeredBy: AnsweredBy | null;
  failure: Readonly<{ reason: DialFailure; detail: string }> | null;
  endReason: LegEndReason | null;
  endDetail: string | null;
  createdAt: string;
  ringingAt: string | null;
  answeredAt: string | null;
  endedAt: string | null;
  /** every agent playback, in order */
  agentSpeech: readonly SandboxPlaybackView[];
  /** everything the far end said, in order */
  farEndSpeech: readonly SandboxUtteranceView[];
  /** keypad tones the agent sent */
  digitsFromAgent: string;
  /** keypad tones the far end pressed */
  digitsFromFarEnd: string;
  beepAt: string | null;
  /** voicemail: what it recorded after the beep */
  voicemailMessage: string | null;
  /** screener: what it heard the agent say before the person picked up */
  screenerHeard: string | null;
  transferredTo: string | null;
  /** the SIP URI that answered a bridge */
  bridgedTo: string | null;
  bridgeAttempts: readonly SandboxBridgeAttempt[];
}>;

/** A sandbox control named a call the engine does not know (or no longer keeps). */
export class SandboxCallNotFoundError extends Error {
  constructor(readonly callId: string) {
    super(`No sandbox call ${callId} (calls are kept in this process's memory while live, and the last ${KEEP_ENDED_LEGS} after they end)`);
    this.name = 'SandboxCallNotFoundError';
  }
}

/** A sandbox control on a call that is not connected: still ringing, failed or ended. */
export class SandboxCallNotConnectedError extends Error {
  constructor(
    readonly callId: string,
    readonly status: SandboxLegStatus,
  ) {
    super(`The sandbox call ${callId} is not connected (it is ${status})`);
    this.name = 'SandboxCallNotConnectedError';
  }
}

/** The platform refused an inbound call, or nothing in this process takes inbound calls; `reason` says which. */
export class InboundCallRefusedError extends Error {
  constructor(readonly reason: string) {
    super(`The platform refused the call: ${reason}`);
    this.name = 'InboundCallRefusedError';
  }
}
