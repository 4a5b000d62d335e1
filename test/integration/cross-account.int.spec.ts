import { expect } from 'chai';
import { ADMIN_TOKEN, startTestApp, type TestApp } from '../support/http.js';

/**
 * The isolation matrix: every operation in the published OpenAPI document is called with account A's key on
 * account B's resources (and on the resources of B's sub-account). Each must answer 404 — never 200, never a
 * leak — and, with A's key and `X-Sub-Account-Id` naming B's sub-account, 403. The list is read from
 * /openapi.json, so a new endpoint joins the matrix by existing; a path parameter this test cannot fill fails
 * the test until a factory for it is added below.
 */
type Owner = { accountId: string; apiKey: string; headers: Record<string, string> };
type Factory = (app: TestApp, owner: Owner) => Promise<string>;

const factories: Record<string, Factory> = {
  agent_id: async (app, o) =>
    (await app.call('POST', '/v1/agents', { key: o.apiKey, headers: o.headers, body: { name: 'B agent' } })).body.id,
  key_id: async (app, o) =>
    (await app.call('POST', '/v1/api-keys', { key: o.apiKey, headers: o.headers, body: { name: 'B key' } })).body.id,
  sub_account_id: async (app, o) => (await app.call('POST', '/v1/sub-accounts', { key: o.apiKey, body: { name: 'B sub' } })).body.id,
  number_id: async (app, o) =>
    (await app.call('POST', '/v1/numbers', { key: o.apiKey, headers: o.headers, body: { country: 'US', areaCode: '415' } })).body.id,
  trunk_id: async (app, o) =>
    (await app.call('POST', '/v1/sip-trunks', { key: o.apiKey, headers: o.headers, body: { name: 'B trunk' } })).body.id,
  /** a real call to the sandbox's silent far end, which stays live until the app closes */
  call_id: async (app, o) => {
    const agent = (await app.call('POST', '/v1/agents', { key: o.apiKey, headers: o.headers, body: { name: 'B caller' } })).body;
    await app.call('POST', '/v1/numbers', { key: o.apiKey, headers: o.headers, body: { country: 'US', agentId: agent.id } });
    const r = await app.call('POST', '/v1/calls', {
      key: o.apiKey,
      headers: o.headers,
      body: { agentId: agent.id, toNumber: '+16465550160' },
    });
    if (r.status !== 200) throw new Error(`call: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body.id;
  },
  /** a test send to a closed local port: one failed delivery, recorded synchronously */
  delivery_id: async (app, o) => {
    await app.call('POST', '/v1/webhooks', { key: o.apiKey, headers: o.headers, body: { url: 'http://127.0.0.1:9/hook' } });
    const r = await app.call('POST', '/v1/webhooks/test', { key: o.apiKey, headers: o.headers });
    if (r.status !== 200) throw new Error(`test send: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body.deliveryId;
  },
  message_id: async (app, o) => (await textOf(app, o)).id,
  conversation_id: async (app, o) => (await textOf(app, o)).conversation_id,
  connection_id: async (app, o) => (await chatOf(app, o)).connectionId,
  chatapp_number_id: async (app, o) => (await chatOf(app, o)).numberId,
  template_id: async (app, o) => (await chatOf(app, o)).templateId,
  /** a contact who shares a location with the owner's rich line (docs/sandbox.md#rich-messaging-the-sandbox-provider) */
  phone_number: async (app, o) => {
    await richLineOf(app, o);
    const r = await app.call('POST', '/v1/location/refresh', { key: o.apiKey, headers: o.headers });
    if (r.status !== 200) throw new Error(`refresh: ${r.status} ${JSON.stringify(r.body)}`);
    const phone = '+14155550140';
    for (let i = 0; i < 200; i++) {
      const l = await app.call('GET', `/v1/location/${encodeURIComponent(phone)}`, { key: o.apiKey, headers: o.headers });
      if (l.status === 200) return phone;
      await new Promise((res) => setTimeout(res, 25));
    }
    throw new Error('no shared location');
  },
  contact_id: async (app, o) =>
    (
      await app.call('POST', '/v1/contacts', {
        key: o.apiKey,
        headers: o.headers,
        body: { phoneNumber: '+14155550188', name: 'B contact' },
      })
    ).body.id,
};

/** one text sent by the owner (an agent, its number, then the text), made once per owner */
const texts = new Map<string, Promise<{ id: string; conversation_id: string; from_number: string }>>();
function textOf(app: TestApp, o: Owner) {
  const k = `${o.accountId}|${JSON.stringify(o.headers)}`;
  if (!texts.has(k))
    texts.set(
      k,
      (async () => {
        const agent = (await app.call('POST', '/v1/agents', { key: o.apiKey, headers: o.headers, body: { name: 'B texter' } })).body;
        await app.call('POST', '/v1/numbers', { key: o.apiKey, headers: o.headers, body: { country: 'CA', agentId: agent.id } });
        const r = await app.call('POST', '/v1/messages', {
          key: o.apiKey,
          headers: o.headers,
          body: { agent_id: agent.id, to_number: '+13125550170', body: 'hi' },
        });
        if (r.status !== 201) throw new Error(`text: ${r.status} ${JSON.stringify(r.body)}`);
        return r.body;
      })(),
    );
  return texts.get(k)!;
}

/** the owner's text line (made by textOf) served by the sandbox rich provider, made once per owner */
const richLines = new Map<string, Promise<void>>();
function richLineOf(app: TestApp, o: Owner) {
  const k = `${o.accountId}|${JSON.stringify(o.headers)}`;
  if (!richLines.has(k))
    richLines.set(
      k,
      (async () => {
        const text = await textOf(app, o);
        const from = text.from_number;
        const r = await app.call('POST', '/sandbox/rich/lines', { key: ADMIN_TOKEN, body: { phone_number: from } });
        if (r.status !== 200 || !r.body.numberId) throw new Error(`rich line: ${r.status} ${JSON.stringify(r.body)}`);
      })(),
    );
  return richLines.get(k)!;
}

/** a chat-app connection of the owner, a number bound on it (its own, added to the sandbox business account) and a template, made once per owner */
const chats = new Map<string, Promise<{ connectionId: string; numberId: string; templateId: string }>>();
let chatNumbers = 0;
function chatOf(app: TestApp, o: Owner) {
  const k = `${o.accountId}|${JSON.stringify(o.headers)}`;
  if (!chats.has(k))
    chats.set(
      k,
      (async () => {
        const as = { key: o.apiKey, headers: o.headers };
        const c = await app.call('POST', '/integrations/chatapp/connections', {
          ...as,
          body: { business_account_id: '200000000000002', access_token: 'matrix-token' },
        });
        if (c.status !== 200) throw new Error(`connect: ${c.status} ${JSON.stringify(c.body)}`);
        const added = await app.call('POST', '/sandbox/chatapp/business-accounts/200000000000002/numbers', {
          key: ADMIN_TOKEN,
          body: { phone_number: `+4477009009${String(10 + chatNumbers++)}` },
        });
        const n = await app.call('POST', `/integrations/chatapp/${c.body.id}/numbers`, {
          ...as,
          body: { phone_number_id: added.body.phoneNumberId },
        });
        if (n.status !== 200) throw new Error(`bind: ${n.status} ${JSON.stringify(n.body)}`);
        const t = await app.call('POST', `/integrations/chatapp/${c.body.id}/templates`, {
          ...as,
          body: { name: 'b_template', language: 'en', category: 'utility', body: 'Hi {{1}}' },
        });
        if (t.status !== 200) throw new Error(`template: ${t.status} ${JSON.stringify(t.body)}`);
        return { connectionId: c.body.id, numberId: n.body.id, templateId: t.body.id };
      })(),
    );
  return chats.get(k)!;
}

/** a plausible body for each write, so the request passes validation and reaches the ownership check */
const bodies: Record<string, unknown> = {
  'PATCH /v1/agents/{agent_id}': { name: 'stolen' },
  'POST /v1/agents/{agent_id}/numbers': { numberId: 'placeholder' },
  'PATCH /v1/sub-accounts/{sub_account_id}': { name: 'stolen' },
  'POST /v1/agents/{agent_id}/webhook': { url: 'https://example.com/hook' },
  'PATCH /v1/numbers/{number_id}': { sipTrunkId: null },
  'PATCH /v1/sip-trunks/{trunk_id}': { name: 'stolen' },
  'PATCH /v1/contacts/{contact_id}': { name: 'stolen' },
  'POST /v1/messages/{message_id}/reactions': { reaction: '👍' },
  'PATCH /v1/conversations/{conversation_id}': { conversationState: { stolen: true } },
  'POST /v1/conversations/{conversation_id}/background': { image_url: 'https://example.com/wall.png' },
  'PUT /v1/numbers/{number_id}/contact-card': { firstName: 'stolen' },
  'PUT /v1/sub-accounts/{sub_account_id}/call-limit': { maxConcurrentCalls: 1 },
  'POST /integrations/chatapp/{connection_id}/numbers': { phone_number_id: '300000000000022' },
  'POST /integrations/chatapp/{connection_id}/templates': { name: 'stolen', language: 'en', category: 'utility', body: 'x' },
};

type Operation = { method: string; path: string; params: string[] };

describe('cross-account isolation matrix (every endpoint)', function () {
  this.timeout(120_000);
  let app: TestApp;
  let a: Owner;
  let b: Owner;
  let bSub: Owner;
  let operations: Operation[];
  const ids: Record<'b' | 'bSub', Record<string, string>> = { b: {}, bSub: {} };

  before(async () => {
    app = await startTestApp();
    const accA = await app.newAccount('A');
    const accB = await app.newAccount('B');
    a = { ...accA, headers: {} };
    b = { ...accB, headers: {} };
    // enough credit for B's paid resources (numbers) in B and in B's sub-account
    await app.call('POST', `/admin/accounts/${accB.accountId}/credit`, { key: ADMIN_TOKEN, body: { amountMicros: 100_000_000 } });
    const doc = (await app.call('GET', '/openapi.json')).body as { paths: Record<string, Record<string, { security?: unknown[] }>> };
    operations = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.entries(ops)
        .filter(([, op]) => !(Array.isArray(op.security) && op.security.length === 0)) // authenticated operations only
        .map(([method]) => ({ method: method.toUpperCase(), path, params: [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!) })),
    );
    const subId = await factories.sub_account_id!(app, b);
    bSub = { ...accB, headers: { 'x-sub-account-id': subId } };
    const needed = new Set(operations.flatMap((o) => o.params));
    for (const p of needed) {
      const f = factories[p];
      if (!f) continue;
      ids.b[p] = p === 'sub_account_id' ? subId : await f(app, b);
      if (p !== 'sub_account_id') ids.bSub[p] = await f(app, bSub);
    }
  });
  after(() => app.close());

  it('knows how to make a resource for every path parameter', () => {
    const missing = [...new Set(operations.flatMap((o) => o.params))].filter((p) => !factories[p]);
    expect(missing, 'add a factory for these path parameters').to.deep.equal([]);
    expect(operations.length).to.be.greaterThan(10);
  });

  it("answers 404 to A for every operation on B's resources and on B's sub-account's resources", async () => {
    const failures: string[] = [];
    for (const owner of ['b', 'bSub'] as const) {
      for (const op of operations.filter((o) => o.params.length > 0)) {
        if (owner === 'bSub' && op.params.includes('sub_account_id')) continue;
        let path = op.path;
        for (const p of op.params) path = path.replace(`{${p}}`, encodeURIComponent(ids[owner][p] ?? 'missing'));
        const key = `${op.method} ${op.path}`;
        const r = await app.call(op.method, path, {
          key: a.apiKey,
          ...(bodies[key] !== undefined ? { body: bodies[key] } : op.method === 'POST' || op.method === 'PATCH' ? { body: {} } : {}),
        });
        if (r.status !== 404) failures.push(`${owner}: ${op.method} ${path} -> ${r.status} ${JSON.stringify(r.body).slice(0, 200)}`);
      }
    }
    expect(failures).to.deep.equal([]);
  });

  it("never shows B's ids in A's lists", async () => {
    const secrets = [...Object.values(ids.b), ...Object.values(ids.bSub), b.accountId];
    const failures: string[] = [];
    for (const op of operations.filter((o) => o.method === 'GET' && o.params.length === 0)) {
      const r = await app.call('GET', op.path, { key: a.apiKey });
      const text = JSON.stringify(r.body);
      for (const s of secrets) if (text.includes(s)) failures.push(`${op.path} shows ${s}`);
    }
    expect(failures).to.deep.equal([]);
  });

  it("refuses A's key with X-Sub-Account-Id of B's sub-account on every operation with 403", async () => {
    const failures: string[] = [];
    for (const op of operations) {
      let path = op.path;
      for (const p of op.params) path = path.replace(`{${p}}`, encodeURIComponent(ids.bSub[p] ?? ids.b[p] ?? 'x'));
      const r = await app.call(op.method, path, {
        key: a.apiKey,
        headers: bSub.headers,
        ...(op.method === 'POST' || op.method === 'PATCH' ? { body: bodies[`${op.method} ${op.path}`] ?? {} } : {}),
      });
      if (r.status !== 403) failures.push(`${op.method} ${path} -> ${r.status}`);
    }
    expect(failures).to.deep.equal([]);
  });
});
