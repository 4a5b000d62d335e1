import { assertNever, type Command, type Decider, type Event } from '../shared/types.js';

/**
 * An account's switch of the chat-application channel, `chatapp_settings-<accountId>` (docs/chatapp.md#switching-it-off):
 * on by default; while off, connections, numbers, templates and sends of the channel answer CHATAPP_NOT_ENABLED
 * and inbound chat messages are dropped.
 */
export const chatappSettingsStream = (accountId: string) => `chatapp_settings-${accountId}`;

export type ChatappSettings = Readonly<{ enabled: boolean }>;
export const DEFAULT_CHATAPP_SETTINGS: ChatappSettings = { enabled: true };

export type ChatappSettingsCommand = Command<'SetChatappEnabled', { enabled: boolean }>;
export type ChatappSettingsEvent = Event<'ChatappSettingsChanged', { enabled: boolean; changedAt: string }>;

export const chatappSettingsDecider: Decider<ChatappSettingsCommand, ChatappSettingsEvent, ChatappSettings> = {
  initialState: () => DEFAULT_CHATAPP_SETTINGS,
  decide: (cmd, s) => {
    switch (cmd.type) {
      case 'SetChatappEnabled':
        return cmd.data.enabled === s.enabled
          ? []
          : [{ type: 'ChatappSettingsChanged', data: { enabled: cmd.data.enabled, changedAt: cmd.metadata.now } }];
      default:
        return assertNever(cmd.type);
    }
  },
  evolve: (s, e) => (e.type === 'ChatappSettingsChanged' ? { ...s, enabled: e.data.enabled } : s),
};
