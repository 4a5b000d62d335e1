import { expect } from 'chai';
import { type CallCommand, type CallEvent, callDecider } from '../../domain/call/call.decider.js';
import type { CallSettings } from '../../domain/call/call.js';
import { callSettings } from '../support/calls.js';
import { deciderSpec } from '../support/decider-spec.js';

const { given } = deciderSpec(callDecider);
const callId = 'call_1';
const placedAt = '2026-03-01T10:00:00.000Z';
const ringingAt = '2026-03-01T10:00:02.000Z';
const answeredAt = '2026-03-01T10:00:05.000Z';
const endedAt = '2026-03-01T10:01:47.400Z'; // 102.4 s after the answer, 107.4 s after placing
const meta = (now: string, accountId = 'acc_1') => ({ now, accountId });

const settings = (o: Partial<CallSettings> = {}): CallSettings =>
  callSettings({
    greeting: 'Hello, this is Ada.',
    voice: 'alloy',
    modelTier: 'balanced',
    transferNumber: '+14155550199',
    recording: true,
    interruptionSensitivity: 0.8,
    maxDurationSeconds: 1800,
    ...o,
  });
const parties = {
  callId,
  accountId: 'acc_1',
  direction: 'outbound' as const,
  agentId: 'agent_1',
  numberId: 'num_1',
  from: '+12025550100',
  to: '+14155550123',
};

const place = (accountId = 'acc_1', s = settings()): CallCommand => ({
  type: 'PlaceCall',
  data: { ...parties, settings: s },
  metadata: meta(placedAt, accountId),
});
const placed = (s = settings()): CallEvent => ({ type: 'CallPlaced', data: { ...parties, settings: s, placedAt } });
const ringing: CallEvent = { type: 'CallRinging', data: { callId, at: ringingAt } };
const answered = (answeredBy: 'human' | 'voicemail' = 'human'): CallEvent => ({
  type: 'CallAnswered',
  data: { callId, answeredBy, engineCallId: 'eng_1', at: answeredAt },
});

const callerTurnData = (turnId: string, transcript: string) => ({
  callId,
  turnId,
  transcript,
  confidence: 0.92,
  startedAt: answeredAt,
  endedAt: answeredAt,
});
const agentTurnData = (turnId: string, text: string, spoken = text) => ({
  callId,
  turnId,
  source: 'webhook' as const,
  text,
  spoken,
  interrupted: spoken !== text,
  replyTo: null,
  silentReason: spoken ? null : 'webhook timed out',
  latency: { requestMs: 12, firstByteMs: 300, speechStartMs: 90 },
  actions: [],
  startedAt: answeredAt,
  endedAt: answeredAt,
});
const callerTurn = (turnId: string, transcript: string): CallEvent => ({
  type: 'CallerTurnRecorded',
  data: callerTurnData(turnId, transcript),
});
const agentTurn = (turnId: string, text: string, spoken = text): CallEvent => ({
  type: 'AgentTurnRecorded',
  data: agentTurnData(turnId, text, spoken),
});
const recordCallerTurn = (turnId: string, transcript: string, accountId = 'acc_1'): CallCommand => ({
  type: 'RecordCallerTurn',
  data: callerTurnData(turnId, transcript),
  metadata: meta(answeredAt, accountId),
});
const recordAgentTurn = (turnId: string, text: string, spoken = text): CallCommand => ({
  type: 'RecordAgentTurn',
  data: agentTurnData(turnId, text, spoken),
  metadata: meta(answeredAt),
});
const endCall = (now = endedAt, accountId = 'acc_1'): CallCommand => ({
  type: 'EndCall',
  data: { callId, reason: 'user_hangup', detail: null },
  metadata: meta(now, accountId),
});
const recordRecording = (accountId = 'acc_1'): CallCommand => ({
  type: 'RecordRecording',
  data: { callId, durationMs: 102_000 },
  metadata: meta('2026-03-01T10:02:00.000Z', accountId),
});

/** Runs commands one after another on top of `past`, keeping what each decided. */
const history = (past: CallEvent[], ...cmds: CallCommand[]) => {
  const h = [...past];
  for (const c of cmds) h.push(...callDecider.decide(c, h.reduce(callDecider.evolve, callDecider.initialState())));
  return h;
};
const decideOn = (past: CallEvent[], cmd: CallCommand) =>
  callDecider.decide(cmd, past.reduce(callDecider.evolve, callDecider.initialState()));
