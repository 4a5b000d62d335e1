import type { Container } from 'inversify';
import type { AgentCommands } from '../../../application/agents/agent-commands.js';
import type { AccountCommands } from '../../../application/accounts/account-commands.js';
import { TOKENS } from '../../../application/ports/tokens.js';
import type { Api } from '../api.js';
import { adminRoutes } from './admin.routes.js';
import { agentRoutes } from './agents.routes.js';
import { numberRoutes } from './numbers.routes.js';
import { sandboxTelecomRoutes } from './sandbox-telecom.routes.js';
import { sipTrunkRoutes } from './sip-trunks.routes.js';
import { webhookRoutes } from './webhooks.routes.js';
import { accountRoutes } from './accounts.routes.js';
import { signUpRouteModules } from '../../signup.module.js';

/** A capability's routes: registered on an Api (express router + OpenAPI registry), resolved from the container. */
export type RouteModule = (api: Api, c: Container) => void;

/** `/v1/*`: behind API-key authentication, sub-account scoping and the throttle. One line per capability. */
export const v1Routes: readonly RouteModule[] = [
  (api, c) => agentRoutes(api, { commands: c.get<AgentCommands>(TOKENS.AgentCommands), queries: c.get(TOKENS.AgentQueries), voices: c.get(TOKENS.VoiceCatalogue) }),
  (api, c) => accountRoutes(api, { commands: c.get<AccountCommands>(TOKENS.AccountCommands), queries: c.get(TOKENS.AccountQueries), usage: c.get(TOKENS.UsageReport) }),
  numberRoutes,
  sipTrunkRoutes,
  (api, c) => webhookRoutes(api, { commands: c.get(TOKENS.WebhookCommands), queries: c.get(TOKENS.WebhookQueries), agents: c.get(TOKENS.AgentQueries), clock: c.get(TOKENS.Clock) }),
];

/** Routes without API-key authentication (sign-up, sandbox control). Each guards itself as it needs. */
export const publicRoutes: readonly RouteModule[] = [
  sandboxTelecomRoutes,
  ...signUpRouteModules,
];

/** `/admin/*`: behind the admin guard (which refuses everyone while no ADMIN_TOKEN is configured). */
export const adminRouteModules: readonly RouteModule[] = [
  (api, c) => adminRoutes(api, { accounts: c.get<AccountCommands>(TOKENS.AccountCommands) }),
];
