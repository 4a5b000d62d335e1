import type { CallEvent } from '../../domain/call/call.decider.js';
import type { RecordedEvent } from '../ports/event-store.port.js';
import type { WebhookDescription, WebhookMapping } from '../webhooks/registry.js';

type Ended = RecordedEvent<Extract<CallEvent, { type: 'CallEnded' }>>;
type Failed = RecordedEvent<Extract<CallEvent, { type: 'CallFailed' }>>;
type RecordingAvailable = RecordedEvent<Extract<CallEvent, { type: 'CallRecordingAvailable' }>>;
type RecordingUnavailable = RecordedEvent<Extract<CallEvent, { type: 'CallRecordingUnavailable' }>>;

/** An answered call's end as `agent.call_ended`, with whether it keeps a recording. */
const completed = (d: Ended['data'], recordingAvailable: boolean): WebhookDescription =>
  describe(d, {
    status: 'completed',
    startedAt: d.startedAt,
    durationSeconds: d.durationSeconds,
    transcript: d.transcript.map((t) => ({ role: t.role, content: t.content })),
    summary: d.summary,
    userSentiment: d.userSentiment,
    callSuccessful: d.callSuccessful,
    answeredBy: d.answeredBy,
    recordingAvailable,
  });

/**
 * A call's end as the public `agent.call_ended` event (docs/webhooks.md#the-delivery-contract, docs/calls.md#events):
 * the complete transcript (never cut to `contextLimit`), the summary, and why it ended. A call that never connected
 * (busy, no answer) ends too, with status `failed` and an empty transcript. `contact` is filled in at dispatch.
 */
export const callWebhookMappings: readonly WebhookMapping[] = [
  {
    domainEvent: 'CallEnded',
    event: 'agent.call_ended',
    // a recorded call's end is sent once its recording step concluded, with the record it keeps (docs/calls.md#recordings)
    describe: (raw) => ((raw as Ended).data.recording ? null : completed((raw as Ended).data, false)),
  },
  {
    domainEvent: 'CallRecordingAvailable',
    event: 'agent.call_ended',
    // stored before the end was repeated here: that call's agent.call_ended went with its CallEnded
    describe: (raw) => {
      const { call } = (raw as RecordingAvailable).data;
      return call ? completed(call, true) : null;
    },
  },
  {
    domainEvent: 'CallRecordingUnavailable',
    event: 'agent.call_ended',
    describe: (raw) => completed((raw as RecordingUnavailable).data.call, false),
  },
  {
    domainEvent: 'CallFailed',
    event: 'agent.call_ended',
    describe: (raw): WebhookDescription => {
      const d = (raw as Failed).data;
      return describe(d, {
        status: 'failed',
        startedAt: d.startedAt,
        durationSeconds: 0,
        transcript: [],
        summary: `The call did not connect: ${d.reason.replaceAll('_', ' ')}${d.detail ? ` (${d.detail})` : ''}.`,
        userSentiment: 'Unknown',
        callSuccessful: false,
        answeredBy: null,
        recordingAvailable: false,
      });
    },
  },
];

function describe(
  d: Ended['data'] | Failed['data'],
  x: Readonly<{
    status: 'completed' | 'failed';
    startedAt: string;
    durationSeconds: number;
    transcript: { role: string; content: string }[];
    summary: string;
    userSentiment: string;
    callSuccessful: boolean;
    answeredBy: string | null;
    recordingAvailable: boolean;
  }>,
): WebhookDescription {
  const participant = d.direction === 'inbound' ? d.from : d.direction === 'outbound' ? d.to : null;
  return {
    agentId: d.agentId,
    channel: 'voice',
    messageId: d.callId,
    conversationId: null,
    contactNumber: participant,
    data: {
      callId: d.callId,
      numberId: d.numberId,
      from: d.from,
      to: d.to,
      contact: null,
      direction: d.direction,
      status: x.status,
      startedAt: x.startedAt,
      endedAt: d.endedAt,
      durationSeconds: x.durationSeconds,
      disconnectionReason: d.reason,
      transcript: x.transcript,
      summary: x.summary,
      userSentiment: x.userSentiment,
      callSuccessful: x.callSuccessful,
      // beyond the public fields
      answeredBy: x.answeredBy,
      detail: d.detail,
      recordingAvailable: x.recordingAvailable,
      // a call routed to a SIP trunk: the URI that answered (null: none) and those passed over (docs/calls.md#sip-trunks);
      // a call from the customer's PBX out through the trunk: where it came from (docs/sip.md#calls-from-your-pbx)
      sipRouting: d.sipRouting ? { sipUri: d.sipRouting.sipUri, failed: d.sipRouting.failed, trunkId: d.sipRouting.trunkId ?? null } : null,
    },
  };
}
