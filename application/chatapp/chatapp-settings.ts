import { type ChatappSettings, chatappSettingsDecider, chatappSettingsStream } from '../../domain/chatapp/settings.decider.js';
import { DomainError } from '../../domain/shared/errors.js';
import type { RequestContext } from '../shared/context.js';
import type { CommandExecutor } from '../shared/execute.js';

/** The account's switch of the channel (docs/chatapp.md#switching-it-off), read from its stream (never stale). */
export class ChatappSettingsService {
  constructor(private readonly exec: CommandExecutor) {}

  async of(accountId: string): Promise<ChatappSettings> {
    return (await this.exec.state(chatappSettingsDecider, chatappSettingsStream(accountId))).state;
  }

  async requireEnabled(accountId: string): Promise<void> {
    if (!(await this.of(accountId)).enabled)
      throw new DomainError(
        'CHATAPP_NOT_ENABLED',
        'The chat-app channel is switched off for this account; switch it on with PATCH /integrations/chatapp/settings {"enabled": true}',
      );
  }

  async set(ctx: RequestContext, accountId: string, enabled: boolean): Promise<ChatappSettings> {
    const r = await this.exec.execute(
      chatappSettingsDecider,
      chatappSettingsStream(accountId),
      { type: 'SetChatappEnabled', data: { enabled } },
      ctx,
      {
        accountId,
      },
    );
    return r.state;
  }
}
