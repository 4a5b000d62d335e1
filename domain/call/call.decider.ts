import { DomainError } from '../shared/errors.js';
import { assertNever, type Command, type Decider, type Event } from '../shared/types.js';
import type {
  AgentTurnSource,
  AnsweredBy,
  CallDirection,
  CallSettings,
  DisconnectionReason,
  LegMedia,
  TranscriptEntry,
  TurnAction,
  TurnLatency,
} from './call.js';
import { summarize } from './summary.js';

/** Who the call is with and where it runs: fixed when it is placed. */
export type CallParties = Readonly<{
  callId: string;
  accountId: string;
  direction: CallDirection;
  agentId: string | null;
  /** the platform's number on the call (null for web calls) */
  numberId: string | null;
  from: string;
  to: string;
}>;

type Id = { callId: string };

/** One caller turn: what the far end said, as recognised. */
export type CallerTurnData = {
  turnId: string;
  transcript: string;
  /** the recogniser's confidence (0-1); null when it gives none (docs/speech.md#speech-recognition) */
  confidence: number | null;
  startedAt: string;
  endedAt: string;
};

/** One agent turn as recorded: what it meant to say, what was heard, and how it went. */
export type AgentTurnData = {
  turnId: string;
  source: AgentTurnSource;
  /** everything the agent meant to say */
  text: string;
  /** what the far end actually heard (less than `text` when interrupted) */
  spoken: string;
  interrupted: boolean;
  /** the caller turn this answers */
  replyTo: string | null;
  /** why nothing was said (no answer in time, a failing webhook, …) */
  silentReason: string | null;
  latency: TurnLatency | null;
  /** what the reply asked for besides speech (transfer, digits, hang up) and how it went */
  actions: readonly TurnAction[];
  startedAt: string;
  endedAt: string;
};

export type CallCommand =
  | Command<'PlaceCall', CallParties & { settings: CallSettings }>
  | Command<'RecordRinging', Id>
  | Command<'RecordAnswer', Id & { answeredBy: AnsweredBy; engineCallId: string }>
  | Command<'RecordCallerTurn', Id & CallerTurnData>
  | Command<'RecordAgentTurn', Id & AgentTurnData>
  | Command<'RecordDigitsSent', Id & { digits: string }>
  /** keypad tones from the far end (RFC 4733 events or SIP INFO on a phone line) */
  | Command<'RecordDigitsReceived', Id & { digits: string }>
  | Command<'RecordTransfer', Id & { to: string }>
  /** how the routing to a SIP trunk went: the URI that answered (null: none did) and those passed over */
  | Command<'RecordBridge', Id & SipRouting>
  /** the call is over: answered calls complete, unanswered ones fail */
  | Command<'EndCall', Id & { reason: DisconnectionReason; detail: string | null }>
  | Command<'RecordRecording', Id & { durationMs: number }>
  /** the recording step could not make the recording (docs/calls.md#recordings): the call is final without one */
  | Command<'RecordRecordingUnavailable', Id & { reason: RecordingUnavailableReason; detail: string }>
  /** what the line's engine reports at the end: its own id of the call (the SIP Call-ID) and the media each way */
  | Command<'RecordLegReport', Id & LegReport>;

/** Why a call that was to be recorded has no recording: nothing it said had words, or no speech engine could render it. */
export type RecordingUnavailableReason = 'no_words' | 'speech_unavailable';

/** The engine's report on a call's line (docs/sip.md#observability); media is null when no audio flowed. */
export type LegReport = Readonly<{ protocol: 'sip'; engineCallId: string; media: LegMedia | null }>;

/**
 * How a call routed to a SIP trunk went (docs/calls.md#sip-trunks): the origination URI that answered (null when
 * none did) and each URI passed over before it, with why. An outbound call a customer's PBX sent through the
 * trunk's termination side (docs/sip.md#calls-from-your-pbx) names where it came from as `sipUri`, nothing failed.
 * `trunkId`: the trunk (absent on events stored before it was added).
 */
