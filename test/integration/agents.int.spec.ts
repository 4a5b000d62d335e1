import { expect } from 'chai';
import { startTestApp, type TestApp } from '../support/http.js';

describe('agents over HTTP', () => {
  let app: TestApp;
  let key: string;
  let otherKey: string;
  before(async () => {
    app = await startTestApp();
    key = (await app.newAccount('Acme')).apiKey;
    otherKey = (await app.newAccount('Globex')).apiKey;
  });
  after(() => app.close());

  const create = (body: unknown, k = key) => app.call('POST', '/v1/agents', { key: k, body });

  it('creates an agent with the public defaults and reads it back at once', async () => {
    const r = await create({ name: 'Support', beginMessage: 'Hi {{name}}', transferNumber: '+14155550100' });
    expect(r.status).to.equal(200);
    expect(r.body).to.include({
      name: 'Support',
      voiceMode: 'webhook',
      enableMessaging: true,
      modelTier: 'balanced',
      voice: 'sandbox-aria',
      sttMode: 'fast',
      ambientSound: 'none',
      denoisingMode: 'noise-cancellation',
      maxSilenceMs: 600000,
      voiceSpeed: 1,
      interruptionSensitivity: 0.8,
      enableBackchannel: true,
      language: 'en-US',
      beginMessage: 'Hi {{name}}',
      transferNumber: '+14155550100',
      description: null,
    });
    expect(r.body.id).to.match(/^agt_/);
    expect(r.body.numbers).to.deep.equal([]);
    const got = await app.call('GET', `/v1/agents/${r.body.id}`, { key });
    expect(got.status).to.equal(200);
    expect(got.body).to.deep.equal(r.body);
  });

  it('accepts `greeting` as an alias of beginMessage', async () => {
    const r = await create({ name: 'Greeter', greeting: 'Hello there' });
    expect(r.body.beginMessage).to.equal('Hello there');
  });

  it('stores the full hosted configuration', async () => {
    const tools = [
      { name: 'lookup_order', description: 'Find an order', url: 'https://example.com/orders', parameters: { type: 'object' } },
    ];
    const r = await create({
      name: 'Concierge',
      voiceMode: 'hosted',
      systemPrompt: 'You help {{customer}}',
      modelTier: 'max',
      voice: 'sandbox-isla',
      customTools: tools,
      callScreeningIdentity: 'Acme',
      callScreeningPurpose: 'Delivery',
      language: 'fr-FR',
      voiceSpeed: 1.25,
    });
    expect(r.status).to.equal(200);
    expect(r.body).to.include({ voiceMode: 'hosted', modelTier: 'max', voice: 'sandbox-isla', language: 'fr-FR', voiceSpeed: 1.25 });
    expect(r.body.customTools).to.deep.equal([
      { ...tools[0], method: 'POST', headers: null, timeoutMs: null, speakDuringExecution: null, executionMessage: null },
    ]);
  });

  describe('validation', () => {
    const cases: [string, unknown, string][] = [
      ['a missing name', {}, 'name'],
      ['an empty name', { name: '' }, 'name'],
      ['a transfer number that is not E.164', { name: 'A', transferNumber: '415-555-0100' }, 'transferNumber'],
      ['an unknown voice mode', { name: 'A', voiceMode: 'psychic' }, 'voiceMode'],
      ['an unknown model tier', { name: 'A', modelTier: 'huge' }, 'modelTier'],
      ['a voice speed out of range', { name: 'A', voiceSpeed: 3 }, 'voiceSpeed'],
      ['a silence timeout below 10 s', { name: 'A', maxSilenceMs: 500 }, 'maxSilenceMs'],
      ['a wrong type', { name: 'A', enableMessaging: 'yes' }, 'enableMessaging'],
      ['an unsupported language', { name: 'A', language: 'xx-XX' }, 'language'],
      ['a tool with an http URL', { name: 'A', customTools: [{ name: 't', description: 'd', url: 'http://x.test' }] }, 'customTools.0.url'],
      [
        'more than 20 tools',
        { name: 'A', customTools: Array.from({ length: 21 }, (_, i) => ({ name: `t${i}`, description: 'd', url: 'https://x.test' })) },
        'customTools',
      ],
      ['an unknown voice', { name: 'A', voice: 'nobody' }, 'voice'],
    ];
    for (const [what, body, field] of cases) {
      it(`answers 422 in both error shapes for ${what}`, async () => {
        const r = await create(body);
        expect(r.status).to.equal(422);
        expect(r.body.error.code).to.equal('VALIDATION_ERROR');
        expect(r.body.error.type).to.equal('validation_error');
        expect(r.body.error.details.map((d: { field: string }) => d.field)).to.include(field);
        expect(r.body.detail.map((d: { loc: string[] }) => d.loc.slice(1).join('.'))).to.include(field);
        expect(r.body.request_id).to.equal(r.headers.get('x-request-id'));
      });
    }

    it('answers 422 for malformed JSON and writes nothing', async () => {
      const before = (await app.call('GET', '/v1/agents', { key })).body.total;
      const r = await app.call('POST', '/v1/agents', { key, body: '{"name": "x",' });
      expect(r.status).to.equal(422);
      expect(r.body.detail[0].type).to.equal('json_invalid');
      expect((await app.call('GET', '/v1/agents', { key })).body.total).to.equal(before);
    });
  });

  describe('update', () => {
    it('changes only what is sent; an empty transfer number clears it', async () => {
      const a = (await create({ name: 'Patchy', transferNumber: '+14155550100', description: 'desc' })).body;
      const r = await app.call('PATCH', `/v1/agents/${a.id}`, { key, body: { transferNumber: '', voiceSpeed: 1.5 } });
      expect(r.status).to.equal(200);
      expect(r.body).to.include({ transferNumber: null, voiceSpeed: 1.5, description: 'desc', name: 'Patchy' });
    });

    it('switches the voice mode and records the switch in the agent history', async () => {
      const a = (await create({ name: 'Switcher' })).body;
      const r = await app.call('PATCH', `/v1/agents/${a.id}`, { key, body: { voiceMode: 'hosted', systemPrompt: 'Be brief' } });
      expect(r.body).to.include({ voiceMode: 'hosted', systemPrompt: 'Be brief' });
      const history = await app.rt.store.readStream(`agent-${a.id}`);
      expect(history.map((e) => e.type)).to.deep.equal(['AgentCreated', 'AgentUpdated', 'AgentVoiceModeSwitched']);
      expect(history[2]!.data).to.include({ from: 'webhook', to: 'hosted' });
      expect(history[1]!.metadata.requestId).to.equal(r.headers.get('x-request-id'));
    });

    it('treats null on a non-nullable field as "leave unchanged"', async () => {
      const a = (await create({ name: 'Keep', modelTier: 'turbo' })).body;
      const r = await app.call('PATCH', `/v1/agents/${a.id}`, { key, body: { modelTier: null, name: null } });
      expect(r.body).to.include({ modelTier: 'turbo', name: 'Keep' });
    });

    it('validates updates like creates', async () => {
      const a = (await create({ name: 'Strict' })).body;
      const r = await app.call('PATCH', `/v1/agents/${a.id}`, { key, body: { interruptionSensitivity: 2 } });
      expect(r.status).to.equal(422);
    });
  });

  describe('list', () => {
    it('pages with limit and offset, with total and hasMore', async () => {
      const { apiKey } = await app.newAccount('Pager');
      for (let i = 0; i < 5; i++) await create({ name: `A${i}` }, apiKey);
      const p1 = await app.call('GET', '/v1/agents?limit=2', { key: apiKey });
      expect(p1.body.data.map((a: { name: string }) => a.name)).to.deep.equal(['A0', 'A1']);
      expect(p1.body).to.include({ total: 5, hasMore: true });
      const p3 = await app.call('GET', '/v1/agents?limit=2&offset=4', { key: apiKey });
      expect(p3.body.data.map((a: { name: string }) => a.name)).to.deep.equal(['A4']);
      expect(p3.body.hasMore).to.equal(false);
    });
    for (const q of ['limit=0', 'limit=101', 'offset=-1', 'limit=abc', 'limit=1.5']) {
      it(`refuses ${q} with 422`, async () => {
        const r = await app.call('GET', `/v1/agents?${q}`, { key });
        expect(r.status).to.equal(422);
        expect(r.body.detail[0].loc[0]).to.equal('query');
      });
    }
  });

  describe('delete', () => {
    it('answers {success, id, name}; the agent is then gone from reads', async () => {
      const a = (await create({ name: 'Doomed' })).body;
      const r = await app.call('DELETE', `/v1/agents/${a.id}`, { key });
      expect(r.status).to.equal(200);
      expect(r.body).to.deep.equal({ success: true, id: a.id, name: 'Doomed' });
      expect((await app.call('GET', `/v1/agents/${a.id}`, { key })).status).to.equal(404);
      expect((await app.call('DELETE', `/v1/agents/${a.id}`, { key })).status).to.equal(404);
      const list = await app.call('GET', '/v1/agents?limit=100', { key });
      expect(list.body.data.map((x: { id: string }) => x.id)).to.not.include(a.id);
    });
  });

  describe('account scoping', () => {
    it("answers 404 for another account's agent on every operation", async () => {
      const a = (await create({ name: 'Private' })).body;
      for (const [method, body] of [
        ['GET', undefined],
        ['PATCH', { name: 'Stolen' }],
        ['DELETE', undefined],
      ] as const) {
        const r = await app.call(method, `/v1/agents/${a.id}`, { key: otherKey, ...(body ? { body } : {}) });
        expect(r.status, method).to.equal(404);
        expect(r.body.error.type).to.equal('not_found');
      }
      const list = await app.call('GET', '/v1/agents?limit=100', { key: otherKey });
      expect(list.body.data.map((x: { id: string }) => x.id)).to.not.include(a.id);
      expect((await app.call('GET', `/v1/agents/${a.id}`, { key })).body.name).to.equal('Private');
    });
  });

  it('lists the voices of the sandbox voice provider', async () => {
    const r = await app.call('GET', '/v1/agents/voices', { key });
    expect(r.status).to.equal(200);
    expect(r.body.data.length).to.be.greaterThan(0);
    expect(Object.keys(r.body.data[0]).sort()).to.deep.equal([
      'accent',
      'gender',
      'preview_audio_url',
      'provider',
      'voice_id',
      'voice_name',
    ]);
  });
});
