import type { LegReport } from '../../domain/call/call.decider.js';
import type { TransferCallerId } from '../../domain/call/call.js';
import { type BridgeFailure, describeBridgeFailure } from '../../domain/sip-trunk/routing.js';

export type { LegReport } from '../../domain/call/call.decider.js';

/**
 * The telephony and speech engine (docs/calls.md#the-voice-engine): it places and receives calls, plays the
 * agent's speech, transcribes the far end, and tells the platform what happens on the line. The platform decides
 * everything else (what to say, when a turn is cut, when to hang up).
 *
 * The sandbox adapter simulates the far end (docs/sandbox.md#voice); a production adapter bridges a telephony
 * provider's media stream. Both keep one rule: events for one leg arrive in order, one at a time.
 */

/** Who picked up an outbound call, as the engine classifies the first seconds of audio. */
export type AnsweredBy = 'human' | 'voicemail' | 'screener' | 'unknown';

/** Why a dial never reached an answer. */
export type DialFailure = 'busy' | 'no_answer' | 'invalid_number' | 'provider_error';

/** Why a connected leg ended. */
export type LegEndReason = 'remote_hangup' | 'local_hangup' | 'transferred' | 'provider_error';

export type DialRequest = Readonly<{
  /** the platform's call id, echoed in logs and the sandbox API */
  callId: string;
  from: string;
  to: string;
  /** give up ringing after this long (the leg then fails with `no_answer`) */
  ringTimeoutMs: number;
  /** the voice the agent speaks with (a voice id from the catalogue) */
  voice: string;
}>;

/** Speech from the far end, as the engine recognised it (see `LegListener.callerSpeech`). */
export type CallerSpeech = Readonly<{
  utteranceId: string;
  transcript: string;
  confidence: number | null;
  final: boolean;
  recognitionMs?: number | null;
}>;

/** What the engine tells the platform about one leg. Every method is called in order, never concurrently. */
export interface LegListener {
  /** the far end is ringing */
  ringing(): void;
  /** the far end picked up; `answeredBy` once classified (inbound legs: always `human`) */
  answered(answeredBy: AnsweredBy): void;
  /** an outbound dial did not connect */
  failed(reason: DialFailure, detail: string): void;
  /**
   * The far end is speaking. `final: false` comes once, as soon as speech is detected (with the first words
   * heard, or '' when the engine recognises only at the end); `final: true` when the utterance is complete, with
   * its whole transcript ('' when nothing was recognised: not a turn) and confidence (0-1, or null when the
   * recogniser gives none). An engine that recognises speech once the utterance has ended reports how long that
   * took (`recognitionMs`, from the end of the utterance to the transcript).
   */
  callerSpeech(u: CallerSpeech): void;
  /** an answering machine's beep: a message left now is recorded */
  beep(): void;
  /** a keypad tone from the far end */
  digitReceived(digit: string): void;
  /**
   * A playback's audio started; `synthesisMs` is how long the engine took to render it (engines that render speech
   * themselves report it; others need not call this).
   */
  playbackStarted?(playbackId: string, o: Readonly<{ synthesisMs: number | null }>): void;
  /** a queued playback finished (or was stopped; then `stopPlayback` already reported what was said) */
  playbackFinished(playbackId: string): void;
  /** the leg is gone; nothing follows */
  ended(reason: LegEndReason, detail: string | null): void;
}

export type PlaybackOptions = Readonly<{
  voice: string;
  /** spoken words per minute; the engine's default when absent */
  wordsPerMinute?: number;
}>;

/** What `stopPlayback` reports: the part of the current and earlier queued speech actually heard. */
export type StoppedPlayback = Readonly<{
  /** ids whose speech was cut (started but not finished) or dropped (never started) */
  cut: readonly string[];
  /** per cut playback, the words heard before the cut ('' when it never started) */
  heard: Readonly<Record<string, string>>;
}>;

