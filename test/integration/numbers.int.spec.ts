import { expect } from 'chai';
import { TestClock } from '../support/fixtures.js';
import { ADMIN_TOKEN, startTestApp, type TestApp } from '../support/http.js';
import { account, credit, eventually, sandbox, usage } from '../support/numbers.js';

/** Spec 4.3 and 4.2 (attach/detach) over HTTP against a real database, with the sandbox carrier. */
describe('phone numbers over HTTP', function () {
  this.timeout(60_000);
  let app: TestApp;
  const clock = new TestClock(new Date('2026-03-10T12:00:00.000Z'));
  before(async () => {
    app = await startTestApp({}, { clock });
  });
  after(() => app.close());

  const post = (key: string, body: unknown, headers: Record<string, string> = {}) =>
    app.call('POST', '/v1/numbers', { key, body, headers });
  const agent = async (key: string, name = 'Agent') =>
    (await app.call('POST', '/v1/agents', { key, body: { name } })).body as { id: string };
  const history = async (numberId: string) => (await app.rt.store.readStream(`phone_number-${numberId}`)).map((e) => e.type);

  describe('provisioning', () => {
    it('buys a number in the area code, charges the first month, and answers PhoneNumberResponse', async () => {
      const acc = await account(app);
      const r = await post(acc.apiKey, { country: 'US', areaCode: '212' });
      expect(r.status).to.equal(200);
      expect(r.body).to.include({
        country: 'US',
        status: 'active',
        type: 'sms',
        agentId: null,
        areaCode: '212',
        sipTrunkId: null,
        renewalStatus: 'ok',
        releasedAt: null,
      });
      expect(r.body.id).to.match(/^pn_/);
      expect(r.body.phoneNumber).to.match(/^\+1212555\d{4}$/);
      expect(r.body.createdAt).to.equal(clock.now().toISOString());
      expect(r.body.paidThrough).to.equal('2026-04-10T12:00:00.000Z');
      expect(await usage(app, acc.apiKey)).to.include({ balanceMicros: 2_000_000, used: 1 });
      expect(await history(r.body.id)).to.deep.equal([
        'NumberProvisioningRequested',
        'NumberSlotHeld',
        'NumberPurchased',
        'NumberRoutingConfigured',
        'NumberProvisioned',
      ]);
      expect((await app.call('GET', `/v1/numbers/${r.body.id}`, { key: acc.apiKey })).body).to.deep.equal(r.body);
      // the carrier sold it under this provisioning's key and routes it to the platform
      const sold = (await sandbox(app).purchases()).find((p) => p.phoneNumber === r.body.phoneNumber);
      expect(sold).to.include({ purchaseKey: `${r.body.id}:1` });
    });

    it('defaults the country to US and picks any area code when none is asked for', async () => {
      const acc = await account(app);
      const r = await post(acc.apiKey, {});
      expect(r.status).to.equal(200);
      expect(r.body).to.include({ country: 'US', areaCode: null });
      expect(r.body.phoneNumber).to.match(/^\+1\d{10}$/);
    });

    it('provisions in Canada', async () => {
      const acc = await account(app);
      const r = await post(acc.apiKey, { country: 'CA', areaCode: '416' });
      expect(r.status).to.equal(200);
      expect(r.body.phoneNumber).to.match(/^\+1416/);
      expect(r.body.country).to.equal('CA');
    });

    it('attaches the new number to the agent it names', async () => {
      const acc = await account(app);
      const a = await agent(acc.apiKey);
      const r = await post(acc.apiKey, { areaCode: '646', agentId: a.id });
      expect(r.body.agentId).to.equal(a.id);
      const read = await app.call('GET', `/v1/agents/${a.id}`, { key: acc.apiKey });
      expect(read.body.numbers).to.deep.equal([{ id: r.body.id, phoneNumber: r.body.phoneNumber, status: 'active', type: 'sms' }]);
    });

    it('refuses an agent of another account (404) before anything is bought', async () => {
      const acc = await account(app);
      const other = await account(app);
      const a = await agent(other.apiKey);
      const r = await post(acc.apiKey, { areaCode: '646', agentId: a.id });
      expect(r.status).to.equal(404);
      expect(r.body.error.code).to.equal('AGENT_NOT_FOUND');
      expect(await usage(app, acc.apiKey)).to.include({ used: 0, balanceMicros: 5_000_000 });
    });

    const invalid: [string, unknown, string][] = [
      ['an unknown area code', { areaCode: '999' }, 'areaCode'],
      ['a toll-free code', { areaCode: '800' }, 'areaCode'],
      ['a Canadian code in the US', { country: 'US', areaCode: '416' }, 'areaCode'],
      ['a malformed area code', { areaCode: '41' }, 'areaCode'],
      ['a country other than US/CA', { country: 'GB', areaCode: '415' }, 'country'],
    ];
    for (const [what, body, field] of invalid) {
      it(`answers 422 for ${what}, charging nothing`, async () => {
        const acc = await account(app);
        const r = await post(acc.apiKey, body);
        expect(r.status).to.equal(422);
        expect(r.body.error.code).to.equal('VALIDATION_ERROR');
        expect(r.body.error.details.map((d: { field: string }) => d.field)).to.include(field);
        expect(await usage(app, acc.apiKey)).to.include({ used: 0, balanceMicros: 5_000_000 });
      });
    }

    it('answers 402 (plain) when the balance is below $3.00, stating needed and current balance, and changes nothing', async () => {
      const acc = await account(app);
      expect((await post(acc.apiKey, { areaCode: '305' })).status).to.equal(200);
      const r = await post(acc.apiKey, { areaCode: '305' });
      expect(r.status).to.equal(402);
      expect(r.body).to.have.keys(['detail', 'request_id']);
      expect(r.body.detail)
        .to.match(/\$3\.00/)
        .and.match(/\$2\.00/);
      expect(await usage(app, acc.apiKey)).to.include({ used: 1, balanceMicros: 2_000_000 });
    });

    it('checks the limit before the balance: 409 (plain) at the limit even when the balance is also short', async () => {
      const acc = await account(app, { numberLimit: 1 });
      expect((await post(acc.apiKey, { areaCode: '305' })).status).to.equal(200);
      const r = await post(acc.apiKey, { areaCode: '305' });
      expect(r.status).to.equal(409);
      expect(r.body).to.have.keys(['detail', 'request_id']);
      expect(r.body.detail).to.match(/limit/i);
    });

    it('lets exactly `limit` of five concurrent provisionings through; the rest get 409 and nothing is charged for them', async () => {
      const acc = await account(app, { numberLimit: 2, creditMicros: 20_000_000 });
      const results = await Promise.all(Array.from({ length: 5 }, () => post(acc.apiKey, { areaCode: '713' })));
      const statuses = results.map((r) => r.status).sort();
      expect(statuses).to.deep.equal([200, 200, 409, 409, 409]);
      for (const r of results.filter((x) => x.status === 409)) {
        expect(r.body.detail).to.match(/limit/i);
        // the limit is over the account's life: releasing a number frees no slot, so the advice never says to
        expect(r.body.detail).to.not.match(/release a number/i);
        expect(r.body.detail).to.match(/released ones included/);
      }
      expect(await usage(app, acc.apiKey)).to.include({ used: 2, balanceMicros: 25_000_000 - 6_000_000 });
      const list = await app.call('GET', '/v1/numbers', { key: acc.apiKey });
      expect(list.body.total).to.equal(2);
      expect(new Set(list.body.data.map((n: { phoneNumber: string }) => n.phoneNumber)).size).to.equal(2);
    });

    it('answers 409 (plain) "requested number unavailable" when the area code is sold out', async () => {
      const acc = await account(app, { creditMicros: 10_000_000 });
      // 907 has one number in the sandbox inventory
      expect((await post(acc.apiKey, { areaCode: '907' })).status).to.equal(200);
      const r = await post(acc.apiKey, { areaCode: '907' });
      expect(r.status).to.equal(409);
      expect(r.body).to.have.keys(['detail', 'request_id']);
      expect(r.body.detail).to.match(/requested number is unavailable/i);
      // the failed attempt gave its slot back: only the first number holds one
      expect(await usage(app, acc.apiKey)).to.include({ used: 1, balanceMicros: 12_000_000 });
    });
  });

  describe('upstream failures (sandbox faults)', () => {
    afterEach(() => sandbox(app).clearFaults());

    it('rolls back a purchase that failed after taking effect: 502, slot given back, number returned to the carrier, nothing charged', async () => {
      const acc = await account(app);
      await sandbox(app).fault({ operation: 'carrier.purchase', error: 'SMS_PROVIDER_ERROR', afterEffect: true });
      const r = await post(acc.apiKey, { areaCode: '503' });
      expect(r.status).to.equal(502);
      expect(r.body.error).to.include({ code: 'SMS_PROVIDER_ERROR', type: 'carrier_error' });
      expect(await usage(app, acc.apiKey)).to.include({ used: 0, balanceMicros: 5_000_000 });
      expect((await sandbox(app).purchases()).filter((p) => p.phoneNumber.startsWith('+1503'))).to.deep.equal([]);
      // the number the failed purchase took is back with the carrier, in quarantine
      expect((await sandbox(app).inventory('503'))[0]).to.include({ phoneNumber: '+15035550100', status: 'quarantined' });
      expect((await app.call('GET', '/v1/numbers', { key: acc.apiKey })).body.total).to.equal(0);
    });

    it("rolls back when voice routing fails: 502 TELEPHONY_PROVIDER_ERROR, with the steps in the number's history", async () => {
      const acc = await account(app);
      await sandbox(app).fault({ operation: 'carrier.configureVoice' });
      const r = await post(acc.apiKey, { areaCode: '504' });
      expect(r.status).to.equal(502);
      expect(r.body.error.code).to.equal('TELEPHONY_PROVIDER_ERROR');
      expect(await usage(app, acc.apiKey)).to.include({ used: 0, balanceMicros: 5_000_000 });
      expect(await sandbox(app).purchases()).to.satisfy((ps: { phoneNumber: string }[]) =>
        ps.every((p) => !p.phoneNumber.startsWith('+1504')),
      );
      // and the next try gets a number
      expect((await post(acc.apiKey, { areaCode: '504' })).status).to.equal(200);
    });

    it('answers 502 SMS_PROVIDER_ERROR when the carrier search fails, having bought nothing', async () => {
      const acc = await account(app);
      await sandbox(app).fault({ operation: 'carrier.search' });
      const r = await post(acc.apiKey, { areaCode: '505' });
      expect(r.status).to.equal(502);
      expect(r.body.error.code).to.equal('SMS_PROVIDER_ERROR');
      expect(await usage(app, acc.apiKey)).to.include({ used: 0, balanceMicros: 5_000_000 });
    });
  });

  describe('list, read, release', () => {
    it('lists active numbers with offset pagination, reads any status by id, and releases irreversibly', async () => {
      const acc = await account(app, { creditMicros: 10_000_000 });
      const a = await agent(acc.apiKey);
      const made = [];
      for (const areaCode of ['303', '303', '303']) {
        made.push((await post(acc.apiKey, { areaCode, agentId: a.id })).body);
        clock.advance(1000);
      }
      const p1 = await app.call('GET', '/v1/numbers?limit=2', { key: acc.apiKey });
      expect(p1.body).to.include({ total: 3, hasMore: true });
      expect(p1.body.data.map((n: { id: string }) => n.id)).to.deep.equal([made[0].id, made[1].id]);
      const p2 = await app.call('GET', '/v1/numbers?limit=2&offset=2', { key: acc.apiKey });
      expect(p2.body).to.include({ total: 3, hasMore: false });

      const del = await app.call('DELETE', `/v1/numbers/${made[1].id}`, { key: acc.apiKey });
      expect(del.status).to.equal(200);
      expect(del.body).to.deep.equal({ success: true, phoneNumber: made[1].phoneNumber, status: 'released' });
      const list = await app.call('GET', '/v1/numbers', { key: acc.apiKey });
      expect(list.body.total).to.equal(2);
      expect(list.body.data.map((n: { id: string }) => n.id)).to.not.include(made[1].id);
      const one = await app.call('GET', `/v1/numbers/${made[1].id}`, { key: acc.apiKey });
      expect(one.status).to.equal(200);
      expect(one.body).to.include({
        status: 'released',
        agentId: null,
        sipTrunkId: null,
        paidThrough: null,
        releasedAt: clock.now().toISOString(),
        phoneNumber: made[1].phoneNumber,
      });
      // detached from its agent
      const read = await app.call('GET', `/v1/agents/${a.id}`, { key: acc.apiKey });
      expect(read.body.numbers.map((n: { id: string }) => n.id)).to.deep.equal([made[0].id, made[2].id]);
      // released upstream, and its slot is kept (the limit is a lifetime limit)
      expect((await sandbox(app).purchases()).map((p) => p.phoneNumber)).to.not.include(made[1].phoneNumber);
      expect((await usage(app, acc.apiKey)).used).to.equal(3);
      // irreversible: deleting again answers the same, attaching is refused, the history is kept
      expect((await app.call('DELETE', `/v1/numbers/${made[1].id}`, { key: acc.apiKey })).body).to.deep.equal(del.body);
      const attach = await app.call('POST', `/v1/agents/${a.id}/numbers`, { key: acc.apiKey, body: { numberId: made[1].id } });
      expect(attach.status).to.equal(409);
      expect(attach.body.error.code).to.equal('PHONE_NUMBER_RELEASED');
      expect(await history(made[1].id)).to.include.members(['NumberReleaseRequested', 'NumberReleased']);
    });

    it('keeps a number active when the upstream release fails (502), and releases it on retry', async () => {
      const acc = await account(app);
      const n = (await post(acc.apiKey, { areaCode: '702' })).body;
      await sandbox(app).fault({ operation: 'carrier.release' });
      const r = await app.call('DELETE', `/v1/numbers/${n.id}`, { key: acc.apiKey });
      expect(r.status).to.equal(502);
      expect((await app.call('GET', `/v1/numbers/${n.id}`, { key: acc.apiKey })).body.status).to.equal('active');
      expect((await app.call('DELETE', `/v1/numbers/${n.id}`, { key: acc.apiKey })).status).to.equal(200);
    });

    it('returns a released number to sale only after the quarantine (Clock-driven)', async () => {
      const acc = await account(app, { creditMicros: 10_000_000 });
      // 867 (Yukon, NWT, Nunavut) has two numbers
      const first = (await post(acc.apiKey, { country: 'CA', areaCode: '867' })).body;
      expect((await post(acc.apiKey, { country: 'CA', areaCode: '867' })).status).to.equal(200);
      expect((await app.call('DELETE', `/v1/numbers/${first.id}`, { key: acc.apiKey })).status).to.equal(200);
      const early = await post(acc.apiKey, { country: 'CA', areaCode: '867' });
      expect(early.status).to.equal(409);
      clock.advance(86_400_000 + 1000);
      const later = await post(acc.apiKey, { country: 'CA', areaCode: '867' });
      expect(later.status).to.equal(200);
      expect(later.body.phoneNumber).to.equal(first.phoneNumber);
      expect(later.body.id).to.not.equal(first.id);
    });

    it("answers 404 for unknown numbers and for another account's number on every number operation", async () => {
      const acc = await account(app);
      const other = await account(app);
      const n = (await post(other.apiKey, { areaCode: '617' })).body;
      for (const [method, path, body] of [
        ['GET', `/v1/numbers/${n.id}`],
        ['DELETE', `/v1/numbers/${n.id}`],
        ['PATCH', `/v1/numbers/${n.id}`, { sipTrunkId: null }],
        ['GET', `/v1/numbers/${n.id}/messages`],
        ['GET', `/v1/numbers/${n.id}/calls`],
        ['GET', '/v1/numbers/pn_nope'],
      ] as [string, string, unknown?][]) {
        const r = await app.call(method, path, { key: acc.apiKey, ...(body ? { body } : {}) });
        expect(r.status, `${method} ${path}`).to.equal(404);
        expect(r.body.error.code).to.equal('PHONE_NUMBER_NOT_FOUND');
      }
      const a = await agent(acc.apiKey);
      const attach = await app.call('POST', `/v1/agents/${a.id}/numbers`, { key: acc.apiKey, body: { numberId: n.id } });
      expect(attach.status).to.equal(404);
      expect((await app.call('GET', `/v1/numbers/${n.id}`, { key: other.apiKey })).body.status).to.equal('active');
    });

    it('scopes numbers to a sub-account by X-Sub-Account-Id, billing the parent', async () => {
      const parent = await account(app, { creditMicros: 10_000_000 });
      const sub = (await app.call('POST', '/v1/sub-accounts', { key: parent.apiKey, body: { name: 'Sub' } })).body as { id: string };
      const headers = { 'x-sub-account-id': sub.id };
      const n = await post(parent.apiKey, { areaCode: '206' }, headers);
      expect(n.status).to.equal(200);
      expect((await app.call('GET', '/v1/numbers', { key: parent.apiKey })).body.total).to.equal(0);
      expect((await app.call('GET', '/v1/numbers', { key: parent.apiKey, headers })).body.total).to.equal(1);
      expect((await app.call('GET', `/v1/numbers/${n.body.id}`, { key: parent.apiKey })).status).to.equal(404);
      expect(await usage(app, parent.apiKey)).to.include({ used: 1, balanceMicros: 12_000_000 });
    });
  });

  describe('attach and detach', () => {
    it("lists an agent's numbers in attach order; detaching keeps the number active and re-attachable", async () => {
      const acc = await account(app, { creditMicros: 10_000_000 });
      const a = await agent(acc.apiKey);
      const [n1, n2, n3] = [
        (await post(acc.apiKey, { areaCode: '312' })).body,
        (await post(acc.apiKey, { areaCode: '312' })).body,
        (await post(acc.apiKey, { areaCode: '312' })).body,
      ];
      for (const n of [n3, n1, n2]) {
        const r = await app.call('POST', `/v1/agents/${a.id}/numbers`, { key: acc.apiKey, body: { numberId: n.id } });
        expect(r.status).to.equal(200);
        expect(r.body).to.deep.equal({ agentId: a.id, number: { id: n.id, phoneNumber: n.phoneNumber, status: 'active', type: 'sms' } });
      }
      const order = async () =>
        (await app.call('GET', `/v1/agents/${a.id}`, { key: acc.apiKey })).body.numbers.map((n: { id: string }) => n.id);
      expect(await order()).to.deep.equal([n3.id, n1.id, n2.id]); // the first is the outbound default
      const listed = (await app.call('GET', '/v1/agents', { key: acc.apiKey })).body.data.find((x: { id: string }) => x.id === a.id);
      expect(listed.numbers.map((n: { id: string }) => n.id)).to.deep.equal([n3.id, n1.id, n2.id]);

      const det = await app.call('DELETE', `/v1/agents/${a.id}/numbers/${n3.id}`, { key: acc.apiKey });
      expect(det.status).to.equal(200);
      expect(det.body).to.deep.equal({ success: true });
      expect(await order()).to.deep.equal([n1.id, n2.id]);
      expect((await app.call('GET', `/v1/numbers/${n3.id}`, { key: acc.apiKey })).body).to.include({ status: 'active', agentId: null });
      // detaching again: it is no longer on this agent
      expect((await app.call('DELETE', `/v1/agents/${a.id}/numbers/${n3.id}`, { key: acc.apiKey })).status).to.equal(404);
      // attaching again puts it last; attaching a number the agent holds changes nothing
      await app.call('POST', `/v1/agents/${a.id}/numbers`, { key: acc.apiKey, body: { numberId: n3.id } });
      await app.call('POST', `/v1/agents/${a.id}/numbers`, { key: acc.apiKey, body: { numberId: n1.id } });
      expect(await order()).to.deep.equal([n1.id, n2.id, n3.id]);
    });

    it('moves a number held by another agent (documented choice), so it is never on two agents', async () => {
      const acc = await account(app);
      const a = await agent(acc.apiKey, 'A');
      const b = await agent(acc.apiKey, 'B');
      const n = (await post(acc.apiKey, { areaCode: '202', agentId: a.id })).body;
      const r = await app.call('POST', `/v1/agents/${b.id}/numbers`, { key: acc.apiKey, body: { numberId: n.id } });
      expect(r.status).to.equal(200);
      expect((await app.call('GET', `/v1/agents/${a.id}`, { key: acc.apiKey })).body.numbers).to.deep.equal([]);
      expect(
        (await app.call('GET', `/v1/agents/${b.id}`, { key: acc.apiKey })).body.numbers.map((x: { id: string }) => x.id),
      ).to.deep.equal([n.id]);
      expect((await app.call('GET', `/v1/numbers/${n.id}`, { key: acc.apiKey })).body.agentId).to.equal(b.id);
      const moved = (await app.rt.store.readStream(`phone_number-${n.id}`)).filter((e) => e.type === 'NumberAttached').map((e) => e.data);
      expect(moved.at(-1)).to.include({ agentId: b.id, previousAgentId: a.id });
      // detaching it from the agent it moved away from is a 404
      expect((await app.call('DELETE', `/v1/agents/${a.id}/numbers/${n.id}`, { key: acc.apiKey })).status).to.equal(404);
    });

    it('under concurrent attaches of one number to two agents, ends on exactly one agent, matching its last attach', async () => {
      const acc = await account(app);
      const a = await agent(acc.apiKey, 'A');
      const b = await agent(acc.apiKey, 'B');
      const n = (await post(acc.apiKey, { areaCode: '404' })).body;
      for (let round = 0; round < 4; round++) {
        const rs = await Promise.all(
          [a, b, a, b].map((x) => app.call('POST', `/v1/agents/${x.id}/numbers`, { key: acc.apiKey, body: { numberId: n.id } })),
        );
        expect(rs.map((r) => r.status)).to.satisfy((s: number[]) => s.every((x) => x === 200 || x === 409));
        const lists = await Promise.all(
          [a, b].map(async (x) =>
            (await app.call('GET', `/v1/agents/${x.id}`, { key: acc.apiKey })).body.numbers.map((y: { id: string }) => y.id),
          ),
        );
        const holders = lists.filter((l) => l.includes(n.id));
        expect(holders, 'the number is on exactly one agent').to.have.length(1);
        const last = (await app.rt.store.readStream(`phone_number-${n.id}`)).filter((e) => e.type === 'NumberAttached').at(-1)!.data as {
          agentId: string;
        };
        expect((await app.call('GET', `/v1/numbers/${n.id}`, { key: acc.apiKey })).body.agentId).to.equal(last.agentId);
        expect(lists[last.agentId === a.id ? 0 : 1]).to.deep.equal([n.id]);
      }
    });

    it('under concurrent attaches of several numbers to one agent, lists them all in the order the attaches were recorded', async () => {
      const acc = await account(app, { creditMicros: 20_000_000 });
      const a = await agent(acc.apiKey);
      const ns = [];
      for (let i = 0; i < 5; i++) ns.push((await post(acc.apiKey, { areaCode: '415' })).body as { id: string });
      const rs = await Promise.all(
        ns.map((n) => app.call('POST', `/v1/agents/${a.id}/numbers`, { key: acc.apiKey, body: { numberId: n.id } })),
      );
      expect(rs.map((r) => r.status)).to.deep.equal([200, 200, 200, 200, 200]);
      const recorded = (await app.rt.store.readAll({ filter: { eventTypes: ['NumberAttached'] }, maxCount: 10_000 }))
        .filter((e) => (e.data as { agentId: string }).agentId === a.id)
        .map((e) => (e.data as { numberId: string }).numberId);
      const listed = (await app.call('GET', `/v1/agents/${a.id}`, { key: acc.apiKey })).body.numbers.map((n: { id: string }) => n.id);
      expect(listed).to.deep.equal(recorded);
      expect(new Set(listed)).to.have.property('size', 5);
    });

    it('refuses an unknown or foreign agent with 404, and a missing numberId with 422', async () => {
      const acc = await account(app);
      const other = await account(app);
      const n = (await post(acc.apiKey, { areaCode: '415' })).body;
      const foreign = await agent(other.apiKey);
      expect((await app.call('POST', `/v1/agents/${foreign.id}/numbers`, { key: acc.apiKey, body: { numberId: n.id } })).status).to.equal(
        404,
      );
      expect(
        (await app.call('POST', '/v1/agents/agt_nope/numbers', { key: acc.apiKey, body: { numberId: n.id } })).body.error.code,
      ).to.equal('AGENT_NOT_FOUND');
      expect((await app.call('DELETE', `/v1/agents/${foreign.id}/numbers/${n.id}`, { key: acc.apiKey })).status).to.equal(404);
      const a = await agent(acc.apiKey);
      const bad = await app.call('POST', `/v1/agents/${a.id}/numbers`, { key: acc.apiKey, body: {} });
      expect(bad.status).to.equal(422);
      expect(bad.body.detail[0].loc).to.deep.equal(['body', 'numberId']);
    });

    it('sets agentId to null on the numbers of a deleted agent (process manager), keeping the numbers', async () => {
      const acc = await account(app, { creditMicros: 10_000_000 });
      const a = await agent(acc.apiKey);
      const keep = await agent(acc.apiKey, 'Keep');
      const n1 = (await post(acc.apiKey, { areaCode: '480', agentId: a.id })).body;
      const n2 = (await post(acc.apiKey, { areaCode: '480', agentId: a.id })).body;
      const n3 = (await post(acc.apiKey, { areaCode: '480', agentId: keep.id })).body;
      expect((await app.call('DELETE', `/v1/agents/${a.id}`, { key: acc.apiKey })).status).to.equal(200);
      for (const n of [n1, n2]) {
        await eventually(
          async () => (await app.call('GET', `/v1/numbers/${n.id}`, { key: acc.apiKey })).body.agentId === null,
          `${n.id} detached`,
        );
        expect((await app.call('GET', `/v1/numbers/${n.id}`, { key: acc.apiKey })).body.status).to.equal('active');
        const last = (await app.rt.store.readStream(`phone_number-${n.id}`)).at(-1)!;
        expect(last.type).to.equal('NumberDetached');
        expect(last.data).to.include({ reason: 'agent_deleted' });
        expect(last.metadata.actor).to.equal('system:numbers');
      }
      expect((await app.call('GET', `/v1/numbers/${n3.id}`, { key: acc.apiKey })).body.agentId).to.equal(keep.id);
    });
  });

  describe('messages and calls of a number', () => {
    it('pages messages newest first with before/after and limit, and calls with offsets, from the read models', async () => {
      const acc = await account(app);
      const n = (await post(acc.apiKey, { areaCode: '415' })).body;
      const db = app.rt.database.db;
      const at = (i: number) => new Date(Date.UTC(2026, 2, 1, 0, i)).toISOString();
      await db
        .insertInto('messages')
        .values(
          Array.from({ length: 7 }, (_, i) => ({
            account_id: acc.accountId,
            message_id: `msg_${i}`,
            conversation_id: 'cnv_1',
            phone_number_id: n.id,
            agent_id: null,
            direction: i % 2 ? 'inbound' : 'outbound',
            channel: 'sms',
            from_number: '+14155550999',
            to_number: n.phoneNumber,
            body: `m${i}`,
            media_urls: '[]',
            status: 'delivered',
            failure_reason: null,
            reply_to_message_id: null,
            created_at: at(i),
            updated_at: at(i),
            revision: '0',
          })),
        )
        .execute();
      // another account's message on the same number id never shows
      await db
        .insertInto('messages')
        .values({
          account_id: 'acc_other',
          message_id: 'msg_x',
          conversation_id: null,
          phone_number_id: n.id,
          agent_id: null,
          direction: 'inbound',
          channel: 'sms',
          from_number: '+1',
          to_number: '+2',
          body: 'leak',
          media_urls: '[]',
          status: null,
          failure_reason: null,
          reply_to_message_id: null,
          created_at: at(30),
          updated_at: at(30),
          revision: '0',
        })
        .execute();
      const get = (q: string) => app.call('GET', `/v1/numbers/${n.id}/messages${q}`, { key: acc.apiKey });
      const all = await get('');
      expect(all.body.data.map((m: { body: string }) => m.body)).to.deep.equal(['m6', 'm5', 'm4', 'm3', 'm2', 'm1', 'm0']);
      expect(all.body.hasMore).to.equal(false);
      // the message record of a conversation, with the public list's names beside it (docs/compatibility.md)
      expect(all.body.data[0]).to.deep.equal({
        id: 'msg_6',
        from_: '+14155550999',
        from: '+14155550999',
        to: n.phoneNumber,
        fromNumber: '+14155550999',
        toNumber: n.phoneNumber,
        body: 'm6',
        direction: 'outbound',
        senderIdentifier: null,
        channel: 'sms',
        receivedAt: at(6),
        status: 'delivered',
        failureReason: null,
        errorCode: null,
        failureCategory: null,
        retryable: null,
        deliveredAt: null,
        readAt: null,
        conversationId: 'cnv_1',
        mediaUrl: null,
        mediaUrls: [],
        content: null,
        reactions: [],
        replyTo: null,
        encoding: null,
        segments: null,
      });
      const p1 = await get('?limit=3');
      expect(p1.body.data.map((m: { body: string }) => m.body)).to.deep.equal(['m6', 'm5', 'm4']);
      expect(p1.body.hasMore).to.equal(true);
      const p2 = await get(`?limit=3&before=${encodeURIComponent(p1.body.data.at(-1).receivedAt)}`);
      expect(p2.body.data.map((m: { body: string }) => m.body)).to.deep.equal(['m3', 'm2', 'm1']);
      expect(p2.body.hasMore).to.equal(true);
      const window = await get(`?after=${encodeURIComponent(at(1))}&before=${encodeURIComponent(at(5))}`);
      expect(window.body.data.map((m: { body: string }) => m.body)).to.deep.equal(['m4', 'm3', 'm2']);
      for (const q of ['?limit=0', '?limit=201', '?before=yesterday']) expect((await get(q)).status, q).to.equal(422);

      await db
        .insertInto('calls')
        .values(
          Array.from({ length: 3 }, (_, i) => ({
            account_id: acc.accountId,
            call_id: `call_${i}`,
            agent_id: null,
            phone_number_id: n.id,
            phone_number: n.phoneNumber,
            direction: 'inbound',
            from_number: '+14155550999',
            to_number: n.phoneNumber,
            status: 'completed',
            started_at: at(i),
            ended_at: at(i + 1),
            duration_seconds: 60,
            disconnection_reason: null,
            last_transcript_snippet: 'bye',
            recording_enabled: false,
            created_at: at(i),
            updated_at: at(i),
            revision: '0',
          })),
        )
        .execute();
      const calls = await app.call('GET', `/v1/numbers/${n.id}/calls?limit=2`, { key: acc.apiKey });
      expect(calls.body).to.include({ total: 3, hasMore: true });
      expect(calls.body.data.map((c: { id: string }) => c.id)).to.deep.equal(['call_2', 'call_1']);
      expect(calls.body.data[0]).to.include({
        phoneNumberId: n.id,
        fromNumber: '+14155550999',
        status: 'completed',
        durationSeconds: 60,
        endedAt: at(3),
      });
    });
  });

  describe('sandbox control API', () => {
    it('needs the admin token', async () => {
      expect((await app.call('GET', '/sandbox/faults')).status).to.equal(401);
      expect((await app.call('GET', '/sandbox/faults', { key: 'wrong-token-0123456789' })).status).to.equal(403);
      const acc = await account(app);
      expect((await app.call('POST', '/sandbox/faults', { key: acc.apiKey, body: { operation: 'carrier.search' } })).status).to.equal(403);
      expect((await app.call('GET', '/sandbox/faults', { key: ADMIN_TOKEN })).status).to.equal(200);
    });

    it("shows an area code's inventory and refuses unknown area codes", async () => {
      const inv = await app.call('GET', '/sandbox/carrier/inventory/415', { key: ADMIN_TOKEN });
      expect(inv.body).to.include({ areaCode: '415', country: 'US' });
      expect(inv.body.numbers).to.have.length(20);
      expect((await app.call('GET', '/sandbox/carrier/inventory/999', { key: ADMIN_TOKEN })).status).to.equal(422);
    });
  });

  it('an account with plenty of credit can top up to buy again (balance is read fresh)', async () => {
    const acc = await account(app);
    expect((await post(acc.apiKey, { areaCode: '415' })).status).to.equal(200);
    expect((await post(acc.apiKey, { areaCode: '415' })).status).to.equal(402);
    await credit(app, acc.accountId, 1_000_000);
    expect((await post(acc.apiKey, { areaCode: '415' })).status).to.equal(200);
  });
});
