import { expect } from 'chai';
import { callDecider } from '../../domain/call/call.decider.js';
import { callStream } from '../../domain/call/call.js';
import { PLATFORM } from '../../infrastructure/platform/tokens.js';
import { FAR_END, FAST_VOICE_ENV, voiceLine } from '../support/calls.js';
import { startTestApp, type TestApp } from '../support/http.js';
import { eventually } from '../support/webhook-receiver.js';

/**
 * Every call the store holds reaches a final status, whatever happened to the request that placed it
 * (docs/calls.md#how-a-call-ends): a `POST /v1/calls` that answered 503 READ_MODEL_TIMEOUT stored the call, and the
 * call is dialled all the same.
 */
describe('calls: a stored call reaches a final status whatever happened to its request', function () {
  this.timeout(90_000);
  let app: TestApp;
  before(async () => {
    app = await startTestApp({
      ...FAST_VOICE_ENV,
      READ_MODEL_TIMEOUT_MS: '300',
      CALL_SWEEP_INTERVAL_MS: '200',
      CALL_HOST_LEASE_MS: '1000',
    });
  });
  after(() => app?.close());

  it('a call whose POST /v1/calls answered 503 READ_MODEL_TIMEOUT is dialled and ends, and gives its slots back', async () => {
    const line = await voiceLine(app, {}, 'Lagging read models');
    await app.rt.engine.stop(); // no projector advances: the request's wait for the read models times out
    let r: Awaited<ReturnType<TestApp['call']>>;
    try {
      r = await app.call('POST', '/v1/calls', { key: line.key, body: { agentId: line.agentId, toNumber: FAR_END.busy } });
    } finally {
      await app.rt.engine.start();
    }
    expect(r.status, JSON.stringify(r.body)).to.equal(503);
    expect(r.body.error.code).to.equal('READ_MODEL_TIMEOUT');
    const stored = await app.rt.store.readAll({ filter: { eventTypes: ['CallPlaced'] } });
    const callId = (stored.at(-1)!.data as { callId: string }).callId;
    const call = await eventually(async () => {
      const c = await app.call('GET', `/v1/calls/${callId}`, { key: line.key });
      return c.status === 200 && c.body.status !== 'in-progress' ? c.body : undefined;
    }, 30_000);
    expect(call!.status).to.equal('failed');
    expect(call!.disconnectionReason).to.equal('dial_busy');
    // its slots are free again: the next call from the number goes through
    const next = await app.call('POST', '/v1/calls', { key: line.key, body: { agentId: line.agentId, toNumber: FAR_END.busy } });
    expect(next.status, JSON.stringify(next.body)).to.equal(200);
  });

  it('a call stored by a process that stopped before dialling it (no lease, no dial outcome) is dialled by the sweeper', async () => {
    const line = await voiceLine(app, {}, 'Stopped before dialling');
    const first = await app.call('POST', '/v1/calls', { key: line.key, body: { agentId: line.agentId, toNumber: FAR_END.busy } });
    expect(first.status, JSON.stringify(first.body)).to.equal(200);
    const [placed] = await app.rt.store.readStream(callStream(first.body.id));
    // the same call again, recorded the way POST /v1/calls records it, by a process that stops right after
    const callId = `call_${Date.now().toString(36)}orphan`;
    const data = { ...(placed!.data as Record<string, unknown>), callId };
    const ctx = { accountId: line.accountId, requestId: null, correlationId: callId, actor: 'test:stopped-process' };
    await app.rt
      .get(PLATFORM.Executor)
      .execute(callDecider, callStream(callId), { type: 'PlaceCall', data } as never, ctx, { readYourWrites: true });
    const call = await eventually(async () => {
      const c = await app.call('GET', `/v1/calls/${callId}`, { key: line.key });
      return c.status === 200 && c.body.status !== 'in-progress' ? c.body : undefined;
    }, 30_000);
    // it was dialled (the far end was busy), not merely ended
    expect(call!.disconnectionReason).to.equal('dial_busy');
  });
});