/** One connected (or connecting) call leg. */
export interface CallLeg {
  /** the engine's own id of the leg (a provider call SID) */
  readonly engineCallId: string;
  /** queues speech after whatever is queued; returns at once */
  play(playbackId: string, text: string, o: PlaybackOptions): void;
  /** stops the current speech and drops the queue */
  stopPlayback(): StoppedPlayback;
  /** whether speech is playing or queued */
  isPlaying(): boolean;
  /** sends keypad tones (`0-9*#`); resolves when sent */
  sendDigits(digits: string): Promise<void>;
  /**
   * Cold transfer: the far end is connected to `to` and this leg ends with `transferred`. Rejects when the
   * provider refuses (the leg stays up). `callerId` says whose number the target sees when the engine places the
   * transferred call itself (docs/sip.md#transfers): the far end's (`transferee`, the default) or the platform's.
   */
  transfer(to: string, o?: Readonly<{ callerId?: TransferCallerId }>): Promise<void>;
  /**
   * Bridges an inbound leg to a SIP URI (a number routed to a SIP trunk). Resolves when the URI answered;
   * rejects with the URI's failure (a `SipBridgeError`), and the leg stays up for the next URI. A leg accepted with
   * `answerOnBridge` is not answered yet: the caller hears the URI's ringing (or its early media), and is answered
   * (`answered` reported) when the URI answers; hung up unanswered, the caller hears the last URI's failure
   * (docs/sip.md#sip-trunks).
   */
  bridge(sipUri: string): Promise<void>;
  /** ends the leg (`ended('local_hangup')` follows); idempotent */
  hangup(): Promise<void>;
  /**
   * Once the leg has ended or failed: the engine's report on its line (the SIP Call-ID, the media each way), which
   * the session records before the end (docs/sip.md#observability). Engines without one leave it out.
   */
  report?(): LegReport | null;
  /**
   * Once the leg has ended: the audio of its bridge (a SIP trunk's URI, or the carrier's leg of a call from a PBX),
   * both directions mixed into one WAV, when the leg was accepted with `record`; null when it was not, or no audio
   * flowed (docs/sip.md#recording-bridged-calls). Engines that relay no audio leave it out.
   */
  bridgedAudio?(): Readonly<{ wav: Uint8Array; durationMs: number }> | null;
}

/**
 * An inbound call ringing on one of the platform's numbers; or, with `fromTrunk`, a call a customer's PBX sends
 * through the termination side of its SIP trunks, to go out through the carrier (docs/sip.md#calls-from-your-pbx):
 * `from` is then the caller id it asks for, `to` the destination (E.164).
 */
export type InboundOffer = Readonly<{
  engineCallId: string;
  from: string;
  to: string;
  /** the trunks whose termination side the INVITE authenticated with (its source address, or its credentials) */
  fromTrunk?: Readonly<{ trunkIds: readonly string[]; source: string }>;
}>;

/**
 * Why an inbound offer is refused: the number is none of the platform's, a cap is full (the caller hears busy),
 * nobody can take it now, or (a call from a PBX) the caller id is no number routed to the trunk it came through.
 */
export type InboundRefusal = 'unknown_number' | 'busy' | 'unavailable' | 'forbidden';

/** The platform's answer to an inbound offer: the leg's listener, or a refusal (a SIP engine answers 404, 486 or 480). */
export type InboundDecision =
  | Readonly<{
      accept: true;
      callId: string;
      listener: LegListener;
      onLeg: (leg: CallLeg) => void;
      /** a call from a PBX: how long the destination may ring before it is given up (`failed('no_answer')`) */
      ringTimeoutMs?: number;
      /** a call routed to a SIP trunk: answered only when one of its URIs answers a `bridge` (not at once) */
      answerOnBridge?: boolean;
      /** the call is recorded (the recording add-on): the engine keeps a bridge's relayed audio for `bridgedAudio` */
      record?: boolean;
    }>
  | Readonly<{ accept: false; reason: string; code?: InboundRefusal }>;

export interface VoiceEnginePort {
  /**
   * Places a call. Resolves with the leg once the provider accepted the request (before any ringing);
   * rejects with a `TelephonyError` when it refuses. Progress arrives on `listener`.
   */
  dial(req: DialRequest, listener: LegListener): Promise<CallLeg>;
  /** Who takes inbound calls in this process (the call host registers itself at start). */
  onInbound(handler: (offer: InboundOffer) => Promise<InboundDecision>): void;
  /** Hangs up every leg this process holds (shutdown). */
  close(): Promise<void>;
}

/** The provider refused or failed a request (`TELEPHONY_PROVIDER_ERROR`, 502). */
export class TelephonyError extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
  ) {
    super(message);
    this.name = 'TelephonyError';
  }
}

/** An origination URI of a SIP trunk did not take a bridged call (docs/calls.md#sip-trunks): why, as a `BridgeFailure`. */
export class SipBridgeError extends TelephonyError {
  constructor(
    readonly sipUri: string,
    readonly failure: BridgeFailure,
  ) {
    super(`${describeBridgeFailure(failure)} from ${sipUri}`, false);
    this.name = 'SipBridgeError';
  }
}

/**
 * A request on a leg (a bridge) ended because the leg itself went meanwhile (the caller hung up while a trunk's URI
 * rang, and the engine cancelled it): no fault of the far end, and the leg's own end is the call's.
 */
export class LegEndedError extends TelephonyError {
  constructor(message: string) {
    super(message, false);
    this.name = 'LegEndedError';
  }
}
