import { type CallEvent, type CallState, callDecider } from '../../domain/call/call.decider.js';
import { callStream } from '../../domain/call/call.js';
import { defineHistory, type HistoryView } from '../audit/history.js';

type CallView = {
  callId: string;
  direction: string | null;
  agentId: string | null;
  numberId: string | null;
  from: string | null;
  to: string | null;
  status: string | null;
  phase: string | null;
  answeredBy: string | null;
  turns: number;
  disconnectionReason: string | null;
  startedAt: string | null;
  answeredAt: string | null;
  endedAt: string | null;
  durationSeconds: number | null;
  recordingAvailable: boolean;
};

/** A call's history: its stream, its phase and status after each step. */
export const callHistory: HistoryView = defineHistory<CallEvent, CallState, CallView>({
  kind: 'call',
  what: 'Call',
  notFound: 'CALL_NOT_FOUND',
  stream: callStream,
  decider: callDecider,
  accountOf: (s) => (s.status === 'none' ? null : s.accountId),
  initial: (callId) => ({
    callId,
    direction: null,
    agentId: null,
    numberId: null,
    from: null,
    to: null,
    status: null,
    phase: null,
    answeredBy: null,
    turns: 0,
    disconnectionReason: null,
    startedAt: null,
    answeredAt: null,
    endedAt: null,
    durationSeconds: null,
    recordingAvailable: false,
  }),
  step: (v, e, s) => {
    const phase = s.status === 'live' ? s.phase : s.status === 'ended' ? 'ended' : null;
    const base = { ...v, phase };
    switch (e.type) {
      case 'CallPlaced':
        return {
          ...base,
          callId: e.data.callId,
          direction: e.data.direction,
          agentId: e.data.agentId,
          numberId: e.data.numberId,
          from: e.data.from,
          to: e.data.to,
          status: 'in-progress',
          startedAt: e.data.placedAt,
        };
      case 'CallAnswered':
        return { ...base, answeredBy: e.data.answeredBy, answeredAt: e.data.at };
      case 'CallerTurnRecorded':
      case 'AgentTurnRecorded':
        return { ...base, turns: v.turns + 1 };
      case 'CallEnded':
        return {
          ...base,
          status: 'completed',
          disconnectionReason: e.data.reason,
          endedAt: e.data.endedAt,
          durationSeconds: e.data.durationSeconds,
        };
      case 'CallFailed':
        return { ...base, status: 'failed', disconnectionReason: e.data.reason, endedAt: e.data.endedAt, durationSeconds: 0 };
      case 'CallRecordingAvailable':
        return { ...base, recordingAvailable: true };
      default:
        return base;
    }
  },
  status: (v) => v.status,
});
