import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { RecordedEvent } from '../../application/ports/event-store.port.js';
import { messagingProjector } from '../../projections/messaging/messaging.projector.js';
import { type Draft, draftedLog } from '../support/drafted-log.js';
import { seededRandom } from '../support/fixtures.js';
import { scratchSchemas } from '../support/scratch-schemas.js';

/**
 * A random log of what the messaging read models show: conversations (one-to-one and groups) with several messages
 * each, out and in, each message moved by its own stream (queued, submitted with carrier ids, receipts, delivered,
 * read, failed, reactions), caller-written state, group renames, opt-outs and opt-ins, an agent's deletion; every
 * thing's events in its own order, interleaved as a log holds them; some events name rows the log never created.
 */
function history(seed: number): RecordedEvent[] {
  const rnd = seededRandom(seed);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rnd() * xs.length)]!;
  let clock = Date.parse('2026-03-01T22:00:00.000Z');
  const at = () => {
    // sometimes back in time: a received text's time is the carrier's, older than the conversation's last
    clock += Math.floor(rnd() * 600_000) - (rnd() < 0.15 ? 900_000 : 0);
    return new Date(clock).toISOString();
  };
  const things: Draft[][] = [];
  /** a queue that waits until this draft is in the log */
  const waits = new Map<Draft[], Draft>();
  const conversations = Array.from({ length: 5 }, (_, i) => ({
    id: `conv_${seed}_${i}`,
    accountId: `acc_${i % 2}`,
    agentId: i % 3 === 0 ? 'agt_gone' : 'agt_1',
    isGroup: i === 4,
  }));
  for (const c of conversations) {
    const conv = (type: string, data: Record<string, unknown>): Draft => ({
      stream: `conversation-${c.id}`,
      type,
      data: { conversationId: c.id, ...data },
      accountId: c.accountId,
    });
    const own: Draft[] = [];
    // a conversation the log never started still gets messages (their rows are written; no conversation row)
    if (!c.id.endsWith('_3') || rnd() < 0.5)
      own.push(
        conv('ConversationStarted', {
          accountId: c.accountId,
          numberId: 'num_1',
          phoneNumber: '+15550000001',
          agentId: c.agentId,
          participant: c.isGroup ? '+15551110001,+15551110002' : `+1555222000${c.id.at(-1)}`,
          channel: c.isGroup ? 'imessage' : 'sms',
          isGroup: c.isGroup,
          groupId: c.isGroup ? 'grp_1' : null,
          groupName: c.isGroup ? 'Team' : null,
          participants: c.isGroup ? ['+15551110001', '+15551110002'] : null,
          startedAt: at(),
        }),
      );
    for (let k = 0; k < 6; k++) {
      const messageId = `msg_${c.id}_${k}`;
      const outbound = rnd() < 0.5;
      const body = pick(['', 'hello there', 'x'.repeat(200)]);
      const mediaUrls = body === '' || rnd() < 0.2 ? ['https://example.com/a.jpg'] : [];
      const channel = c.isGroup ? 'imessage' : mediaUrls.length > 0 ? 'mms' : 'sms';
      const created = conv(outbound ? 'OutboundMessageAccepted' : 'InboundMessageReceived', {
        messageId,
        numberId: 'num_1',
        agentId: c.agentId,
        channel,
        body,
        mediaUrls,
        encoding: 'GSM-7',
        segments: 1,
        from: outbound ? '+15550000001' : '+15552220000',
        to: outbound ? '+15552220000' : '+15550000001',
        ...(outbound
          ? {
              recipients: ['+15552220000'],
              replyToMessageId: k > 0 && rnd() < 0.3 ? `msg_${c.id}_${k - 1}` : null,
              sendStyle: rnd() < 0.2 ? 'invisible' : null,
              kind: rnd() < 0.8 ? 'message' : 'typing',
              reengagement: rnd() < 0.2,
              acceptedAt: at(),
            }
          : { carrierMessageId: `car_in_${messageId}`, keyword: null, receivedAt: at() }),
      });
      own.push(created);
      if (rnd() < 0.3) own.push(conv('ConversationStateSet', { state: rnd() < 0.3 ? null : { step: k, tags: ['a', 'b'] }, setAt: at() }));
      if (c.isGroup && rnd() < 0.4) own.push(conv('GroupRenamed', { groupName: rnd() < 0.2 ? null : `Team ${k}`, renamedAt: at() }));

      const msg = (type: string, data: Record<string, unknown>): Draft => ({
        stream: `message-${messageId}`,
        type,
        data: { messageId, ...data },
        accountId: c.accountId,
      });
      const moves: Draft[] = [];
      if (outbound) {
        moves.push(msg('MessageQueued', { conversationId: c.id, queuedAt: at() }));
        if (rnd() < 0.2) moves.push(msg('MessageSubmissionErrored', { attempt: 1, error: 'timeout', at: at() }));
        const carrier = rnd() < 0.2 ? `car_shared_${seed}` : `car_${messageId}`; // two messages naming one id: the first keeps it
        moves.push(msg('MessageSubmitted', { carrierMessageIds: [carrier, `${carrier}_2`], submittedAt: at() }));
        const receipt = (status: string, outcome: string) =>
          msg('MessageReceiptRecorded', {
            receiptId: randomUUID(),
            carrierMessageId: carrier,
            status,
            at: at(),
            failure: null,
            outcome,
            recordedAt: at(),
          });
        moves.push(receipt(pick(['sent', 'delivered']), pick(['applied', 'applied', 'stale', 'duplicate'])));
        moves.push(
          pick([
            msg('MessageDelivered', { deliveredAt: at() }),
            msg('MessageFailed', {
              failureReason: 'carrier rejected',
              errorCode: '30007',
              failureCategory: 'carrier',
              retryable: rnd() < 0.5,
              source: 'carrier',
              failedAt: at(),
            }),
          ]),
        );
        if (rnd() < 0.4) moves.push(msg('MessageRead', { readAt: at() }));
      } else moves.push(msg('MessageReceived', { conversationId: c.id, receivedAt: at() }));
      if (rnd() < 0.4)
        moves.push(
          msg('MessageReactionAdded', {
            reactionId: `rxn_${messageId}`,
            reactionType: pick(['love', 'like']),
            direction: pick(['inbound', 'outbound']),
            fromNumber: '+15552220000',
            conversationId: c.id,
            numberId: 'num_1',
            agentId: c.agentId,
            channel,
            messageBody: body,
            messageMediaUrls: mediaUrls,
            createdAt: at(),
          }),
        );
      // a message's own stream starts after its record on the conversation; sometimes (a log from before that
      // rule, a row that was never written) it runs ahead of it
      const queue = moves.slice(0, Math.floor(rnd() * (moves.length + 1)));
      if (rnd() < 0.85) waits.set(queue, created);
      things.push(queue);
    }
    things.push(own);
  }
  for (let i = 0; i < 4; i++) {
    const accountId = `acc_${i % 2}`;
    const recipient = `+1555222000${i}`;
    const s = (type: string, numberId: string | null): Draft => ({
      stream: `consent-${accountId}:${recipient}`,
      type,
      data: { recipient, numberId, keyword: type === 'RecipientOptedOut' ? 'STOP' : 'START', messageId: `msg_kw_${i}`, at: at() },
      accountId,
    });
    things.push([
      s('RecipientOptedOut', 'num_1'),
      s('RecipientOptedOut', null),
      s('RecipientOptedIn', pick(['num_1', null])),
      s('RecipientOptedOut', 'num_1'),
    ]);
  }
  // the agent of some conversations is deleted midway; later messages may name it again (their events say so)
  const deleted: Draft = {
    stream: 'agent-agt_gone',
    type: 'AgentDeleted',
    data: { agentId: 'agt_gone', accountId: 'acc_0', name: 'Gone', deletedAt: at() },
    accountId: 'acc_0',
  };

  const { log, push } = draftedLog();
  const queues = things.filter((q) => q.length > 0);
  const deleteAt = Math.floor(queues.reduce((n, q) => n + q.length, 0) / 2);
  const logged = new Set<Draft>();
  while (queues.length > 0) {
    const ready = queues.filter((q) => !waits.has(q) || logged.has(waits.get(q)!));
    const qi = queues.indexOf(ready[Math.floor(rnd() * ready.length)]!);
    const d = log.length === deleteAt ? deleted : queues[qi]!.shift()!;
    if (d !== deleted && queues[qi]!.length === 0) queues.splice(qi, 1);
    logged.add(d);
    push(d, new Date(clock).toISOString());
  }
  return log;
}

