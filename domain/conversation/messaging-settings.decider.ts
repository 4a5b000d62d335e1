import { changedFields } from '../shared/changes.js';
import { assertNever, type Command, type Decider, type Event } from '../shared/types.js';
import { DEFAULT_MESSAGING_SETTINGS, type MessagingSettings } from './rules.js';

/** The stream of an account's messaging settings: `<category>-<id>` (docs/event-store.md#aggregates-and-events). */
export const messagingSettingsStream = (accountId: string) => `messaging_settings-${accountId}`;

/** An account's messaging settings (`messaging_settings-<accountId>`), changed by operators through the admin API. */
export type MessagingSettingsCommand = Command<'ChangeMessagingSettings', { changes: Partial<MessagingSettings> }>;
export type MessagingSettingsEvent = Event<'MessagingSettingsChanged', { changes: Partial<MessagingSettings>; changedAt: string }>;
export type MessagingSettingsState = MessagingSettings;

export const messagingSettingsDecider: Decider<MessagingSettingsCommand, MessagingSettingsEvent, MessagingSettingsState> = {
  initialState: () => DEFAULT_MESSAGING_SETTINGS,
  decide: (cmd, s) => {
    switch (cmd.type) {
      case 'ChangeMessagingSettings': {
        const changes = changedFields(s, cmd.data.changes);
        if (Object.keys(changes).length === 0) return [];
        return [{ type: 'MessagingSettingsChanged', data: { changes, changedAt: cmd.metadata.now } }];
      }
      default:
        return assertNever(cmd.type);
    }
  },
  evolve: (s, e) => ({ ...s, ...e.data.changes }),
};
