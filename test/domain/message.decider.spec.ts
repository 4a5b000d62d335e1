import { expect } from 'chai';
import { advances, type MessageCommand, type MessageEvent, messageDecider } from '../../domain/message/message.decider.js';
import { deciderSpec } from '../support/decider-spec.js';

const { given } = deciderSpec(messageDecider);
const now = '2026-03-01T10:00:00.000Z';
const metadata = { now, accountId: 'acc_1' };
const messageId = 'msg_1';
const facts = {
  messageId,
  conversationId: 'conv_1',
  numberId: 'num_1',
  agentId: null,
  from: '+12025550100',
  to: '+14155550123',
  recipients: ['+14155550123'],
  body: 'hi',
  mediaUrls: [],
  channel: 'sms',
  encoding: 'GSM-7' as const,
  segments: 1,
  replyToMessageId: null,
  kind: 'message' as const,
  acceptedAt: now,
};
const queued: MessageEvent = { type: 'MessageQueued', data: { ...facts, queuedAt: now } };
const submitted: MessageEvent = { type: 'MessageSubmitted', data: { messageId, carrierMessageIds: ['c1'], submittedAt: now } };
const receipt = (receiptId: string, status: 'sent' | 'delivered' | 'read' | 'failed', failureReason?: string): MessageCommand => ({
  type: 'RecordReceipt',
  data: {
    messageId,
    receiptId,
    carrierMessageId: 'c1',
    status,
    at: now,
    failure: failureReason ? { failureReason, errorCode: 'X', failureCategory: 'recipient', retryable: false } : null,
  },
  metadata,
});
const run = (past: MessageEvent[], cmd: MessageCommand) =>
  messageDecider.decide(cmd, past.reduce(messageDecider.evolve, messageDecider.initialState()));
const afterReceipts = (...cmds: MessageCommand[]) => {
  const h: MessageEvent[] = [queued, submitted];
  for (const c of cmds) h.push(...run(h, c));
  return h;
};
const statusOf = (events: MessageEvent[]) => {
  const s = events.reduce(messageDecider.evolve, messageDecider.initialState());
  return s.exists ? s.status : null;
};

describe('Message decider: status only moves forward, every receipt is kept', () => {
  it('queues once and records the submission of a queued message', () => {
    given([]).when({ type: 'Queue', data: facts, metadata }).then([queued]);
    given([queued]).when({ type: 'Queue', data: facts, metadata }).then([]);
    given([queued])
      .when({ type: 'RecordSubmission', data: { messageId, carrierMessageIds: ['c1'] }, metadata })
      .then([submitted]);
    given([queued, submitted])
      .when({ type: 'RecordSubmission', data: { messageId, carrierMessageIds: ['c2'] }, metadata })
      .then([]);
  });

  it('applies sent then delivered then read', () => {
    const h = afterReceipts(receipt('r1', 'sent'), receipt('r2', 'delivered'), receipt('r3', 'read'));
    expect(h.filter((e) => e.type === 'MessageReceiptRecorded').map((e) => (e.data as { outcome: string }).outcome)).to.deep.equal([
      'stale',
      'applied',
      'applied',
    ]);
    expect(statusOf(h)).to.equal('read');
  });

  it('records the delivery too when a read receipt overtakes it, at the read time; the late delivery receipt is stale', () => {
    const h = afterReceipts(receipt('r1', 'sent'), receipt('r3', 'read'), receipt('r2', 'delivered'));
    const delivered = h.filter((e) => e.type === 'MessageDelivered');
    const read = h.filter((e) => e.type === 'MessageRead');
    expect(delivered).to.have.length(1);
    expect(read).to.have.length(1);
    expect(h.indexOf(delivered[0]!)).to.be.lessThan(h.indexOf(read[0]!));
    expect((delivered[0]!.data as { deliveredAt: string }).deliveredAt).to.equal((read[0]!.data as { readAt: string }).readAt);
    expect((h.at(-1)!.data as { outcome: string }).outcome).to.equal('stale');
    expect(statusOf(h)).to.equal('read');
  });

  it('keeps an out-of-order receipt as stale: sent after delivered leaves the message delivered', () => {
    const h = afterReceipts(receipt('r2', 'delivered'), receipt('r1', 'sent'));
    expect(statusOf(h)).to.equal('delivered');
    expect(h.at(-1)).to.deep.include({ type: 'MessageReceiptRecorded' });
    expect((h.at(-1)!.data as { outcome: string }).outcome).to.equal('stale');
  });

  it('records a repeated receipt as a duplicate and changes nothing', () => {
    const h = afterReceipts(receipt('r2', 'delivered'), receipt('r2', 'delivered'));
    expect((h.at(-1)!.data as { outcome: string }).outcome).to.equal('duplicate');
    expect(h.filter((e) => e.type === 'MessageDelivered')).to.have.length(1);
  });

  it('never leaves a final state: failed stays failed, and a failure after delivery is stale', () => {
    const failed = afterReceipts(
      receipt('r1', 'failed', "The recipient's number is a landline or can't receive SMS."),
      receipt('r2', 'delivered'),
    );
    expect(statusOf(failed)).to.equal('failed');
    const delivered = afterReceipts(receipt('r1', 'delivered'), receipt('r2', 'failed', 'The carrier rejected the message.'));
    expect(statusOf(delivered)).to.equal('delivered');
    expect(advances('read', 'delivered')).to.equal(false);
    expect(advances('queued', 'failed')).to.equal(true);
  });

  it('fails a queued message (platform checks), once', () => {
    const f = {
      messageId,
      failureReason: 'The recipient has opted out of messages from this number.',
      errorCode: 'RECIPIENT_OPTED_OUT',
      failureCategory: 'recipient',
      retryable: false,
    };
    given([queued])
      .when({ type: 'Fail', data: f, metadata })
      .then([{ type: 'MessageFailed', data: { ...f, source: 'platform', failedAt: now } }]);
    given([queued, { type: 'MessageFailed', data: { ...f, source: 'platform', failedAt: now } }])
      .when({ type: 'Fail', data: f, metadata })
      .then([]);
  });

  it('counts submission errors', () => {
    const e1 = run([queued], { type: 'RecordSubmissionError', data: { messageId, error: 'timeout' }, metadata });
    expect(e1[0]!.data).to.include({ attempt: 1 });
    expect(run([queued, ...e1], { type: 'RecordSubmissionError', data: { messageId, error: 'timeout' }, metadata })[0]!.data).to.include({
      attempt: 2,
    });
  });

  it('adds a reaction once, with the message it is about; a reaction to a missing message is 404', () => {
    const react: MessageCommand = {
      type: 'React',
      data: { messageId, reactionId: 'rx1', reactionType: 'like', direction: 'inbound', fromNumber: '+14155550123' },
      metadata,
    };
    const r = run([queued], react);
    expect(r[0]!.data).to.deep.include({ reactionId: 'rx1', messageBody: 'hi', conversationId: 'conv_1' });
    given([queued, ...r])
      .when(react)
      .then([]);
    given([]).when(react).thenThrows('MESSAGE_NOT_FOUND');
  });
});
