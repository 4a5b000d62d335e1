import { expect } from 'chai';
import { ADMIN_TOKEN, startTestApp, type TestApp } from '../support/http.js';

describe('HTTP platform', () => {
  let app: TestApp;
  let acme: { accountId: string; apiKey: string };
  before(async () => {
    app = await startTestApp({ THROTTLE_MAX_REQUESTS: '1000' });
    acme = await app.newAccount('Acme');
  });
  after(() => app.close());

  describe('request ids', () => {
    it('echoes a sane X-Request-Id and puts it in error bodies', async () => {
      const r = await app.call('GET', '/v1/agents/agt_missing', { key: acme.apiKey, headers: { 'x-request-id': 'client-req-42' } });
      expect(r.headers.get('x-request-id')).to.equal('client-req-42');
      expect(r.body.request_id).to.equal('client-req-42');
    });
    it('generates one when absent or unusable', async () => {
      const r = await app.call('GET', '/healthz', { headers: { 'x-request-id': 'bad id with spaces' } });
      expect(r.headers.get('x-request-id')).to.match(/^req_[0-9a-f]{32}$/);
    });
  });

  describe('authentication', () => {
    it('answers 401 with the plain body when the key is missing', async () => {
      const r = await app.call('GET', '/v1/agents');
      expect(r.status).to.equal(401);
      expect(r.body).to.have.keys(['detail', 'request_id']);
      expect(r.body.detail).to.be.a('string');
    });
    it('answers 401 for an unknown key and for a malformed header', async () => {
      expect((await app.call('GET', '/v1/agents', { key: 'avp_not-a-real-key' })).status).to.equal(401);
      expect((await app.call('GET', '/v1/agents', { headers: { authorization: `Basic ${acme.apiKey}` } })).status).to.equal(401);
    });
    it('needs no key for health, readiness, metrics and the API description', async () => {
      for (const path of ['/healthz', '/readyz', '/metrics', '/openapi.json', '/docs/']) {
        expect((await app.call('GET', path)).status, path).to.equal(200);
      }
    });
    it('answers /docs itself (no redirect a plain curl would not follow), with assets that load from /docs/', async () => {
      const page = await fetch(`${app.url}/docs`, { redirect: 'manual' });
      expect(page.status).to.equal(200);
      const html = await page.text();
      expect(html).to.include('<base href="/docs/">');
      for (const asset of ['swagger-ui.css', 'swagger-ui-bundle.js', 'swagger-ui-init.js']) {
        expect(html).to.include(`./${asset}`);
        const r = await fetch(`${app.url}/docs/${asset}`, { redirect: 'manual' });
        expect(r.status, asset).to.equal(200);
        await r.arrayBuffer();
      }
      expect(await (await fetch(`${app.url}/docs/swagger-ui-init.js`)).text()).to.include('"openapi"');
    });
  });

  describe('sub-accounts', () => {
    it('scopes a request to a sub-account the key owns', async () => {
      const sub = await app.newAccount('Acme EU', acme.accountId);
      const made = await app.call('POST', '/v1/agents', {
        key: acme.apiKey,
        body: { name: 'EU agent' },
        headers: { 'x-sub-account-id': sub.accountId },
      });
      expect(made.status).to.equal(200);
      const inSub = await app.call('GET', '/v1/agents', { key: acme.apiKey, headers: { 'x-sub-account-id': sub.accountId } });
      expect(inSub.body.data.map((a: { id: string }) => a.id)).to.deep.equal([made.body.id]);
      const inMaster = await app.call('GET', `/v1/agents/${made.body.id}`, { key: acme.apiKey });
      expect(inMaster.status).to.equal(404);
      const history = await app.rt.store.readStream(`agent-${made.body.id}`);
      expect(history[0]!.metadata.accountId).to.equal(sub.accountId);
    });
    it("refuses with 403 (plain) a sub-account id the key's account does not own, existing or not", async () => {
      const other = await app.newAccount('Other');
      const othersSub = await app.newAccount('Other EU', other.accountId);
      for (const id of [othersSub.accountId, other.accountId, 'acc_does_not_exist']) {
        const r = await app.call('GET', '/v1/agents', { key: acme.apiKey, headers: { 'x-sub-account-id': id } });
        expect(r.status, id).to.equal(403);
        expect(r.body).to.have.keys(['detail', 'request_id']);
      }
    });
    it('does not let a sub-account key reach its parent through the header', async () => {
      const sub = await app.newAccount('Child', acme.accountId);
      const r = await app.call('GET', '/v1/agents', { key: sub.apiKey, headers: { 'x-sub-account-id': acme.accountId } });
      expect(r.status).to.equal(403);
    });
  });

  describe('errors', () => {
    it('answers an unknown endpoint with a 404 envelope', async () => {
      const r = await app.call('GET', '/v1/nothing-here', { key: acme.apiKey });
      expect(r.status).to.equal(404);
      expect(r.body.error).to.include({ code: 'NOT_FOUND', type: 'not_found' });
    });
  });

  describe('admin API', () => {
    it('refuses a wrong admin token with 403 and a missing one with 401', async () => {
      expect((await app.call('POST', '/admin/accounts', { key: 'wrong-token-wrong-token', body: { name: 'x' } })).status).to.equal(403);
      expect((await app.call('POST', '/admin/accounts', { body: { name: 'x' } })).status).to.equal(401);
    });
    it('credits an account in micro-dollars', async () => {
      const r = await app.call('POST', `/admin/accounts/${acme.accountId}/credit`, { key: ADMIN_TOKEN, body: { amountMicros: 2_500_000 } });
      expect(r.status).to.equal(200);
      expect(r.body).to.deep.equal({ accountId: acme.accountId, balanceMicros: 7_500_000 });
    });
    it("changes an account's number limit, visible in its usage", async () => {
      const r = await app.call('PATCH', `/admin/accounts/${acme.accountId}`, { key: ADMIN_TOKEN, body: { numberLimit: 25 } });
      expect(r.status).to.equal(200);
      expect(r.body).to.deep.equal({ accountId: acme.accountId, numberLimit: 25, numbersUsed: 0 });
      expect((await app.call('GET', '/v1/usage', { key: acme.apiKey })).body.numbers).to.deep.equal({ used: 0, limit: 25, remaining: 25 });
      expect(
        (await app.call('PATCH', `/admin/accounts/${acme.accountId}`, { key: ADMIN_TOKEN, body: { numberLimit: -1 } })).status,
      ).to.equal(422);
      expect((await app.call('PATCH', '/admin/accounts/acc_nope', { key: ADMIN_TOKEN, body: { numberLimit: 3 } })).status).to.equal(404);
    });

    it('refuses a fractional or negative credit with 422 and an unknown account with 404', async () => {
      expect(
        (await app.call('POST', `/admin/accounts/${acme.accountId}/credit`, { key: ADMIN_TOKEN, body: { amountMicros: 1.5 } })).status,
      ).to.equal(422);
      expect(
        (await app.call('POST', `/admin/accounts/${acme.accountId}/credit`, { key: ADMIN_TOKEN, body: { amountMicros: -5 } })).status,
      ).to.equal(422);
      expect((await app.call('POST', '/admin/accounts/acc_nope/credit', { key: ADMIN_TOKEN, body: { amountMicros: 5 } })).status).to.equal(
        404,
      );
    });
  });

  describe('API description', () => {
    it('publishes OpenAPI 3.1 generated from the route schemas', async () => {
      const doc = (await app.call('GET', '/openapi.json')).body;
      expect(doc.openapi).to.equal('3.1.0');
      expect(doc.paths).to.include.keys('/v1/agents', '/v1/agents/{agent_id}', '/v1/agents/voices');
      const create = doc.paths['/v1/agents'].post;
      expect(create.requestBody.content['application/json'].schema.$ref).to.equal('#/components/schemas/CreateAgentRequest');
      expect(doc.components.schemas.CreateAgentRequest.required).to.include('name');
      expect(Object.keys(create.responses)).to.include.members(['200', '401', '422']);
    });
    it('opens on the public API: its paths and tags come before the operator and sandbox ones', async () => {
      const doc = (await app.call('GET', '/openapi.json')).body;
      const operator = (item: Record<string, { tags?: string[] }>) =>
        Object.values(item).some((op) => (op.tags ?? []).some((t) => t === 'admin' || t === 'sandbox'));
      const kinds = Object.values(doc.paths as Record<string, Record<string, { tags?: string[] }>>).map(operator);
      expect(kinds[0], Object.keys(doc.paths)[0]).to.equal(false);
      expect(kinds.indexOf(true)).to.be.greaterThan(0);
      expect(kinds.slice(kinds.indexOf(true)).every(Boolean), 'no public path after the first operator path').to.equal(true);
      const tags = (doc.tags as { name: string }[]).map((t) => t.name);
      expect(tags.slice(-2).sort()).to.deep.equal(['admin', 'sandbox']);
      expect(tags).to.include('messages');
    });
    it('exposes Prometheus metrics including request durations', async () => {
      await app.call('GET', '/v1/agents', { key: acme.apiKey });
      const m = await app.call('GET', '/metrics');
      expect(m.body).to.contain('http_request_duration_seconds_bucket');
      expect(m.body).to.contain('route="/v1/agents"');
    });
  });
});

