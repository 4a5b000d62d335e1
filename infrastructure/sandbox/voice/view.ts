import type { AnsweredBy, DialFailure, LegEndReason } from '../../../application/calls/voice-engine.port.js';
import type { AgentSpeech } from './agent-speech.js';
import type { FarEndSpeech } from './far-end-speech.js';
import type { VoicePersona } from './magic.js';
import { wordsOf } from './timing.js';
import type { SandboxBridgeAttempt, SandboxCallView, SandboxLegStatus } from './types.js';

/** What a leg records about itself as it goes: the facts of its view besides the speech. */
export type LegRecord = {
  readonly callId: string;
  readonly engineCallId: string;
  readonly direction: 'outbound' | 'inbound';
  readonly from: string;
  readonly to: string;
  readonly persona: VoicePersona | 'driven';
  readonly createdAt: string;
  status: SandboxLegStatus;
  answeredBy: AnsweredBy | null;
  failure: { reason: DialFailure; detail: string } | null;
  endReason: LegEndReason | null;
  endDetail: string | null;
  ringingAt: string | null;
  answeredAt: string | null;
  endedAt: string | null;
  beepAt: string | null;
  digitsFromAgent: string;
  digitsFromFarEnd: string;
  transferring: boolean;
  transferredTo: string | null;
  bridgedTo: string | null;
  readonly bridgeAttempts: SandboxBridgeAttempt[];
};

/** A leg as its far end sees it (docs/sandbox.md#voice): its record, what the agent said and what the far end said. */
export function callView(rec: LegRecord, agent: AgentSpeech, far: FarEndSpeech, stage: string): SandboxCallView {
  return {
    callId: rec.callId,
    engineCallId: rec.engineCallId,
    direction: rec.direction,
    from: rec.from,
    to: rec.to,
    persona: rec.persona,
    stage,
    status: rec.status,
    answeredBy: rec.answeredBy,
    failure: rec.failure,
    endReason: rec.endReason,
    endDetail: rec.endDetail,
    createdAt: rec.createdAt,
    ringingAt: rec.ringingAt,
    answeredAt: rec.answeredAt,
    endedAt: rec.endedAt,
    agentSpeech: agent.all.map((p) => ({
      playbackId: p.id,
      text: p.text,
      voice: p.voice,
      wordsPerMinute: p.wordsPerMinute,
      heard: agent.heardNow(p),
      state: p.state,
      queuedAt: p.queuedAt,
      startedAt: p.startedAt,
      endedAt: p.endedAt,
    })),
    farEndSpeech: far.all.map((u) => ({
      utteranceId: u.id,
      text: u.text,
      transcript: far.transcriptNow(u),
      overAgent: u.overAgent,
      fromSandboxApi: u.fromSandboxApi,
      startedAt: u.startedAt,
      endedAt: u.endedAt,
    })),
    digitsFromAgent: rec.digitsFromAgent,
    digitsFromFarEnd: rec.digitsFromFarEnd,
    beepAt: rec.beepAt,
    voicemailMessage:
      rec.beepAt === null
        ? null
        : agent.all
            .filter((p) => p.recordFrom !== null)
            .flatMap((p) => wordsOf(agent.heardNow(p)).slice(p.recordFrom ?? 0))
            .join(' '),
    screenerHeard:
      rec.persona === 'screener'
        ? agent.all
            .filter((p) => p.screened && p.heard !== '')
            .map((p) => p.heard)
            .join(' ')
        : null,
    transferredTo: rec.transferredTo,
    bridgedTo: rec.bridgedTo,
    bridgeAttempts: [...rec.bridgeAttempts],
  };
}
