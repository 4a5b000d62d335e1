import type { AgentCommands } from '../../application/agents/agent-commands.js';
import type { AgentQueries } from '../../application/agents/agent-queries.port.js';
import type { VoiceCataloguePort } from '../../application/agents/voice-catalogue.port.js';
import { DomainError } from '../../domain/shared/errors.js';
import type { Api } from '../http/api.js';
import { offsetEnvelope, offsetQuery, toOffsetPage } from '../http/pagination.js';
import {
  AgentIdParams,
  AgentResponse,
  CreateAgentRequest,
  DeleteAgentResponse,
  UpdateAgentRequest,
  VoicesResponse,
} from './agent.schemas.js';

export function agentRoutes(api: Api, deps: { commands: AgentCommands; queries: AgentQueries; voices: VoiceCataloguePort }): void {
  const tag = 'agents';

  api.route({
    method: 'get',
    path: '/v1/agents/voices',
    tag,
    summary: 'List the voices of the configured voice provider',
    response: VoicesResponse,
    handler: async () => ({ data: await deps.voices.list() }),
  });

  api.route({
    method: 'post',
    path: '/v1/agents',
    tag,
    summary: 'Create an agent',
    body: CreateAgentRequest,
    response: AgentResponse,
    handler: ({ body, ctx }) => deps.commands.create(ctx, body),
  });

  api.route({
    method: 'get',
    path: '/v1/agents',
    tag,
    summary: 'List agents',
    query: offsetQuery(),
    response: offsetEnvelope(AgentResponse),
    handler: async ({ query, ctx }) => toOffsetPage(await deps.queries.list(ctx.accountId, query), query),
  });

  api.route({
    method: 'get',
    path: '/v1/agents/:agent_id',
    tag,
    summary: 'Get an agent with its attached numbers',
    params: AgentIdParams,
    response: AgentResponse,
    errors: [404],
    handler: async ({ params, ctx }) => {
      const agent = await deps.queries.get(ctx.accountId, params.agent_id);
      if (!agent) throw new DomainError('AGENT_NOT_FOUND', 'Agent not found');
      return agent;
    },
  });

  api.route({
    method: 'patch',
    path: '/v1/agents/:agent_id',
    tag,
    summary: 'Update an agent (send only what changes)',
    params: AgentIdParams,
    body: UpdateAgentRequest,
    response: AgentResponse,
    errors: [404, 409],
    handler: ({ params, body, ctx }) => deps.commands.update(ctx, params.agent_id, body),
  });

  api.route({
    method: 'delete',
    path: '/v1/agents/:agent_id',
    tag,
    summary: 'Delete an agent; its numbers, conversations and calls are kept',
    params: AgentIdParams,
    response: DeleteAgentResponse,
    errors: [404],
    handler: ({ params, ctx }) => deps.commands.delete(ctx, params.agent_id),
  });
}
