/** Inversify tokens: every binding is by explicit Symbol (esbuild emits no decorator metadata). */
export const TOKENS = {
  Config: Symbol.for('Config'),
  Clock: Symbol.for('ClockPort'),
  Ids: Symbol.for('IdsPort'),
  EventStore: Symbol.for('EventStorePort'),
  ReadDb: Symbol.for('ReadDb'),
  ReadModels: Symbol.for('ReadModelsPort'),
  ApiKeySecrets: Symbol.for('ApiKeySecretsPort'),
  VoiceCatalogue: Symbol.for('VoiceCataloguePort'),
  Logger: Symbol.for('Logger'),
  AccountQueries: Symbol.for('AccountQueries'),
  AgentQueries: Symbol.for('AgentQueries'),
  AccountCommands: Symbol.for('AccountCommands'),
  AgentCommands: Symbol.for('AgentCommands'),
  ProjectionEngine: Symbol.for('ProjectionEngine'),
  UsageQueries: Symbol.for('UsageQueries'),
  UsageReport: Symbol.for('UsageReport'),
} as const;