const endedData = (past: CallEvent[]) => {
  const [e, ...more] = decideOn(past, endCall());
  expect(more).to.deep.equal([]);
  expect(e?.type).to.equal('CallEnded');
  return (e as Extract<CallEvent, { type: 'CallEnded' }>).data;
};

const conversation = [
  placed(),
  ringing,
  answered(),
  agentTurn('t1', 'Hello, this is Ada.'),
  callerTurn('t2', 'Hi, I would like to book a table.'),
  agentTurn('t3', 'Sure, for how many people and at what time tonight?', 'Sure, for how many'),
  callerTurn('t4', 'Four people at eight, thanks, that sounds great.'),
  agentTurn('t5', 'Let me check.', ''), // cut before a word was heard
  agentTurn('t6', 'You are booked for four at eight.'),
];
const ended = (past = conversation) => [...past, { type: 'CallEnded', data: endedData(past) } as CallEvent];

describe('Call decider: placing', () => {
  it('places a call for the account of the command, stamped with its time', () => given([]).when(place()).then([placed()]));

  it('takes the account from the metadata, not from the body', () => {
    const [e] = decideOn([], {
      type: 'PlaceCall',
      data: { ...parties, accountId: 'acc_forged', settings: settings() },
      metadata: meta(placedAt),
    });
    expect(e?.data).to.include({ accountId: 'acc_1' });
  });

  it('treats placing the same call again as a retry', () => given([placed()]).when(place()).then([]));

  it("refuses another account's call id", () => given([placed()]).when(place('acc_2')).thenThrows('CONCURRENCY_CONFLICT'));

  it('refuses every other command on a call that was never placed', () => {
    given([]).when(recordCallerTurn('t1', 'hi')).thenThrows('CALL_NOT_FOUND');
    given([]).when(endCall()).thenThrows('CALL_NOT_FOUND');
    given([])
      .when({ type: 'RecordRinging', data: { callId }, metadata: meta(ringingAt) })
      .thenThrows('CALL_NOT_FOUND');
  });
});

describe('Call decider: ringing and answer', () => {
  const ring: CallCommand = { type: 'RecordRinging', data: { callId }, metadata: meta(ringingAt) };
  const answer: CallCommand = {
    type: 'RecordAnswer',
    data: { callId, answeredBy: 'human', engineCallId: 'eng_1' },
    metadata: meta(answeredAt),
  };

  it('records ringing once, and only before the answer', () => {
    given([placed()]).when(ring).then([ringing]);
    given([placed(), ringing]).when(ring).then([]);
    given([placed(), answered()]).when(ring).then([]);
    given([placed(), ringing, answered()]).when(ring).then([]);
  });

  it('records the answer once, whether or not it rang first', () => {
    given([placed(), ringing]).when(answer).then([answered()]);
    given([placed()]).when(answer).then([answered()]);
    given([placed(), ringing, answered()]).when(answer).then([]);
  });

  it('refuses an answer after the end', () =>
    given(history([placed()], endCall(ringingAt)))
      .when(answer)
      .thenThrows('CALL_NOT_LIVE'));

  it('ignores ringing after the end', () =>
    given(history([placed()], endCall(ringingAt)))
      .when(ring)
      .then([]));
});

describe('Call decider: turns', () => {
  const live = [placed(), ringing, answered()];

  it('records caller and agent turns on a live call', () => {
    given(live)
      .when(recordCallerTurn('t1', 'hello?'))
      .then([callerTurn('t1', 'hello?')]);
    given(live)
      .when(recordAgentTurn('t2', 'Hi there.', 'Hi'))
      .then([agentTurn('t2', 'Hi there.', 'Hi')]);
  });

  it('treats a repeated turn id as a no-op, for either role, even after the end', () => {
    const past = [...live, callerTurn('t1', 'hello?'), agentTurn('t2', 'Hi there.')];
    given(past).when(recordCallerTurn('t1', 'hello?')).then([]);
    given(past).when(recordAgentTurn('t2', 'Hi there.')).then([]);
    // an id is an id: the agent turn's id sent as a caller turn is still the same turn
    given(past).when(recordCallerTurn('t2', 'Hi there.')).then([]);
    const after = ended(past);
    given(after).when(recordCallerTurn('t1', 'hello?')).then([]);
    given(after).when(recordAgentTurn('t2', 'Hi there.')).then([]);
  });

  it('keeps the id of an agent turn that was never heard, so its retry is a no-op too', () => {
    const past = [...live, agentTurn('t1', 'Let me check.', '')];
    given(past)
      .when(recordAgentTurn('t1', 'Let me check.', ''))
      .then([]);
    given(ended(past))
      .when(recordAgentTurn('t1', 'Let me check.', ''))
      .then([]);
  });

  it('refuses a new turn after the end, so the session still holding the line hangs up', () => {
    given(ended()).when(recordCallerTurn('t9', 'hello?')).thenThrows('CALL_NOT_LIVE');
    given(ended()).when(recordAgentTurn('t9', 'Goodbye.')).thenThrows('CALL_NOT_LIVE');
    given(history([placed()], endCall(ringingAt)))
      .when(recordCallerTurn('t9', 'hello?'))
      .thenThrows('CALL_NOT_LIVE');
  });
});

