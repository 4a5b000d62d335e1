import type { AnsweredBy, CallDirection, LegMedia } from '../../domain/call/call.js';
import type { Page, PageOf } from '../shared/page.js';

/** The public status of a call (docs/calls.md#the-call-record): live calls are `in-progress` from placing to the end. */
export type CallStatus = 'in-progress' | 'completed' | 'failed';
export const CALL_STATUSES = ['in-progress', 'completed', 'failed'] as const satisfies readonly CallStatus[];
/** `web` for browser calls, `pstn` for phone calls of either direction. */
export type CallType = 'pstn' | 'web';
export const CALL_TYPES = ['pstn', 'web'] as const satisfies readonly CallType[];
/** Where a live call is; `ended` once it is over. */
/** `recording`: the call has ended and its recording is being made; it is `completed` once that concluded (docs/calls.md#recordings). */
export type CallPhase = 'placed' | 'ringing' | 'answered' | 'recording' | 'ended';

export type CallSummaryView = Readonly<{
  id: string;
  agentId: string | null;
  phoneNumberId: string | null;
  phoneNumber: string | null;
  fromNumber: string;
  toNumber: string;
  direction: string;
  status: string;
  startedAt: string;
  endedAt: string | null;
  durationSeconds: number | null;
  /** what was said last (the latest turn's words, at most 200 characters) */
  lastTranscriptSnippet: string | null;
  type: string;
  disconnectionReason: string | null;
  recordingAvailable: boolean;
}>;

/** How long the platform took on an agent turn, in milliseconds (docs/calls.md#latency). */
export type TurnLatencyView = Readonly<{
  /** the end of the caller's utterance was detected → its transcript was ready (web calls; null otherwise) */
  recognitionMs: number | null;
  requestMs: number | null;
  firstByteMs: number | null;
  speechStartMs: number | null;
  /** the first speech handed to the engine → its audio was rendered (web calls; null otherwise) */
  synthesisMs: number | null;
}>;

export type TurnActionView = Readonly<{
  type: 'transfer' | 'digits' | 'end_call';
  value: string | null;
  outcome: 'done' | 'refused' | 'failed';
  detail: string | null;
}>;

/** One turn of a call, in the call's order. */
export type CallTurnView = Readonly<{
  id: string;
  /** 1, 2, 3, … in the order the call recorded its turns: the id of the turn's transcript stream event */
  seq: number;
  role: 'user' | 'agent';
  /** what the far end heard: the caller's words, or the agent's speech up to an interruption */
  content: string;
  /** the caller's transcript, or everything the agent meant to say */
  text: string;
  spoken: string;
  interrupted: boolean;
  /** an agent turn's origin (`greeting`, `webhook`, `model`, `voicemail`, `screening`); null for the caller */
  source: string | null;
  /** the caller's transcription confidence (0-1); null for the agent */
  confidence: number | null;
  /** the caller turn an agent turn answers */
  replyTo: string | null;
  /** why an agent turn said nothing (no answer in time, a failing webhook, …) */
  silentReason: string | null;
  /** agent turns: how long each step took; null for the caller and when unmeasured */
  latency: TurnLatencyView | null;
  /** what an agent turn's reply asked for besides speech (a transfer, tones, hanging up) and how it went */
  actions: readonly TurnActionView[];
  startedAt: string;
  endedAt: string;
}>;

/** A caller utterance and the agent's reply to it (the public `transcripts` of a call record). */
export type TranscriptPairView = Readonly<{
  /** the caller turn's id */
  id: string;
  transcript: string;
  /** what the agent said in reply, as heard; null when it said nothing */
  response: string | null;
  createdAt: string;
}>;

/** The whole call record: the summary's fields, the outcome, the settings it was placed with, and its turns. */
export type CallView = CallSummaryView &
  Readonly<{
    mode: string | null;
    phase: CallPhase;
    voice: string | null;
    answeredAt: string | null;
    answeredBy: AnsweredBy | null;
    disconnectionDetail: string | null;
    summary: string | null;
    userSentiment: string | null;
    callSuccessful: boolean | null;
    /** the call was placed with recording on */
    recordingEnabled: boolean;
    recordingDurationMs: number | null;
    transferredTo: string | null;
    sipUri: string | null;
    /** the SIP trunk the call was routed to, or (outbound) came in through from the customer's PBX */
    sipTrunkId: string | null;
    sipFailures: readonly Readonly<{ sipUri: string; error: string }>[];
    /** the SIP Call-ID of a call over SIP (docs/sip.md#observability) */
    sipCallId: string | null;
    /** the line's media each way, once a call over SIP has ended */
    media: LegMedia | null;
    /** the keypad tones the far end pressed, in order ('' when none) */
    digitsReceived: string;
    unknownVariables: readonly string[];
    metadata: Readonly<Record<string, unknown>> | null;
    lastActivityAt: string;
    transcripts: readonly TranscriptPairView[];
    turns: readonly CallTurnView[];
  }>;

/** The transcript as the conversation went: who said what, as heard (agent turns that said nothing are left out). */
export type TranscriptEntryView = Readonly<{ role: 'user' | 'agent'; content: string; at: string }>;

export type CallTranscriptView = Readonly<{
  callId: string;
  status: string;
  transcript: readonly TranscriptEntryView[];
  turns: readonly CallTurnView[];
  /** each caller utterance with the agent's reply, as the public description of this answer has it (and the call record's `transcripts`) */
  transcripts: readonly TranscriptPairView[];
}>;

/** Where a call is, read cheaply: what the long-poll and the transcript stream watch. */
export type CallProgressView = Readonly<{
  callId: string;
  status: CallStatus;
  phase: CallPhase;
  endedAt: string | null;
  durationSeconds: number | null;
  disconnectionReason: string | null;
  /** sequence number of the latest turn (0 before the first) */
  turnCount: number;
}>;

export type CallListFilter = Readonly<{
  status?: CallStatus | undefined;
  direction?: CallDirection | undefined;
  type?: CallType | undefined;
  /** contained in the from or the to number */
  search?: string | undefined;
  /** one agent's calls */
  agentId?: string | undefined;
}>;

/** The read side of calls that other capabilities show (a number's call history). */
export interface NumberCallQueries {
  /** Newest first, offset pages. */
  calls(accountId: string, numberId: string, page: Page): Promise<PageOf<CallSummaryView>>;
}

/** The read side of calls (docs/calls.md): every query is scoped to the account; another account's call is absent. */
export interface CallQueries extends NumberCallQueries {
  /** The account's calls, newest first, offset pages, narrowed by the filter. */
  list(accountId: string, filter: CallListFilter, page: Page): Promise<PageOf<CallSummaryView>>;
  /** The call record with its turns; null when the account has no such call. */
  get(accountId: string, callId: string): Promise<CallView | null>;
  transcript(accountId: string, callId: string): Promise<CallTranscriptView | null>;
  /** The call's turns after sequence number `afterSeq` (0: all), in order. */
  turns(accountId: string, callId: string, afterSeq: number): Promise<CallTurnView[]>;
  progress(accountId: string, callId: string): Promise<CallProgressView | null>;
  /**
   * The call record once the call has ended, or as it stands when `timeoutMs` has passed or `signal` aborts
   * (the client went away); null when the account has no such call. Polls the read model; leaves no timer behind.
   */
  waitForEnd(accountId: string, callId: string, timeoutMs: number, o?: { signal?: AbortSignal }): Promise<CallView | null>;
}
