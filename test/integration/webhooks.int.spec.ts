import { createHmac } from 'node:crypto';
import { expect } from 'chai';
import { PLATFORM } from '../../infrastructure/platform/tokens.js';
import { rebuildProjector } from '../../projections/shared/rebuild.js';
import { webhookDeliveriesProjector } from '../../projections/webhooks/webhook-deliveries.projector.js';
import { webhooksProjector } from '../../projections/webhooks/webhooks.projector.js';
import { startTestApp, type TestApp } from '../support/http.js';
import { eventually, type Receiver, startReceiver } from '../support/webhook-receiver.js';

/** The receiver's check, from the documented facts only (docs/webhooks.md#verifying-signatures; no project code). */
function verifiedByCompatNotes(
  secret: string,
  headers: Record<string, string | string[] | undefined>,
  rawBody: Buffer,
  nowS = Date.now() / 1000,
): boolean {
  const ts = headers['x-webhook-timestamp'];
  const sig = headers['x-webhook-signature'];
  if (typeof ts !== 'string' || typeof sig !== 'string' || !/^\d+$/.test(ts)) return false;
  if (Math.abs(nowS - Number(ts)) > 300) return false;
  const expected =
    'sha256=' +
    createHmac('sha256', Buffer.from(secret, 'utf8'))
      .update(Buffer.concat([Buffer.from(`${ts}.`), rawBody]))
      .digest('hex');
  return sig === expected;
}

