import { CALLS } from '../calls/tokens.js';
import type { Capability } from '../capabilities/capability.js';
import type { HttpError } from '../http/errors.js';
import { PLATFORM } from '../platform/tokens.js';
import { speechToTextFromConfig, textToSpeechFromConfig } from '../speech/module-support.js';
import type { WebCallErrorCode } from './errors.js';
import { WEB_CALLS } from './tokens.js';
import { webCallRoutes } from './web-call.routes.js';
import { WEB_CALL_SOCKET_PATH, WebCallGateway } from './web-call-gateway.js';

/**
 * Web calls in the browser (docs/calls.md#web-calls): the WebSocket a page joins its web call on, with speech
 * recognised and spoken by the configured engines (docs/speech.md), the browser SDK and the demo page. The call
 * itself is the calls capability's: its session, turns, webhooks and record are the same as a phone call's.
 */
export const webCalls = {
  name: 'webCalls',
  bind: (b, cfg) => {
    b.value(WEB_CALLS.SpeechToText, speechToTextFromConfig(cfg));
    b.value(WEB_CALLS.TextToSpeech, textToSpeechFromConfig(cfg));
    b.factory(
      WEB_CALLS.Gateway,
      (r) =>
        new WebCallGateway({
          commands: r(CALLS.Commands),
          log: r(PLATFORM.Logger),
          leg: {
            tts: r(WEB_CALLS.TextToSpeech),
            stt: r(WEB_CALLS.SpeechToText),
            log: r(PLATFORM.Logger),
            endSilenceMs: cfg.WEB_CALL_END_SILENCE_MS,
          },
          joinTimeoutMs: 30_000,
        }),
    );
  },
  routes: { public: (api) => webCallRoutes(api) },
  upgrades: (r, _cfg) => [
    {
      path: WEB_CALL_SOCKET_PATH,
      handle: (req, socket, head) => r(WEB_CALLS.Gateway).handleUpgrade(req, socket, head),
      drain: () => r(WEB_CALLS.Gateway).drain(),
    },
  ],
  close: async (r) => {
    await r(WEB_CALLS.Gateway).close();
  },
  errors: {
    WEBSOCKET_REQUIRED: {
      status: 426,
      shape: 'envelope',
      type: 'invalid_request_error',
      fix: 'Open a WebSocket to this path (the browser SDK at /sdk/web-call.js does) and send {"type":"join","accessToken":"…"} first.',
    },
  } satisfies Record<WebCallErrorCode, HttpError>,
} as const satisfies Capability;