export type SipRouting = Readonly<{
  sipUri: string | null;
  failed: readonly Readonly<{ sipUri: string; error: string }>[];
  trunkId?: string;
}>;

export type CallEndedData = CallParties & {
  status: 'completed';
  reason: DisconnectionReason;
  detail: string | null;
  answeredBy: AnsweredBy | null;
  startedAt: string;
  answeredAt: string;
  endedAt: string;
  durationSeconds: number;
  /** the whole conversation as heard (interrupted agent turns as far as they were spoken) */
  transcript: TranscriptEntry[];
  summary: string;
  userSentiment: string;
  callSuccessful: boolean;
  recording: boolean;
  /** a call routed to a SIP trunk (absent on others, and on events stored before it was added) */
  sipRouting?: SipRouting;
};
export type CallFailedData = CallParties & {
  status: 'failed';
  reason: DisconnectionReason;
  detail: string | null;
  startedAt: string;
  endedAt: string;
  /** a call routed to a SIP trunk (absent on others, and on events stored before it was added) */
  sipRouting?: SipRouting;
};

export type CallEvent =
  | Event<'CallPlaced', CallParties & { settings: CallSettings; placedAt: string }>
  | Event<'CallRinging', Id & { at: string }>
  | Event<'CallAnswered', Id & { answeredBy: AnsweredBy; engineCallId: string; at: string }>
  | Event<'CallerTurnRecorded', Id & CallerTurnData>
  | Event<'AgentTurnRecorded', Id & AgentTurnData>
  | Event<'CallDigitsSent', Id & { digits: string; at: string }>
  | Event<'CallDigitsReceived', Id & { digits: string; at: string }>
  | Event<'CallTransferred', Id & { to: string; at: string }>
  /** `sipUri` null: no origination URI took the call (stored since SIP trunks route live calls) */
  | Event<'CallBridged', Id & { sipUri: string | null; failed: { sipUri: string; error: string }[]; trunkId?: string; at: string }>
  | Event<'CallEnded', CallEndedData>
  | Event<'CallFailed', CallFailedData>
  /**
   * A recorded call is final once its recording step has concluded: `call` repeats the call's end, so that
   * `agent.call_ended` is sent from here with the record it keeps (docs/calls.md#recordings). Absent on events
   * stored before it was added (their `agent.call_ended` went with `CallEnded`).
   */
  | Event<'CallRecordingAvailable', Id & { durationMs: number; at: string; call?: CallEndedData }>
  | Event<'CallRecordingUnavailable', Id & { reason: RecordingUnavailableReason; detail: string; at: string; call: CallEndedData }>
  | Event<'CallLegReported', Id & LegReport & { at: string }>;

export const callEventTypes = [
  'CallPlaced',
  'CallRinging',
  'CallAnswered',
  'CallerTurnRecorded',
  'AgentTurnRecorded',
  'CallDigitsSent',
  'CallDigitsReceived',
  'CallTransferred',
  'CallBridged',
  'CallEnded',
  'CallFailed',
  'CallRecordingAvailable',
  'CallRecordingUnavailable',
  'CallLegReported',
] as const satisfies readonly CallEvent['type'][];

type Live = CallParties & {
  settings: CallSettings;
  placedAt: string;
  phase: 'placed' | 'ringing' | 'answered';
  answeredAt: string | null;
  answeredBy: AnsweredBy | null;
  transcript: TranscriptEntry[];
  turnIds: ReadonlySet<string>;
  sipRouting: SipRouting | null;
};

export type CallState =
  | { status: 'none' }
  | ({ status: 'live' } & Live)
  | ({
      status: 'ended';
      recording: boolean;
      recordingDone: boolean;
      turnIds: ReadonlySet<string>;
      /** the end of an answered call (null for one that failed), repeated by the recording step's outcome */
      ended: CallEndedData | null;
    } & CallParties);

const notFound = () => new DomainError('CALL_NOT_FOUND', 'Call not found');
const notLive = () => new DomainError('CALL_NOT_LIVE', 'The call has ended');

