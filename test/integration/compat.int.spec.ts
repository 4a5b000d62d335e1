import { expect } from 'chai';
import { startTestApp, type TestApp } from '../support/http.js';
import { account, sandbox, usage } from '../support/numbers.js';
import { type Receiver, startReceiver } from '../support/webhook-receiver.js';

/** The public API's existing clients, run unchanged: the names they read and send (docs/compatibility.md). */
describe('client compatibility over HTTP', function () {
  this.timeout(30_000);
  let app: TestApp;
  let rx: Receiver;
  before(async () => {
    app = await startTestApp();
    rx = await startReceiver();
  });
  after(async () => {
    await rx.close();
    await app.close();
  });

  const agent = async (key: string, name = 'Compat agent') =>
    (await app.call('POST', '/v1/agents', { key, body: { name } })).body as { id: string };

  describe('webhook answers under the names older clients read', () => {
    it('answers both name sets, with the same values, from both test endpoints', async () => {
      const { apiKey } = await account(app);
      const a = await agent(apiKey);
      await app.call('POST', '/v1/webhooks', { key: apiKey, body: { url: rx.url } });
      await app.call('POST', `/v1/agents/${a.id}/webhook`, { key: apiKey, body: { url: 'http://127.0.0.1:1/hook' } });
      const ok = await app.call('POST', '/v1/webhooks/test', { key: apiKey });
      expect(ok.status).to.equal(200);
      expect(ok.body).to.include({ success: true, httpStatus: 200, errorMessage: null, statusCode: 200, error: null });
      expect(ok.body.responseMs).to.be.a('number').and.equal(ok.body.responseTimeMs);
      const failed = await app.call('POST', `/v1/agents/${a.id}/webhook/test`, { key: apiKey });
      expect(failed.status).to.equal(200);
      expect(failed.body).to.include({ success: false, httpStatus: null, statusCode: null });
      expect(failed.body.error).to.be.a('string').and.equal(failed.body.errorMessage);
      expect(failed.body.responseMs).to.equal(failed.body.responseTimeMs);
    });

    it('lists deliveries as `items` and `data`, each item with id, event, success, statusCode, responseMs, deliveredAt; the per-agent list stays an array', async () => {
      const { apiKey } = await account(app);
      const a = await agent(apiKey);
      await app.call('POST', '/v1/webhooks', { key: apiKey, body: { url: rx.url } });
      await app.call('POST', `/v1/agents/${a.id}/webhook`, { key: apiKey, body: { url: `${rx.url}?own` } });
      const sent = (await app.call('POST', '/v1/webhooks/test', { key: apiKey })).body;
      const own = (await app.call('POST', `/v1/agents/${a.id}/webhook/test`, { key: apiKey })).body;

      const list = await app.call('GET', '/v1/webhooks/deliveries', { key: apiKey });
      expect(list.status).to.equal(200);
      expect(list.body).to.include({ total: 2, offset: 0, limit: 50 });
      expect(list.body.data).to.deep.equal(list.body.items);
      const item = list.body.items.find((d: { id: string }) => d.id === sent.deliveryId);
      expect(item).to.include({
        id: sent.deliveryId,
        eventType: 'agent.message',
        event: 'agent.message',
        status: 'success',
        success: true,
        httpStatus: 200,
        statusCode: 200,
      });
      expect(item.responseMs).to.equal(item.attempts[0].responseTimeMs);
      expect(item.deliveredAt).to.equal(item.attempts[0].attemptedAt);

      const perAgent = await app.call('GET', `/v1/agents/${a.id}/webhook/deliveries`, { key: apiKey });
      expect(perAgent.body).to.be.an('array').with.length(1);
      expect(perAgent.body[0]).to.include({ id: own.deliveryId, event: 'agent.message', success: true, statusCode: 200 });
      expect(perAgent.body[0]).to.include.keys('responseMs', 'deliveredAt');
    });

    it('reports a failed delivery as not delivered', async () => {
      const { apiKey } = await account(app);
      await app.call('POST', '/v1/webhooks', { key: apiKey, body: { url: 'http://127.0.0.1:1/hook' } });
      await app.call('POST', '/v1/webhooks/test', { key: apiKey });
      const [item] = (await app.call('GET', '/v1/webhooks/deliveries', { key: apiKey })).body.data;
      expect(item).to.include({ status: 'failed', success: false, statusCode: null, deliveredAt: null });
    });
  });

  describe('snake_case names earlier SDK versions send', () => {
    it('attaches a number sent as number_id', async () => {
      const acc = await account(app);
      const a = await agent(acc.apiKey);
      const n = (await app.call('POST', '/v1/numbers', { key: acc.apiKey, body: { areaCode: '415' } })).body;
      const r = await app.call('POST', `/v1/agents/${a.id}/numbers`, { key: acc.apiKey, body: { number_id: n.id } });
      expect(r.status).to.equal(200);
      expect(r.body.agentId).to.equal(a.id);
      expect(r.body.number.id).to.equal(n.id);
      // both names with the same value are one name
      expect(
        (await app.call('POST', `/v1/agents/${a.id}/numbers`, { key: acc.apiKey, body: { numberId: n.id, number_id: n.id } })).status,
      ).to.equal(200);
    });

    it('provisions the area code and attaches the agent sent as area_code and agent_id', async () => {
      const acc = await account(app);
      const a = await agent(acc.apiKey);
      const r = await app.call('POST', '/v1/numbers', { key: acc.apiKey, body: { area_code: '212', agent_id: a.id } });
      expect(r.status).to.equal(200);
      expect(r.body).to.include({ areaCode: '212', agentId: a.id });
      expect(r.body.phoneNumber).to.match(/^\+1212/);
    });

    it('answers 422 naming the alias when both names are given with different values, and buys nothing', async () => {
      const acc = await account(app);
      const a = await agent(acc.apiKey);
      const r = await app.call('POST', '/v1/numbers', { key: acc.apiKey, body: { areaCode: '415', area_code: '212' } });
      expect(r.status).to.equal(422);
      expect(r.body.detail.map((d: { loc: unknown[] }) => d.loc)).to.deep.equal([['body', 'area_code']]);
      expect(r.body.error.details[0].field).to.equal('area_code');
      expect(r.body.error.message).to.match(/^body\.area_code: .*areaCode.*\(got "212"\)\. Fix the field and retry\.$/);
      const attach = await app.call('POST', `/v1/agents/${a.id}/numbers`, {
        key: acc.apiKey,
        body: { numberId: 'pn_a', number_id: 'pn_b' },
      });
      expect(attach.status).to.equal(422);
      expect(attach.body.detail[0].loc).to.deep.equal(['body', 'number_id']);
      expect(await usage(app, acc.apiKey)).to.include({ used: 0, balanceMicros: 5_000_000 });
    });

    it('places calls and web calls sent with agent_id, to_number and from_number_id', async () => {
      const acc = await account(app);
      const a = await agent(acc.apiKey);
      const n = await app.call('POST', '/v1/numbers', { key: acc.apiKey, body: { agentId: a.id } });
      expect(n.status, JSON.stringify(n.body)).to.equal(200);
      const call = await app.call('POST', '/v1/calls', {
        key: acc.apiKey,
        body: { agent_id: a.id, to_number: '+16465550160', from_number_id: n.body.id },
      });
      expect(call.status, JSON.stringify(call.body)).to.equal(200);
      expect(call.body).to.include({ agentId: a.id, toNumber: '+16465550160', phoneNumberId: n.body.id });
      await app.call('POST', `/v1/calls/${call.body.id}/end`, { key: acc.apiKey });
      const web = await app.call('POST', '/v1/calls/web', { key: acc.apiKey, body: { agent_id: a.id } });
      expect(web.status, JSON.stringify(web.body)).to.equal(200);
      expect(web.body.accessToken).to.match(/^wct_/);
      const disagree = await app.call('POST', '/v1/calls', {
        key: acc.apiKey,
        body: { agentId: a.id, agent_id: 'agt_other', toNumber: '+16465550160' },
      });
      expect(disagree.status).to.equal(422);
      expect(disagree.body.detail[0].loc).to.deep.equal(['body', 'agent_id']);
    });
  });

  describe('paid requests reject what they do not know', () => {
    it('answers 422 extra_forbidden naming an unknown body field of POST /v1/numbers, and buys nothing', async () => {
      const acc = await account(app);
      const purchases = (await sandbox(app).purchases()).length;
      const r = await app.call('POST', '/v1/numbers', { key: acc.apiKey, body: { areaCode: '415', areacode: '212', smsOnly: true } });
      expect(r.status).to.equal(422);
      expect(r.body.error.code).to.equal('VALIDATION_ERROR');
      expect(r.body.detail).to.deep.include({ loc: ['body', 'areacode'], msg: r.body.detail[0].msg, type: 'extra_forbidden' });
      expect(r.body.detail.map((d: { loc: unknown[]; type: string }) => [d.loc, d.type])).to.deep.equal([
        [['body', 'areacode'], 'extra_forbidden'],
        [['body', 'smsOnly'], 'extra_forbidden'],
      ]);
      expect(r.body.error.message).to.contain('body.areacode').and.contain('body.smsOnly');
      expect(await usage(app, acc.apiKey)).to.include({ used: 0, balanceMicros: 5_000_000 });
      expect((await sandbox(app).purchases()).length).to.equal(purchases);
      const query = await app.call('POST', '/v1/numbers?areaCode=212', { key: acc.apiKey, body: { areaCode: '415' } });
      expect(query.status).to.equal(422);
      expect(query.body.detail[0]).to.include({ type: 'extra_forbidden' });
      expect(query.body.detail[0].loc).to.deep.equal(['query', 'areaCode']);
    });

    it('answers 422 extra_forbidden for an unknown lookup query parameter, charging nothing', async () => {
      const acc = await account(app);
      const r = await app.call('GET', '/v1/numbers/lookup?phoneNumbers=%2B14155550100&fresh=true', { key: acc.apiKey });
      expect(r.status).to.equal(422);
      expect(r.body.detail).to.deep.equal([{ loc: ['query', 'fresh'], msg: r.body.detail[0].msg, type: 'extra_forbidden' }]);
      expect(r.body.error.message).to.equal(`query.fresh: ${r.body.detail[0].msg} (got "true"). Remove or rename the field and retry.`);
      expect((await usage(app, acc.apiKey)).balanceMicros).to.equal(5_000_000);
    });

    it('keeps free requests lenient: unknown fields are ignored', async () => {
      const acc = await account(app);
      const r = await app.call('POST', '/v1/agents', { key: acc.apiKey, body: { name: 'Lenient', favouriteColour: 'teal' } });
      expect(r.status).to.equal(200);
      expect((await app.call('GET', '/v1/numbers?limit=5&sort=desc', { key: acc.apiKey })).status).to.equal(200);
    });
  });

  describe('error messages clients print', () => {
    it('makes a 422 error.message one sentence naming the field, what was sent and the fix, keeping both shapes', async () => {
      const acc = await account(app);
      const r = await app.call('POST', '/v1/numbers', { key: acc.apiKey, body: { areaCode: '12' } });
      expect(r.status).to.equal(422);
      expect(r.body).to.have.keys(['error', 'detail', 'request_id']);
      expect(r.body.error.message).to.equal('body.areaCode: must be a three-digit area code (got "12"). Fix the field and retry.');
      expect(r.body.detail).to.deep.equal([
        { loc: ['body', 'areaCode'], msg: 'must be a three-digit area code', type: 'string_pattern_mismatch' },
      ]);
      expect(r.body.error.details).to.deep.equal([
        { field: 'areaCode', message: 'must be a three-digit area code', type: 'string_pattern_mismatch' },
      ]);
    });

    it('words zod failures as the fix: required fields, bounds, types', async () => {
      const acc = await account(app);
      const a = await agent(acc.apiKey);
      const missing = await app.call('POST', `/v1/agents/${a.id}/numbers`, { key: acc.apiKey, body: {} });
      expect(missing.body.error.message).to.equal('body.numberId: is required. Add the field and retry.');
      expect(missing.body.detail[0]).to.include({ msg: 'is required', type: 'missing' });
      const big = await app.call('GET', '/v1/webhooks/deliveries?limit=500', { key: acc.apiKey });
      expect(big.body.error.message).to.equal('query.limit: must be at most 100 (got 500). Fix the field and retry.');
      const two = await app.call('POST', '/v1/webhooks', { key: acc.apiKey, body: { url: rx.url, contextLimit: 'ten', timeout: 1 } });
      expect(two.status).to.equal(422);
      expect(two.body.error.message).to.equal(
        '2 fields are not valid: body.contextLimit: must be a number (got "ten"); body.timeout: must be at least 5 (got 1). Fix these fields and retry.',
      );
    });

    it('ends every other error message with what to do', async () => {
      const acc = await account(app);
      const notFound = await app.call('GET', '/v1/numbers/pn_nope', { key: acc.apiKey });
      expect(notFound.status).to.equal(404);
      expect(notFound.body.error.message).to.equal(
        'Phone number not found. Check the number id: GET /v1/numbers lists the numbers of this account.',
      );
      const noKey = await app.call('GET', '/v1/numbers');
      expect(noKey.status).to.equal(401);
      expect(noKey.body).to.have.keys(['detail', 'request_id']);
      expect(noKey.body.detail).to.match(/^Missing API key\. Send the header Authorization: Bearer <API_KEY>/);
      const json = await app.call('POST', '/v1/agents', { key: acc.apiKey, body: '{"name":' });
      expect(json.status).to.equal(422);
      expect(json.body.error.message).to.match(/not valid JSON.*retry\.$/);
    });
  });
});