describe('webhooks over HTTP: configuration, test sends, delivery log', () => {
  let app: TestApp;
  let key: string;
  let otherKey: string;
  let rx: Receiver;
  before(async () => {
    app = await startTestApp();
    key = (await app.newAccount('Acme')).apiKey;
    otherKey = (await app.newAccount('Globex')).apiKey;
    rx = await startReceiver();
  });
  after(async () => {
    await rx.close();
    await app.close();
  });

  const agent = async (name: string, k = key) => (await app.call('POST', '/v1/agents', { key: k, body: { name } })).body as { id: string };

  describe('master webhook', () => {
    it('is null before one is configured', async () => {
      const { apiKey } = await app.newAccount('Empty');
      const r = await app.call('GET', '/v1/webhooks', { key: apiKey });
      expect(r.status).to.equal(200);
      expect(r.body).to.equal(null);
    });

    it('creates with the defaults, then updates in place with a new secret each time', async () => {
      const { apiKey } = await app.newAccount('Crud');
      const c = await app.call('POST', '/v1/webhooks', { key: apiKey, body: { url: rx.url } });
      expect(c.status).to.equal(200);
      expect(c.body).to.include({ url: rx.url, status: 'active', contextLimit: 10, timeout: 30, agentId: null });
      expect(c.body.id).to.match(/^whk_/);
      expect(c.body.secret).to.match(/^whsec_/);
      expect(Object.keys(c.body)).to.include.members(['id', 'url', 'secret', 'status', 'contextLimit', 'timeout', 'createdAt']);
      const u = await app.call('POST', '/v1/webhooks', { key: apiKey, body: { url: `${rx.url}?v=2`, contextLimit: 0, timeout: 120 } });
      expect(u.body).to.include({ id: c.body.id, url: `${rx.url}?v=2`, contextLimit: 0, timeout: 120, createdAt: c.body.createdAt });
      expect(u.body.secret).to.not.equal(c.body.secret);
      const n = await app.call('POST', '/v1/webhooks', { key: apiKey, body: { url: rx.url, contextLimit: null, timeout: null } });
      expect(n.body).to.include({ contextLimit: 10, timeout: 30 });
      expect((await app.call('GET', '/v1/webhooks', { key: apiKey })).body).to.deep.equal(n.body);
    });

    it('deletes it; a second delete is 404; a new one gets a new id', async () => {
      const { apiKey } = await app.newAccount('Deleter');
      const c = await app.call('POST', '/v1/webhooks', { key: apiKey, body: { url: rx.url } });
      const d = await app.call('DELETE', '/v1/webhooks', { key: apiKey });
      expect(d.status).to.equal(200);
      expect(d.body).to.deep.equal({ success: true, id: c.body.id });
      expect((await app.call('GET', '/v1/webhooks', { key: apiKey })).body).to.equal(null);
      const again = await app.call('DELETE', '/v1/webhooks', { key: apiKey });
      expect(again.status).to.equal(404);
      expect(again.body.error.code).to.equal('WEBHOOK_NOT_FOUND');
      const fresh = await app.call('POST', '/v1/webhooks', { key: apiKey, body: { url: rx.url } });
      expect(fresh.body.id).to.not.equal(c.body.id);
    });

    it('is per account: scoped by X-Sub-Account-Id too', async () => {
      const parent = await app.newAccount('Parent');
      const child = await app.newAccount('Child', parent.accountId);
      await app.call('POST', '/v1/webhooks', { key: parent.apiKey, body: { url: `${rx.url}?parent` } });
      const r = await app.call('POST', '/v1/webhooks', {
        key: parent.apiKey,
        headers: { 'x-sub-account-id': child.accountId },
        body: { url: `${rx.url}?child` },
      });
      expect(r.status).to.equal(200);
      expect((await app.call('GET', '/v1/webhooks', { key: parent.apiKey })).body.url).to.equal(`${rx.url}?parent`);
      expect((await app.call('GET', '/v1/webhooks', { key: child.apiKey })).body.url).to.equal(`${rx.url}?child`);
    });
  });

  describe('validation', () => {
    const cases: [string, unknown, string][] = [
      ['a missing url', {}, 'url'],
      ['a url that is not http(s)', { url: 'ftp://example.com/x' }, 'url'],
      ['a url that is not a URL', { url: 'not a url' }, 'url'],
      ['contextLimit above 50', { url: 'https://example.com/h', contextLimit: 51 }, 'contextLimit'],
      ['contextLimit below 0', { url: 'https://example.com/h', contextLimit: -1 }, 'contextLimit'],
      ['a fractional contextLimit', { url: 'https://example.com/h', contextLimit: 1.5 }, 'contextLimit'],
      ['timeout below 5', { url: 'https://example.com/h', timeout: 4 }, 'timeout'],
      ['timeout above 120', { url: 'https://example.com/h', timeout: 121 }, 'timeout'],
      ['a timeout that is a string', { url: 'https://example.com/h', timeout: '30' }, 'timeout'],
    ];
    for (const [what, body, field] of cases) {
      it(`answers 422 for ${what}, on the master and the agent webhook`, async () => {
        const a = await agent('Validated');
        for (const path of ['/v1/webhooks', `/v1/agents/${a.id}/webhook`]) {
          const r = await app.call('POST', path, { key, body });
          expect(r.status, path).to.equal(422);
          expect(r.body.error.code).to.equal('VALIDATION_ERROR');
          expect(r.body.detail.map((d: { loc: string[] }) => d.loc.slice(1).join('.'))).to.include(field);
        }
      });
    }
    for (const q of ['limit=0', 'limit=101', 'offset=-1', 'hours=0', 'hours=169', 'hours=abc']) {
      it(`answers 422 for deliveries?${q}`, async () => {
        const r = await app.call('GET', `/v1/webhooks/deliveries?${q}`, { key });
        expect(r.status).to.equal(422);
        expect(r.body.detail[0].loc[0]).to.equal('query');
      });
    }
    for (const q of ['hours=0', 'hours=169']) {
      it(`answers 422 for deliveries/stats?${q}`, async () => {
        expect((await app.call('GET', `/v1/webhooks/deliveries/stats?${q}`, { key })).status).to.equal(422);
      });
    }
  });

  describe('agent webhook', () => {
    it('is configured per agent, replaces the master for that agent, and is removed again', async () => {
      const a = await agent('Own hook');
      expect((await app.call('GET', `/v1/agents/${a.id}/webhook`, { key })).body).to.equal(null);
      const c = await app.call('POST', `/v1/agents/${a.id}/webhook`, { key, body: { url: `${rx.url}?agent`, timeout: 10 } });
      expect(c.status).to.equal(200);
      expect(c.body).to.include({ agentId: a.id, url: `${rx.url}?agent`, timeout: 10, status: 'active' });
      expect((await app.call('GET', `/v1/agents/${a.id}/webhook`, { key })).body).to.deep.equal(c.body);
      const d = await app.call('DELETE', `/v1/agents/${a.id}/webhook`, { key });
      expect(d.body).to.deep.equal({ success: true, id: c.body.id });
      expect((await app.call('GET', `/v1/agents/${a.id}/webhook`, { key })).body).to.equal(null);
    });

    it('answers 404 AGENT_NOT_FOUND for an unknown agent', async () => {
      for (const [method, path] of [
        ['GET', '/webhook'],
        ['POST', '/webhook'],
        ['DELETE', '/webhook'],
        ['GET', '/webhook/deliveries'],
        ['POST', '/webhook/test'],
      ] as const) {
        const r = await app.call(method, `/v1/agents/agt_missing${path}`, {
          key,
          ...(method === 'POST' && path === '/webhook' ? { body: { url: rx.url } } : {}),
        });
        expect(r.status, `${method} ${path}`).to.equal(404);
        expect(r.body.error.code).to.equal('AGENT_NOT_FOUND');
      }
    });

    it("answers 404 for another account's agent on every operation, and changes nothing", async () => {
      const a = await agent('Private');
      await app.call('POST', `/v1/agents/${a.id}/webhook`, { key, body: { url: rx.url } });
      for (const [method, path] of [
        ['GET', '/webhook'],
        ['POST', '/webhook'],
        ['DELETE', '/webhook'],
        ['GET', '/webhook/deliveries'],
        ['POST', '/webhook/test'],
      ] as const) {
        const r = await app.call(method, `/v1/agents/${a.id}${path}`, {
          key: otherKey,
          ...(method === 'POST' && path === '/webhook' ? { body: { url: 'https://evil.example.com/' } } : {}),
        });
        expect(r.status, `${method} ${path}`).to.equal(404);
      }
      expect((await app.call('GET', `/v1/agents/${a.id}/webhook`, { key })).body.url).to.equal(rx.url);
    });

    it('of a deleted agent is gone with it', async () => {
      const a = await agent('Doomed');
      await app.call('POST', `/v1/agents/${a.id}/webhook`, { key, body: { url: rx.url } });
      await app.call('DELETE', `/v1/agents/${a.id}`, { key });
      expect((await app.call('GET', `/v1/agents/${a.id}/webhook`, { key })).status).to.equal(404);
    });
  });

  describe('test sends', () => {
    it('signs a fake agent.message so that a receiver using only the documented facts accepts it, and logs it', async () => {
      const { apiKey } = await app.newAccount('Tester');
      const a = await agent('Shown', apiKey);
      const hook = (await app.call('POST', '/v1/webhooks', { key: apiKey, body: { url: rx.url } })).body;
      const before = rx.received.length;
      const r = await app.call('POST', `/v1/webhooks/test?agentId=${a.id}`, { key: apiKey });
      expect(r.status).to.equal(200);
      expect(r.body).to.include({ success: true, httpStatus: 200, errorMessage: null });
      expect(r.body.responseTimeMs).to.be.a('number');
      const got = rx.received[before]!;
      expect(
        verifiedByCompatNotes(
          hook.secret,
          got.headers as never,
          got.rawBody,
          app.rt.get<{ now(): Date }>(Symbol.for('ClockPort')).now().getTime() / 1000,
        ),
      ).to.equal(true);
      expect(got.headers['x-webhook-id']).to.equal(r.body.deliveryId);
      expect(got.headers['x-webhook-timestamp']).to.match(/^\d+$/);
      expect(got.headers['content-type']).to.equal('application/json');
      const payload = JSON.parse(got.body);
      expect(Object.keys(payload)).to.deep.equal([
        'event',
        'channel',
        'timestamp',
        'agentId',
        'data',
        'conversationState',
        'recentHistory',
      ]);
      expect(payload).to.include({ event: 'agent.message', channel: 'sms', agentId: a.id, conversationState: null });
      expect(payload.data).to.include.keys('conversationId', 'numberId', 'from', 'to', 'message', 'direction', 'receivedAt');
      expect(payload.recentHistory).to.deep.equal([]);
      const log = await app.call('GET', '/v1/webhooks/deliveries', { key: apiKey });
      expect(log.body).to.include({ total: 1, offset: 0, limit: 50 });
      expect(log.body.items[0]).to.include({
        id: r.body.deliveryId,
        eventType: 'agent.message',
        channel: 'sms',
        status: 'success',
        httpStatus: 200,
        attemptCount: 1,
        nextRetryAt: null,
      });
    });

    it("uses the account's first agent when no agentId is given, and null without agents", async () => {
      const { apiKey } = await app.newAccount('No agents');
      await app.call('POST', '/v1/webhooks', { key: apiKey, body: { url: rx.url } });
      const before = rx.received.length;
      await app.call('POST', '/v1/webhooks/test', { key: apiKey });
      expect(JSON.parse(rx.received[before]!.body).agentId).to.equal(null);
      const a = await agent('First', apiKey);
      await agent('Second', apiKey);
      await app.call('POST', '/v1/webhooks/test', { key: apiKey });
      expect(JSON.parse(rx.received[before + 1]!.body).agentId).to.equal(a.id);
    });

    it('reports a failing endpoint without retrying it', async () => {
      const bad = await startReceiver(() => ({ status: 503, body: 'down for maintenance' }));
      try {
        const { apiKey } = await app.newAccount('Failing test');
        await app.call('POST', '/v1/webhooks', { key: apiKey, body: { url: bad.url } });
        const r = await app.call('POST', '/v1/webhooks/test', { key: apiKey });
        expect(r.body).to.include({ success: false, httpStatus: 503 });
        expect(r.body.errorMessage).to.match(/503/);
        const item = (await app.call('GET', '/v1/webhooks/deliveries', { key: apiKey })).body.items[0];
        expect(item).to.include({
          status: 'failed',
          httpStatus: 503,
          responseBody: 'down for maintenance',
          attemptCount: 1,
          nextRetryAt: null,
        });
        expect(item.attempts).to.have.length(1);
        expect(item.attempts[0]).to.include({ attempt: 1, status: 'failed', httpStatus: 503, nextRetryAt: null });
      } finally {
        await bad.close();
      }
    });

    it('reports a refused connection', async () => {
      const { apiKey } = await app.newAccount('Nobody home');
      await app.call('POST', '/v1/webhooks', { key: apiKey, body: { url: 'http://127.0.0.1:1/hook' } });
      const r = await app.call('POST', '/v1/webhooks/test', { key: apiKey });
      expect(r.body).to.include({ success: false, httpStatus: null });
      expect(r.body.errorMessage).to.match(/ECONNREFUSED/);
    });

    it("sends the agent test to the agent's own webhook; 404 when it has none", async () => {
      const a = await agent('Agent tester');
      expect((await app.call('POST', `/v1/agents/${a.id}/webhook/test`, { key })).body.error.code).to.equal('WEBHOOK_NOT_FOUND');
      await app.call('POST', `/v1/agents/${a.id}/webhook`, { key, body: { url: `${rx.url}?own` } });
      const before = rx.received.length;
      const r = await app.call('POST', `/v1/agents/${a.id}/webhook/test`, { key });
      expect(r.body.success).to.equal(true);
      expect(rx.received[before]!.path).to.equal('/hook?own');
      const list = await app.call('GET', `/v1/agents/${a.id}/webhook/deliveries`, { key });
      expect(list.status).to.equal(200);
      expect(list.body.map((d: { id: string }) => d.id)).to.deep.equal([r.body.deliveryId]);
    });

    it('answers 404 WEBHOOK_NOT_FOUND without a master webhook, and AGENT_NOT_FOUND for a foreign agentId', async () => {
      const { apiKey } = await app.newAccount('No hook');
      expect((await app.call('POST', '/v1/webhooks/test', { key: apiKey })).body.error.code).to.equal('WEBHOOK_NOT_FOUND');
      const foreign = await agent('Foreign', otherKey);
      await app.call('POST', '/v1/webhooks', { key: apiKey, body: { url: rx.url } });
      expect((await app.call('POST', `/v1/webhooks/test?agentId=${foreign.id}`, { key: apiKey })).body.error.code).to.equal(
        'AGENT_NOT_FOUND',
      );
    });
  });

  describe('deliveries of domain events', () => {
    it('sends agent lifecycle events to the master webhook, or the agent webhook instead', async () => {
      const { apiKey } = await app.newAccount('Events');
      await app.call('POST', '/v1/webhooks', {
        key: apiKey,
        body: { url: `${rx.url}?master`, events: ['agent.created', 'agent.updated'] },
      });
      const a = await agent('Evented', apiKey);
      await eventually(async () =>
        (await app.call('GET', '/v1/webhooks/deliveries', { key: apiKey })).body.items.some(
          (d: { status: string }) => d.status === 'success',
        ),
      );
      const master = rx.received.filter((r) => r.path === '/hook?master').map((r) => JSON.parse(r.body));
      expect(master.some((p) => p.event === 'agent.created' && p.agentId === a.id && p.data.name === 'Evented')).to.equal(true);

      await app.call('POST', `/v1/agents/${a.id}/webhook`, { key: apiKey, body: { url: `${rx.url}?agent`, events: ['*'] } });
      await app.call('PATCH', `/v1/agents/${a.id}`, { key: apiKey, body: { name: 'Renamed' } });
      await eventually(() => rx.received.some((r) => r.path === '/hook?agent' && JSON.parse(r.body).event === 'agent.updated'));
      expect(rx.received.some((r) => r.path === '/hook?master' && JSON.parse(r.body).event === 'agent.updated')).to.equal(false);
      const own = await eventually(async () => {
        const l = (await app.call('GET', `/v1/agents/${a.id}/webhook/deliveries`, { key: apiKey })).body;
        return l.length === 1 && l[0].status === 'success' ? l : null;
      });
      expect(own[0]).to.include({ eventType: 'agent.updated', agentId: a.id, channel: null });
    });

    it('sends number events to the master webhook, or to the webhook of the agent concerned', async () => {
      const { apiKey } = await app.newAccount('Numbers');
      await app.call('POST', '/v1/webhooks', { key: apiKey, body: { url: `${rx.url}?numbers-master`, events: ['number.provisioned'] } });
      const a = await agent('Number holder', apiKey);
      await app.call('POST', `/v1/agents/${a.id}/webhook`, {
        key: apiKey,
        body: { url: `${rx.url}?numbers-agent`, events: ['number.attached', 'number.detached'] },
      });
      const n = await app.call('POST', '/v1/numbers', { key: apiKey, body: { country: 'US', areaCode: '415' } });
      expect(n.status, JSON.stringify(n.body)).to.equal(200);
      expect((await app.call('POST', `/v1/agents/${a.id}/numbers`, { key: apiKey, body: { numberId: n.body.id } })).status).to.equal(200);
      const sent = (path: string, event: string) =>
        rx.received.find((r) => r.path === `/hook?${path}` && JSON.parse(r.body).event === event);
      const provisioned = (await eventually(() => sent('numbers-master', 'number.provisioned')))!;
      expect(JSON.parse(provisioned.body).data).to.include({ numberId: n.body.id, phoneNumber: n.body.phoneNumber });
      const attached = (await eventually(() => sent('numbers-agent', 'number.attached')))!;
      expect(JSON.parse(attached.body)).to.deep.include({
        agentId: a.id,
        data: { numberId: n.body.id, agentId: a.id, previousAgentId: null, attachedAt: JSON.parse(attached.body).data.attachedAt },
      });
    });

    it('sends nothing when no webhook is configured', async () => {
      const { apiKey } = await app.newAccount('Quiet');
      await agent('Silent', apiKey);
      // the dispatcher has seen the event once an event appended after it has been dispatched
      await app.call('POST', '/v1/webhooks', { key: apiKey, body: { url: rx.url, events: ['agent.created'] } });
      const b = await agent('Heard', apiKey);
      const items = await eventually(async () => {
        const l = (await app.call('GET', '/v1/webhooks/deliveries', { key: apiKey })).body.items;
        return l.length > 0 ? l : null;
      });
      expect(items.map((d: { agentId: string }) => d.agentId)).to.deep.equal([b.id]);
    });

    it('never shows another account its deliveries, stats or counts', async () => {
      const mine = await app.newAccount('Mine');
      await app.call('POST', '/v1/webhooks', { key: mine.apiKey, body: { url: rx.url } });
      await app.call('POST', '/v1/webhooks/test', { key: mine.apiKey });
      const { apiKey } = await app.newAccount('Theirs');
      expect((await app.call('GET', '/v1/webhooks/deliveries', { key: apiKey })).body).to.deep.equal({
        items: [],
        total: 0,
        offset: 0,
        limit: 50,
        data: [],
        notices: [],
      });
      expect((await app.call('GET', '/v1/webhooks/deliveries/all-time', { key: apiKey })).body).to.deep.equal({
        total: 0,
        success: 0,
        failed: 0,
        successRate: 0,
      });
      expect((await app.call('GET', '/v1/webhooks/deliveries/stats', { key: apiKey })).body.total).to.equal(0);
    });

    it('pages the log, filters by hours, and counts by event type and hour, leaving test sends out of the counts', async () => {
      const { apiKey } = await app.newAccount('Stats');
      await app.call('POST', '/v1/webhooks', { key: apiKey, body: { url: rx.url, events: ['agent.created'] } });
      for (let i = 0; i < 3; i++) await agent(`Counted ${i}`, apiKey);
      await eventually(
        async () => (await app.call('GET', '/v1/webhooks/deliveries/all-time', { key: apiKey })).body.success === 3,
        10_000,
        'three delivered',
      );
      // a test send is listed but never counted (docs/analytics.md#the-counting-rule)
      expect((await app.call('POST', '/v1/webhooks/test', { key: apiKey })).body.success).to.equal(true);
      const bad = await startReceiver(() => ({ status: 500 }));
      try {
        await app.call('POST', '/v1/webhooks', { key: apiKey, body: { url: bad.url, events: ['agent.created'] } });
        await agent('Failing once', apiKey);
        await bad.waitFor(1);
      } finally {
        await bad.close();
      }
      const log = async () => (await app.call('GET', '/v1/webhooks/deliveries?limit=100', { key: apiKey })).body;
      await eventually(
        async () =>
          (await log()).items.some((d: { attemptCount: number; status: string }) => d.status === 'pending' && d.attemptCount === 1),
        10_000,
        'first attempt failed',
      );
      const page = await app.call('GET', '/v1/webhooks/deliveries?limit=2&offset=1&hours=1', { key: apiKey });
      expect(page.body).to.include({ total: 5, offset: 1, limit: 2 });
      expect(page.body.items).to.have.length(2);
      expect((await log()).items.filter((d: { test: boolean }) => d.test)).to.have.length(1);
      const stats = (await app.call('GET', '/v1/webhooks/deliveries/stats', { key: apiKey })).body;
      expect(stats).to.include({ total: 4, success: 3, failed: 0, pending: 1, successRate: 75 });
      expect(stats.byEventType).to.deep.equal({ 'agent.created': { total: 4, success: 3, failed: 0, pending: 1 } });
      expect(stats.byHour.length).to.be.within(24, 25);
      expect(stats.byHour.reduce((n: number, h: { total: number }) => n + h.total, 0)).to.equal(4);
      expect((await app.call('GET', '/v1/webhooks/deliveries/all-time', { key: apiKey })).body).to.deep.equal({
        total: 4,
        success: 3,
        failed: 0,
        successRate: 75,
      });
    });
  });

  describe('rebuild (after everything above)', () => {
    it('replays both webhook read models from the log into equal tables', async () => {
      for (const p of [webhooksProjector, webhookDeliveriesProjector]) {
        const r = await rebuildProjector(app.rt.get(PLATFORM.ReadDb), app.rt.store, p, { checkOnly: true });
        expect(r.events, p.name).to.be.greaterThan(10);
        expect(r.equal, `${p.name}: ${JSON.stringify(r.differences)}`).to.equal(true);
      }
    });
  });

  it('documents every webhook path in the OpenAPI document', async () => {
    const doc = (await app.call('GET', '/openapi.json')).body;
    expect(doc.paths).to.include.keys(
      '/v1/webhooks',
      '/v1/webhooks/deliveries',
      '/v1/webhooks/deliveries/stats',
      '/v1/webhooks/deliveries/all-time',
      '/v1/webhooks/test',
      '/v1/agents/{agent_id}/webhook',
      '/v1/agents/{agent_id}/webhook/deliveries',
      '/v1/agents/{agent_id}/webhook/test',
    );
    expect(doc.components.schemas.WebhookResponse.required).to.include.members([
      'id',
      'url',
      'secret',
      'status',
      'contextLimit',
      'timeout',
      'createdAt',
    ]);
  });
});

