import { type AgentCommand, type AgentEvent, agentDecider } from '../../domain/agent/agent.decider.js';
import { AGENT_DEFAULTS, type AgentConfig } from '../../domain/agent/agent.js';
import { deciderSpec } from '../support/decider-spec.js';

const { given } = deciderSpec(agentDecider);
const metadata = { now: '2026-01-01T00:00:00.000Z', accountId: 'acc_1' };
const config: AgentConfig = { ...AGENT_DEFAULTS, name: 'Support', voice: 'sandbox-aria', transferNumber: '+14155550100' };
const created: AgentEvent = { type: 'AgentCreated', data: { agentId: 'agt_1', accountId: 'acc_1', config, createdAt: metadata.now } };
const update = (changes: Partial<AgentConfig>, accountId = 'acc_1'): AgentCommand => ({
  type: 'UpdateAgent',
  data: { agentId: 'agt_1', changes },
  metadata: { ...metadata, accountId },
});
const del = (accountId = 'acc_1'): AgentCommand => ({
  type: 'DeleteAgent',
  data: { agentId: 'agt_1' },
  metadata: { ...metadata, accountId },
});

describe('Agent decider', () => {
  it('creates an agent for the acting account', () =>
    given([])
      .when({ type: 'CreateAgent', data: { agentId: 'agt_1', config }, metadata })
      .then([created]));
  it('treats creating the same agent again as a retry', () =>
    given([created])
      .when({ type: 'CreateAgent', data: { agentId: 'agt_1', config }, metadata })
      .then([]));
  it('records only the fields that really change', () =>
    given([created])
      .when(update({ name: 'Support', transferNumber: null, voiceSpeed: 1 }))
      .then([{ type: 'AgentUpdated', data: { agentId: 'agt_1', changes: { transferNumber: null }, updatedAt: metadata.now } }]));
  it('is a no-op when nothing changes', () =>
    given([created])
      .when(update({ name: 'Support' }))
      .then([]));
  it('records a voice-mode switch as its own fact, for re-provisioning', () =>
    given([created])
      .when(update({ voiceMode: 'hosted', systemPrompt: 'Be kind' }))
      .then([
        {
          type: 'AgentUpdated',
          data: { agentId: 'agt_1', changes: { voiceMode: 'hosted', systemPrompt: 'Be kind' }, updatedAt: metadata.now },
        },
        { type: 'AgentVoiceModeSwitched', data: { agentId: 'agt_1', from: 'webhook', to: 'hosted', switchedAt: metadata.now } },
      ]));
  it("hides another account's agent as not found", () => {
    given([created])
      .when(update({ name: 'X' }, 'acc_2'))
      .thenThrows('AGENT_NOT_FOUND');
    given([created]).when(del('acc_2')).thenThrows('AGENT_NOT_FOUND');
  });
  it('deletes an agent, remembering its name', () =>
    given([created])
      .when(del())
      .then([{ type: 'AgentDeleted', data: { agentId: 'agt_1', accountId: 'acc_1', name: 'Support', deletedAt: metadata.now } }]));
  it('treats a deleted agent as gone', () => {
    const deleted: AgentEvent = {
      type: 'AgentDeleted',
      data: { agentId: 'agt_1', accountId: 'acc_1', name: 'Support', deletedAt: metadata.now },
    };
    given([created, deleted]).when(del()).thenThrows('AGENT_NOT_FOUND');
    given([created, deleted])
      .when(update({ name: 'Back' }))
      .thenThrows('AGENT_NOT_FOUND');
  });
  it('applies updates in order when folding', () => {
    const renamed: AgentEvent = { type: 'AgentUpdated', data: { agentId: 'agt_1', changes: { name: 'Sales' }, updatedAt: metadata.now } };
    given([created, renamed])
      .when(update({ name: 'Sales' }))
      .then([]);
  });
});