/** every table's rows in one order (two carrier ids may share their first two columns) */
const sorted = (tables: Record<string, unknown[]>) =>
  Object.fromEntries(
    Object.entries(tables).map(([t, rows]) => [t, [...rows].sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1))]),
  );

/**
 * The messaging projector's set-based batch (docs/messaging.md#the-read-models-in-batches) against its handlers
 * applied one event at a time, which state the rules: random logs, cut into random batches (hundreds of events to
 * one), some batches applied again and some replays of an already applied prefix, must leave exactly the tables the
 * handlers leave.
 */
describe('messaging projector: set-based batches equal its handlers one event at a time', function () {
  this.timeout(120_000);
  let scratch: Awaited<ReturnType<typeof scratchSchemas>>;
  before(async () => {
    scratch = await scratchSchemas(['oracle_m', 'batch_m'], messagingProjector.tables);
  });
  after(() => scratch.close());

  for (const seed of [1, 2, 3, 4, 5]) {
    it(`history ${seed}: conversations, messages, statuses, reactions, opt-outs and a deleted agent, in random batches with replays`, async () => {
      const log = history(seed);
      const rnd = seededRandom(seed * 7_919);
      await scratch.fresh();
      const { db } = scratch;
      const oracle = db.withSchema('oracle_m');
      // the same deliveries both ways: a batch, the same batch again, a replay of the whole prefix applied so far
      const deliver = async (events: readonly RecordedEvent[]) => {
        for (const e of events) await messagingProjector.apply(oracle, e);
        await db.transaction().execute((trx) => messagingProjector.applyBatch(trx.withSchema('batch_m'), events));
      };
      for (let i = 0; i < log.length; ) {
        const n = seed === 1 && i === 0 ? log.length : 1 + Math.floor(rnd() * 60);
        const batch = log.slice(i, i + n);
        await deliver(batch);
        if (rnd() < 0.2) await deliver(batch);
        if (rnd() < 0.15) await deliver(log.slice(0, i + n));
        i += n;
      }
      const expected = sorted(await scratch.dump('oracle_m'));
      expect(expected.conversations!.length, 'conversations').to.be.greaterThan(3);
      expect(expected.messages!.length, 'messages').to.be.greaterThan(20);
      expect(expected.message_reactions!.length, 'reactions').to.be.greaterThan(0);
      expect(expected.message_carrier_ids!.length, 'carrier ids').to.be.greaterThan(3);
      expect(expected.opt_outs!.length, 'opt-outs').to.be.greaterThan(0);
      expect(
        expected.messages!.some((m) => (m as { status: string }).status !== 'received' && (m as { status: string }).status !== 'accepted'),
        'moved messages',
      ).to.equal(true);
      const got = sorted(await scratch.dump('batch_m'));
      for (const t of Object.keys(expected)) expect(got[t], t).to.deep.equal(expected[t]);
    });
  }
});