describe('webhooks in live mode', () => {
  let app: TestApp;
  let key: string;
  before(async () => {
    app = await startTestApp({ PROVIDER_MODE: 'live' });
    key = (await app.newAccount('Live')).apiKey;
  });
  after(() => app.close());

  for (const url of [
    'http://127.0.0.1:8080/h',
    'http://10.1.2.3/h',
    'http://192.168.1.1/h',
    'http://169.254.169.254/latest',
    'http://[::1]/h',
    'http://localhost/h',
    'http://[fe80::1]/h',
    'http://[::ffff:127.0.0.1]/h',
  ]) {
    it(`refuses ${url} with 422`, async () => {
      const r = await app.call('POST', '/v1/webhooks', { key, body: { url } });
      expect(r.status).to.equal(422);
      expect(r.body.error.details[0].field).to.equal('url');
    });
  }

  it('accepts a public address', async () => {
    expect((await app.call('POST', '/v1/webhooks', { key, body: { url: 'https://93.184.215.14/hook' } })).status).to.equal(200);
  });

  it('allows private addresses with WEBHOOK_ALLOW_PRIVATE=true', async () => {
    const open = await startTestApp({ PROVIDER_MODE: 'live', WEBHOOK_ALLOW_PRIVATE: 'true' });
    try {
      const { apiKey } = await open.newAccount('Lab');
      expect((await open.call('POST', '/v1/webhooks', { key: apiKey, body: { url: 'http://127.0.0.1:9/h' } })).status).to.equal(200);
    } finally {
      await open.close();
    }
  });
});
