import { changedFields } from '../shared/changes.js';
import { DomainError } from '../shared/errors.js';
import { assertNever, type Command, type Decider, type Event } from '../shared/types.js';
import type { AgentConfig, VoiceMode } from './agent.js';

/** The stream of an agent: `<category>-<id>` (docs/event-store.md#aggregates-and-events). */
export const agentStream = (id: string) => `agent-${id}`;

export type AgentChanges = Partial<AgentConfig>;

export type AgentCommand =
  | Command<'CreateAgent', { agentId: string; config: AgentConfig }>
  | Command<'UpdateAgent', { agentId: string; changes: AgentChanges }>
  | Command<'DeleteAgent', { agentId: string }>;

export type AgentEvent =
  | Event<'AgentCreated', { agentId: string; accountId: string; config: AgentConfig; createdAt: string }>
  | Event<'AgentUpdated', { agentId: string; changes: AgentChanges; updatedAt: string }>
  /** Switching voice mode re-provisions the voice agent: a reactor listens for this fact. */
  | Event<'AgentVoiceModeSwitched', { agentId: string; from: VoiceMode; to: VoiceMode; switchedAt: string }>
  | Event<'AgentDeleted', { agentId: string; accountId: string; name: string; deletedAt: string }>;

export const agentEventTypes = ['AgentCreated', 'AgentUpdated', 'AgentVoiceModeSwitched', 'AgentDeleted'] as const;

export type AgentState =
  | { status: 'none' }
  | { status: 'active'; agentId: string; accountId: string; config: AgentConfig }
  | { status: 'deleted'; agentId: string; accountId: string; name: string };

const notFound = () => new DomainError('AGENT_NOT_FOUND', 'Agent not found');

export const agentDecider: Decider<AgentCommand, AgentEvent, AgentState> = {
  initialState: () => ({ status: 'none' }),

  decide: (cmd, s) => {
    const { now, accountId } = cmd.metadata;
    // another account's agent is indistinguishable from a missing one
    const owned = s.status !== 'none' && s.accountId === accountId;
    switch (cmd.type) {
      case 'CreateAgent':
        if (s.status !== 'none') {
          if (!owned) throw new DomainError('CONCURRENCY_CONFLICT', 'Agent id already taken');
          return [];
        }
        return [{ type: 'AgentCreated', data: { agentId: cmd.data.agentId, accountId, config: cmd.data.config, createdAt: now } }];
      case 'UpdateAgent': {
        if (s.status !== 'active' || !owned) throw notFound();
        const changes = changedFields(s.config, cmd.data.changes);
        if (Object.keys(changes).length === 0) return [];
        const events: AgentEvent[] = [{ type: 'AgentUpdated', data: { agentId: s.agentId, changes, updatedAt: now } }];
        if (changes.voiceMode !== undefined) {
          events.push({
            type: 'AgentVoiceModeSwitched',
            data: { agentId: s.agentId, from: s.config.voiceMode, to: changes.voiceMode, switchedAt: now },
          });
        }
        return events;
      }
      case 'DeleteAgent':
        if (s.status !== 'active' || !owned) throw notFound();
        return [{ type: 'AgentDeleted', data: { agentId: s.agentId, accountId: s.accountId, name: s.config.name, deletedAt: now } }];
      default:
        return assertNever(cmd);
    }
  },

  evolve: (s, e) => {
    switch (e.type) {
      case 'AgentCreated':
        return { status: 'active', agentId: e.data.agentId, accountId: e.data.accountId, config: e.data.config };
      case 'AgentUpdated':
        return s.status === 'active' ? { ...s, config: { ...s.config, ...e.data.changes } } : s;
      case 'AgentVoiceModeSwitched':
        return s;
      case 'AgentDeleted':
        return s.status === 'active' ? { status: 'deleted', agentId: s.agentId, accountId: s.accountId, name: s.config.name } : s;
      default:
        return s;
    }
  },
};
