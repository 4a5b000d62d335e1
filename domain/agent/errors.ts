/** Error codes of agents (docs/errors.md). */
declare module '../shared/errors.js' {
  interface ErrorCodes {
    AGENT_NOT_FOUND: true;
  }
}
export type AgentErrorCode = 'AGENT_NOT_FOUND';
