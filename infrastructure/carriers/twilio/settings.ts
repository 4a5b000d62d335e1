import type { Config } from '../../config/config.js';
import type { TwilioApiOptions } from './twilio-api.js';

/** Where Twilio calls the platform (docs/carriers.md#callbacks), under PUBLIC_URL. */
export const TWILIO_CALLBACK_PATHS = { messages: '/integrations/twilio/messages', status: '/integrations/twilio/status' } as const;

export type TwilioSettings = Readonly<{
  api: TwilioApiOptions;
  /** the account's auth token: Twilio signs every callback with it (X-Twilio-Signature) */
  authToken: string;
  /** PUBLIC_URL without a trailing slash: the origin (and prefix) Twilio calls and signs over */
  publicUrl: string;
  smsUrl: string;
  statusUrl: string;
  sipTrunkSid: string | null;
  messagingServiceSid: string | null;
}>;

/**
 * The Twilio carrier's settings from the configuration (docs/configuration.md#carrier): the REST calls authenticate
 * with the API key when one is given, else with the account's auth token; `loadConfig` has refused a start that
 * lacks any of them.
 */
export function twilioSettingsOf(cfg: Config): TwilioSettings {
  const accountSid = cfg.TWILIO_ACCOUNT_SID;
  const authToken = cfg.TWILIO_AUTH_TOKEN;
  if (!accountSid || !authToken || !cfg.PUBLIC_URL)
    throw new Error('invalid configuration:\n  CARRIER=twilio needs TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN and PUBLIC_URL');
  const publicUrl = cfg.PUBLIC_URL.replace(/\/+$/, '');
  const key =
    cfg.TWILIO_API_KEY_SID && cfg.TWILIO_API_KEY_SECRET ? { username: cfg.TWILIO_API_KEY_SID, password: cfg.TWILIO_API_KEY_SECRET } : null;
  return {
    api: {
      accountSid,
      username: key?.username ?? accountSid,
      password: key?.password ?? authToken,
      baseUrls: {
        api: cfg.TWILIO_API_BASE_URL,
        lookups: cfg.TWILIO_LOOKUPS_BASE_URL,
        trunking: cfg.TWILIO_TRUNKING_BASE_URL,
        messaging: cfg.TWILIO_MESSAGING_BASE_URL,
      },
      timeoutMs: cfg.TWILIO_REQUEST_TIMEOUT_MS,
    },
    authToken,
    publicUrl,
    smsUrl: `${publicUrl}${TWILIO_CALLBACK_PATHS.messages}`,
    statusUrl: `${publicUrl}${TWILIO_CALLBACK_PATHS.status}`,
    sipTrunkSid: cfg.TWILIO_SIP_TRUNK_SID ?? null,
    messagingServiceSid: cfg.TWILIO_MESSAGING_SERVICE_SID ?? null,
  };
}
