import { AgentPhoneClient, AgentPhoneError } from 'agentphone';
import { expect } from 'chai';
import { FAR_END, FAST_VOICE_ENV } from '../support/calls.js';
import { startTestApp, type TestApp } from '../support/http.js';
import { FAST_MESSAGING_ENV, inbound } from '../support/messaging.js';
import { credit, eventually } from '../support/numbers.js';
import { type Receiver, startReceiver } from '../support/webhook-receiver.js';

/**
 * The public SDK itself (the npm package `agentphone`, pinned in devDependencies), unchanged, pointed at this server
 * with its `baseUrl` option: every method of its `agents`, `agentWebhooks`, `numbers`, `calls`, `registration`,
 * `subAccounts`, `usage` and `webhooks` groups (test/integration/rich-sdk.int.spec.ts drives the other groups), so
 * that all of the SDK's methods are run against the server (docs/compatibility.md).
 */
/** Several of the SDK's methods declare their answer `unknown`: the test reads it as the JSON it is. */
const json = async (p: Promise<unknown>): Promise<any> => p;

describe('the public SDK (agentphone 1.0.17) against the server: agents, numbers, calls, webhooks, usage, sub-accounts', function () {
  this.timeout(120_000);
  let app: TestApp;
  let rx: Receiver;
  let client: AgentPhoneClient;
  let accountId: string;
  let agentId: string;
  let numberId: string;
  let phoneNumber: string;
  let callId: string;

  before(async () => {
    app = await startTestApp({ ...FAST_MESSAGING_ENV, ...FAST_VOICE_ENV });
    rx = await startReceiver(() => ({ status: 200, body: JSON.stringify({ text: 'Sure.' }) }));
    const acc = await app.newAccount('SDK account');
    accountId = acc.accountId;
    await credit(app, accountId, 100_000_000);
    client = new AgentPhoneClient({ token: acc.apiKey, baseUrl: app.url, maxRetries: 0 });
  });
  after(async () => {
    await rx.close();
    await app.close();
  });

  describe('agents and numbers', () => {
    it('listVoices, createAgent, getAgent, listAgents, updateAgent', async () => {
      const voices = await json(client.agents.listVoices());
      expect(voices.data.length).to.be.greaterThan(0);
      const a = await client.agents.createAgent({ name: 'Front desk', beginMessage: 'Hello!', voice: voices.data[0]!.voice_id });
      agentId = a.id;
      expect(a).to.include({ name: 'Front desk', beginMessage: 'Hello!' });
      expect((await client.agents.getAgent({ agent_id: agentId })).id).to.equal(agentId);
      expect((await client.agents.listAgents()).data.map((x: any) => x.id)).to.include(agentId);
      expect(await client.agents.updateAgent({ agent_id: agentId, description: 'Answers the front desk' })).to.include({
        description: 'Answers the front desk',
      });
    });

    it('createNumber, getNumber, listNumbers, detachNumberFromAgent, attachNumberToAgent', async () => {
      const n = await client.numbers.createNumber({ country: 'CA', agentId });
      numberId = n.id;
      phoneNumber = n.phoneNumber;
      expect(n).to.include({ country: 'CA', agentId, status: 'active' });
      expect((await client.numbers.getNumber({ number_id: numberId })).phoneNumber).to.equal(phoneNumber);
      expect((await client.numbers.listNumbers()).data.map((x: any) => x.id)).to.include(numberId);
      await client.agents.detachNumberFromAgent({ agent_id: agentId, number_id: numberId });
      expect((await client.numbers.getNumber({ number_id: numberId })).agentId).to.equal(null);
      await client.agents.attachNumberToAgent({ agent_id: agentId, numberId });
      expect((await client.numbers.getNumber({ number_id: numberId })).agentId).to.equal(agentId);
    });
  });

  describe('webhooks', () => {
    it('createOrUpdateWebhook, getWebhook, testWebhook, listDeliveries, deliveryStats, allTimeStats', async () => {
      const w = await client.webhooks.createOrUpdateWebhook({ body: { url: `${rx.url}/hook` } });
      expect(w.url).to.equal(`${rx.url}/hook`);
      expect((await json(client.webhooks.getWebhook()))?.url).to.equal(`${rx.url}/hook`);
      const test = await json(client.webhooks.testWebhook({ agentId }));
      expect(test.success).to.equal(true);
      expect((await inbound(app, { from: '+13125550181', to: phoneNumber, body: 'Hello there' })).status).to.equal(201);
      const list = await eventually(async () => {
        const l = await json(client.webhooks.listDeliveries({ limit: 10 }));
        return l.items.some((d: any) => d.status === 'success' && d.eventType === 'agent.message' && d.test === false) ? l : undefined;
      }, 'the inbound text delivered');
      expect(list.total).to.be.greaterThan(0);
      expect((await json(client.webhooks.deliveryStats({ hours: 24 }))).total).to.be.greaterThan(0);
      expect((await json(client.webhooks.allTimeStats())).success).to.be.greaterThan(0);
    });

    it('createOrUpdateAgentWebhook, getAgentWebhook, testAgentWebhook, listAgentDeliveries, deleteAgentWebhook', async () => {
      const w = await client.agentWebhooks.createOrUpdateAgentWebhook({ agent_id: agentId, body: { url: `${rx.url}/agent` } });
      expect(w.url).to.equal(`${rx.url}/agent`);
      expect((await json(client.agentWebhooks.getAgentWebhook({ agent_id: agentId })))?.url).to.equal(`${rx.url}/agent`);
      expect((await json(client.agentWebhooks.testAgentWebhook({ agent_id: agentId }))).success).to.equal(true);
      const own = await eventually(async () => {
        const l = await json(client.agentWebhooks.listAgentDeliveries({ agent_id: agentId, limit: 10 }));
        return l.length > 0 ? l : undefined;
      }, "the agent's own deliveries");
      expect(own[0]!.status).to.equal('success');
      await client.agentWebhooks.deleteAgentWebhook({ agent_id: agentId });
      expect(await json(client.agentWebhooks.getAgentWebhook({ agent_id: agentId }))).to.equal(null);
    });
  });

  describe('calls', () => {
    it('createOutboundCall, getCall, listCalls, listAgentCalls, listCallsForNumber, getCallTranscript, endCall', async () => {
      const placed = await json(client.calls.createOutboundCall({ agentId, toNumber: FAR_END.talker, fromNumberId: numberId }));
      callId = placed.id;
      await eventually(async () => {
        const c = await json(client.calls.getCall({ call_id: callId }));
        return c.status === 'in-progress' && (c.transcripts ?? []).length > 0 ? c : undefined;
      }, 'the call answered and a turn heard');
      expect((await json(client.calls.listCalls({}))).data.map((c: any) => c.id)).to.include(callId);
      expect((await json(client.agents.listAgentCalls({ agent_id: agentId }))).data.map((c: any) => c.id)).to.include(callId);
      expect((await json(client.calls.listCallsForNumber({ number_id: numberId }))).data.map((c: any) => c.id)).to.include(callId);
      await client.calls.endCall({ call_id: callId });
      const ended = await eventually(async () => {
        const c = await json(client.calls.getCall({ call_id: callId }));
        return c.status === 'completed' ? c : undefined;
      }, 'the call ended');
      expect(ended.durationSeconds).to.be.a('number');
      const t = await json(client.calls.getCallTranscript({ call_id: callId }));
      expect(JSON.stringify(t)).to.contain('Hi, who is this?');
    });

    it('streamCallTranscript (an ended call: its turns, then ended), createWebCall, getCallRecording (refused: no audio)', async () => {
      const stream = await client.calls.streamCallTranscript({ call_id: callId }).catch((e: unknown) => e);
      // the stream is Server-Sent Events; the SDK hands over what it read (it may not parse it as JSON)
      expect(JSON.stringify(stream instanceof AgentPhoneError ? stream.body : stream)).to.contain('Hi, who is this?');
      const web = await json(client.calls.createWebCall({ agentId }));
      expect(web.accessToken).to.match(/^wct_/);
      const noAudio = await client.calls.getCallRecording({ call_id: callId }).catch((e: unknown) => e);
      expect((noAudio as AgentPhoneError).statusCode).to.equal(404);
    });
  });

  describe('conversations of an agent, messages of a number, usage, registration, sub-accounts', () => {
    it('listAgentConversations, getMessages', async () => {
      const convs = await json(client.agents.listAgentConversations({ agent_id: agentId }));
      expect(convs.data.map((c: any) => c.participant)).to.include('+13125550181');
      const msgs = await json(client.numbers.getMessages({ number_id: numberId }));
      const got = msgs.data.find((m: any) => m.body === 'Hello there');
      expect(got).to.include({ from_: '+13125550181', to: phoneNumber, direction: 'inbound' });
    });

    it('getUsage, getDailyUsage, getMonthlyUsage, getUsageByNumber, getUsageByAgent', async () => {
      const u = await json(client.usage.getUsage());
      expect(u.numbers.limit).to.equal(10);
      expect((await json(client.usage.getDailyUsage({ days: 7 }))).data).to.have.length(7);
      expect((await json(client.usage.getMonthlyUsage({ months: 2 }))).data).to.have.length(2);
      expect((await json(client.usage.getUsageByNumber())).data.map((n: any) => n.numberId)).to.include(numberId);
      expect((await json(client.usage.getUsageByAgent({ period: 'month' }))).data.map((a: any) => a.agentId)).to.include(agentId);
    });

    it('getRegistrationStatus', async () => {
      expect((await json(client.registration.getRegistrationStatus())).campaign_status).to.equal('none');
    });

    it('createSubAccount, listSubAccounts, updateSubAccount, deleteSubAccount', async () => {
      const sub = await json(client.subAccounts.createSubAccount({ name: 'Branch office' }));
      expect((await json(client.subAccounts.listSubAccounts({}))).data.map((s: any) => s.id)).to.include(sub.id);
      expect(await json(client.subAccounts.updateSubAccount({ sub_account_id: sub.id, name: 'Branch office, north' }))).to.include({
        name: 'Branch office, north',
      });
      await client.subAccounts.deleteSubAccount({ sub_account_id: sub.id });
      expect((await json(client.subAccounts.listSubAccounts({}))).data.map((s: any) => s.id)).to.not.include(sub.id);
    });
  });

  describe('deleting', () => {
    it('deleteWebhook, deleteNumber, deleteAgent (then a 404 the SDK throws)', async () => {
      await client.webhooks.deleteWebhook();
      expect(await json(client.webhooks.getWebhook())).to.equal(null);
      await client.numbers.deleteNumber({ number_id: numberId });
      expect((await client.numbers.getNumber({ number_id: numberId })).status).to.equal('released');
      await client.agents.deleteAgent({ agent_id: agentId });
      const gone = await client.agents.getAgent({ agent_id: agentId }).catch((e: unknown) => e);
      expect((gone as AgentPhoneError).statusCode).to.equal(404);
    });
  });
});
