import { expect } from 'chai';
import { sql } from 'kysely';
import { PLATFORM } from '../../infrastructure/platform/tokens.js';
import { SIP } from '../../infrastructure/sip/tokens.js';
import { ADMIN_TOKEN, startTestApp, type TestApp } from '../support/http.js';
import { account, eventually, sandbox } from '../support/numbers.js';

/** Spec 2.9 and 4.7 over HTTP, and routing a number's calls to a trunk (PATCH /v1/numbers/{id}). */
describe('SIP trunks over HTTP', function () {
  this.timeout(30_000);
  let app: TestApp;
  let acc: { accountId: string; apiKey: string };
  before(async () => {
    app = await startTestApp();
    acc = await account(app, { creditMicros: 30_000_000 });
  });
  after(() => app.close());

  const create = (body?: unknown, key = acc.apiKey) => app.call('POST', '/v1/sip-trunks', { key, ...(body !== undefined ? { body } : {}) });
  const patch = (id: string, body: unknown) => app.call('PATCH', `/v1/sip-trunks/${id}`, { key: acc.apiKey, body });
  const route = (numberId: string, sipTrunkId: string | null) =>
    app.call('PATCH', `/v1/numbers/${numberId}`, { key: acc.apiKey, body: { sipTrunkId } });
  const number = async () => (await app.call('POST', '/v1/numbers', { key: acc.apiKey, body: { areaCode: '617' } })).body as { id: string };
  const uri = (sip_uri: string, extra: Record<string, unknown> = {}) => ({ origination: { uris: [{ sip_uri, ...extra }] } });

  it('creates a trunk with no body, with the defaults', async () => {
    const r = await create();
    expect(r.status).to.equal(200);
    expect(r.body).to.include({ name: 'SIP trunk', transfers: 'all', transfer_caller_id: 'transferee' });
    expect(r.body.origination).to.deep.equal({ uris: [] });
    expect(r.body.number_ids).to.deep.equal([]);
    expect(r.body.id).to.match(/^trk_/);
    expect(r.body.termination.sip_uri).to.match(/^sip:/);
  });

  it('creates a trunk with the spec fields in snake_case, priority and weight defaulting to 10, and reads it back', async () => {
    const r = await create({
      name: 'Office PBX',
      transfers: 'sip',
      transfer_caller_id: 'transferor',
      origination: {
        uris: [
          { sip_uri: 'sip:pbx.example.com:5061;transport=tls', name: 'primary' },
          { sip_uri: 'sip:10.0.0.2', priority: 20, weight: null },
        ],
      },
    });
    expect(r.status).to.equal(200);
    expect(r.body.origination.uris).to.deep.equal([
      { sip_uri: 'sip:pbx.example.com:5061;transport=tls', name: 'primary', priority: 10, weight: 10 },
      { sip_uri: 'sip:10.0.0.2', name: null, priority: 20, weight: 10 },
    ]);
    const got = await app.call('GET', `/v1/sip-trunks/${r.body.id}`, { key: acc.apiKey });
    expect(got.body).to.deep.equal(r.body);
    const upstream = (await app.call('GET', '/sandbox/sip-trunks', { key: ADMIN_TOKEN })).body.data.find(
      (t: { trunkId: string }) => t.trunkId === r.body.id,
    );
    expect(upstream.config).to.include({ name: 'Office PBX', transfers: 'sip' });
    const list = await app.call('GET', '/v1/sip-trunks?limit=100', { key: acc.apiKey });
    expect(list.body.data.map((t: { id: string }) => t.id)).to.include(r.body.id);
    expect(list.body).to.include({ hasMore: false });
  });

  const invalid: [string, unknown, (string | number)[]][] = [
    ['a name over 64 characters', { name: 'x'.repeat(65) }, ['body', 'name']],
    ['an unknown transfers value', { transfers: 'some' }, ['body', 'transfers']],
    ['an unknown transfer_caller_id', { transfer_caller_id: 'nobody' }, ['body', 'transfer_caller_id']],
    ['a URI that is not SIP', uri('https://pbx.example.com'), ['body', 'origination', 'uris', 0, 'sip_uri']],
    ['an unsupported transport', uri('sip:pbx.example.com;transport=sctp'), ['body', 'origination', 'uris', 0, 'sip_uri']],
    ['a priority above 65535', uri('sip:pbx.example.com', { priority: 65536 }), ['body', 'origination', 'uris', 0, 'priority']],
    ['a negative weight', uri('sip:pbx.example.com', { weight: -1 }), ['body', 'origination', 'uris', 0, 'weight']],
    ['a missing sip_uri', { origination: { uris: [{ name: 'x' }] } }, ['body', 'origination', 'uris', 0, 'sip_uri']],
    ['a termination address that is none', { termination: { addresses: ['pbx.example.com'] } }, ['body', 'termination', 'addresses', 0]],
    ['a CIDR block too wide', { termination: { addresses: ['203.0.113.0/33'] } }, ['body', 'termination', 'addresses', 0]],
    [
      'a termination password under 12 characters',
      { termination: { credentials: [{ username: 'pbx', password: 'short' }] } },
      ['body', 'termination', 'credentials', 0, 'password'],
    ],
    [
      'a termination user name with a space',
      { termination: { credentials: [{ username: 'my pbx', password: 'long-enough-secret' }] } },
      ['body', 'termination', 'credentials', 0, 'username'],
    ],
    ['an unknown termination field', { termination: { sip_uri: 'sip:x@y' } }, ['body', 'termination', 'sip_uri']],
  ];
  for (const [what, body, loc] of invalid) {
    it(`answers 422 for ${what}, on create and on update`, async () => {
      const r = await create(body);
      expect(r.status).to.equal(422);
      expect(r.body.detail.map((d: { loc: unknown[] }) => d.loc)).to.deep.include(loc);
      const t = (await create()).body;
      expect((await patch(t.id, body)).status).to.equal(422);
    });
  }

  describe('the termination side (docs/sip.md#calls-from-your-pbx)', () => {
    const SECRET = 'pbx-secret-4711-abc';
    const OTHER = 'pbx-secret-0815-xyz';

    it('takes credentials and addresses, answers user names only, and keeps the passwords sealed at rest', async () => {
      const r = await create({
        name: 'Office PBX',
        termination: { credentials: [{ username: 'office', password: SECRET }], addresses: ['203.0.113.7', '198.51.100.0/24'] },
      });
      expect(r.status).to.equal(200);
      expect(r.body.termination).to.deep.include({ credentials: [{ username: 'office' }], addresses: ['203.0.113.7', '198.51.100.0/24'] });
      expect(r.body.termination.sip_uri).to.match(/^sip:/);
      const got = await app.call('GET', `/v1/sip-trunks/${r.body.id}`, { key: acc.apiKey });
      const stream = await app.rt.store.readStream(`sip_trunk-${r.body.id}`);
      const rows = await sql`select termination::text as t from sip_trunks where trunk_id = ${r.body.id}`.execute(
        app.rt.get(PLATFORM.ReadDb),
      );
      const upstream = await app.call('GET', '/sandbox/sip-trunks', { key: ADMIN_TOKEN });
      const recorded = JSON.stringify(stream.map((e) => e.data));
      for (const stored of [
        recorded,
        JSON.stringify(rows.rows),
        JSON.stringify(got.body),
        JSON.stringify(r.body),
        JSON.stringify(upstream.body),
      ])
        expect(stored).not.to.include(SECRET);
      expect(recorded).to.include('enc:v1:');
      // the SIP engine's directory opens them
      const opened = (await app.rt.get(SIP.Trunks).list()).find((t) => t.trunkId === r.body.id);
      expect(opened).to.deep.include({ accountId: acc.accountId, credentials: [{ username: 'office', password: SECRET }] });
    });

    it('a PATCH changes only the lists it sends; a credential without a password keeps its own; a new user name needs one (422)', async () => {
      const t = (await create({ termination: { credentials: [{ username: 'office', password: SECRET }], addresses: ['203.0.113.7'] } }))
        .body;
      const opened = async () => (await app.rt.get(SIP.Trunks).list()).find((x) => x.trunkId === t.id);
      const moved = await patch(t.id, { termination: { addresses: ['192.0.2.0/28'] } });
      expect(moved.status).to.equal(200);
      expect(moved.body.termination).to.deep.include({ credentials: [{ username: 'office' }], addresses: ['192.0.2.0/28'] });
      const added = await patch(t.id, { termination: { credentials: [{ username: 'office' }, { username: 'branch', password: OTHER }] } });
      expect(added.body.termination.credentials).to.deep.equal([{ username: 'office' }, { username: 'branch' }]);
      expect((await opened())?.credentials).to.deep.equal([
        { username: 'office', password: SECRET },
        { username: 'branch', password: OTHER },
      ]);
      const refused = await patch(t.id, { termination: { credentials: [{ username: 'newcomer' }] } });
      expect(refused.status).to.equal(422);
      expect(refused.body.detail.map((d: { loc: unknown[] }) => d.loc)).to.deep.include([
        'body',
        'termination',
        'credentials',
        '0',
        'password',
      ]);
      const twice = await patch(t.id, { termination: { credentials: [{ username: 'office' }, { username: 'office', password: OTHER }] } });
      expect(twice.status).to.equal(422);
      expect((await opened())?.credentials).to.have.length(2);
      const cleared = await patch(t.id, { termination: { credentials: [], addresses: [] } });
      expect(cleared.body.termination).to.deep.include({ credentials: [], addresses: [] });
      // a trunk without a termination side is none the engine checks
      expect(await opened()).to.equal(undefined);
    });

    it("another account's trunk is a 404, and its termination side is not shown", async () => {
      const other = await account(app);
      const foreign = (await create({ termination: { addresses: ['203.0.113.99'] } }, other.apiKey)).body;
      const r = await app.call('PATCH', `/v1/sip-trunks/${foreign.id}`, { key: acc.apiKey, body: { termination: { addresses: [] } } });
      expect(r.status).to.equal(404);
      expect((await app.call('GET', `/v1/sip-trunks/${foreign.id}`, { key: other.apiKey })).body.termination.addresses).to.deep.equal([
        '203.0.113.99',
      ]);
    });
  });

  it('updates only what is sent; `origination` without uris (or with none) clears them while no number is attached', async () => {
    const t = (await create({ name: 'Patchy', ...uri('sip:a.example.com') })).body;
    const renamed = await patch(t.id, { name: 'Renamed' });
    expect(renamed.body).to.include({ name: 'Renamed', transfers: 'all' });
    expect(renamed.body.origination.uris).to.have.length(1);
    const replaced = await patch(t.id, uri('sips:b.example.com'));
    expect(replaced.body.origination.uris.map((u: { sip_uri: string }) => u.sip_uri)).to.deep.equal(['sips:b.example.com']);
    expect((await patch(t.id, { origination: {} })).body.origination.uris).to.deep.equal([]);
    await patch(t.id, uri('sip:c.example.com'));
    expect((await patch(t.id, { origination: { uris: [] } })).body.origination.uris).to.deep.equal([]);
  });

  it("routes a number to a trunk, refuses to clear the trunk's URIs while it is attached (409 envelope), and moves or stops the route", async () => {
    const t1 = (await create(uri('sip:one.example.com'))).body;
    const t2 = (await create(uri('sip:two.example.com'))).body;
    const n = await number();
    const routed = await route(n.id, t1.id);
    expect(routed.status).to.equal(200);
    expect(routed.body.sipTrunkId).to.equal(t1.id);
    expect((await app.call('GET', `/v1/sip-trunks/${t1.id}`, { key: acc.apiKey })).body.number_ids).to.deep.equal([n.id]);
    for (const body of [{ origination: { uris: [] } }, { origination: {} }]) {
      const r = await patch(t1.id, body);
      expect(r.status).to.equal(409);
      expect(r.body.error).to.include({ code: 'SIP_TRUNK_CONFLICT', type: 'conflict_error' });
      expect(r.body.request_id).to.be.a('string');
    }
    expect((await patch(t1.id, { name: 'Still editable' })).status).to.equal(200);
    // move to another trunk: the first lets go
    expect((await route(n.id, t2.id)).body.sipTrunkId).to.equal(t2.id);
    expect((await app.call('GET', `/v1/sip-trunks/${t1.id}`, { key: acc.apiKey })).body.number_ids).to.deep.equal([]);
    expect((await patch(t1.id, { origination: { uris: [] } })).status).to.equal(200);
    // null stops routing to a trunk
    const off = await route(n.id, null);
    expect(off.body.sipTrunkId).to.equal(null);
    expect((await app.call('GET', `/v1/sip-trunks/${t2.id}`, { key: acc.apiKey })).body.number_ids).to.deep.equal([]);
    // a trunk with nowhere to send calls takes no numbers
    const empty = await route(n.id, t1.id);
    expect(empty.status).to.equal(409);
    expect(empty.body.error.code).to.equal('SIP_TRUNK_CONFLICT');
    expect((await app.call('GET', `/v1/numbers/${n.id}`, { key: acc.apiKey })).body.sipTrunkId).to.equal(null);
  });

  it('refuses unknown and foreign trunks with 404', async () => {
    const other = await account(app);
    const foreign = (await create(uri('sip:x.example.com'), other.apiKey)).body;
    const n = await number();
    for (const id of [foreign.id, 'trk_nope']) {
      const r = await route(n.id, id);
      expect(r.status).to.equal(404);
      expect(r.body.error.code).to.equal('SIP_TRUNK_NOT_FOUND');
    }
    for (const [method, body] of [['GET'], ['PATCH', { name: 'x' }], ['DELETE']] as [string, unknown?][]) {
      expect(
        (await app.call(method, `/v1/sip-trunks/${foreign.id}`, { key: acc.apiKey, ...(body ? { body } : {}) })).status,
        method,
      ).to.equal(404);
    }
    expect(
      (await app.call('GET', '/v1/sip-trunks?limit=100', { key: acc.apiKey })).body.data.map((t: { id: string }) => t.id),
    ).to.not.include(foreign.id);
  });

  it('deletes a trunk upstream and soft-deletes it; its numbers stop routing to it (process manager)', async () => {
    const t = (await create(uri('sip:gone.example.com'))).body;
    const n = await number();
    await route(n.id, t.id);
    const del = await app.call('DELETE', `/v1/sip-trunks/${t.id}`, { key: acc.apiKey });
    expect(del.status).to.equal(200);
    expect(del.body).to.deep.equal({ success: true, id: t.id });
    expect((await app.call('GET', `/v1/sip-trunks/${t.id}`, { key: acc.apiKey })).status).to.equal(404);
    expect((await app.call('DELETE', `/v1/sip-trunks/${t.id}`, { key: acc.apiKey })).status).to.equal(404);
    const upstream = (await app.call('GET', '/sandbox/sip-trunks', { key: ADMIN_TOKEN })).body.data.find(
      (x: { trunkId: string }) => x.trunkId === t.id,
    );
    expect(upstream.deletedAt).to.be.a('string');
    await eventually(
      async () => (await app.call('GET', `/v1/numbers/${n.id}`, { key: acc.apiKey })).body.sipTrunkId === null,
      'route cleared',
    );
    // the history of the trunk is kept, the provider's steps as facts of their own
    expect((await app.rt.store.readStream(`sip_trunk-${t.id}`)).map((e) => e.type)).to.deep.equal([
      'SipTrunkRequested',
      'SipTrunkCreated',
      'SipTrunkNumberLinked',
      'SipTrunkDeletionRequested',
      'SipTrunkDeleted',
    ]);
  });

  it('lets a released number go from its trunk', async () => {
    const t = (await create(uri('sip:rel.example.com'))).body;
    const n = await number();
    await route(n.id, t.id);
    expect((await app.call('DELETE', `/v1/numbers/${n.id}`, { key: acc.apiKey })).status).to.equal(200);
    await eventually(
      async () => (await app.call('GET', `/v1/sip-trunks/${t.id}`, { key: acc.apiKey })).body.number_ids.length === 0,
      'trunk let go',
    );
    expect((await patch(t.id, { origination: { uris: [] } })).status).to.equal(200);
    expect((await route(n.id, t.id)).status).to.equal(409); // released
  });

  describe('calls from the PBX in the sandbox (docs/sandbox.md#calls-from-a-pbx)', () => {
    const SECRET = 'sandbox-pbx-secret-1';
    let line: { numberId: string; phoneNumber: string; trunkId: string };
    const magic = async (persona: string) =>
      (
        (await app.call('GET', '/sandbox/calls/magic-numbers', { key: ADMIN_TOKEN })).body.data as {
          phoneNumber: string;
          persona: string;
        }[]
      ).find((m) => m.persona === persona)!.phoneNumber;
    const fromPbx = (body: Record<string, unknown>) => app.call('POST', '/sandbox/calls/from-pbx', { key: ADMIN_TOKEN, body });
    const ended = (callId: string) =>
      eventually(async () => {
        const c = (await app.call('GET', `/v1/calls/${callId}`, { key: acc.apiKey })).body;
        return c.status === 'completed' || c.status === 'failed' ? c : undefined;
      }, 'the call from the PBX ended');

    before(async () => {
      const t = await create({
        ...uri('sip:reception@pbx.example.com'),
        termination: { credentials: [{ username: 'office', password: SECRET }], addresses: ['203.0.113.7'] },
      });
      const n = await number();
      expect((await route(n.id, t.body.id)).status).to.equal(200);
      const got = (await app.call('GET', `/v1/numbers/${n.id}`, { key: acc.apiKey })).body;
      line = { numberId: n.id, phoneNumber: got.phoneNumber, trunkId: t.body.id };
    });

    it("places an outbound call from the trunk's number when the credentials are the trunk's; the far end answers, hangs up, and it completes", async () => {
      const r = await fromPbx({ from: line.phoneNumber, to: await magic('talker'), username: 'office', password: SECRET });
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
      const live = await eventually(async () => {
        const c = (await app.call('GET', `/v1/calls/${r.body.callId}`, { key: acc.apiKey })).body;
        return c.status === 'in-progress' && c.answeredAt ? c : undefined;
      }, 'the call answered');
      expect(live).to.include({
        direction: 'outbound',
        mode: 'sip',
        fromNumber: line.phoneNumber,
        sipTrunkId: line.trunkId,
        sipUri: 'sip:pbx@sandbox',
      });
      expect((await app.call('POST', `/sandbox/calls/${r.body.callId}/hangup`, { key: ADMIN_TOKEN })).status).to.equal(200);
      expect(await ended(r.body.callId)).to.include({ status: 'completed', disconnectionReason: 'user_hangup' });
    });

    it('takes the PBX by its source address too; a busy far end fails the call busy', async () => {
      const r = await fromPbx({ from: line.phoneNumber, to: await magic('busy'), sourceAddress: '203.0.113.7' });
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
      expect(await ended(r.body.callId)).to.include({ status: 'failed', disconnectionReason: 'dial_busy', sipUri: 'sip:203.0.113.7' });
    });

    it('refuses (409, saying what the SIP engine answers) a wrong password, an unknown address and a caller id not routed to the trunk', async () => {
      const to = await magic('talker');
      const refusals = [
        [{ from: line.phoneNumber, to, username: 'office', password: 'not-the-secret' }, '403'],
        [{ from: line.phoneNumber, to, sourceAddress: '100.64.0.1' }, '403'],
        [{ from: '+14155550100', to, username: 'office', password: SECRET }, 'caller id'],
      ] as const;
      for (const [body, says] of refusals) {
        const r = await fromPbx(body);
        expect(r.status, JSON.stringify(body)).to.equal(409);
        expect(r.body.error).to.include({ code: 'SANDBOX_CALL_REFUSED' });
        expect(r.body.error.message).to.contain(says);
      }
      expect((await fromPbx({ from: line.phoneNumber, to, username: 'office' })).status).to.equal(422);
    });
  });

  describe('upstream failures', () => {
    afterEach(() => sandbox(app).clearFaults());

    it('creates nothing when the provider fails (502 TELEPHONY_PROVIDER_ERROR)', async () => {
      const before = (await app.call('GET', '/v1/sip-trunks', { key: acc.apiKey })).body.total;
      await sandbox(app).fault({ operation: 'sip.createTrunk' });
      const r = await create({ name: 'Doomed' });
      expect(r.status).to.equal(502);
      expect(r.body.error.code).to.equal('TELEPHONY_PROVIDER_ERROR');
      expect((await app.call('GET', '/v1/sip-trunks', { key: acc.apiKey })).body.total).to.equal(before);
    });

    it('keeps the trunk as it was when the provider refuses an update, and when it refuses a delete', async () => {
      const t = (await create({ name: 'Stable', ...uri('sip:s.example.com') })).body;
      await sandbox(app).fault({ operation: 'sip.updateTrunk' });
      expect((await patch(t.id, { name: 'Changed', transfers: 'none' })).status).to.equal(502);
      expect((await app.call('GET', `/v1/sip-trunks/${t.id}`, { key: acc.apiKey })).body).to.include({ name: 'Stable', transfers: 'all' });
      // a refused termination side goes back to none, and the engine's directory has none for the trunk
      await sandbox(app).fault({ operation: 'sip.updateTrunk' });
      expect((await patch(t.id, { termination: { addresses: ['203.0.113.50'] } })).status).to.equal(502);
      const back = (await app.call('GET', `/v1/sip-trunks/${t.id}`, { key: acc.apiKey })).body;
      expect(back.termination).to.deep.include({ credentials: [], addresses: [] });
      expect((await app.rt.get(SIP.Trunks).list()).some((x) => x.trunkId === t.id)).to.equal(false);
      await sandbox(app).fault({ operation: 'sip.deleteTrunk' });
      expect((await app.call('DELETE', `/v1/sip-trunks/${t.id}`, { key: acc.apiKey })).status).to.equal(502);
      expect((await app.call('GET', `/v1/sip-trunks/${t.id}`, { key: acc.apiKey })).status).to.equal(200);
    });
  });
});
