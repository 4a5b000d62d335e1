import { expect } from 'chai';
import { sql } from 'kysely';
import { type OutboundSms, SmsSubmissionError } from '../../application/messaging/sms-carrier.port.js';
import { classify, FAILURE_REASONS, failureReasonOf } from '../../domain/message/failure-reasons.js';
import { PLATFORM } from '../../infrastructure/platform/tokens.js';
import { ReportWorker } from '../../infrastructure/sandbox/shared/reports.js';
import { NUMBER_FOR_FAILURE } from '../../infrastructure/sandbox/sms/magic.js';
import type { SandboxSmsReceipts } from '../../infrastructure/sandbox/sms/receipts.js';
import type { SandboxSmsCarrier } from '../../infrastructure/sandbox/sms/sms-carrier.js';
import { SANDBOX } from '../../infrastructure/sandbox/tokens.js';
import { TestClock } from '../support/fixtures.js';
import { ADMIN_TOKEN, startTestApp, type TestApp } from '../support/http.js';
import { type RecordingCarrierEvents, type SmsReceiptWorker, withRecordingCarrierEvents } from '../support/sandbox-sms.js';

const SENT = 1000;
const DELIVERY = 3000;
const LATE = 3_600_000;
const LEASE = 30_000;

/**
 * The sandbox SMS carrier: idempotent submissions, receipts that fall due on the Clock and are reported by a
 * worker claiming them, the magic recipient numbers, the per-number rate, and inbound injection over HTTP.
 */
