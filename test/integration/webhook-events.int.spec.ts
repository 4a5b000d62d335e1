import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { PLATFORM } from '../../infrastructure/platform/tokens.js';
import { WEBHOOKS } from '../../infrastructure/webhooks/tokens.js';
import { rebuildProjector } from '../../projections/shared/rebuild.js';
import { webhooksProjector } from '../../projections/webhooks/webhooks.projector.js';
import { meta } from '../support/fixtures.js';
import { startTestApp, type TestApp } from '../support/http.js';
import { reactorPast } from '../support/reactors.js';
import { eventually, type Receiver, startReceiver } from '../support/webhook-receiver.js';

const PUBLIC = ['agent.message', 'agent.reaction', 'agent.call_ended'];

describe('webhook events: the public kinds by default, lifecycle events by opt-in', function () {
  this.timeout(30_000);
  let app: TestApp;
  let rx: Receiver;
  before(async () => {
    app = await startTestApp({ WEBHOOK_POLL_INTERVAL_MS: '20' });
    rx = await startReceiver();
  });
  after(async () => {
    await rx.close();
    await app.close();
  });

  const agent = async (key: string, name: string) => (await app.call('POST', '/v1/agents', { key, body: { name } })).body as { id: string };
  const deliveries = async (key: string) =>
    (await app.call('GET', '/v1/webhooks/deliveries', { key })).body.items as { eventType: string; agentId: string; status: string }[];
  /** resolves once the dispatch reactor has handled every event of `stream` */
  const dispatched = async (stream: string) => {
    const last = (await app.rt.store.readStream(stream)).at(-1)!.checkpoint;
    await eventually(() => reactorPast(app.rt.get(PLATFORM.ReadDb), 'webhook_dispatch', last), 10_000, `the dispatcher past ${stream}`);
  };

  it('lists the public kinds when none are given, for the master and an agent webhook', async () => {
    const { apiKey } = await app.newAccount('Defaults');
    const master = await app.call('POST', '/v1/webhooks', { key: apiKey, body: { url: rx.url } });
    expect(master.body.events).to.deep.equal(PUBLIC);
    expect((await app.call('GET', '/v1/webhooks', { key: apiKey })).body.events).to.deep.equal(PUBLIC);
    const a = await agent(apiKey, 'Own hook');
    const own = await app.call('POST', `/v1/agents/${a.id}/webhook`, { key: apiKey, body: { url: rx.url, events: null } });
    expect(own.body.events).to.deep.equal(PUBLIC);
  });

  it('does not deliver lifecycle events to a webhook that did not opt in', async () => {
    const { apiKey } = await app.newAccount('Default hook');
    await app.call('POST', '/v1/webhooks', { key: apiKey, body: { url: `${rx.url}?default` } });
    const a = await agent(apiKey, 'Unannounced');
    await app.call('PATCH', `/v1/agents/${a.id}`, { key: apiKey, body: { name: 'Renamed' } });
    await dispatched(`agent-${a.id}`);
    expect(await deliveries(apiKey)).to.deep.equal([]);
    expect(rx.received.filter((r) => r.path === '/hook?default')).to.deep.equal([]);
  });

  it('delivers the lifecycle events a webhook lists, and every event with "*"', async () => {
    const { apiKey } = await app.newAccount('Opted in');
    const hook = await app.call('POST', '/v1/webhooks', { key: apiKey, body: { url: `${rx.url}?listed`, events: ['agent.created'] } });
    expect(hook.body.events).to.deep.equal(['agent.created']);
    const a = await agent(apiKey, 'Announced');
    await app.call('PATCH', `/v1/agents/${a.id}`, { key: apiKey, body: { name: 'Renamed once' } });
    await dispatched(`agent-${a.id}`);
    const listed = await eventually(async () => {
      const l = await deliveries(apiKey);
      return l.length === 1 && l[0]!.status === 'success' ? l : null;
    });
    expect(listed!.map((d) => [d.eventType, d.agentId])).to.deep.equal([['agent.created', a.id]]);

    await app.call('POST', '/v1/webhooks', { key: apiKey, body: { url: `${rx.url}?all`, events: ['*'] } });
    await app.call('PATCH', `/v1/agents/${a.id}`, { key: apiKey, body: { name: 'Renamed twice' } });
    const all = await eventually(async () => {
      const l = await deliveries(apiKey);
      return l.length === 2 && l.every((d) => d.status === 'success') ? l : null;
    });
    expect(all!.map((d) => d.eventType)).to.have.members(['agent.created', 'agent.updated']);
    expect(rx.received.some((r) => r.path === '/hook?all' && JSON.parse(r.body).event === 'agent.updated')).to.equal(true);
  });

  it('sends test deliveries whatever the list says', async () => {
    const { apiKey } = await app.newAccount('Tested');
    await app.call('POST', '/v1/webhooks', { key: apiKey, body: { url: rx.url, events: ['number.released'] } });
    const r = await app.call('POST', '/v1/webhooks/test', { key: apiKey });
    expect(r.body.success).to.equal(true);
  });

  for (const [what, events, field] of [
    ['an unknown event name', ['agent.created', 'agent.exploded'], 'events.1'],
    ['an empty list', [], 'events'],
    ['a string instead of a list', 'agent.created', 'events'],
    ['a name that is not a string', [42], 'events.0'],
  ] as const) {
    it(`refuses ${what} with 422 naming the field, changing nothing`, async () => {
      const { apiKey } = await app.newAccount('Invalid');
      const before = await app.call('POST', '/v1/webhooks', { key: apiKey, body: { url: rx.url } });
      const r = await app.call('POST', '/v1/webhooks', { key: apiKey, body: { url: `${rx.url}?changed`, events } });
      expect(r.status).to.equal(422);
      expect(r.body.error.code).to.equal('VALIDATION_ERROR');
      expect(r.body.error.details.map((d: { field: string }) => d.field)).to.include(field);
      expect((await app.call('GET', '/v1/webhooks', { key: apiKey })).body).to.deep.equal(before.body);
    });
  }

  it('reads a webhook recorded before webhooks chose events as receiving the public kinds', async () => {
    const { accountId, apiKey } = await app.newAccount('Older');
    const now = new Date().toISOString();
    // the shape WebhookCreated had before the `events` field existed
    await app.rt.store.appendToStream(
      `webhook-${accountId}`,
      [
        {
          id: randomUUID(),
          type: 'WebhookCreated',
          data: {
            webhookId: `whk_old_${accountId}`,
            accountId,
            agentId: null,
            url: `${rx.url}?older`,
            contextLimit: 10,
            timeout: 30,
            secret: app.rt.get(WEBHOOKS.Secrets).seal('whsec_older'),
            createdAt: now,
          },
          metadata: meta(accountId),
        },
      ],
      { expectedRevision: 'no_stream' },
    );
    const shown = await eventually(async () => (await app.call('GET', '/v1/webhooks', { key: apiKey })).body);
    expect(shown).to.include({ id: `whk_old_${accountId}`, secret: 'whsec_older' });
    expect(shown.events).to.deep.equal(PUBLIC);
    const a = await agent(apiKey, 'After the upgrade');
    await dispatched(`agent-${a.id}`);
    expect(await deliveries(apiKey)).to.deep.equal([]);
    // the aggregate reads it the same way: an update keeps the webhook and records the list it is given
    const updated = await app.call('POST', '/v1/webhooks', { key: apiKey, body: { url: `${rx.url}?older`, events: ['agent.created'] } });
    expect(updated.body).to.include({ id: `whk_old_${accountId}` });
    expect(updated.body.events).to.deep.equal(['agent.created']);
    const r = await rebuildProjector(app.rt.get(PLATFORM.ReadDb), app.rt.store, webhooksProjector, { checkOnly: true });
    expect(r.equal, JSON.stringify(r.differences)).to.equal(true);
  });
});
