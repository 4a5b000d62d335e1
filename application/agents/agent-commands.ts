import { type AgentChanges, type AgentCommand, agentDecider, agentStream } from '../../domain/agent/agent.decider.js';
import { AGENT_DEFAULTS, type AgentConfig } from '../../domain/agent/agent.js';
import { DomainError } from '../../domain/shared/errors.js';
import type { IdsPort } from '../ports/ids.port.js';
import type { RequestContext } from '../shared/context.js';
import type { CommandExecutor, CommandInput } from '../shared/execute.js';
import type { AgentQueries, AgentView } from './agent-queries.port.js';
import type { VoiceCataloguePort } from './voice-catalogue.port.js';

/** Fields a request may leave out or send as absent (`undefined`): they take their default, or stay as they are. */
type Optional<T> = { [K in keyof T]?: T[K] | undefined };
export type CreateAgentInput = Optional<Omit<AgentConfig, 'name'>> & { name: string };
export type AgentChangesInput = Optional<AgentChanges>;

/** Agent use cases. Every write answers from the read model after it has caught up (read-your-writes). */
export class AgentCommands {
  constructor(
    private readonly exec: CommandExecutor,
    private readonly ids: IdsPort,
    private readonly agents: AgentQueries,
    private readonly voices: VoiceCataloguePort,
  ) {}

  private run(ctx: RequestContext, agentId: string, cmd: CommandInput<AgentCommand>) {
    return this.exec.execute(agentDecider, agentStream(agentId), cmd, ctx, { readYourWrites: true });
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
      throw new DomainError('VALIDATION_ERROR', `Unknown voice '${voice}'`, [
        { field: 'voice', message: 'not a voice of the configured provider; see GET /v1/agents/voices', type: 'value_error' },
      ]);
    }
  }

  /** `agentId` lets a process (sign-up) choose the id up front, so repeating the step creates nothing new. */
  async create(ctx: RequestContext, input: CreateAgentInput, agentId = this.ids.id('agt')): Promise<AgentView> {
    await this.checkVoice(input.voice);
    const config: AgentConfig = { ...AGENT_DEFAULTS, voice: this.voices.defaultVoiceId(), ...stripUndefined(input), name: input.name };
    await this.run(ctx, agentId, { type: 'CreateAgent', data: { agentId, config } });
    return this.read(ctx, agentId);
  }

  async update(ctx: RequestContext, agentId: string, changes: AgentChangesInput): Promise<AgentView> {
    await this.checkVoice(changes.voice);
    await this.run(ctx, agentId, { type: 'UpdateAgent', data: { agentId, changes: stripUndefined(changes) } });
    return this.read(ctx, agentId);
  }

  async delete(ctx: RequestContext, agentId: string): Promise<{ success: true; id: string; name: string }> {
    const r = await this.run(ctx, agentId, { type: 'DeleteAgent', data: { agentId } });
    const deleted = r.events.find((e) => e.type === 'AgentDeleted');
    return { success: true, id: agentId, name: deleted?.type === 'AgentDeleted' ? deleted.data.name : '' };
  }
}

/** The fields that were given: what is absent is left out, so that it takes its default or stays as it is. */
const stripUndefined = <T extends object>(o: Optional<T>): Partial<T> =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
