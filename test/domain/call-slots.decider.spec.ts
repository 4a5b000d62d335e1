import { expect } from 'chai';
import { type CallSlotsCommand, type CallSlotsEvent, callSlotsDecider, callSlotsStream } from '../../domain/call/call-slots.decider.js';
import { DomainError } from '../../domain/shared/errors.js';
import { deciderSpec } from '../support/decider-spec.js';

const { given } = deciderSpec(callSlotsDecider);
const now = '2026-03-01T10:00:00.000Z';
const metadata = { now, accountId: 'acc_1' };
const scope = 'account_acc_1';
const message = 'Too many concurrent outbound calls.';

const reserve = (callId: string, limit = 2): CallSlotsCommand => ({
  type: 'ReserveCallSlot',
  data: { scope, callId, limit, code: 'CALL_CONCURRENCY_LIMIT', message },
  metadata,
});
const release = (callId: string): CallSlotsCommand => ({ type: 'ReleaseCallSlot', data: { scope, callId }, metadata });
const setLimit = (limit: number | null): CallSlotsCommand => ({ type: 'SetCallSlotLimit', data: { scope, limit }, metadata });
const reserved = (callId: string): CallSlotsEvent => ({ type: 'CallSlotReserved', data: { scope, callId, at: now } });
const released = (callId: string): CallSlotsEvent => ({ type: 'CallSlotReleased', data: { scope, callId, at: now } });
const limitSet = (limit: number | null): CallSlotsEvent => ({ type: 'CallSlotLimitSet', data: { scope, limit, at: now } });

const refusal = (past: CallSlotsEvent[], cmd: CallSlotsCommand) => {
  try {
    callSlotsDecider.decide(cmd, past.reduce(callSlotsDecider.evolve, callSlotsDecider.initialState()));
  } catch (e) {
    expect(e).to.be.instanceOf(DomainError);
    return e as DomainError;
  }
  return expect.fail('expected the reservation to be refused');
};

describe('Call slots decider: live calls are capped exactly', () => {
  it('reserves slots up to the limit', () => {
    given([])
      .when(reserve('c1'))
      .then([reserved('c1')]);
    given([reserved('c1')])
      .when(reserve('c2'))
      .then([reserved('c2')]);
  });

  it("refuses a reservation beyond the limit with the command's code and message", () => {
    given([reserved('c1'), reserved('c2')])
      .when(reserve('c3'))
      .thenThrows('CALL_CONCURRENCY_LIMIT');
    const e = refusal([reserved('c1'), reserved('c2')], {
      type: 'ReserveCallSlot',
      data: { scope, callId: 'c3', limit: 2, code: 'NUMBER_CALL_LIMIT', message: 'The number is busy.' },
      metadata,
    });
    expect(e.code).to.equal('NUMBER_CALL_LIMIT');
    expect(e.message).to.equal('The number is busy.');
    expect(e.hints).to.deep.equal({ limit: 2, live: 2 });
  });

  it('refuses every reservation at a limit of 0', () => given([]).when(reserve('c1', 0)).thenThrows('CALL_CONCURRENCY_LIMIT'));

  it('treats reserving the same call again as a no-op, even when full', () => {
    given([reserved('c1')])
      .when(reserve('c1'))
      .then([]);
    given([reserved('c1'), reserved('c2')])
      .when(reserve('c2'))
      .then([]);
  });

  it('frees a slot on release, so the next call fits', () => {
    given([reserved('c1'), reserved('c2')])
      .when(release('c1'))
      .then([released('c1')]);
    given([reserved('c1'), reserved('c2'), released('c1')])
      .when(reserve('c3'))
      .then([reserved('c3')]);
  });

  it('treats releasing an unknown or already released call as a no-op', () => {
    given([reserved('c1')])
      .when(release('c9'))
      .then([]);
    given([reserved('c1'), released('c1')])
      .when(release('c1'))
      .then([]);
  });

  it("applies a set limit instead of the command's default, in both directions", () => {
    // lower than the default: full at one
    given([limitSet(1), reserved('c1')])
      .when(reserve('c2', 5))
      .thenThrows('CALL_CONCURRENCY_LIMIT');
    // higher than the default: room for a third
    given([limitSet(3), reserved('c1'), reserved('c2')])
      .when(reserve('c3', 2))
      .then([reserved('c3')]);
    // a set 0 is a limit, not "unset"
    given([limitSet(0)])
      .when(reserve('c1', 5))
      .thenThrows('CALL_CONCURRENCY_LIMIT');
  });

  it("restores the command's default when the limit is set back to null", () => {
    given([limitSet(1), reserved('c1'), limitSet(null)])
      .when(reserve('c2', 2))
      .then([reserved('c2')]);
    given([limitSet(5), reserved('c1'), reserved('c2'), limitSet(null)])
      .when(reserve('c3', 2))
      .thenThrows('CALL_CONCURRENCY_LIMIT');
  });

  it('records a limit change only when it changes', () => {
    given([])
      .when(setLimit(4))
      .then([limitSet(4)]);
    given([limitSet(4)])
      .when(setLimit(4))
      .then([]);
    given([]).when(setLimit(null)).then([]);
    given([limitSet(4)])
      .when(setLimit(null))
      .then([limitSet(null)]);
  });

  it('keeps live calls over a lowered limit, but admits no new one until enough are released', () => {
    const past = [reserved('c1'), reserved('c2'), reserved('c3'), limitSet(2)];
    given(past).when(reserve('c4', 10)).thenThrows('CALL_CONCURRENCY_LIMIT');
    given([...past, released('c1')])
      .when(reserve('c4', 10))
      .thenThrows('CALL_CONCURRENCY_LIMIT');
    given([...past, released('c1'), released('c2')])
      .when(reserve('c4', 10))
      .then([reserved('c4')]);
    given(past)
      .when(release('c3'))
      .then([released('c3')]);
  });

  it('names one stream per capped thing, with a category that has no dash', () => {
    const stream = callSlotsStream('number', 'num-1');
    expect(stream.slice(0, stream.indexOf('-'))).to.equal('call_slots');
    expect(callSlotsStream('account', 'a')).to.not.equal(callSlotsStream('number', 'a'));
  });
});
