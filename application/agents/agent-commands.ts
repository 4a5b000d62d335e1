import { agentDecider, type AgentChanges, type AgentCommand } from '../../domain/agent/agent.decider.js';
import { AGENT_DEFAULTS, type AgentConfig } from '../../domain/agent/agent.js';
import { DomainError } from '../../domain/shared/errors.js';
import { streams } from '../../domain/shared/streams.js';
import type { ClockPort } from '../ports/clock.port.js';
import type { EventStorePort } from '../ports/event-store.port.js';
import type { IdsPort } from '../ports/ids.port.js';
import type { AgentQueries, AgentView } from '../ports/queries.port.js';
import type { ReadModelsPort } from '../ports/read-models.port.js';
import type { VoiceCataloguePort } from '../ports/voice-catalogue.port.js';
import { metadataOf, type RequestContext } from '../shared/context.js';
import { handleCommand } from '../shared/handle-command.js';

export type CreateAgentInput = Partial<Omit<AgentConfig, 'name'>> & { name: string };

/** Agent use cases. Every write answers from the read model after it has caught up (read-your-writes). */
export class AgentCommands {
  constructor(
    private readonly store: EventStorePort,
    private readonly ids: IdsPort,
    private readonly clock: ClockPort,
    private readonly readModels: ReadModelsPort,
    private readonly agents: AgentQueries,
    private readonly voices: VoiceCataloguePort,
  ) {}

  private async run(ctx: RequestContext, agentId: string, type: AgentCommand['type'], data: AgentCommand['data']) {
    const cmd = { type, data, metadata: { now: this.clock.now().toISOString(), accountId: ctx.accountId } } as AgentCommand;
    const r = await handleCommand({ store: this.store, ids: this.ids }, agentDecider, streams.agent(agentId), cmd, metadataOf(ctx));
    if (r.checkpoint) await this.readModels.waitFor(r.checkpoint, r.events.map((e) => e.type));
    return r;
  }

  private async read(ctx: RequestContext, agentId: string): Promise<AgentView> {
    const view = await this.agents.get(ctx.accountId, agentId);
    if (!view) throw new DomainError('AGENT_NOT_FOUND', 'Agent not found');
    return view;
  }

  private async checkVoice(voice: string | undefined): Promise<void> {
    if (voice === undefined) return;
    const known = await this.voices.list();
    if (!known.some((v) => v.voice_id === voice)) {
      throw new DomainError('VALIDATION_ERROR', `Unknown voice '${voice}'`, [{ field: 'voice', message: 'not a voice of the configured provider; see GET /v1/agents/voices', type: 'value_error' }]);
    }
  }

  /** `agentId` lets a process (sign-up) choose the id up front, so repeating the step creates nothing new. */
  async create(ctx: RequestContext, input: CreateAgentInput, agentId = this.ids.id('agt')): Promise<AgentView> {
    await this.checkVoice(input.voice);
    const config: AgentConfig = { ...AGENT_DEFAULTS, voice: this.voices.defaultVoiceId(), ...stripUndefined(input) };
    await this.run(ctx, agentId, 'CreateAgent', { agentId, config });
    return this.read(ctx, agentId);
  }

  async update(ctx: RequestContext, agentId: string, changes: AgentChanges): Promise<AgentView> {
    await this.checkVoice(changes.voice);
    await this.run(ctx, agentId, 'UpdateAgent', { agentId, changes: stripUndefined(changes) });
    return this.read(ctx, agentId);
  }

  async delete(ctx: RequestContext, agentId: string): Promise<{ success: true; id: string; name: string }> {
    const r = await this.run(ctx, agentId, 'DeleteAgent', { agentId });
    const deleted = r.events.find((e) => e.type === 'AgentDeleted');
    return { success: true, id: agentId, name: deleted?.type === 'AgentDeleted' ? deleted.data.name : '' };
  }
}

const stripUndefined = <T extends object>(o: T): T =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