describe('sandbox SMS carrier', function () {
  this.timeout(60_000);
  const clock = new TestClock(new Date('2026-04-01T09:00:00.000Z'));
  let app: TestApp;
  let carrier: SandboxSmsCarrier;
  let events: RecordingCarrierEvents;
  let worker: SmsReceiptWorker;
  let seq = 0;

  before(async () => {
    app = await startTestApp({ SANDBOX_SMS_RATE_PER_MINUTE: '3' }, { clock });
    ({ events, worker } = await withRecordingCarrierEvents(app));
    carrier = app.rt.get(SANDBOX.SmsCarrier);
  });
  after(() => app.close());

  /** each text from its own sending number, so that the rate of one test does not touch another */
  const sms = (to: string, o: Partial<OutboundSms> = {}): OutboundSms => {
    seq++;
    return {
      idempotencyKey: `msg_${seq}`,
      accountId: 'acc_sms',
      from: `+1415555${String(1000 + seq).padStart(4, '0')}`,
      to,
      body: `hello ${seq}`,
      mediaUrls: [],
      ...o,
    };
  };
  const statuses = (id: string) => events.of(id).map((r) => r.status);

  it('answers the same carrier id to the same key, and sends it once', async () => {
    const m = sms('+14155550101');
    const first = await carrier.submit(m);
    const again = await carrier.submit({ ...m, body: 'changed' });
    expect(again).to.deep.equal(first);
    expect(first.carrierMessageId).to.match(/^sm_/);
    const listed = await carrier.messages({ from: m.from, limit: 10 });
    expect(listed).to.have.length(1);
    expect(listed[0]).to.include({ status: 'accepted', body: m.body, to: m.to, carrierMessageId: first.carrierMessageId });
    expect(listed[0]?.receipts.map((r) => r.status)).to.deep.equal(['sent', 'delivered']);
  });

  it('reports sent, then delivered, when the Clock reaches their due times', async () => {
    const { carrierMessageId } = await carrier.submit(sms('+14155550102'));
    const submittedAt = clock.now().getTime();
    expect(await worker.runOnce()).to.equal(0);
    clock.advance(SENT - 1);
    await worker.runOnce();
    expect(statuses(carrierMessageId)).to.deep.equal([]);
    clock.advance(1);
    await worker.runOnce();
    expect(statuses(carrierMessageId)).to.deep.equal(['sent']);
    clock.advance(DELIVERY);
    await worker.runOnce();
    const [sent, delivered] = events.of(carrierMessageId);
    expect(sent).to.deep.include({ status: 'sent', failure: null, at: new Date(submittedAt + SENT).toISOString() });
    expect(delivered).to.deep.include({ status: 'delivered', at: new Date(submittedAt + SENT + DELIVERY).toISOString() });
    expect(sent?.receiptId).to.not.equal(delivered?.receiptId);
    // reported receipts are not reported again
    clock.advance(LATE);
    await worker.runOnce();
    expect(statuses(carrierMessageId)).to.deep.equal(['sent', 'delivered']);
  });

  it('claims only when a look at the due index finds a receipt due that no live lease holds', async () => {
    const receipts = app.rt.get(SANDBOX.SmsReceipts);
    await worker.runOnce(); // what earlier tests left due
    expect(await receipts.anyDue(clock.now())).to.equal(false);
    const { carrierMessageId } = await carrier.submit(sms('+14155550103'));
    expect(await receipts.anyDue(clock.now())).to.equal(false);
    clock.advance(SENT);
    expect(await receipts.anyDue(clock.now())).to.equal(true);
    // another worker holds it: nothing is due for this one, and its pass takes nothing
    const held = await receipts.claim({ now: clock.now(), limit: 10, workerId: 'another-worker', leaseMs: LEASE });
    expect(held.map((c) => c.report.providerMessageId)).to.deep.equal([carrierMessageId]);
    expect(await receipts.anyDue(clock.now())).to.equal(false);
    expect(await worker.runOnce()).to.equal(0);
    // its lease runs out: due again, and this worker reports it (and the delivered receipt, due by then too)
    clock.advance(LEASE);
    expect(await receipts.anyDue(clock.now())).to.equal(true);
    expect(await worker.runOnce()).to.equal(2);
    expect(statuses(carrierMessageId)).to.deep.equal(['sent', 'delivered']);
    expect(await receipts.anyDue(clock.now())).to.equal(false);
  });

  it('fails a text to each failure number with that exact reason and its code, after a sent receipt unless the carrier refuses it', async () => {
    const ids = new Map<string, string>();
    for (const f of FAILURE_REASONS) ids.set(f.errorCode, (await carrier.submit(sms(NUMBER_FOR_FAILURE[f.errorCode]))).carrierMessageId);
    clock.advance(SENT + DELIVERY);
    await worker.runOnce();
    for (const f of FAILURE_REASONS) {
      const got = events.of(ids.get(f.errorCode)!);
      const failed = got.at(-1)!;
      expect(failed.status, f.errorCode).to.equal('failed');
      expect(failed.failure?.code).to.equal(f.errorCode);
      expect(classify(failed.failure?.detail ?? '')).to.equal(f);
      if (!f.text.includes('{')) expect(failed.failure?.detail).to.equal(f.text);
      expect(got.map((r) => r.status)).to.deep.equal(
        f.category === 'configuration' || f.category === 'wait' ? ['failed'] : ['sent', 'failed'],
      );
    }
    // the carrier and the registration page are filled in
    expect(events.of(ids.get('BRAND_DAILY_LIMIT')!)[0]?.failure?.detail).to.equal(
      "Sandbox Wireless's daily volume limit for your registered brand was reached.",
    );
    expect(events.of(ids.get('A2P_10DLC_UNREGISTERED')!)[0]?.failure?.detail).to.match(
      /^This number is not registered for US A2P 10DLC messaging\. Register at http:\/\/\S+\/v1\/register to send US SMS\.$/,
    );
  });

  it('follows the lookup rules: landlines, premium-rate, invalid and foreign numbers fail with their reasons', async () => {
    const cases = {
      '+12125550186': 'RECIPIENT_LANDLINE',
      '+14165550125': 'RECIPIENT_LANDLINE',
      '+19005550100': 'RECIPIENT_PREMIUM_RATE',
      '+19995550100': 'RECIPIENT_INVALID_OR_DISABLED',
      '+447700900123': 'DESTINATION_COUNTRY_DISABLED',
    } as const;
    const ids = await Promise.all(Object.keys(cases).map(async (to) => (await carrier.submit(sms(to))).carrierMessageId));
    clock.advance(SENT + DELIVERY);
    await worker.runOnce();
    Object.values(cases).forEach((code, i) => {
      const failed = events.of(ids[i]!).at(-1)!;
      expect(failed).to.deep.include({ status: 'failed', failure: { code, detail: failureReasonOf(code).text } });
    });
    expect(failureReasonOf('RECIPIENT_LANDLINE').text).to.equal("The recipient's number is a landline or can't receive SMS.");
  });

  it('delivers late to the late number', async () => {
    const { carrierMessageId } = await carrier.submit(sms('+14155550121'));
    clock.advance(SENT + DELIVERY);
    await worker.runOnce();
    expect(statuses(carrierMessageId)).to.deep.equal(['sent']);
    clock.advance(LATE - DELIVERY);
    await worker.runOnce();
    expect(statuses(carrierMessageId)).to.deep.equal(['sent', 'delivered']);
  });

  it('reports delivered before sent to the out-of-order number, each with the time it really happened', async () => {
    const { carrierMessageId } = await carrier.submit(sms('+14155550122'));
    clock.advance(SENT + DELIVERY);
    await worker.runOnce();
    expect(statuses(carrierMessageId)).to.deep.equal(['delivered']);
    clock.advance(SENT);
    await worker.runOnce();
    const [delivered, sent] = events.of(carrierMessageId);
    expect([delivered?.status, sent?.status]).to.deep.equal(['delivered', 'sent']);
    expect(sent!.at < delivered!.at).to.equal(true);
  });

  it('reports every receipt twice, with the same receipt id, to the duplicate number', async () => {
    const { carrierMessageId } = await carrier.submit(sms('+14155550123'));
    clock.advance(SENT + DELIVERY + 10);
    await worker.runOnce();
    const got = events.of(carrierMessageId);
    expect(got.map((r) => r.status)).to.deep.equal(['sent', 'sent', 'delivered', 'delivered']);
    expect(got[0]).to.deep.equal(got[1]);
    expect(got[2]).to.deep.equal(got[3]);
  });

  it('reports read after delivered to the read number, and never delivered to the silent one', async () => {
    const read = await carrier.submit(sms('+14155550120'));
    const silent = await carrier.submit(sms('+14155550124'));
    clock.advance(SENT + 2 * DELIVERY);
    await worker.runOnce();
    expect(statuses(read.carrierMessageId)).to.deep.equal(['sent', 'delivered', 'read']);
    clock.advance(LATE * 24);
    await worker.runOnce();
    expect(statuses(silent.carrierMessageId)).to.deep.equal(['sent']);
  });

  it('refuses a text to the refusing number at submission, and again for the same key, with nothing to report', async () => {
    const m = sms('+14155550127');
    for (let i = 0; i < 2; i++) {
      const err = await carrier.submit(m).then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).to.be.instanceOf(SmsSubmissionError);
      expect(err).to.include({ failureReason: 'The carrier rejected the message.', errorCode: 'CARRIER_REJECTED' });
    }
    const [listed] = await carrier.messages({ from: m.from, limit: 5 });
    expect(listed).to.deep.include({ status: 'refused', failureReason: 'The carrier rejected the message.', receipts: [] });
  });

  it('fails the first submission to the lost number with an unknown outcome and sends nothing; the retry is sent once', async () => {
    const m = sms('+14155550128');
    const err = await carrier.submit(m).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).to.be.instanceOf(Error).and.not.instanceOf(SmsSubmissionError);
    expect((await carrier.messages({ from: m.from, limit: 5 }))[0]).to.deep.include({ status: 'lost', receipts: [] });
    const { carrierMessageId } = await carrier.submit(m);
    expect(await carrier.submit(m)).to.deep.equal({ carrierMessageId });
    clock.advance(SENT + DELIVERY);
    await worker.runOnce();
    expect(statuses(carrierMessageId)).to.deep.equal(['sent', 'delivered']);
  });

  it('sends the first submission to the lost-after-send number but answers an error; the retry answers the same id', async () => {
    const m = sms('+14155550129');
    const err = await carrier.submit(m).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).to.be.instanceOf(Error).and.not.instanceOf(SmsSubmissionError);
    const [listed] = await carrier.messages({ from: m.from, limit: 5 });
    expect(listed?.status).to.equal('accepted');
    expect(await carrier.submit(m)).to.deep.equal({ carrierMessageId: listed?.carrierMessageId });
    clock.advance(SENT + DELIVERY);
    await worker.runOnce();
    expect(statuses(listed!.carrierMessageId)).to.deep.equal(['sent', 'delivered']);
  });

  it("fails texts over a sending number's rate with the rate-limited reason, and takes them again a minute later", async () => {
    const from = '+14155559999';
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push((await carrier.submit(sms('+14155550103', { from }))).carrierMessageId);
    clock.advance(SENT + DELIVERY);
    await worker.runOnce();
    expect(ids.slice(0, 3).map((id) => statuses(id).at(-1))).to.deep.equal(['delivered', 'delivered', 'delivered']);
    expect(events.of(ids[3]!)).to.have.length(1);
    expect(events.of(ids[3]!)[0]).to.deep.include({
      status: 'failed',
      failure: { code: 'RATE_LIMITED', detail: 'Messages from this number were rate-limited by the carrier. Retry shortly.' },
    });
    clock.advance(60_000);
    const later = await carrier.submit(sms('+14155550103', { from }));
    clock.advance(SENT + DELIVERY);
    await worker.runOnce();
    expect(statuses(later.carrierMessageId)).to.deep.equal(['sent', 'delivered']);
  });

  it("counts the texts taken in one statement toward their number's rate, the first asked first", async () => {
    const from = '+14155559998';
    const other = '+14155559997';
    // asked in one turn of the event loop: taken together (docs/sandbox.md#sms-submissions)
    const ids = (
      await Promise.all([
        ...Array.from({ length: 5 }, () => carrier.submit(sms('+14155550103', { from }))),
        carrier.submit(sms('+14155550103', { from: other })),
      ])
    ).map((r) => r.carrierMessageId);
    expect(new Set(ids).size).to.equal(6);
    clock.advance(SENT + DELIVERY);
    await worker.runOnce();
    expect(ids.map((id) => statuses(id).at(-1))).to.deep.equal(['delivered', 'delivered', 'delivered', 'failed', 'failed', 'delivered']);
    expect(events.of(ids[4]!)[0]?.failure?.code).to.equal('RATE_LIMITED');
    expect((await carrier.messages({ from, limit: 10 })).map((x) => x.rateLimited).sort()).to.deep.equal([false, false, false, true, true]);
  });

  it('takes a key asked for twice in one turn once, and answers both with its carrier id', async () => {
    const m = sms('+14155550101');
    const [a, b] = await Promise.all([carrier.submit(m), carrier.submit({ ...m, body: 'changed' })]);
    expect(b).to.deep.equal(a);
    const listed = await carrier.messages({ from: m.from, limit: 10 });
    expect(listed.map((x) => [x.body, x.receipts.length])).to.deep.equal([[m.body, 2]]);
  });

  it('reports again a receipt whose worker died between the claim and the report, once its lease is over', async () => {
    const { carrierMessageId } = await carrier.submit(sms('+14155550104'));
    clock.advance(SENT);
    const receipts: SandboxSmsReceipts = app.rt.get(SANDBOX.SmsReceipts);
    const claimed = await receipts.claim({ now: clock.now(), limit: 100, workerId: 'crashed-worker', leaseMs: LEASE });
    expect(claimed.map((c) => c.report.providerMessageId)).to.include(carrierMessageId);
    // the crashed worker never reports; another one leaves the receipt alone while the lease lasts
    expect(await worker.runOnce()).to.equal(0);
    expect(statuses(carrierMessageId)).to.deep.equal([]);
    clock.advance(LEASE); // the delivered receipt falls due meanwhile too
    await worker.runOnce();
    expect(statuses(carrierMessageId)).to.deep.equal(['sent', 'delivered']);
    expect(events.of(carrierMessageId)[0]?.receiptId).to.equal(
      claimed.find((c) => c.report.providerMessageId === carrierMessageId)?.report.receiptId,
    );
  });

  it('claims at most its limit, the earliest due first', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) ids.push((await carrier.submit(sms('+14155550111'))).carrierMessageId);
    clock.advance(SENT + DELIVERY);
    const receipts: SandboxSmsReceipts = app.rt.get(SANDBOX.SmsReceipts);
    const claimed: string[] = [];
    for (;;) {
      const batch = await receipts.claim({ now: clock.now(), limit: 5, workerId: 'batching-worker', leaseMs: LEASE });
      if (batch.length === 0) break;
      expect(batch.length).to.be.at.most(5);
      claimed.push(...batch.map((c) => `${c.report.providerMessageId}:${c.report.status}`));
      await receipts.reportedAll(batch, 'batching-worker', clock.now());
    }
    // every sent receipt (due first) is claimed before any delivered one
    const mine = claimed.filter((c) => ids.some((id) => c.startsWith(id)));
    expect(mine).to.have.length(24);
    expect(mine.slice(0, 12).every((c) => c.endsWith(':sent'))).to.equal(true);
  });

  it('plans each claim when it runs, so no plan made while the table was nearly empty is kept (docs/sandbox.md#sms-receipts)', async () => {
    const receipts: SandboxSmsReceipts = app.rt.get(SANDBOX.SmsReceipts);
    for (let i = 0; i < 8; i++) await receipts.claim({ now: clock.now(), limit: 5, workerId: 'planning-worker', leaseMs: 1 });
    // embedded, every other statement with parameters is kept prepared; a server's node-postgres keeps none
    const kept = await sql<{ statement: string }>`select statement from pg_prepared_statements`.execute(app.rt.database.db);
    expect(kept.rows.filter((r) => /sandbox_sms_receipts/.test(r.statement) && /with due as/.test(r.statement))).to.deep.equal([]);
  });

  it("leaves a message's delivered receipt alone while its sent receipt is claimed and unreported", async () => {
    const { carrierMessageId } = await carrier.submit(sms('+14155550107'));
    clock.advance(SENT + DELIVERY);
    const receipts: SandboxSmsReceipts = app.rt.get(SANDBOX.SmsReceipts);
    // other tests' receipts that fall due meanwhile are let go again at once, for the worker to report
    const mine = async (workerId: string) => {
      const claimed = await receipts.claim({ now: clock.now(), limit: 100, workerId, leaseMs: LEASE });
      for (const c of claimed)
        if (c.report.providerMessageId !== carrierMessageId) await receipts.failed(c, workerId, clock.now(), 'not this test');
      return claimed.filter((c) => c.report.providerMessageId === carrierMessageId);
    };
    const first = await mine('worker-a');
    expect(first.map((c) => c.report.status)).to.deep.equal(['sent']);
    expect(await mine('worker-b')).to.deep.equal([]);
    const [sent] = first;
    // only the worker that holds the claim marks it reported
    if (sent) await receipts.reportedAll([sent], 'worker-b', clock.now());
    expect(await mine('worker-b')).to.deep.equal([]);
    if (sent) await receipts.reported(sent, 'worker-a', clock.now());
    expect((await mine('worker-b')).map((c) => c.report.status)).to.deep.equal(['delivered']);
  });

  it('reports each due receipt once when two workers claim at the same time', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 15; i++) ids.push((await carrier.submit(sms('+14155550111'))).carrierMessageId);
    clock.advance(SENT + DELIVERY);
    const other = new ReportWorker('other', app.rt.get(SANDBOX.SmsReceipts), (r) => events.receipt(r), clock, app.rt.get(PLATFORM.Logger), {
      pollIntervalMs: 1000,
      leaseMs: LEASE,
      batchSize: 4,
      workerId: 'other-worker',
    });
    const [a, b] = await Promise.all([worker.runOnce(), other.runOnce()]);
    expect(a + b).to.be.at.least(30);
    for (const id of ids) expect(statuses(id), id).to.deep.equal(['sent', 'delivered']);
  });

  it('reports again, a little later, a receipt the messaging side failed to take', async () => {
    const { carrierMessageId } = await carrier.submit(sms('+14155550100'));
    clock.advance(SENT);
    events.failNext = 1;
    expect(await worker.runOnce()).to.equal(0);
    expect(statuses(carrierMessageId)).to.deep.equal([]);
    clock.advance(1000);
    expect(await worker.runOnce()).to.equal(1);
    expect(statuses(carrierMessageId)).to.deep.equal(['sent']);
  });

  describe('POST /sandbox/inbound', () => {
    const inbound = (body: unknown, key: string | null = ADMIN_TOKEN) =>
      app.call('POST', '/sandbox/inbound', { ...(key ? { key } : {}), body });

    it('needs the admin token', async () => {
      const body = { from: '+14155550142', to: '+14155550100', body: 'hi' };
      expect((await inbound(body, null)).status).to.equal(401);
      expect((await inbound(body, 'wrong-token-0123456789')).status).to.equal(403);
      expect(events.inbounds).to.have.length(0);
    });

    it('answers 422 for numbers that are not E.164, a missing body, or a malformed group or reaction', async () => {
      for (const body of [
        { from: '4155550142', to: '+14155550100', body: 'hi' },
        { from: '+14155550142', to: 'me', body: 'hi' },
        { from: '+14155550142', to: '+14155550100' },
        { from: '+14155550142', to: '+14155550100', body: '  ' },
        { from: '+14155550142', to: '+14155550100', body: 'hi', group: { participants: ['nope'] } },
        { from: '+14155550142', to: '+14155550100', body: 'hi', reaction: { reactionType: '' } },
        { from: '+14155550142', to: '+14155550100', body: 'hi', media_urls: ['not a url'] },
      ]) {
        const r = await inbound(body);
        expect(r.status, JSON.stringify(body)).to.equal(422);
      }
      expect(events.inbounds).to.have.length(0);
    });

    it('hands the text to the messaging side and answers its message id (201)', async () => {
      events.known.add('+14155550100');
      const r = await inbound({
        from: '+14155550142',
        to: '+14155550100',
        body: 'photo from the party',
        media_urls: ['https://example.com/a.jpg'],
        group: { participants: ['+14155550143'], name: 'Party' },
      });
      expect(r.status).to.equal(201);
      const got = events.inbounds.at(-1)!;
      expect(r.body).to.deep.equal({ messageId: `msg_test_${events.inbounds.length}`, carrierMessageId: got.providerMessageId });
      expect(got).to.deep.equal({
        channel: 'sms',
        providerMessageId: got.providerMessageId,
        from: '+14155550142',
        to: '+14155550100',
        body: 'photo from the party',
        mediaUrls: ['https://example.com/a.jpg'],
        receivedAt: clock.now().toISOString(),
        group: { participants: ['+14155550142', '+14155550100', '+14155550143'], name: 'Party' },
        reaction: null,
      });
      const reaction = await inbound({
        from: '+14155550142',
        to: '+14155550100',
        body: '',
        reaction: { reactionType: 'love', messageId: 'msg_1' },
      });
      expect(reaction.status).to.equal(201);
      expect(events.inbounds.at(-1)).to.deep.include({ reaction: { reaction: 'love', target: 'msg_1' }, group: null });
      expect(events.inbounds.at(-1)?.providerMessageId).to.not.equal(got.providerMessageId);
    });

    it('answers 404 when the messaging side drops the text (not an active number of the platform)', async () => {
      const r = await inbound({ from: '+14155550142', to: '+14155550119', body: 'anyone?' });
      expect(r.status).to.equal(404);
      expect(r.body.error.code).to.equal('NOT_FOUND');
    });
  });

  describe('GET /sandbox/messages', () => {
    it('lists what the carrier was asked to send to a number, newest first, with the receipts (a bare + in the query works)', async () => {
      const to = '+14155550110';
      const a = await carrier.submit(sms(to));
      clock.advance(1);
      const b = await carrier.submit(sms(to, { mediaUrls: ['https://example.com/b.png'] }));
      for (const q of [encodeURIComponent(to), to]) {
        const r = await app.call('GET', `/sandbox/messages?to=${q}`, { key: ADMIN_TOKEN });
        expect(r.status).to.equal(200);
        expect(r.body.data.map((m: { carrierMessageId: string }) => m.carrierMessageId)).to.deep.equal([
          b.carrierMessageId,
          a.carrierMessageId,
        ]);
        expect(r.body.data[0]).to.deep.include({ to, status: 'accepted', mediaUrls: ['https://example.com/b.png'] });
        expect(r.body.data[0].receipts.map((x: { status: string }) => x.status)).to.deep.equal(['sent', 'delivered']);
      }
      expect((await app.call('GET', `/sandbox/messages?to=${encodeURIComponent(to)}`)).status).to.equal(401);
      expect((await app.call('GET', '/sandbox/messages?to=nope', { key: ADMIN_TOKEN })).status).to.equal(422);
    });

    it('lists the magic numbers: one per failure reason, and the behaviours', async () => {
      const r = await app.call('GET', '/sandbox/messages/magic-numbers', { key: ADMIN_TOKEN });
      expect(r.status).to.equal(200);
      const codes = r.body.data.filter((x: { errorCode: string | null }) => x.errorCode).map((x: { errorCode: string }) => x.errorCode);
      expect(codes).to.deep.equal(FAILURE_REASONS.map((f) => f.errorCode));
      const numbers = r.body.data.map((x: { phoneNumber: string }) => x.phoneNumber);
      expect(new Set(numbers).size).to.equal(numbers.length);
    });
  });
});
