import type { AgentCommands } from '../../application/agents/agent-commands.js';
import type { AgentQueries } from '../../application/agents/agent-queries.port.js';
import type { VoiceCataloguePort } from '../../application/agents/voice-catalogue.port.js';
import { token } from '../capabilities/token.js';

/** The agents capability's tokens (its module binds them). */
export const AGENTS = {
  Commands: token<AgentCommands>('AgentCommands'),
  Queries: token<AgentQueries>('AgentQueries'),
  VoiceCatalogue: token<VoiceCataloguePort>('VoiceCataloguePort'),
} as const;