describe('Call decider: tones, transfers and bridges', () => {
  const digits: CallCommand = { type: 'RecordDigitsSent', data: { callId, digits: '1#' }, metadata: meta(answeredAt) };
  const transfer: CallCommand = { type: 'RecordTransfer', data: { callId, to: '+14155550199' }, metadata: meta(answeredAt) };
  const pressed: CallCommand = { type: 'RecordDigitsReceived', data: { callId, digits: '5' }, metadata: meta(answeredAt) };
  const bridge: CallCommand = {
    type: 'RecordBridge',
    data: { callId, sipUri: 'sip:desk@pbx.example.com', failed: [{ sipUri: 'sip:a@pbx.example.com', error: '486 Busy' }] },
    metadata: meta(answeredAt),
  };

  it('records them on a live call', () => {
    const live = [placed(), answered()];
    given(live)
      .when(digits)
      .then([{ type: 'CallDigitsSent', data: { callId, digits: '1#', at: answeredAt } }]);
    given(live)
      .when(pressed)
      .then([{ type: 'CallDigitsReceived', data: { callId, digits: '5', at: answeredAt } }]);
    given(live)
      .when(transfer)
      .then([{ type: 'CallTransferred', data: { callId, to: '+14155550199', at: answeredAt } }]);
    given(live)
      .when(bridge)
      .then([
        {
          type: 'CallBridged',
          data: {
            callId,
            sipUri: 'sip:desk@pbx.example.com',
            failed: [{ sipUri: 'sip:a@pbx.example.com', error: '486 Busy' }],
            at: answeredAt,
          },
        },
      ]);
  });

  it('refuses them after the end', () => {
    for (const cmd of [digits, pressed, transfer, bridge]) {
      given(ended()).when(cmd).thenThrows('CALL_NOT_LIVE');
      given(history([placed()], endCall(ringingAt)))
        .when(cmd)
        .thenThrows('CALL_NOT_LIVE');
    }
  });
});

describe('Call decider: the end', () => {
  it('completes an answered call with its parties, times and a duration counted from the answer', () => {
    const d = endedData(conversation);
    expect(d).to.deep.include({
      ...parties,
      status: 'completed',
      reason: 'user_hangup',
      detail: null,
      answeredBy: 'human',
      startedAt: placedAt,
      answeredAt,
      endedAt,
      durationSeconds: 102,
    });
    expect(d).not.to.have.property('settings');
  });

  it('rounds the duration to whole seconds and never makes it negative', () => {
    expect(decideOn([placed(), answered()], endCall('2026-03-01T10:00:05.600Z'))[0]?.data).to.include({ durationSeconds: 1 });
    expect(decideOn([placed(), answered()], endCall(answeredAt))[0]?.data).to.include({ durationSeconds: 0 });
    // a clock that stepped back between the answer and the end
    expect(decideOn([placed(), answered()], endCall('2026-03-01T10:00:01.000Z'))[0]?.data).to.include({ durationSeconds: 0 });
  });

  it('keeps the transcript in order, interrupted agent turns as far as they were heard, unheard ones left out', () => {
    expect(endedData(conversation).transcript).to.deep.equal([
      { role: 'agent', content: 'Hello, this is Ada.' },
      { role: 'user', content: 'Hi, I would like to book a table.' },
      { role: 'agent', content: 'Sure, for how many' },
      { role: 'user', content: 'Four people at eight, thanks, that sounds great.' },
      { role: 'agent', content: 'You are booked for four at eight.' },
    ]);
  });

  it('adds the summary of the conversation as heard', () => {
    const d = endedData(conversation);
    expect(d.userSentiment).to.equal('Positive');
    expect(d.callSuccessful).to.equal(true);
    // three agent turns were heard (the fourth was cut before a word), two caller turns
    expect(d.summary).to.match(/^Outbound call of 102 s, 3 agent and 2 caller turns, ended: user hangup\./);
    expect(d.summary).to.include('first said "Hi, I would like to book a table."');
    expect(d.summary).to.include('last said "Four people at eight, thanks, that sounds great."');
  });

  it('has a recording only when recording was on and something was said', () => {
    expect(endedData(conversation).recording).to.equal(true);
    const unrecorded = [placed(settings({ recording: false })), ...conversation.slice(1)];
    expect(endedData(unrecorded).recording).to.equal(false);
    expect(endedData([placed(), answered()]).recording).to.equal(false);
    // only unheard agent turns: nothing was said
    expect(endedData([placed(), answered(), agentTurn('t1', 'Hello?', '')]).recording).to.equal(false);
  });

  it('fails a call that ends before it was answered', () => {
    given([placed(), ringing])
      .when({ type: 'EndCall', data: { callId, reason: 'dial_no_answer', detail: 'no answer after 30 s' }, metadata: meta(endedAt) })
      .then([
        {
          type: 'CallFailed',
          data: { ...parties, status: 'failed', reason: 'dial_no_answer', detail: 'no answer after 30 s', startedAt: placedAt, endedAt },
        },
      ]);
  });

  it('treats a second end as a no-op, after completing or failing', () => {
    given(ended()).when(endCall('2026-03-01T10:05:00.000Z')).then([]);
    given(history([placed()], endCall(ringingAt)))
      .when(endCall())
      .then([]);
  });
});

