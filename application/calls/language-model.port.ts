/**
 * The built-in language model of hosted mode (docs/calls.md#hosted-mode). An OpenAI-compatible chat-completions
 * adapter serves production; the sandbox model is offline and deterministic (docs/language-model.md#the-sandbox-model).
 */
export type ModelTier = 'turbo' | 'balanced' | 'max';

export type ChatMessage = Readonly<{ role: 'system' | 'user' | 'assistant'; content: string }>;

export type CompletionRequest = Readonly<{
  tier: ModelTier;
  messages: readonly ChatMessage[];
  /** aborts the request (the caller interrupted, or the call ended) */
  signal?: AbortSignal;
}>;

export interface LanguageModelPort {
  /**
   * Streams the reply as text fragments in order, as the model produces them. Throws a `LanguageModelError`
   * when the model cannot answer (the turn is then silent and records why).
   */
  stream(req: CompletionRequest): AsyncIterable<string>;
  /** what the model is, for the call record (`sandbox`, or the configured model name) */
  describe(tier: ModelTier): string;
}

export class LanguageModelError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LanguageModelError';
  }
}
