import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { AgentPhoneClient, AgentPhoneError } from 'agentphone';
import { expect } from 'chai';
import express from 'express';
import { type CallCommand, callDecider } from '../../domain/call/call.decider.js';
import { type CallDirection, type CallSettings, callStream, type TurnAction, type TurnLatency } from '../../domain/call/call.js';
import { CALLS } from '../../infrastructure/calls/tokens.js';
import { streamTranscript } from '../../infrastructure/calls/transcript-stream.js';
import { PLATFORM } from '../../infrastructure/platform/tokens.js';
import { callsProjector } from '../../projections/calls/calls.projector.js';
import { rebuildProjector } from '../../projections/shared/rebuild.js';
import { callSettings } from '../support/calls.js';
import { TestClock } from '../support/fixtures.js';
import { ADMIN_TOKEN, startTestApp, type TestApp } from '../support/http.js';
import { credit, eventually } from '../support/numbers.js';
import { projectorsCaughtUp, replayedTwice } from '../support/projections.js';
import { reactorPast } from '../support/reactors.js';

type Account = { accountId: string; apiKey: string };
type Input<T extends CallCommand['type']> = Omit<Extract<CallCommand, { type: T }>, 'metadata'>;

const settings = (o: Partial<CallSettings> = {}): CallSettings => callSettings(o);

/** One SSE connection: its parsed events and comments as they arrive. */
type Sse = {
  status: number;
  body: unknown;
  events: { id: string | undefined; event: string; data: any }[];
  comments: string[];
  closed: Promise<void>;
  close: () => void;
};

async function openSse(url: string, headers: Record<string, string>): Promise<Sse> {
  const abort = new AbortController();
  const res = await fetch(url, { headers, signal: abort.signal });
  const s: Sse = { status: res.status, body: null, events: [], comments: [], closed: Promise.resolve(), close: () => abort.abort() };
  if (res.status !== 200) {
    s.body = await res.json();
    return s;
  }
  expect(res.headers.get('content-type')).to.match(/^text\/event-stream/);
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  const frame = (f: string) => {
    const e: { id?: string; event?: string; data?: string } = {};
    for (const line of f.split('\n')) {
      if (line.startsWith(':')) s.comments.push(line.slice(1).trim());
      else {
        const at = line.indexOf(': ');
        const [k, v] = at < 0 ? [line, ''] : [line.slice(0, at), line.slice(at + 2)];
        if (k === 'id' || k === 'event' || k === 'data') e[k] = v;
      }
    }
    if (e.event) s.events.push({ id: e.id, event: e.event, data: e.data ? JSON.parse(e.data) : null });
  };
  s.closed = (async () => {
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        buffer += decoder.decode(value, { stream: true });
        for (let i = buffer.indexOf('\n\n'); i >= 0; i = buffer.indexOf('\n\n')) {
          frame(buffer.slice(0, i));
          buffer = buffer.slice(i + 2);
        }
      }
    } catch {
      // aborted by the test
    }
  })();
  return s;
}

const names = (s: Sse) => s.events.map((e) => (e.event === 'turn' ? `turn ${e.data.seq}` : e.event));

