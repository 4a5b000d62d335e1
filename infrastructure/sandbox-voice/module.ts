import type { Capability } from '../capabilities/capability.js';
import { httpError } from '../http/errors.js';
import { PLATFORM } from '../platform/tokens.js';
import { SandboxVoiceEngine } from '../providers/sandbox/sandbox-voice-engine.js';
import type { SandboxVoiceErrorCode } from './errors.js';
import { sandboxVoiceCommands } from './sandbox-voice.commands.js';
import { sandboxVoiceRoutes } from './sandbox-voice.routes.js';
import { SANDBOX_VOICE } from './tokens.js';

/**
 * The sandbox voice engine (docs/sandbox.md#voice): the simulated telephone network and far ends of sandbox
 * mode, held in this process's memory, with its control API and CLI. It binds the engine only; the calls
 * capability makes it its voice engine. In live mode this module binds nothing and mounts no routes.
 */
export const sandboxVoice = {
  name: 'sandboxVoice',
  bind: (b, cfg) => {
    if (cfg.PROVIDER_MODE !== 'sandbox') return;
    b.factory(
      SANDBOX_VOICE.Engine,
      (r) =>
        new SandboxVoiceEngine(
          {
            wordsPerMinute: cfg.SANDBOX_VOICE_WORDS_PER_MINUTE,
            ringMs: cfg.SANDBOX_VOICE_RING_MS,
            replyPauseMs: cfg.SANDBOX_VOICE_REPLY_PAUSE_MS,
          },
          r(PLATFORM.Clock),
          r(PLATFORM.Logger),
        ),
    );
  },
  routes: {
    public: (api, r) => {
      if (r(PLATFORM.Config).PROVIDER_MODE === 'sandbox') sandboxVoiceRoutes(api, { engine: r(SANDBOX_VOICE.Engine) });
    },
  },
  // the calls held here end with the process: their far ends are hung up (`ended('local_hangup')`)
  close: async (r) => {
    if (r(PLATFORM.Config).PROVIDER_MODE === 'sandbox') await r(SANDBOX_VOICE.Engine).close();
  },
  errors: {
    SANDBOX_CALL_REFUSED: {
      ...httpError.conflict,
      fix: "Call one of the platform's active numbers that has an agent, in a process that hosts calls.",
    },
    SANDBOX_CALL_NOT_CONNECTED: { ...httpError.conflict, fix: 'GET /sandbox/calls/{call_id} shows where the call is.' },
  } satisfies Record<SandboxVoiceErrorCode, unknown>,
  cli: sandboxVoiceCommands,
} as const satisfies Capability;
