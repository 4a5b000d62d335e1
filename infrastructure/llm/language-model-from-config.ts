import type { LanguageModelPort } from '../../application/calls/language-model.port.js';
import { assertNever } from '../../domain/shared/types.js';
import type { Config } from '../config/config.js';
import { SandboxLanguageModel } from '../sandbox/llm/language-model.js';
import { OpenAiChatModel } from './openai-chat-model.js';

/**
 * Hosted mode's language model as `LLM_PROVIDER` names it (docs/language-model.md#configuration). `openai` without
 * `LLM_API_KEY` throws a configuration error here, so a process that builds its model at start stops there rather
 * than at its first call.
 */
export function languageModelFromConfig(cfg: Config): LanguageModelPort {
  switch (cfg.LLM_PROVIDER) {
    case 'sandbox':
      return new SandboxLanguageModel();
    case 'openai':
      return new OpenAiChatModel({
        baseUrl: cfg.LLM_BASE_URL,
        apiKey: cfg.LLM_API_KEY,
        models: { turbo: cfg.LLM_MODEL_TURBO, balanced: cfg.LLM_MODEL_BALANCED, max: cfg.LLM_MODEL_MAX },
        timeoutMs: cfg.LLM_TIMEOUT_MS,
      });
    default:
      return assertNever(cfg.LLM_PROVIDER);
  }
}