describe('calls: the read side (lists, record, transcript, stream, long-poll, recording)', function () {
  this.timeout(60_000);
  let app: TestApp;
  let a: Account;
  let b: Account;
  const clock = new TestClock(new Date());

  before(async () => {
    app = await startTestApp({ RECORDING_URL_TTL_SECONDS: '600' }, { clock });
    a = await app.newAccount('Calls A');
    b = await app.newAccount('Calls B');
  });
  after(() => app.close());

  const iso = () => clock.now().toISOString();
  const get = (path: string, key = a.apiKey, headers: Record<string, string> = {}) => app.call('GET', path, { key, headers });

  /** A call driven through the call aggregate, as the session records it; each write waits for the read model. */
  async function placeCall(
    acc: { accountId: string },
    o: Partial<{
      direction: CallDirection;
      from: string;
      to: string;
      agentId: string;
      numberId: string;
      settings: Partial<CallSettings>;
    }> = {},
  ) {
    clock.advance(1000); // newest first is then a strict order
    const callId = `call_${randomUUID()}`;
    const ctx = { accountId: acc.accountId, requestId: null, correlationId: callId, actor: 'test' };
    const run = async <T extends CallCommand['type']>(cmd: Input<T>) => {
      const r = await app.rt.get(PLATFORM.Executor).execute(callDecider, callStream(callId), cmd as never, ctx, { readYourWrites: true });
      // read-your-writes does not wait for a turn, which may reach the read model up to PROJECTION_LAG_MS later
      // (docs/calls.md#where-the-record-comes-from)
      await projectorsCaughtUp(app, [callsProjector]);
      return r;
    };
    const direction = o.direction ?? 'outbound';
    await run<'PlaceCall'>({
      type: 'PlaceCall',
      data: {
        callId,
        accountId: acc.accountId,
        direction,
        agentId: o.agentId ?? null,
        numberId: o.numberId ?? null,
        from: o.from ?? (direction === 'web' ? 'web' : '+14155550100'),
        to: o.to ?? (direction === 'web' ? 'web' : '+13125550111'),
        settings: settings(o.settings),
      },
    });
    const turn = () => {
      const startedAt = iso();
      clock.advance(1500);
      return { turnId: `turn_${randomUUID()}`, startedAt, endedAt: iso() };
    };
    return {
      id: callId,
      run,
      answer: async () => {
        await run<'RecordRinging'>({ type: 'RecordRinging', data: { callId } });
        await run<'RecordAnswer'>({ type: 'RecordAnswer', data: { callId, answeredBy: 'human', engineCallId: `eng_${callId}` } });
      },
      caller: async (transcript: string) => {
        const t = turn();
        await run<'RecordCallerTurn'>({ type: 'RecordCallerTurn', data: { callId, ...t, transcript, confidence: 0.92 } });
        return t.turnId;
      },
      agent: async (
        text: string,
        x: Partial<{
          actions: TurnAction[];
          spoken: string;
          replyTo: string;
          source: 'greeting' | 'webhook' | 'model';
          latency: TurnLatency;
          silentReason: string;
        }> = {},
      ) => {
        const t = turn();
        const spoken = x.spoken ?? text;
        await run<'RecordAgentTurn'>({
          type: 'RecordAgentTurn',
          data: {
            callId,
            ...t,
            source: x.source ?? 'webhook',
            text,
            spoken,
            interrupted: spoken !== text,
            replyTo: x.replyTo ?? null,
            silentReason: x.silentReason ?? null,
            latency: x.latency ?? null,
            actions: x.actions ?? [],
          },
        });
        return t.turnId;
      },
      end: (reason: 'user_hangup' | 'dial_no_answer' = 'user_hangup') =>
        run<'EndCall'>({ type: 'EndCall', data: { callId, reason, detail: null } }),
    };
  }

  describe('lists', () => {
    let sub: Account & { headers: Record<string, string> };
    const ids: Record<string, string> = {};
    before(async () => {
      const s = await app.call('POST', '/v1/sub-accounts', { key: a.apiKey, body: { name: 'Calls sub' } });
      expect(s.status, JSON.stringify(s.body)).to.equal(200);
      sub = { accountId: s.body.id, apiKey: a.apiKey, headers: { 'x-sub-account-id': s.body.id } };

      const done = await placeCall(a, { from: '+14155550100', to: '+13125550111' });
      await done.answer();
      await done.caller('I would like to book a table');
      await done.end();
      ids.completed = done.id;
      const failed = await placeCall(a, { from: '+14155550100', to: '+16465550122' });
      await failed.end('dial_no_answer');
      ids.failed = failed.id;
      const inbound = await placeCall(a, { direction: 'inbound', from: '+17735550133', to: '+14155550100' });
      await inbound.answer();
      ids.inbound = inbound.id;
      const web = await placeCall(a, { direction: 'web' });
      ids.web = web.id;
      ids.sub = (await placeCall(sub, { from: '+14155550999', to: '+13125550999' })).id;
      ids.other = (await placeCall(b, { from: '+14155550100', to: '+13125550111' })).id;
    });

    it("lists the account's calls newest first, with the filters, search and pages", async () => {
      const all = await get('/v1/calls');
      expect(all.status, JSON.stringify(all.body)).to.equal(200);
      expect(all.body).to.include({ total: 4, hasMore: false });
      expect(all.body.data.map((c: { id: string }) => c.id)).to.deep.equal([ids.web, ids.inbound, ids.failed, ids.completed]);
      expect(all.body.data[3]).to.include({
        id: ids.completed,
        direction: 'outbound',
        status: 'completed',
        type: 'pstn',
        fromNumber: '+14155550100',
        toNumber: '+13125550111',
        phoneNumber: '+14155550100',
        lastTranscriptSnippet: 'I would like to book a table',
        disconnectionReason: 'user_hangup',
        recordingAvailable: false,
      });
      const ofList = async (q: string) => (await get(`/v1/calls?${q}`)).body.data.map((c: { id: string }) => c.id);
      expect(await ofList('status=completed')).to.deep.equal([ids.completed]);
      expect(await ofList('status=failed')).to.deep.equal([ids.failed]);
      expect(await ofList('status=in-progress')).to.deep.equal([ids.web, ids.inbound]);
      expect(await ofList('direction=inbound')).to.deep.equal([ids.inbound]);
      expect(await ofList('type=web')).to.deep.equal([ids.web]);
      expect(await ofList('type=pstn&direction=outbound')).to.deep.equal([ids.failed, ids.completed]);
      expect(await ofList('search=5550122')).to.deep.equal([ids.failed]);
      expect(await ofList('search=%2B1773')).to.deep.equal([ids.inbound]);
      expect(await ofList('search=415555')).to.deep.equal([ids.inbound, ids.failed, ids.completed]);
      expect(await ofList('search=%25')).to.deep.equal([]); // a LIKE wildcard is a plain character
      expect(await ofList('status=')).to.have.length(4);
      const page = await get('/v1/calls?limit=2&offset=1');
      expect(page.body).to.include({ total: 4, hasMore: true });
      expect(page.body.data.map((c: { id: string }) => c.id)).to.deep.equal([ids.inbound, ids.failed]);
      expect((await get('/v1/calls?limit=2&offset=3')).body).to.include({ hasMore: false });
      expect((await get('/v1/calls')).body.data).to.have.length(4); // default page size 20
    });

    it('scopes the list to the sub-account named by X-Sub-Account-Id, and never shows another account', async () => {
      const s = await get('/v1/calls', a.apiKey, sub.headers);
      expect(s.body.data.map((c: { id: string }) => c.id)).to.deep.equal([ids.sub]);
      const other = await get('/v1/calls', b.apiKey);
      expect(other.body.data.map((c: { id: string }) => c.id)).to.deep.equal([ids.other]);
    });

    it('refuses bad list parameters with 422', async () => {
      for (const q of [
        'status=ended',
        'direction=sideways',
        'type=sip',
        'limit=0',
        'limit=101',
        'offset=-1',
        `search=${'9'.repeat(101)}`,
      ]) {
        const r = await get(`/v1/calls?${q}`);
        expect(r.status, q).to.equal(422);
        expect(r.body.error.code, q).to.equal('VALIDATION_ERROR');
      }
    });

    it("lists an agent's calls (404 for an agent that is not the account's), and keeps them without the agent once it is deleted", async () => {
      const agent = await app.call('POST', '/v1/agents', { key: a.apiKey, body: { name: 'Caller' } });
      expect(agent.status).to.equal(200);
      const first = await placeCall(a, { agentId: agent.body.id });
      const second = await placeCall(a, { agentId: agent.body.id });
      const r = await get(`/v1/agents/${agent.body.id}/calls?limit=1`);
      expect(r.status).to.equal(200);
      expect(r.body).to.include({ total: 2, hasMore: true });
      expect(r.body.data.map((c: { id: string }) => c.id)).to.deep.equal([second.id]);
      expect((await get(`/v1/agents/${agent.body.id}/calls`, b.apiKey)).status).to.equal(404);
      expect((await app.call('DELETE', `/v1/agents/${agent.body.id}`, { key: a.apiKey })).status).to.equal(200);
      await eventually(async () => (await get(`/v1/calls/${first.id}`)).body.agentId === null, 'agent cleared from the call');
      expect((await get(`/v1/agents/${agent.body.id}/calls`)).status).to.equal(404);
    });

    it("lists a number's calls", async () => {
      await credit(app, a.accountId, 100_000_000);
      const n = await app.call('POST', '/v1/numbers', { key: a.apiKey, body: { country: 'US' } });
      expect(n.status, JSON.stringify(n.body)).to.equal(200);
      const c = await placeCall(a, { numberId: n.body.id, from: n.body.phoneNumber });
      const r = await get(`/v1/numbers/${n.body.id}/calls`);
      expect(r.body).to.include({ total: 1, hasMore: false });
      expect(r.body.data[0]).to.include({ id: c.id, phoneNumberId: n.body.id, phoneNumber: n.body.phoneNumber, status: 'in-progress' });
    });
  });

  describe('the call record and its transcript', () => {
    it('answers the record with transcripts (utterance and reply) and turns with their latency', async () => {
      const c = await placeCall(a, { settings: { unknownVariables: ['customer'], metadata: { orderId: 'o_1' }, mode: 'hosted' } });
      await c.answer();
      const greeting = await c.agent('Hello, this is Acme.', { source: 'greeting' });
      const q1 = await c.caller('Do you have a table tonight?');
      const a1 = await c.agent('We do. For how many people would that be, and at what time?', {
        spoken: 'We do. For how many',
        replyTo: q1,
        latency: { requestMs: 120.4, firstByteMs: 310, speechStartMs: null },
      });
      const q2 = await c.caller('Four, at eight');
      await c.agent('', { replyTo: q2, silentReason: 'webhook_timeout' });

      const r = await get(`/v1/calls/${c.id}`);
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
      expect(r.body).to.include({
        id: c.id,
        status: 'in-progress',
        phase: 'answered',
        mode: 'hosted',
        answeredBy: 'human',
        recordingUrl: null,
        recordingAvailable: false,
        lastTranscriptSnippet: 'Four, at eight', // the silent turn said nothing
      });
      expect(r.body.unknownVariables).to.deep.equal(['customer']);
      expect(r.body.metadata).to.deep.equal({ orderId: 'o_1' });
      expect(r.body.transcripts.map((t: object) => ({ ...t, createdAt: undefined }))).to.deep.equal([
        { id: q1, transcript: 'Do you have a table tonight?', response: 'We do. For how many', createdAt: undefined },
        { id: q2, transcript: 'Four, at eight', response: null, createdAt: undefined },
      ]);
      expect(r.body.turns.map((t: { id: string; seq: number; role: string }) => [t.seq, t.role, t.id])).to.deep.equal([
        [1, 'agent', greeting],
        [2, 'user', q1],
        [3, 'agent', a1],
        [4, 'user', q2],
        [5, 'agent', r.body.turns[4].id],
      ]);
      expect(r.body.turns[2]).to.include({
        content: 'We do. For how many',
        spoken: 'We do. For how many',
        text: 'We do. For how many people would that be, and at what time?',
        interrupted: true,
        source: 'webhook',
        replyTo: q1,
      });
      // recorded without the speech steps (as turns before migration 090 were): they read as not measured
      expect(r.body.turns[2].latency).to.deep.equal({
        recognitionMs: null,
        requestMs: 120,
        firstByteMs: 310,
        speechStartMs: null,
        synthesisMs: null,
      });
      expect(r.body.turns[1]).to.include({ role: 'user', confidence: 0.92, source: null, latency: null });
      expect(r.body.turns[4]).to.include({ silentReason: 'webhook_timeout', content: '' });

      await c.end();
      const t = await get(`/v1/calls/${c.id}/transcript`);
      expect(t.status).to.equal(200);
      expect(t.body).to.include({ callId: c.id, status: 'completed' });
      expect(t.body.transcript.map((e: { role: string; content: string }) => [e.role, e.content])).to.deep.equal([
        ['agent', 'Hello, this is Acme.'],
        ['user', 'Do you have a table tonight?'],
        ['agent', 'We do. For how many'],
        ['user', 'Four, at eight'],
      ]);
      expect(t.body.turns).to.have.length(5);
      const ended = (await get(`/v1/calls/${c.id}`)).body;
      // the utterance-and-reply pairs, under the names clients read, as on the call record
      expect(t.body.transcripts).to.deep.equal(ended.transcripts);
      expect(t.body.data).to.deep.equal(ended.transcripts);
      expect(t.body.transcripts.map((p: { transcript: string }) => p.transcript)).to.deep.equal([
        'Do you have a table tonight?',
        'Four, at eight',
      ]);
      expect(ended).to.include({ status: 'completed', phase: 'ended', disconnectionReason: 'user_hangup', userSentiment: 'Neutral' });
      expect(ended.summary).to.match(/^Outbound call of \d+ s/);
    });

    it("answers 404 for another account's call and for an unknown one, on every call route", async () => {
      const c = await placeCall(a);
      for (const path of [
        `/v1/calls/${c.id}`,
        `/v1/calls/${c.id}/transcript`,
        `/v1/calls/${c.id}/transcript/stream`,
        '/v1/calls/call_nope',
      ]) {
        const r = await get(path, b.apiKey);
        expect(r.status, path).to.equal(404);
        expect(r.body.error.code, path).to.equal('CALL_NOT_FOUND');
      }
      expect((await get(`/v1/calls/${c.id}?wait=true&timeout=5`, b.apiKey)).status).to.equal(404);
    });

    it('documents every route of the read side in /openapi.json, the recording one without security', async () => {
      const doc = (await app.call('GET', '/openapi.json')).body;
      for (const p of [
        '/v1/calls',
        '/v1/calls/{call_id}',
        '/v1/calls/{call_id}/transcript',
        '/v1/calls/{call_id}/transcript/stream',
        '/v1/agents/{agent_id}/calls',
        '/v1/numbers/{number_id}/calls',
      ])
        expect(doc.paths[p]?.get, p).to.be.an('object');
      expect(doc.paths['/v1/calls/{call_id}/transcript/stream'].get.responses['200'].content).to.have.property('text/event-stream');
      const rec = doc.paths['/v1/calls/{call_id}/recording'].get;
      expect(rec.security).to.deep.equal([]);
      expect(rec.responses['200'].content).to.have.property('audio/wav');
    });
  });

  describe('long-poll: GET /v1/calls/{id}?wait=true', () => {
    it('answers as soon as the call ends', async () => {
      const c = await placeCall(a);
      await c.answer();
      const started = Date.now();
      const waiting = get(`/v1/calls/${c.id}?wait=true&timeout=20`);
      await new Promise((r) => setTimeout(r, 300));
      await c.end();
      const r = await waiting;
      expect(r.status).to.equal(200);
      expect(r.body).to.include({ id: c.id, status: 'completed' });
      expect(Date.now() - started).to.be.lessThan(5_000);
    });

    it('answers the live call when the timeout passes first, and at once for an ended call', async () => {
      const c = await placeCall(a);
      const started = Date.now();
      const r = await get(`/v1/calls/${c.id}?wait=true&timeout=1`);
      const waited = Date.now() - started;
      expect(r.body).to.include({ status: 'in-progress' });
      expect(waited).to.be.within(900, 5_000);
      await c.end();
      const t0 = Date.now();
      expect((await get(`/v1/calls/${c.id}?wait=true&timeout=300`)).body).to.include({ status: 'failed' });
      expect(Date.now() - t0).to.be.lessThan(2_000);
    });

    it('refuses a bad wait or timeout with 422', async () => {
      const c = await placeCall(a);
      for (const q of ['wait=maybe', 'wait=true&timeout=0', 'wait=true&timeout=301', 'wait=true&timeout=1.5'])
        expect((await get(`/v1/calls/${c.id}?${q}`)).status, q).to.equal(422);
    });
  });

  describe('the transcript stream (Server-Sent Events)', () => {
    const stream = (id: string, headers: Record<string, string> = {}, key = a.apiKey) =>
      openSse(`${app.url}/v1/calls/${id}/transcript/stream`, { authorization: `Bearer ${key}`, ...headers });

    it('replays the recorded turns, follows new ones, sends ended and closes', async () => {
      const c = await placeCall(a);
      await c.answer();
      await c.agent('Hello, this is Acme.', { source: 'greeting' });
      const s = await stream(c.id);
      try {
        await eventually(async () => names(s).length === 2, 'connected and the recorded turn');
        expect(names(s)).to.deep.equal(['connected', 'turn 1']);
        expect(s.events[0]).to.deep.include({ id: '0', data: { callId: c.id, status: 'in-progress' } });
        expect(s.events[1]!.id).to.equal('1');
        expect(s.events[1]!.data).to.include({ callId: c.id, role: 'agent', content: 'Hello, this is Acme.', seq: 1 });
        await c.caller('Hi there');
        await eventually(async () => names(s).length === 3, 'the live turn');
        expect(s.events[2]).to.deep.include({ id: '2', event: 'turn' });
        expect(s.events[2]!.data).to.include({ role: 'user', content: 'Hi there' });
        await c.end();
        await s.closed;
        expect(names(s)).to.deep.equal(['connected', 'turn 1', 'turn 2', 'ended']);
        expect(s.events[3]).to.deep.include({ id: '2' });
        expect(s.events[3]!.data).to.include({ callId: c.id, status: 'completed', disconnectionReason: 'user_hangup' });
      } finally {
        s.close();
      }
    });

    it('replays a finished call and closes; a reconnect with Last-Event-ID gets only later turns', async () => {
      const c = await placeCall(a);
      await c.answer();
      await c.agent('Hello.', { source: 'greeting' });
      await c.caller('Hi.');
      await c.agent('How can I help?');
      await c.end();
      const all = await stream(c.id);
      await all.closed;
      expect(names(all)).to.deep.equal(['connected', 'turn 1', 'turn 2', 'turn 3', 'ended']);
      const later = await stream(c.id, { 'Last-Event-ID': '1' });
      await later.closed;
      expect(names(later)).to.deep.equal(['connected', 'turn 2', 'turn 3', 'ended']);
      expect(later.events.map((e) => e.id)).to.deep.equal(['1', '2', '3', '3']);
      const none = await stream(c.id, { 'Last-Event-ID': '3' });
      await none.closed;
      expect(names(none)).to.deep.equal(['connected', 'ended']);
      const bad = await stream(c.id, { 'Last-Event-ID': 'abc' });
      expect(bad.status).to.equal(422);
    });

    it('sends heartbeats, and stops watching when the client goes away', async () => {
      const c = await placeCall(a);
      let finished = false;
      const mini = express();
      mini.get('/stream', async (_req, res) => {
        await streamTranscript(
          res,
          { queries: app.rt.get(CALLS.Queries), feed: app.rt.get(CALLS.TranscriptFeed), log: app.rt.get(PLATFORM.Logger) },
          { accountId: a.accountId, key: 'key:heartbeats', callId: c.id, afterSeq: 0 },
          { heartbeatMs: 40 },
        );
        finished = true;
      });
      const server = mini.listen(0, '127.0.0.1');
      await new Promise((r) => server.once('listening', r));
      try {
        const s = await openSse(`http://127.0.0.1:${(server.address() as AddressInfo).port}/stream`, {});
        await eventually(async () => s.comments.length >= 2, 'two heartbeats');
        expect(s.comments[0]).to.equal('heartbeat');
        expect(finished).to.equal(false);
        s.close();
        await eventually(async () => finished, 'the stream handler returned after the client left');
      } finally {
        server.closeAllConnections();
        await new Promise((r) => server.close(r));
      }
    });
  });

  describe('transcript streams per key', () => {
    it('caps the open streams of a key (TRANSCRIPT_STREAMS_PER_KEY, 20) with a plain 429, frees a slot when one closes, and every stream delivers', async () => {
      const c = await placeCall(a);
      const url = `${app.url}/v1/calls/${c.id}/transcript/stream`;
      const auth = { authorization: `Bearer ${a.apiKey}` };
      const streams = await Promise.all(Array.from({ length: 20 }, () => openSse(url, auth)));
      try {
        expect(streams.every((s) => s.status === 200)).to.equal(true);
        const over = await get(`/v1/calls/${c.id}/transcript/stream`);
        expect(over.status).to.equal(429);
        expect(Object.keys(over.body).sort()).to.deep.equal(['detail', 'request_id']);
        expect(over.body.detail).to.include('TRANSCRIPT_STREAMS_PER_KEY');
        // another account's key is not held back by these
        const theirs = await placeCall(b);
        const other = await openSse(`${app.url}/v1/calls/${theirs.id}/transcript/stream`, { authorization: `Bearer ${b.apiKey}` });
        expect(other.status).to.equal(200);
        other.close();
        // every open stream is woken by the projection and delivers the new turn
        await c.caller('Hello there.');
        await eventually(async () => streams.every((s) => s.events.some((e) => e.event === 'turn')), 'the turn on every stream');
        streams[0]!.close();
        const again = await eventually(async () => {
          const s = await openSse(url, auth);
          if (s.status === 200) return s;
          return undefined;
        }, 'a slot freed');
        again.close();
      } finally {
        for (const s of streams) s.close();
      }
    });
  });

  describe('recordings', () => {
    it('renders the audio of a recorded call from its turns and serves it at the signed URL, without an API key', async () => {
      const c = await placeCall(a, { settings: { recording: true } });
      await c.answer();
      await c.agent('Hello, this is Acme. How can I help?', { source: 'greeting' });
      const q = await c.caller('I would like a table for two.');
      await c.agent('Certainly. What time would you like to come in this evening?', { spoken: 'Certainly. What time', replyTo: q });
      await c.caller('Eight, please.');
      await c.end();
      const rec = await eventually(
        async () => {
          const r = await get(`/v1/calls/${c.id}`);
          return r.body.recordingAvailable ? r.body : undefined;
        },
        'recording rendered',
        30_000,
      );
      expect(rec).to.include({ recordingEnabled: true });
      expect(rec.recordingDurationMs).to.be.greaterThan(1_000);
      const url = new URL(rec.recordingUrl);
      expect(`${url.origin}${url.pathname}`).to.equal(`${app.url}/v1/calls/${c.id}/recording`);
      expect(url.searchParams.get('signature')).to.match(/^[0-9a-f]{64}$/);
      expect(Number(url.searchParams.get('expires'))).to.be.closeTo(Math.floor(clock.now().getTime() / 1000) + 600, 5);

      const audio = await fetch(rec.recordingUrl); // no Authorization header
      expect(audio.status).to.equal(200);
      expect(audio.headers.get('content-type')).to.equal('audio/wav');
      expect(audio.headers.get('content-disposition')).to.equal(`attachment; filename=recording-${c.id}.wav`);
      const wav = Buffer.from(await audio.arrayBuffer());
      expect(wav.subarray(0, 4).toString('ascii')).to.equal('RIFF');
      expect(wav.subarray(8, 12).toString('ascii')).to.equal('WAVE');
      const rate = wav.readUInt32LE(24);
      expect(Math.round(((wav.length - 44) / 2 / rate) * 1000)).to.be.closeTo(rec.recordingDurationMs, 5);
      const samples = new Int16Array(wav.buffer, wav.byteOffset + 44, (wav.length - 44) / 2);
      expect(
        samples.some((s) => Math.abs(s) > 1000),
        'the audio has speech in it',
      ).to.equal(true);
      // the list says it too
      const listed = (await get('/v1/calls?status=completed')).body.data.find((x: { id: string }) => x.id === c.id);
      expect(listed.recordingAvailable).to.equal(true);

      // refused without a valid, current signature: never the audio
      const other = await placeCall(a);
      const refusals = [
        `${app.url}/v1/calls/${c.id}/recording`,
        `${app.url}/v1/calls/${c.id}/recording?expires=${url.searchParams.get('expires')}`,
        rec.recordingUrl.replace(/signature=([0-9a-f])/, (_: string, h: string) => `signature=${h === '0' ? '1' : '0'}`),
        rec.recordingUrl.replace(/expires=(\d+)/, (_: string, e: string) => `expires=${Number(e) + 1}`),
        rec.recordingUrl.replace(c.id, other.id),
        `${app.url}/v1/calls/${c.id}/recording?expires=x&signature=zz`,
      ];
      for (const u of refusals) {
        const r = await fetch(u);
        expect(r.status, u).to.equal(404);
        const body = (await r.json()) as { error: { code: string } };
        expect(body.error.code, u).to.equal('RECORDING_NOT_FOUND');
      }
      // input no route accepts (a NUL) is the usual 422, still never the audio
      expect((await fetch(`${app.url}/v1/calls/${c.id}/recording?expires=1&signature=%00`)).status).to.equal(422);
      clock.advance(601_000);
      const expired = await fetch(rec.recordingUrl);
      expect(expired.status).to.equal(404);
      // a fresh read of the call signs a fresh URL
      const fresh = (await get(`/v1/calls/${c.id}`)).body.recordingUrl;
      expect((await fetch(fresh)).status).to.equal(200);

      // the public SDK asks with the call id alone: refused, saying how to fetch it, until the operator allows it
      const sdk = new AgentPhoneClient({ token: 'unused: the SDK sends no key for a recording', baseUrl: app.url, maxRetries: 0 });
      const refused = await sdk.calls.getCallRecording({ call_id: c.id }).catch((e: unknown) => e);
      expect(refused).to.be.instanceOf(AgentPhoneError);
      expect((refused as AgentPhoneError).statusCode).to.equal(404);
      expect(JSON.stringify((refused as AgentPhoneError).body))
        .to.contain('signed recordingUrl')
        .and.not.contain('expired');
      const allow = await app.call('PATCH', `/admin/accounts/${a.accountId}/recordings`, { key: ADMIN_TOKEN, body: { byCallId: true } });
      expect(allow.body).to.deep.equal({ byCallId: true });
      const byId = await fetch(`${app.url}/v1/calls/${c.id}/recording`);
      expect(byId.status).to.equal(200);
      expect(
        Buffer.from(await byId.arrayBuffer())
          .subarray(0, 4)
          .toString(),
      ).to.equal('RIFF');
      const got = await sdk.calls.getCallRecording({ call_id: c.id });
      expect(got).to.not.equal(undefined);
      // a signature is still checked when one is sent, and a call without audio is still a 404
      expect((await fetch(`${app.url}/v1/calls/${c.id}/recording?expires=1&signature=${'0'.repeat(64)}`)).status).to.equal(404);
      expect((await fetch(`${app.url}/v1/calls/${other.id}/recording`)).status).to.equal(404);
      await app.call('PATCH', `/admin/accounts/${a.accountId}/recordings`, { key: ADMIN_TOKEN, body: { byCallId: false } });
      expect((await fetch(`${app.url}/v1/calls/${c.id}/recording`)).status).to.equal(404);
    });

    it('records nothing for a call placed without recording', async () => {
      const c = await placeCall(a);
      await c.answer();
      await c.caller('Hello?');
      const ended = await c.end();
      const db = app.rt.get(PLATFORM.ReadDb);
      await eventually(async () => {
        return reactorPast(db, 'call_recordings', ended.checkpoint!);
      }, 'the recording step passed the end');
      const r = (await get(`/v1/calls/${c.id}`)).body;
      expect(r).to.include({ recordingAvailable: false, recordingUrl: null });
      expect(await db.selectFrom('call_recordings').select('call_id').where('call_id', '=', c.id).executeTakeFirst()).to.equal(undefined);
    });
  });

  describe('read model', () => {
    // runs last: every kind of call above is in the log
    it('rebuilds into tables equal to the live ones', async () => {
      const db = app.rt.get(PLATFORM.ReadDb);
      const report = await rebuildProjector(db, app.rt.store, callsProjector, { checkOnly: true });
      expect(report.differences).to.deep.equal({ calls: 0, call_turns: 0 });
      expect(report.equal).to.equal(true);
    });

    it('changes nothing when the events are applied a second time', async () => {
      const db = app.rt.get(PLATFORM.ReadDb);
      const rows = async () => ({
        calls: await db.selectFrom('calls').selectAll().orderBy('call_id').execute(),
        turns: await db.selectFrom('call_turns').selectAll().orderBy('call_id').orderBy('seq').execute(),
      });
      const { before, after } = await replayedTwice(app, callsProjector, rows);
      expect(before.turns.length).to.be.greaterThan(10);
      expect(after).to.deep.equal(before);
    });
  });
});

