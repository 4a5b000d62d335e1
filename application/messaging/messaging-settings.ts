import { messagingSettingsDecider, messagingSettingsStream } from '../../domain/conversation/messaging-settings.decider.js';
import type { MessagingSettings } from '../../domain/conversation/rules.js';
import type { RequestContext } from '../shared/context.js';
import type { CommandExecutor } from '../shared/execute.js';

/** An account's messaging settings (docs/messaging.md#settings), read from its stream (never stale). */
export class MessagingSettingsService {
  constructor(private readonly exec: CommandExecutor) {}

  async of(accountId: string): Promise<MessagingSettings> {
    return (await this.exec.state(messagingSettingsDecider, messagingSettingsStream(accountId))).state;
  }

  async change(accountId: string, changes: Partial<MessagingSettings>, ctx: RequestContext): Promise<MessagingSettings> {
    const r = await this.exec.execute(
      messagingSettingsDecider,
      messagingSettingsStream(accountId),
      { type: 'ChangeMessagingSettings', data: { changes } },
      ctx,
      { accountId },
    );
    return r.state;
  }
}