describe('Call decider: routing to a SIP trunk (docs/calls.md#sip-trunks)', () => {
  const failed = [{ sipUri: 'sip:a@pbx1.example.com', error: 'SIP 503 Service Unavailable' }];
  const bridge = (sipUri: string | null): CallCommand => ({
    type: 'RecordBridge',
    data: { callId, sipUri, failed },
    metadata: meta(answeredAt),
  });
  const bridged = (sipUri: string | null): CallEvent => ({ type: 'CallBridged', data: { callId, sipUri, failed, at: answeredAt } });

  it('records the URI that answered, or none, with those passed over', () => {
    given([placed(), answered()])
      .when(bridge('sip:b@pbx2.example.com'))
      .then([bridged('sip:b@pbx2.example.com')]);
    given([placed(), answered()])
      .when(bridge(null))
      .then([bridged(null)]);
  });

  it('carries the routing on the end, answered or failed, and leaves it off a call that was not routed', () => {
    const completed = decideOn([placed(), answered(), bridged('sip:b@pbx2.example.com')], endCall())[0]!;
    expect(completed.data).to.deep.include({ sipRouting: { sipUri: 'sip:b@pbx2.example.com', failed } });
    const unanswered = decideOn([placed(), bridged(null)], endCall())[0]!;
    expect(unanswered).to.deep.include({ type: 'CallFailed' });
    expect(unanswered.data).to.deep.include({ sipRouting: { sipUri: null, failed } });
    expect(endedData(conversation)).not.to.have.property('sipRouting');
  });

  it('refuses a routing record after the end', () => given(ended()).when(bridge(null)).thenThrows('CALL_NOT_LIVE'));

  it('names the trunk, when the routing gives it (a call from a PBX: where it came from, nothing failed)', () => {
    const fromPbx: CallCommand = {
      type: 'RecordBridge',
      data: { callId, sipUri: 'sip:203.0.113.7:5060', failed: [], trunkId: 'trk_1' },
      metadata: meta(placedAt),
    };
    given([placed()])
      .when(fromPbx)
      .then([{ type: 'CallBridged', data: { callId, sipUri: 'sip:203.0.113.7:5060', failed: [], trunkId: 'trk_1', at: placedAt } }]);
    const routed: CallEvent = {
      type: 'CallBridged',
      data: { callId, sipUri: 'sip:203.0.113.7:5060', failed: [], trunkId: 'trk_1', at: placedAt },
    };
    expect(decideOn([placed(), routed, answered()], endCall())[0]!.data).to.deep.include({
      sipRouting: { sipUri: 'sip:203.0.113.7:5060', failed: [], trunkId: 'trk_1' },
    });
  });

  it('a recorded bridged call has a recording though nobody took turns on it (its relayed audio); an unrecorded one has none', () => {
    const sip = (recording: boolean) => placed(settings({ mode: 'sip', recording }));
    expect(endedData([sip(true), answered(), bridged('sip:b@pbx2.example.com')]).recording).to.equal(true);
    expect(endedData([sip(false), answered(), bridged('sip:b@pbx2.example.com')]).recording).to.equal(false);
  });
});