describe('HTTP platform limits', () => {
  it('throttles per key with 429, a plain body and Retry-After', async () => {
    const app = await startTestApp({ THROTTLE_MAX_REQUESTS: '3', THROTTLE_WINDOW_SECONDS: '60' });
    try {
      const { apiKey } = await app.newAccount('Busy');
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) statuses.push((await app.call('GET', '/v1/agents', { key: apiKey })).status);
      expect(statuses).to.deep.equal([200, 200, 200, 429]);
      const r = await app.call('GET', '/v1/agents', { key: apiKey });
      expect(r.headers.get('retry-after')).to.match(/^\d+$/);
      expect(Number(r.headers.get('retry-after'))).to.be.within(1, 60);
      expect(r.body.detail).to.match(/Too many requests\. Retry in \d+ seconds\./);
      const { apiKey: other } = await app.newAccount('Calm');
      expect((await app.call('GET', '/v1/agents', { key: other })).status).to.equal(200);
    } finally {
      await app.close();
    }
  });

  it('answers 503 with the envelope when the read model does not catch up in time, keeping the write', async () => {
    const app = await startTestApp({ READ_MODEL_TIMEOUT_MS: '300' });
    try {
      const { apiKey } = await app.newAccount('Lagging');
      await app.rt.engine.stop(); // no projector advances from here on
      const r = await app.call('POST', '/v1/agents', { key: apiKey, body: { name: 'Late' } });
      expect(r.status).to.equal(503);
      expect(r.body.error).to.include({ code: 'READ_MODEL_TIMEOUT', type: 'api_error' });
      expect(r.body.request_id).to.equal(r.headers.get('x-request-id'));
      const stored = await app.rt.store.readAll({ filter: { eventTypes: ['AgentCreated'] } });
      expect(stored.map((e) => (e.data as { config: { name: string } }).config.name)).to.include('Late');
    } finally {
      await app.close();
    }
  });
});

describe('admin API switched off', () => {
  it('refuses every request with 403 when ADMIN_TOKEN is not set', async () => {
    const app = await startTestApp({ ADMIN_TOKEN: '' });
    try {
      const r = await app.call('POST', '/admin/accounts', { key: ADMIN_TOKEN, body: { name: 'x' } });
      expect(r.status).to.equal(403);
      expect(r.body.detail).to.match(/set ADMIN_TOKEN/);
    } finally {
      await app.close();
    }
  });
});