describe('calls: recording without a speech engine', function () {
  this.timeout(30_000);
  let app: TestApp;
  before(async () => {
    app = await startTestApp({ ESPEAK_PATH: '/nonexistent/espeak-ng' });
  });
  after(() => app.close());

  it('leaves the call without a recording, makes no audio, and goes on to later calls', async () => {
    const { accountId, apiKey } = await app.newAccount('No speech');
    const ctx = { accountId, requestId: null, correlationId: 'test', actor: 'test' };
    const exec = app.rt.get(PLATFORM.Executor);
    const callId = `call_${randomUUID()}`;
    const run = (cmd: unknown) => exec.execute(callDecider, callStream(callId), cmd as never, ctx, { readYourWrites: true });
    await run({
      type: 'PlaceCall',
      data: {
        callId,
        accountId,
        direction: 'outbound',
        agentId: null,
        numberId: null,
        from: '+14155550100',
        to: '+13125550111',
        settings: settings({ recording: true }),
      },
    });
    await run({ type: 'RecordAnswer', data: { callId, answeredBy: 'human', engineCallId: 'eng' } });
    const now = new Date().toISOString();
    await run({
      type: 'RecordCallerTurn',
      data: { callId, turnId: 't1', transcript: 'Hello there', confidence: 1, startedAt: now, endedAt: now },
    });
    const ended = await run({ type: 'EndCall', data: { callId, reason: 'user_hangup', detail: null } });
    expect(ended.events[0]).to.deep.include({ type: 'CallEnded' });
    const db = app.rt.get(PLATFORM.ReadDb);
    await eventually(async () => {
      return reactorPast(db, 'call_recordings', ended.checkpoint!);
    }, 'the recording step passed the end');
    const r = await app.call('GET', `/v1/calls/${callId}`, { key: apiKey });
    expect(r.body).to.include({ status: 'completed', recordingEnabled: true, recordingAvailable: false, recordingUrl: null });
    expect(await db.selectFrom('call_recordings').select('call_id').executeTakeFirst()).to.equal(undefined);
    const types = (await app.rt.store.readStream(callStream(callId))).map((e) => e.type);
    expect(types).to.not.include('CallRecordingAvailable');
  });
});
