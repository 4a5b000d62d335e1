import { agentWebhookMappings } from '../../application/agents/agent.mappings.js';
import { AgentCommands } from '../../application/agents/agent-commands.js';
import type { AgentErrorCode } from '../../domain/agent/errors.js';
import { KyselyAgentQueries } from '../../projections/agents/agent.queries.js';
import { agentsProjector } from '../../projections/agents/agents.projector.js';
import type { Capability } from '../capabilities/capability.js';
import { httpError } from '../http/errors.js';
import { PLATFORM } from '../platform/tokens.js';
import { SandboxVoiceCatalogue } from '../sandbox/voice/catalogue.js';
import { agentRoutes } from './agents.routes.js';
import { AGENTS } from './tokens.js';

/** Agents: their configuration, the voice catalogue, and their lifecycle as webhook events. */
export const agents = {
  name: 'agents',
  bind: (b) => {
    b.toClass(AGENTS.VoiceCatalogue, SandboxVoiceCatalogue);
    b.factory(AGENTS.Queries, (r) => new KyselyAgentQueries(r(PLATFORM.ReadDb)));
    b.factory(
      AGENTS.Commands,
      (r) => new AgentCommands(r(PLATFORM.Executor), r(PLATFORM.Ids), r(AGENTS.Queries), r(AGENTS.VoiceCatalogue)),
    );
  },
  routes: {
    v1: (api, r) => agentRoutes(api, { commands: r(AGENTS.Commands), queries: r(AGENTS.Queries), voices: r(AGENTS.VoiceCatalogue) }),
  },
  projectors: [agentsProjector],
  webhookMappings: agentWebhookMappings,
  errors: {
    AGENT_NOT_FOUND: { ...httpError.notFound, fix: 'Check the agent id: GET /v1/agents lists the agents of this account.' },
  } satisfies Record<AgentErrorCode, unknown>,
} as const satisfies Capability;
