import { expect } from 'chai';
import { type CallCommand, callDecider } from '../../domain/call/call.decider.js';
import { type CallSettings, callStream } from '../../domain/call/call.js';
import { callSlotsDecider, callSlotsStream } from '../../domain/call/call-slots.decider.js';
import type { CallSweeper } from '../../infrastructure/calls/call-sweeper.js';
import { CALLS } from '../../infrastructure/calls/tokens.js';
import { PLATFORM } from '../../infrastructure/platform/tokens.js';
import { callSettings, callWhen, endedCall, FAR_END, FAST_VOICE_ENV, placeCall, type VoiceLine, voiceLine } from '../support/calls.js';
import { ADMIN_TOKEN, startTestApp, type TestApp } from '../support/http.js';
import { eventually } from '../support/numbers.js';

type Input<T extends CallCommand['type']> = Omit<Extract<CallCommand, { type: T }>, 'metadata'>;

/** How calls end (docs/calls.md#how-a-call-ends): dial failures, the API, silence, and the sweeper's backstop. */
describe('calls: how they end', function () {
  this.timeout(90_000);
  let app: TestApp;
  let line: VoiceLine;
  let stranger: { accountId: string; apiKey: string };

  before(async () => {
    app = await startTestApp({ ...FAST_VOICE_ENV, CALL_RING_TIMEOUT_SECONDS: '1' });
    line = await voiceLine(app, {}, 'Lifecycle');
    stranger = await app.newAccount('Stranger');
  });
  after(() => app?.close());

  const get = (id: string, key = line.key) => app.call('GET', `/v1/calls/${id}`, { key });
  const end = (id: string, key = line.key) => app.call('POST', `/v1/calls/${id}/end`, { key });
  /** live calls holding a slot of the account's outbound cap, and of a number's cap, from the slot streams */
  const accountSlots = async (accountId: string) => (await app.rt.get(CALLS.Slots).accountLimit(accountId)).live;
  const numberSlots = async (numberId: string) =>
    (await app.rt.get(PLATFORM.Executor).load(callSlotsDecider, callSlotsStream('number', numberId))).state.live.size;
  const leaseOf = (callId: string) =>
    app.rt.get(PLATFORM.ReadDb).selectFrom('call_leases').selectAll().where('call_id', '=', callId).executeTakeFirst();
  const sweeper = () => app.rt.workers.get('call-sweeper') as CallSweeper;

  describe('dial failures', () => {
    it('fails a busy line: status failed, dial_busy, no duration', async () => {
      const placed = await placeCall(app, line, { toNumber: FAR_END.busy });
      const c = await endedCall(app, line.key, placed.id);
      expect(c).to.include({ status: 'failed', disconnectionReason: 'dial_busy', durationSeconds: 0, answeredAt: null, phase: 'ended' });
      expect(c.turns).to.deep.equal([]);
    });

    it('fails a call nobody answers within the ring timeout: dial_no_answer', async () => {
      const placed = await placeCall(app, line, { toNumber: FAR_END.noAnswer });
      const c = await endedCall(app, line.key, placed.id);
      expect(c).to.include({ status: 'failed', disconnectionReason: 'dial_no_answer', durationSeconds: 0, answeredAt: null });
      expect(c.disconnectionDetail).to.contain('1000 ms');
    });

    it('fails a number that is not in service: invalid_destination', async () => {
      const placed = await placeCall(app, line, { toNumber: FAR_END.invalid });
      const c = await endedCall(app, line.key, placed.id);
      expect(c).to.include({ status: 'failed', disconnectionReason: 'invalid_destination' });
    });

    it('answers 502 TELEPHONY_PROVIDER_ERROR when the provider refuses the dial, records the call failed and frees its slots', async () => {
      const r = await app.call('POST', '/v1/calls', { key: line.key, body: { agentId: line.agentId, toNumber: FAR_END.providerError } });
      expect(r.status, JSON.stringify(r.body)).to.equal(502);
      expect(r.body.error).to.include({ code: 'TELEPHONY_PROVIDER_ERROR' });
      expect(r.body.error.message).to.be.a('string').and.contain('refused');
      expect(r.body.request_id).to.equal(r.headers.get('x-request-id'));
      const failed = await eventually(async () => {
        const list = await app.call('GET', `/v1/calls?status=failed&search=${encodeURIComponent(FAR_END.providerError)}`, {
          key: line.key,
        });
        return list.body.data.length === 1 ? list.body.data[0] : undefined;
      }, 'the refused call listed');
      expect(failed).to.include({
        status: 'failed',
        disconnectionReason: 'telephony_error',
        direction: 'outbound',
        toNumber: FAR_END.providerError,
        fromNumber: line.phoneNumber,
        durationSeconds: 0,
      });
      await eventually(async () => (await accountSlots(line.accountId)) === 0 && (await numberSlots(line.numberId)) === 0, 'slots freed');
    });
  });

  describe('POST /v1/calls/{id}/end', () => {
    it("ends a live call (completed, ended_by_api), answers an ended one unchanged, and is 404 for another account's call", async () => {
      const placed = await placeCall(app, line, { toNumber: FAR_END.silent });
      await callWhen(app, line.key, placed.id, (c) => c.phase === 'answered', 'the call answered');

      for (const r of [await get(placed.id, stranger.apiKey), await end(placed.id, stranger.apiKey)]) {
        expect(r.status).to.equal(404);
        expect(r.body.error.code).to.equal('CALL_NOT_FOUND');
      }
      expect((await get(placed.id)).body.status).to.equal('in-progress');
      expect(await accountSlots(line.accountId)).to.equal(1);

      const ended = await end(placed.id);
      expect(ended.status, JSON.stringify(ended.body)).to.equal(200);
      expect(ended.body).to.include({ id: placed.id, status: 'completed', disconnectionReason: 'ended_by_api', phase: 'ended' });
      expect(ended.body.endedAt).to.be.a('string');
      // the slots are free by the time the answer comes
      expect(await accountSlots(line.accountId)).to.equal(0);
      expect(await numberSlots(line.numberId)).to.equal(0);

      const again = await end(placed.id);
      expect(again.status).to.equal(200);
      expect(again.body).to.deep.equal(ended.body);
      expect((await get(placed.id)).body).to.deep.equal(ended.body);
      const types = (await app.rt.store.readStream(callStream(placed.id))).map((e) => e.type);
      expect(types.filter((t) => t === 'CallEnded' || t === 'CallFailed')).to.deep.equal(['CallEnded']);
    });

    it('answers 404 for an unknown call id', async () => {
      expect((await end('call_nope')).status).to.equal(404);
      expect((await get('call_nope')).status).to.equal(404);
    });
  });

  it('ends a call whose far end stays silent for maxSilenceMs: inactivity', async () => {
    // 10 s is the smallest maxSilenceMs the agent API accepts (infrastructure/agents/agent.schemas.ts)
    const quiet = await voiceLine(app, { maxSilenceMs: 10_000, beginMessage: 'Hello, anyone there?' }, 'Silence');
    const placed = await placeCall(app, quiet, { toNumber: FAR_END.silent });
    const c = await endedCall(app, quiet.key, placed.id, 60);
    expect(c).to.include({ status: 'completed', disconnectionReason: 'inactivity' });
    expect(c.disconnectionDetail).to.contain('10000 ms');
    expect(c.turns.map((t: any) => [t.role, t.content])).to.deep.equal([['agent', 'Hello, anyone there?']]);
  });

  describe('the sweeper (calls nobody holds)', () => {
    const settings: CallSettings = callSettings({ greeting: null, maxSilenceMs: 600_000, maxDurationSeconds: 3600 });

    /**
     * A live, answered outbound call as another process would have left it: placed and answered on its stream,
     * holding its slots, leased by that process until `leaseUntil`. No session in this process holds it.
     */
    async function callOfAnotherProcess(callId: string, hostId: string, leaseUntil: Date) {
      const ctx = { accountId: line.accountId, requestId: null, correlationId: callId, actor: 'test' };
      const run = <T extends CallCommand['type']>(cmd: Input<T>) =>
        app.rt.get(PLATFORM.Executor).execute(callDecider, callStream(callId), cmd as never, ctx, { readYourWrites: true });
      await app.rt.get(CALLS.Slots).reserve(ctx, callId, { accounts: [line.accountId], numberId: line.numberId });
      await run<'PlaceCall'>({
        type: 'PlaceCall',
        data: {
          callId,
          accountId: line.accountId,
          direction: 'outbound',
          agentId: line.agentId,
          numberId: line.numberId,
          from: line.phoneNumber,
          to: FAR_END.silent,
          settings,
        },
      });
      await run<'RecordAnswer'>({ type: 'RecordAnswer', data: { callId, answeredBy: 'human', engineCallId: `CA_${callId}` } });
      await app.rt.get(CALLS.Leases).hold([{ callId, accountId: line.accountId }], hostId, leaseUntil);
    }
    const now = () => app.rt.get(PLATFORM.Clock).now().getTime();

    it('ends host_lost a live call whose process stopped renewing its lease, and frees its slots', async () => {
      const callId = `call_lost_${Date.now()}`;
      await callOfAnotherProcess(callId, 'gone-host:4242:deadbeef', new Date(now() - 60_000));
      const c = await callWhen(app, line.key, callId, (x) => x.status !== 'in-progress', 'the sweeper ended the call');
      expect(c).to.include({ status: 'completed', disconnectionReason: 'host_lost' });
      expect(c.disconnectionDetail).to.contain('gone-host:4242:deadbeef');
      await eventually(async () => (await accountSlots(line.accountId)) === 0 && (await numberSlots(line.numberId)) === 0, 'slots freed');
      expect(await leaseOf(callId)).to.equal(undefined);
    });

    it('is not stopped by a lease whose call does not exist: it drops that lease and ends the others', async () => {
      // the oldest lapsed lease names no call (a row left behind by hand, or a call of another account)
      const ghost = `call_ghost_${Date.now()}`;
      await app.rt
        .get(CALLS.Leases)
        .hold([{ callId: ghost, accountId: line.accountId }], 'gone-host:1:00000000', new Date(now() - 600_000));
      const callId = `call_lost_after_ghost_${Date.now()}`;
      await callOfAnotherProcess(callId, 'gone-host:1:00000000', new Date(now() - 60_000));
      const c = await callWhen(app, line.key, callId, (x) => x.status !== 'in-progress', 'the sweeper ended the call');
      expect(c.disconnectionReason).to.equal('host_lost');
      await eventually(async () => (await leaseOf(ghost)) === undefined, 'the ghost lease dropped');
      await eventually(async () => (await accountSlots(line.accountId)) === 0 && (await numberSlots(line.numberId)) === 0, 'slots freed');
    });

    it('leaves alone a call another process still holds, and one this process holds even when its lease row lapsed', async () => {
      const elsewhere = `call_elsewhere_${Date.now()}`;
      await callOfAnotherProcess(elsewhere, 'other-host:1:cafebabe', new Date(now() + 600_000));
      const mine = await placeCall(app, line, { toNumber: FAR_END.silent });
      await callWhen(app, line.key, mine.id, (x) => x.phase === 'answered', 'the call answered');
      // as if this process's heartbeat were late: its lease row has lapsed
      await app.rt.get(CALLS.Leases).hold([{ callId: mine.id, accountId: line.accountId }], 'late-heartbeat', new Date(now() - 1000));
      await sweeper().runOnce();
      expect((await get(elsewhere)).body.status).to.equal('in-progress');
      expect((await get(mine.id)).body.status).to.equal('in-progress');

      // ending through the API: the call held elsewhere is recorded ended here (its process hangs up when it learns)
      const e1 = await end(elsewhere);
      expect(e1.body).to.include({ status: 'completed', disconnectionReason: 'ended_by_api' });
      const e2 = await end(mine.id);
      expect(e2.body).to.include({ status: 'completed', disconnectionReason: 'ended_by_api' });
      await eventually(async () => (await accountSlots(line.accountId)) === 0 && (await numberSlots(line.numberId)) === 0, 'slots freed');
    });
  });

  describe('web calls', () => {
    it('refuses variables for a webhook-mode agent (422)', async () => {
      const r = await app.call('POST', '/v1/calls/web', { key: line.key, body: { agentId: line.agentId, variables: { name: 'Ada' } } });
      expect(r.status).to.equal(422);
      expect(r.body.error.code).to.equal('VALIDATION_ERROR');
      expect(r.body.error.details.map((d: any) => d.field)).to.deep.equal(['variables']);
    });

    it('answers 404 for an agent of another account', async () => {
      const r = await app.call('POST', '/v1/calls/web', { key: stranger.apiKey, body: { agentId: line.agentId } });
      expect(r.status).to.equal(404);
    });

    // runs last: it moves the sandbox clock
    it('answers {accessToken, callId, expiresAt} 30 s ahead; unjoined, the sweeper cancels the call once the token expired', async () => {
      const clock = async () => Date.parse((await app.call('GET', '/sandbox/clock', { key: ADMIN_TOKEN })).body.now);
      const t0 = await clock();
      const r = await app.call('POST', '/v1/calls/web', { key: line.key, body: { agentId: line.agentId, metadata: { page: '/pricing' } } });
      const t1 = await clock();
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
      expect(Object.keys(r.body).sort()).to.deep.equal(['accessToken', 'callId', 'expiresAt']);
      expect(r.body.accessToken).to.be.a('string').with.length.greaterThan(20);
      const expiresAt = Date.parse(r.body.expiresAt);
      expect(expiresAt).to.be.within(t0 + 30_000, t1 + 30_000);
      const { callId } = r.body;

      const live = await get(callId);
      expect(live.body).to.include({ direction: 'web', type: 'web', status: 'in-progress', agentId: line.agentId, phoneNumberId: null });
      expect(live.body.metadata).to.deep.equal({ page: '/pricing' });
      // before the token expires, a sweep leaves it alone
      await sweeper().runOnce();
      expect((await get(callId)).body.status).to.equal('in-progress');
      expect(await leaseOf(callId)).to.not.equal(undefined);

      const moved = await app.call('POST', '/sandbox/clock', { key: ADMIN_TOKEN, body: { advanceSeconds: 31 } });
      expect(moved.status).to.equal(200);
      const c = await callWhen(app, line.key, callId, (x) => x.status !== 'in-progress', 'the sweeper canceled the web call');
      expect(c).to.include({ status: 'failed', disconnectionReason: 'canceled', durationSeconds: 0 });
      expect(c.disconnectionDetail).to.contain('not joined');
      expect(await leaseOf(callId)).to.equal(undefined);
    });
  });
});