const seconds = (from: string, to: string) => Math.max(0, Math.round((Date.parse(to) - Date.parse(from)) / 1000));

const parties = (s: CallParties): CallParties => ({
  callId: s.callId,
  accountId: s.accountId,
  direction: s.direction,
  agentId: s.agentId,
  numberId: s.numberId,
  from: s.from,
  to: s.to,
});

/**
 * The call aggregate (docs/calls.md#the-call-record). Facts from the line (ringing, answer, turns, tones) are
 * recorded as they happen; a write after the end is refused (`CALL_NOT_LIVE`) so the session that still holds
 * the line learns that the call was ended elsewhere (the API, the sweeper) and hangs up. Repeating a turn id or an
 * end is a no-op, so a session may retry a write whose outcome it did not see.
 */
export const callDecider: Decider<CallCommand, CallEvent, CallState> = {
  initialState: () => ({ status: 'none' }),

  decide: (cmd, s) => {
    const { now, accountId } = cmd.metadata;
    if (cmd.type === 'PlaceCall') {
      if (s.status !== 'none') {
        if (s.accountId !== accountId) throw new DomainError('CONCURRENCY_CONFLICT', 'Call id already taken');
        return [];
      }
      const { settings, ...p } = cmd.data;
      return [{ type: 'CallPlaced', data: { ...p, accountId, settings, placedAt: now } }];
    }
    if (s.status === 'none' || s.accountId !== accountId) throw notFound();
    const id = { callId: s.callId };
    switch (cmd.type) {
      case 'RecordRinging':
        return s.status === 'live' && s.phase === 'placed' ? [{ type: 'CallRinging', data: { ...id, at: now } }] : [];
      case 'RecordAnswer':
        if (s.status !== 'live') throw notLive();
        if (s.phase === 'answered') return [];
        return [{ type: 'CallAnswered', data: { ...id, answeredBy: cmd.data.answeredBy, engineCallId: cmd.data.engineCallId, at: now } }];
      case 'RecordCallerTurn':
      case 'RecordAgentTurn':
        if (s.turnIds.has(cmd.data.turnId)) return [];
        if (s.status !== 'live') throw notLive();
        return cmd.type === 'RecordCallerTurn'
          ? [{ type: 'CallerTurnRecorded', data: { ...cmd.data, callId: s.callId } }]
          : [{ type: 'AgentTurnRecorded', data: { ...cmd.data, callId: s.callId } }];
      case 'RecordDigitsSent':
        if (s.status !== 'live') throw notLive();
        return [{ type: 'CallDigitsSent', data: { ...id, digits: cmd.data.digits, at: now } }];
      case 'RecordDigitsReceived':
        if (s.status !== 'live') throw notLive();
        return [{ type: 'CallDigitsReceived', data: { ...id, digits: cmd.data.digits, at: now } }];
      case 'RecordTransfer':
        if (s.status !== 'live') throw notLive();
        return [{ type: 'CallTransferred', data: { ...id, to: cmd.data.to, at: now } }];
      case 'RecordBridge':
        if (s.status !== 'live') throw notLive();
        return [
          {
            type: 'CallBridged',
            data: {
              ...id,
              sipUri: cmd.data.sipUri,
              failed: cmd.data.failed.map((f) => ({ ...f })),
              ...(cmd.data.trunkId ? { trunkId: cmd.data.trunkId } : {}),
              at: now,
            },
          },
        ];
      case 'EndCall': {
        if (s.status !== 'live') return [];
        const { reason, detail } = cmd.data;
        const routing = s.sipRouting ? { sipRouting: s.sipRouting } : {};
        if (s.answeredAt === null) {
          return [
            {
              type: 'CallFailed',
              data: { ...parties(s), status: 'failed', reason, detail, startedAt: s.placedAt, endedAt: now, ...routing },
            },
          ];
        }
        const durationSeconds = seconds(s.answeredAt, now);
        const summary = summarize({ direction: s.direction, answeredBy: s.answeredBy, reason, durationSeconds, transcript: s.transcript });
        return [
          {
            type: 'CallEnded',
            data: {
              ...parties(s),
              status: 'completed',
              reason,
              detail,
              answeredBy: s.answeredBy,
              startedAt: s.placedAt,
              answeredAt: s.answeredAt,
              endedAt: now,
              durationSeconds,
              transcript: s.transcript,
              ...summary,
              // a bridged call's recording is the audio it relayed (docs/sip.md#recording-bridged-calls), not its turns
              recording: s.settings.recording && (s.transcript.length > 0 || s.settings.mode === 'sip'),
              ...routing,
            },
          },
        ];
      }
      case 'RecordLegReport': {
        // the report comes as the line goes: before the end when the session records it, dropped after
        if (s.status !== 'live') return [];
        const { protocol, engineCallId, media } = cmd.data;
        return [{ type: 'CallLegReported', data: { ...id, protocol, engineCallId, media, at: now } }];
      }
      case 'RecordRecording':
        if (s.status !== 'ended' || !s.recording) throw new DomainError('RECORDING_NOT_FOUND', 'This call has no recording');
        if (s.recordingDone) return [];
        return [
          {
            type: 'CallRecordingAvailable',
            data: { ...id, durationMs: cmd.data.durationMs, at: now, ...(s.ended ? { call: s.ended } : {}) },
          },
        ];
      case 'RecordRecordingUnavailable':
        if (s.status !== 'ended' || !s.recording) throw new DomainError('RECORDING_NOT_FOUND', 'This call has no recording');
        if (s.recordingDone || !s.ended) return [];
        return [
          { type: 'CallRecordingUnavailable', data: { ...id, reason: cmd.data.reason, detail: cmd.data.detail, at: now, call: s.ended } },
        ];
      default:
        return assertNever(cmd);
    }
  },

  evolve: (s, e) => {
    switch (e.type) {
      case 'CallPlaced':
        return {
          status: 'live',
          ...parties(e.data),
          settings: e.data.settings,
          placedAt: e.data.placedAt,
          phase: 'placed',
          answeredAt: null,
          answeredBy: null,
          transcript: [],
          turnIds: new Set(),
          sipRouting: null,
        };
      case 'CallRinging':
        return s.status === 'live' && s.phase === 'placed' ? { ...s, phase: 'ringing' } : s;
      case 'CallAnswered':
        return s.status === 'live' ? { ...s, phase: 'answered', answeredAt: e.data.at, answeredBy: e.data.answeredBy } : s;
      case 'CallerTurnRecorded':
        return s.status === 'live'
          ? {
              ...s,
              transcript: [...s.transcript, { role: 'user', content: e.data.transcript }],
              turnIds: new Set([...s.turnIds, e.data.turnId]),
            }
          : s;
      case 'AgentTurnRecorded':
        return s.status === 'live'
          ? {
              ...s,
              transcript: e.data.spoken ? [...s.transcript, { role: 'agent', content: e.data.spoken }] : s.transcript,
              turnIds: new Set([...s.turnIds, e.data.turnId]),
            }
          : s;
      case 'CallEnded':
        return s.status === 'live'
          ? { status: 'ended', ...parties(s), recording: e.data.recording, recordingDone: false, turnIds: s.turnIds, ended: e.data }
          : s;
      case 'CallFailed':
        return s.status === 'live'
          ? { status: 'ended', ...parties(s), recording: false, recordingDone: false, turnIds: s.turnIds, ended: null }
          : s;
      case 'CallRecordingAvailable':
      case 'CallRecordingUnavailable':
        return s.status === 'ended' ? { ...s, recordingDone: true } : s;
      case 'CallBridged':
        return s.status === 'live'
          ? {
              ...s,
              sipRouting: { sipUri: e.data.sipUri, failed: e.data.failed, ...(e.data.trunkId ? { trunkId: e.data.trunkId } : {}) },
            }
          : s;
      case 'CallDigitsSent':
      case 'CallDigitsReceived':
      case 'CallTransferred':
      case 'CallLegReported':
        return s;
      default:
        return s;
    }
  },
};