describe("Call decider: the line's report (docs/sip.md#observability)", () => {
  const media = {
    codec: 'PCMU' as const,
    sent: { packets: 5120, bytes: 880_640 },
    received: { packets: 5100, bytes: 877_200, lost: 12, late: 3, jitterMs: 4.25 },
  };
  const report = (m: typeof media | null = media): CallCommand => ({
    type: 'RecordLegReport',
    data: { callId, protocol: 'sip', engineCallId: 'a84b4c76e66710@203.0.113.5', media: m },
    metadata: meta(endedAt),
  });

  it('records the SIP Call-ID and the media each way on a live call, answered or not', () => {
    given([placed(), answered()])
      .when(report())
      .then([
        { type: 'CallLegReported', data: { callId, protocol: 'sip', engineCallId: 'a84b4c76e66710@203.0.113.5', media, at: endedAt } },
      ]);
    given([placed(), ringing])
      .when(report(null))
      .then([
        {
          type: 'CallLegReported',
          data: { callId, protocol: 'sip', engineCallId: 'a84b4c76e66710@203.0.113.5', media: null, at: endedAt },
        },
      ]);
  });

  it('drops a report that comes after the end', () => given(ended()).when(report()).then([]));
});

describe('Call decider: recording', () => {
  // the recording step's outcome repeats the call's end: agent.call_ended goes with it (docs/calls.md#recordings)
  const call = endedData(conversation);
  const available: CallEvent = {
    type: 'CallRecordingAvailable',
    data: { callId, durationMs: 102_000, at: '2026-03-01T10:02:00.000Z', call },
  };
  const unavailable = (accountId = 'acc_1'): CallCommand => ({
    type: 'RecordRecordingUnavailable',
    data: { callId, reason: 'speech_unavailable', detail: 'espeak-ng is not installed' },
    metadata: meta('2026-03-01T10:02:00.000Z', accountId),
  });

  it('records the recording of a recorded, ended call once, with the end of the call', () => {
    given(ended()).when(recordRecording()).then([available]);
    given([...ended(), available])
      .when(recordRecording())
      .then([]);
  });

  it('records a recording that cannot be made once, with the end of the call, and nothing after either outcome', () => {
    given(ended())
      .when(unavailable())
      .then([
        {
          type: 'CallRecordingUnavailable',
          data: { callId, reason: 'speech_unavailable', detail: 'espeak-ng is not installed', at: '2026-03-01T10:02:00.000Z', call },
        },
      ]);
    given([...ended(), available])
      .when(unavailable())
      .then([]);
    const [none] = decideOn(ended(), unavailable());
    given([...ended(), none!])
      .when(recordRecording())
      .then([]);
    given([placed(settings({ recording: false }))])
      .when(unavailable())
      .thenThrows('RECORDING_NOT_FOUND');
  });

  it('refuses a recording for a live call, an unrecorded call and a failed call', () => {
    given(conversation).when(recordRecording()).thenThrows('RECORDING_NOT_FOUND');
    given(ended([placed(settings({ recording: false })), ...conversation.slice(1)]))
      .when(recordRecording())
      .thenThrows('RECORDING_NOT_FOUND');
    given(ended([placed(), answered()]))
      .when(recordRecording())
      .thenThrows('RECORDING_NOT_FOUND');
    given(history([placed()], endCall(ringingAt)))
      .when(recordRecording())
      .thenThrows('RECORDING_NOT_FOUND');
  });
});

describe("Call decider: another account's commands", () => {
  it('cannot see the call at all, live or ended', () => {
    const other = 'acc_2';
    const cmds: CallCommand[] = [
      { type: 'RecordRinging', data: { callId }, metadata: meta(ringingAt, other) },
      { type: 'RecordAnswer', data: { callId, answeredBy: 'human', engineCallId: 'eng_1' }, metadata: meta(answeredAt, other) },
      recordCallerTurn('t2', 'Hi, I would like to book a table.', other), // even a known turn id
      { type: 'RecordDigitsSent', data: { callId, digits: '1' }, metadata: meta(answeredAt, other) },
      { type: 'RecordTransfer', data: { callId, to: '+14155550199' }, metadata: meta(answeredAt, other) },
      endCall(endedAt, other),
      recordRecording(other),
    ];
    for (const cmd of cmds) {
      given(conversation).when(cmd).thenThrows('CALL_NOT_FOUND');
      given(ended()).when(cmd).thenThrows('CALL_NOT_FOUND');
    }
  });
});
