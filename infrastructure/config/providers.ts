import type { Config } from './config.js';

/** The carrier `CARRIER` names (docs/configuration.md); unset, the sandbox kit's in sandbox mode, none in live mode. */
export const carrierNameOf = (cfg: Config): string | null => cfg.CARRIER ?? (cfg.PROVIDER_MODE === 'sandbox' ? 'sandbox' : null);

/** Which chat platform adapter runs (docs/configuration.md#chat-app-channel): the sandbox in sandbox mode unless told otherwise. */
export const chatappProviderOf = (cfg: Config): 'sandbox' | 'cloud' =>
  cfg.CHATAPP_PROVIDER ?? (cfg.PROVIDER_MODE === 'sandbox' ? 'sandbox' : 'cloud');

/** Which rich-messaging provider runs (docs/configuration.md#rich-messaging): the sandbox in sandbox mode unless told otherwise, else none. */
export const richProviderOf = (cfg: Config): 'sandbox' | 'none' =>
  cfg.RICH_PROVIDER ?? (cfg.PROVIDER_MODE === 'sandbox' ? 'sandbox' : 'none');

/**
 * Which parts of the sandbox kit run (docs/sandbox.md): the telecom side (carrier, SMS, SIP, voice, clock, e-mail
 * outbox, 10DLC review) in sandbox mode; the chat platform and the rich provider when their provider is `sandbox` too.
 */
export const sandboxParts = (cfg: Config) => {
  const telecom = cfg.PROVIDER_MODE === 'sandbox';
  return {
    telecom,
    chatapp: telecom && chatappProviderOf(cfg) === 'sandbox',
    rich: telecom && richProviderOf(cfg) === 'sandbox',
  } as const;
};
export type SandboxPart = keyof ReturnType<typeof sandboxParts>;
