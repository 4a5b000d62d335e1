import { expect } from 'chai';
import { callStream } from '../../domain/call/call.js';
import { callSlotsStream } from '../../domain/call/call-slots.decider.js';
import { CALLS } from '../../infrastructure/calls/tokens.js';
import { FAR_END, FAST_VOICE_ENV, voiceLine } from '../support/calls.js';
import { ADMIN_TOKEN, startTestApp, type TestApp } from '../support/http.js';
import { credit } from '../support/numbers.js';

type Res = Awaited<ReturnType<TestApp['call']>>;

/** Live-call caps (docs/calls.md#limits): the account's outbound cap, a number's cap, and a parent's cap on a sub-account. */
describe('calls: concurrency limits', function () {
  this.timeout(90_000);
  let app: TestApp;
  /** every call placed, so that none outlives its test */
  const live = new Map<string, { key: string; headers: Record<string, string> }>();

  before(async () => {
    app = await startTestApp({ ...FAST_VOICE_ENV, CALL_MAX_CONCURRENT_PER_ACCOUNT: '2', CALL_MAX_CONCURRENT_PER_NUMBER: '1' });
  });
  afterEach(async () => {
    for (const [id, o] of live) await app.call('POST', `/v1/calls/${id}/end`, o);
    live.clear();
  });
  after(() => app?.close());

  /** places a call to the silent far end (it answers and never hangs up), remembering it to end it later */
  async function place(key: string, body: Record<string, unknown>, headers: Record<string, string> = {}): Promise<Res> {
    const r = await app.call('POST', '/v1/calls', { key, headers, body: { toNumber: FAR_END.silent, ...body } });
    if (r.status === 200) live.set(r.body.id, { key, headers });
    return r;
  }
  async function end(id: string, key: string, headers: Record<string, string> = {}) {
    const r = await app.call('POST', `/v1/calls/${id}/end`, { key, headers });
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    // a call still ringing when it is ended never connected: failed, for the same reason
    expect(r.body.disconnectionReason).to.equal('ended_by_api');
    expect(r.body.status).to.be.oneOf(['completed', 'failed']);
    live.delete(id);
  }
  /** another number attached to the agent */
  async function extraNumber(key: string, agentId: string, headers: Record<string, string> = {}): Promise<string> {
    const n = await app.call('POST', '/v1/numbers', { key, headers, body: { country: 'US', agentId } });
    expect(n.status, JSON.stringify(n.body)).to.equal(200);
    return n.body.id;
  }
  /** the plain error body of the spec (section 7.1): `{detail, request_id}`, no code, no envelope */
  function expectPlain(r: Res, status: number) {
    expect(r.status, JSON.stringify(r.body)).to.equal(status);
    expect(Object.keys(r.body).sort()).to.deep.equal(['detail', 'request_id']);
    expect(r.body.detail).to.be.a('string').and.not.equal('');
    expect(r.body.request_id).to.equal(r.headers.get('x-request-id'));
  }

  it("caps an account's live outbound calls: of five at once exactly two go through, the rest 429 plain without Retry-After", async () => {
    const line = await voiceLine(app, {}, 'Account cap');
    // five numbers, one call from each: only the account's cap can refuse
    const numbers = [line.numberId];
    for (let i = 0; i < 4; i++) numbers.push(await extraNumber(line.key, line.agentId));
    const results = await Promise.all(numbers.map((fromNumberId) => place(line.key, { agentId: line.agentId, fromNumberId })));
    expect(results.map((r) => r.status).sort()).to.deep.equal([200, 200, 429, 429, 429]);
    for (const r of results.filter((x) => x.status === 429)) {
      expectPlain(r, 429);
      expect(r.headers.get('retry-after')).to.equal(null);
      expect(r.body.detail).to.match(/concurrent calls/i);
    }
    const placed = results.filter((r) => r.status === 200).map((r) => r.body);
    for (const c of placed) expect(c.status).to.equal('in-progress');
    const listed = await app.call('GET', '/v1/calls?status=in-progress', { key: line.key });
    expect(listed.body.total).to.equal(2);
    // refused calls were never recorded
    expect((await app.call('GET', '/v1/calls', { key: line.key })).body.total).to.equal(2);

    // the cap clears as calls end
    const free = numbers.find((n) => !placed.some((c) => c.phoneNumberId === n))!;
    expectPlain(await place(line.key, { agentId: line.agentId, fromNumberId: free }), 429);
    await end(placed[0].id, line.key);
    const again = await place(line.key, { agentId: line.agentId, fromNumberId: free });
    expect(again.status, JSON.stringify(again.body)).to.equal(200);
    expectPlain(await place(line.key, { agentId: line.agentId, fromNumberId: placed[0].phoneNumberId }), 429);
  });

  it("writes a placed call's slots and its record together: one transaction embedded, the slots first elsewhere", async () => {
    const line = await voiceLine(app, {}, 'Together');
    const r = await place(line.key, { agentId: line.agentId });
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    const reserved = async (stream: string) =>
      (await app.rt.store.readStream(stream)).find(
        (e) => e.type === 'CallSlotReserved' && (e.data as { callId: string }).callId === r.body.id,
      );
    const written = [
      await reserved(callSlotsStream('number', line.numberId)),
      await reserved(callSlotsStream('account', line.accountId)),
      (await app.rt.store.readStream(callStream(r.body.id)))[0],
    ];
    expect(written.map((e) => e?.type)).to.deep.equal(['CallSlotReserved', 'CallSlotReserved', 'CallPlaced']);
    if (app.rt.store.kind !== 'postgres') return; // EventStoreDB: no transactions across streams
    const commits = written.map((e) => BigInt(e!.checkpoint.split('/')[0]!));
    if (app.rt.store.soleWriter) expect(new Set(commits).size).to.equal(1);
    else expect([commits[0]! < commits[1]!, commits[1]! < commits[2]!]).to.deep.equal([true, true]);
  });

  it('frees the slot before POST /v1/calls/{id}/end answers, even when freeing it is slower than the read model', async () => {
    const line = await voiceLine(app, {}, 'End then call');
    const other = await extraNumber(line.key, line.agentId);
    const a = await place(line.key, { agentId: line.agentId, fromNumberId: line.numberId });
    const b = await place(line.key, { agentId: line.agentId, fromNumberId: other });
    expect([a.status, b.status]).to.deep.equal([200, 200]);
    // a slow slot store: releasing waits until the call's end is in the read model, then a little longer
    const slots = app.rt.get(CALLS.Slots);
    const queries = app.rt.get(CALLS.Queries);
    const release = slots.release.bind(slots);
    slots.release = async (ctx, callId, scopes) => {
      while ((await queries.get(ctx.accountId, callId))?.status === 'in-progress') await new Promise((r) => setTimeout(r, 20));
      await new Promise((r) => setTimeout(r, 300));
      return release(ctx, callId, scopes);
    };
    try {
      await end(a.body.id, line.key);
      const next = await place(line.key, { agentId: line.agentId, fromNumberId: line.numberId });
      expect(next.status, JSON.stringify(next.body)).to.equal(200);
    } finally {
      slots.release = release;
    }
  });

  it("caps a number's live calls: a second call from the same number is 409 plain, from the agent's other number it goes", async () => {
    const line = await voiceLine(app, {}, 'Number cap');
    const other = await extraNumber(line.key, line.agentId);
    const first = await place(line.key, { agentId: line.agentId, fromNumberId: line.numberId });
    expect(first.status, JSON.stringify(first.body)).to.equal(200);
    const second = await place(line.key, { agentId: line.agentId, fromNumberId: line.numberId });
    expectPlain(second, 409);
    expect(second.body.detail).to.match(/phone number/i);
    const fromOther = await place(line.key, { agentId: line.agentId, fromNumberId: other });
    expect(fromOther.status, JSON.stringify(fromOther.body)).to.equal(200);
    expect(fromOther.body.phoneNumberId).to.equal(other);
    // the refused call took no account slot: the account holds exactly the two live calls
    expect((await app.call('GET', '/v1/calls?status=in-progress', { key: line.key })).body.total).to.equal(2);

    await end(first.body.id, line.key);
    const afterEnd = await place(line.key, { agentId: line.agentId, fromNumberId: line.numberId });
    expect(afterEnd.status, JSON.stringify(afterEnd.body)).to.equal(200);
  });

  it("names the cap that is full: 30 calls at once from one number are refused 409 (the number's cap), never 429 (the account's)", async () => {
    const line = await voiceLine(app, {}, 'Number cap race');
    const results = await Promise.all(Array.from({ length: 30 }, () => place(line.key, { agentId: line.agentId })));
    const statuses = results.map((r) => r.status);
    // the number's cap is 1 and the account's 2: only the number's can be full
    expect(
      statuses.filter((s) => s === 200),
      JSON.stringify(statuses),
    ).to.have.length(1);
    expect(
      statuses.filter((s) => s === 409),
      JSON.stringify(statuses),
    ).to.have.length(29);
    for (const r of results.filter((x) => x.status === 409)) {
      expectPlain(r, 409);
      expect(r.body.detail).to.match(/phone number/i);
    }
  });

  it("counts inbound calls toward the number's cap: a call ringing in on a busy number is refused, and taken once it is free", async () => {
    const line = await voiceLine(app, {}, 'Number cap inbound');
    const ring = () =>
      app.call('POST', '/sandbox/calls/inbound', { key: ADMIN_TOKEN, body: { from: '+13125550142', to: line.phoneNumber } });
    const out = await place(line.key, { agentId: line.agentId });
    expect(out.status, JSON.stringify(out.body)).to.equal(200);
    const refused = await ring();
    expect(refused.status).to.equal(409);
    expect(refused.body.error.code).to.equal('SANDBOX_CALL_REFUSED');
    expect(refused.body.error.message).to.match(/limit of 1 concurrent calls/);
    await end(out.body.id, line.key);

    const taken = await ring();
    expect(taken.status, JSON.stringify(taken.body)).to.equal(200);
    // and while it is live, the number cannot call out
    expectPlain(await place(line.key, { agentId: line.agentId }), 409);
    expect((await app.call('POST', `/sandbox/calls/${taken.body.callId}/hangup`, { key: ADMIN_TOKEN })).status).to.equal(200);
    const c = await app.call('GET', `/v1/calls/${taken.body.callId}?wait=true&timeout=15`, { key: line.key });
    expect(c.body).to.include({ direction: 'inbound', status: 'completed', disconnectionReason: 'user_hangup' });
  });

  describe("a parent's cap on a sub-account", () => {
    let parent: { accountId: string; key: string; agentId: string; numbers: string[] };
    let sub: { id: string; headers: Record<string, string>; agentId: string; numbers: string[] };

    before(async () => {
      const p = await voiceLine(app, {}, 'Parent');
      parent = { accountId: p.accountId, key: p.key, agentId: p.agentId, numbers: [p.numberId, await extraNumber(p.key, p.agentId)] };
      await credit(app, p.accountId, 50_000_000);
      const s = await app.call('POST', '/v1/sub-accounts', { key: p.key, body: { name: 'Branch' } });
      expect(s.status, JSON.stringify(s.body)).to.equal(200);
      const headers = { 'x-sub-account-id': s.body.id };
      const a = await app.call('POST', '/v1/agents', { key: p.key, headers, body: { name: 'Branch agent' } });
      expect(a.status, JSON.stringify(a.body)).to.equal(200);
      sub = {
        id: s.body.id,
        headers,
        agentId: a.body.id,
        numbers: [await extraNumber(p.key, a.body.id, headers), await extraNumber(p.key, a.body.id, headers)],
      };
    });

    const subCall = (fromNumberId: string) => place(parent.key, { agentId: sub.agentId, fromNumberId }, sub.headers);
    const parentCall = (fromNumberId: string) => place(parent.key, { agentId: parent.agentId, fromNumberId });

    it('sets the cap with the parent’s key, and answers 404 for a sub-account of another account', async () => {
      const r = await app.call('PUT', `/v1/sub-accounts/${sub.id}/call-limit`, { key: parent.key, body: { maxConcurrentCalls: 1 } });
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
      expect(r.body).to.deep.equal({ subAccountId: sub.id, maxConcurrentCalls: 1, live: 0, own: true });

      const stranger = await app.newAccount('Stranger');
      const theirs = await app.call('POST', '/v1/sub-accounts', { key: stranger.apiKey, body: { name: 'Theirs' } });
      expect(theirs.status).to.equal(200);
      const foreign = await app.call('PUT', `/v1/sub-accounts/${theirs.body.id}/call-limit`, {
        key: parent.key,
        body: { maxConcurrentCalls: 1 },
      });
      expect(foreign.status).to.equal(404);
      // the stranger's own sub-account keeps the default
      const own = await app.call('PUT', `/v1/sub-accounts/${theirs.body.id}/call-limit`, {
        key: stranger.apiKey,
        body: { maxConcurrentCalls: null },
      });
      expect(own.body).to.include({ maxConcurrentCalls: 2, own: false });
      const unknown = await app.call('PUT', '/v1/sub-accounts/acc_nope/call-limit', { key: parent.key, body: { maxConcurrentCalls: 1 } });
      expect(unknown.status).to.equal(404);
    });

    it('refuses the second concurrent sub-account call (429) while the parent can still call', async () => {
      const first = await subCall(sub.numbers[0]!);
      expect(first.status, JSON.stringify(first.body)).to.equal(200);
      const second = await subCall(sub.numbers[1]!);
      expectPlain(second, 429);
      const p = await parentCall(parent.numbers[0]!);
      expect(p.status, JSON.stringify(p.body)).to.equal(200);
      const limit = await app.call('PUT', `/v1/sub-accounts/${sub.id}/call-limit`, { key: parent.key, body: { maxConcurrentCalls: 1 } });
      expect(limit.body).to.include({ live: 1 });
    });

    it("counts the sub-account's calls toward the parent's cap, and a refused call holds no slot", async () => {
      const s = await subCall(sub.numbers[0]!);
      expect(s.status, JSON.stringify(s.body)).to.equal(200);
      const p = await parentCall(parent.numbers[0]!);
      expect(p.status, JSON.stringify(p.body)).to.equal(200);
      // the parent's cap (2) is full: one call of its own and one of the sub-account
      expectPlain(await parentCall(parent.numbers[1]!), 429);
      // raise the sub-account's cap: now the parent's cap refuses it, and the slot the sub-account took is given back
      await app.call('PUT', `/v1/sub-accounts/${sub.id}/call-limit`, { key: parent.key, body: { maxConcurrentCalls: 5 } });
      expectPlain(await subCall(sub.numbers[1]!), 429);
      const limit = await app.call('PUT', `/v1/sub-accounts/${sub.id}/call-limit`, { key: parent.key, body: { maxConcurrentCalls: 5 } });
      expect(limit.body).to.include({ live: 1 });
      await end(p.body.id, parent.key);
      const now = await subCall(sub.numbers[1]!);
      expect(now.status, JSON.stringify(now.body)).to.equal(200);
      const listed = await app.call('GET', '/v1/calls?status=in-progress', { key: parent.key, headers: sub.headers });
      expect(listed.body.total).to.equal(2);
    });
  });
});
