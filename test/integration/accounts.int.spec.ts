import { expect } from 'chai';
import { ADMIN_TOKEN, startTestApp, type TestApp } from '../support/http.js';
import { eventually, startReceiver } from '../support/webhook-receiver.js';

describe('accounts over HTTP: API keys, sub-accounts, usage, ledger', () => {
  let app: TestApp;
  let acme: { accountId: string; apiKey: string };
  before(async () => {
    app = await startTestApp();
    acme = await app.newAccount('Acme');
  });
  after(() => app.close());

  describe('API keys', () => {
    it('creates a key shown once, lists keys without secrets, and the new key works', async () => {
      const made = await app.call('POST', '/v1/api-keys', { key: acme.apiKey, body: { name: 'ci' } });
      expect(made.status).to.equal(201);
      expect(made.body.key).to.match(/^avp_[A-Za-z0-9_-]{43}$/);
      expect(made.body.key.startsWith(made.body.prefix)).to.equal(true);
      const list = await app.call('GET', '/v1/api-keys', { key: made.body.key });
      expect(list.status).to.equal(200);
      expect(list.body.data.map((k: { name: string }) => k.name)).to.include.members(['default', 'ci']);
      expect(JSON.stringify(list.body)).to.not.contain(made.body.key);
      const ci = list.body.data.find((k: { id: string }) => k.id === made.body.id);
      expect(ci.lastUsedAt).to.be.a('string');
    });

    it('refuses a revoked key at once with 401', async () => {
      const made = (await app.call('POST', '/v1/api-keys', { key: acme.apiKey, body: { name: 'temp' } })).body;
      expect((await app.call('GET', '/v1/agents', { key: made.key })).status).to.equal(200);
      const r = await app.call('DELETE', `/v1/api-keys/${made.id}`, { key: acme.apiKey });
      expect(r.status).to.equal(200);
      expect(r.body).to.include({ success: true, id: made.id });
      expect((await app.call('GET', '/v1/agents', { key: made.key })).status).to.equal(401);
      const list = (await app.call('GET', '/v1/api-keys', { key: acme.apiKey })).body.data;
      expect(list.find((k: { id: string }) => k.id === made.id).revokedAt).to.be.a('string');
    });

    it("answers 404 for another account's key", async () => {
      const other = await app.newAccount('Other');
      const theirs = (await app.call('GET', '/v1/api-keys', { key: other.apiKey })).body.data[0].id;
      expect((await app.call('DELETE', `/v1/api-keys/${theirs}`, { key: acme.apiKey })).status).to.equal(404);
      expect((await app.call('GET', '/v1/agents', { key: other.apiKey })).status).to.equal(200);
    });
  });

  describe('sub-accounts', () => {
    it('creates, lists, renames and closes a sub-account', async () => {
      const made = await app.call('POST', '/v1/sub-accounts', { key: acme.apiKey, body: { name: 'EU' } });
      expect(made.status).to.equal(200);
      expect(made.body).to.include({ name: 'EU', parentAccountId: acme.accountId, status: 'active' });
      const list = await app.call('GET', '/v1/sub-accounts', { key: acme.apiKey });
      expect(list.body.data.map((s: { id: string }) => s.id)).to.include(made.body.id);
      expect(list.body).to.include.keys('hasMore', 'total');
      const renamed = await app.call('PATCH', `/v1/sub-accounts/${made.body.id}`, { key: acme.apiKey, body: { name: 'Europe' } });
      expect(renamed.body.name).to.equal('Europe');
      const headers = { 'x-sub-account-id': made.body.id };
      expect((await app.call('POST', '/v1/agents', { key: acme.apiKey, headers, body: { name: 'In EU' } })).status).to.equal(200);
      const closed = await app.call('DELETE', `/v1/sub-accounts/${made.body.id}`, { key: acme.apiKey });
      expect(closed.body).to.deep.equal({ success: true, id: made.body.id });
      expect((await app.call('GET', '/v1/agents', { key: acme.apiKey, headers })).status).to.equal(403);
      expect((await app.call('GET', '/v1/sub-accounts', { key: acme.apiKey })).body.data.map((s: { id: string }) => s.id)).to.not.include(
        made.body.id,
      );
    });

    it("refuses the key of a closed sub-account with 401, and keeps its master's key working", async () => {
      const made = (await app.call('POST', '/v1/sub-accounts', { key: acme.apiKey, body: { name: 'Short-lived' } })).body;
      const headers = { 'x-sub-account-id': made.id };
      const own = (await app.call('POST', '/v1/api-keys', { key: acme.apiKey, headers, body: { name: 'its own' } })).body;
      const theirs = await app.call('GET', '/v1/agents', { key: own.key });
      expect(theirs.status).to.equal(200);
      expect((await app.call('DELETE', `/v1/sub-accounts/${made.id}`, { key: acme.apiKey })).status).to.equal(200);
      expect((await app.call('GET', '/v1/agents', { key: own.key })).status).to.equal(401);
      expect((await app.call('GET', '/v1/agents', { key: acme.apiKey })).status).to.equal(200);
    });

    it("answers 404 for another master's sub-account, and 403 to a sub-account that manages sub-accounts", async () => {
      const other = await app.newAccount('Rival');
      const theirs = (await app.call('POST', '/v1/sub-accounts', { key: other.apiKey, body: { name: 'Theirs' } })).body;
      expect((await app.call('PATCH', `/v1/sub-accounts/${theirs.id}`, { key: acme.apiKey, body: { name: 'Mine' } })).status).to.equal(404);
      expect((await app.call('DELETE', `/v1/sub-accounts/${theirs.id}`, { key: acme.apiKey })).status).to.equal(404);
      const mine = (await app.call('POST', '/v1/sub-accounts', { key: acme.apiKey, body: { name: 'Mine' } })).body;
      const r = await app.call('POST', '/v1/sub-accounts', {
        key: acme.apiKey,
        headers: { 'x-sub-account-id': mine.id },
        body: { name: 'Nested' },
      });
      expect(r.status).to.equal(403);
      expect(r.body).to.have.keys(['detail', 'request_id']);
    });

    it('validates names', async () => {
      expect((await app.call('POST', '/v1/sub-accounts', { key: acme.apiKey, body: { name: '' } })).status).to.equal(422);
      expect((await app.call('POST', '/v1/sub-accounts', { key: acme.apiKey, body: {} })).status).to.equal(422);
    });
  });

  describe('usage and balance', () => {
    it('reports plan, numbers, zeroed stats, the period and the balance in micro-dollars', async () => {
      const fresh = await app.newAccount('Usage');
      const r = await app.call('GET', '/v1/usage', { key: fresh.apiKey });
      expect(r.status).to.equal(200);
      expect(r.body.numbers).to.deep.equal({ used: 0, limit: 10, remaining: 10 });
      expect(r.body.plan.limits.numbers).to.equal(10);
      expect(r.body.stats.totalMessages).to.equal(0);
      expect(r.body.balance).to.deep.equal({ micros: 5_000_000, dollars: 5, accountId: fresh.accountId });
      expect(Date.parse(r.body.periodEnd)).to.be.greaterThan(Date.parse(r.body.periodStart));
    });

    it("publishes the call limits that are enforced: the default live-call cap, a sub-account's own cap, the call length", async () => {
      const fresh = await app.newAccount('Caps');
      const own = await app.call('GET', '/v1/usage', { key: fresh.apiKey });
      expect(own.body.plan.limits).to.include({ concurrentCalls: 10, maxCallDurationMinutes: 60 });
      const sub = (await app.call('POST', '/v1/sub-accounts', { key: fresh.apiKey, body: { name: 'Capped child' } })).body;
      const put = await app.call('PUT', `/v1/sub-accounts/${sub.id}/call-limit`, { key: fresh.apiKey, body: { maxConcurrentCalls: 3 } });
      expect(put.body.maxConcurrentCalls).to.equal(3);
      const child = await app.call('GET', '/v1/usage', { key: fresh.apiKey, headers: { 'x-sub-account-id': sub.id } });
      expect(child.body.plan.limits.concurrentCalls).to.equal(3);
    });

    it("shows a sub-account its parent's balance and number limit (one bill per customer)", async () => {
      const sub = (await app.call('POST', '/v1/sub-accounts', { key: acme.apiKey, body: { name: 'Billing child' } })).body;
      const r = await app.call('GET', '/v1/usage', { key: acme.apiKey, headers: { 'x-sub-account-id': sub.id } });
      expect(r.body.balance.accountId).to.equal(acme.accountId);
    });

    it('counts webhook deliveries in the usage stats (analytics projection), but not test sends', async () => {
      const fresh = await app.newAccount('Counted');
      const receiver = await startReceiver();
      try {
        expect(
          (await app.call('POST', '/v1/webhooks', { key: fresh.apiKey, body: { url: `${receiver.url}/hook`, events: ['agent.created'] } }))
            .status,
        ).to.equal(200);
        await app.call('POST', '/v1/webhooks/test', { key: fresh.apiKey });
        await app.call('POST', '/v1/agents', { key: fresh.apiKey, body: { name: 'Announced' } }); // agent.created is delivered (the webhook lists it)
        const stats = await eventually(
          async () => {
            const r = await app.call('GET', '/v1/usage', { key: fresh.apiKey });
            // a delivery counts from when it is scheduled, with its latest outcome (docs/analytics.md#the-counting-rule)
            return r.body.stats.successfulWebhookDeliveries >= 1 ? r.body.stats : undefined;
          },
          10_000,
          'the delivery to be counted as delivered',
        );
        expect(stats).to.include({ totalWebhookDeliveries: 1, successfulWebhookDeliveries: 1, failedWebhookDeliveries: 0 });
      } finally {
        await receiver.close();
      }
    });

    it('lists the ledger: starting credit and top-ups with the balance after each', async () => {
      const fresh = await app.newAccount('Ledger');
      await app.call('POST', `/admin/accounts/${fresh.accountId}/credit`, {
        key: ADMIN_TOKEN,
        body: { amountMicros: 1_250_000, reason: 'wire transfer' },
      });
      const r = await app.call('GET', '/v1/billing/ledger', { key: fresh.apiKey });
      expect(
        r.body.data.map((e: { amountMicros: number; balanceMicros: number; description: string }) => [
          e.amountMicros,
          e.balanceMicros,
          e.description,
        ]),
      ).to.deep.equal([
        [1_250_000, 6_250_000, 'wire transfer'],
        [5_000_000, 5_000_000, 'starting credit'],
      ]);
    });
  });
});
