import type { AccountQueries } from '../../application/accounts/account-queries.port.js';
import type { MessagingSettingsService } from '../../application/messaging/messaging-settings.js';
import type { MessagingSettings } from '../../domain/conversation/rules.js';
import { adminSettingsRoutes } from '../http/admin-settings.routes.js';
import type { Api } from '../http/api.js';
import { MessagingSettingsBody } from './messaging.schemas.js';

/** Operators set an account's messaging caps, opt-out scope and keyword answers (docs/messaging.md#settings). */
export function messagingAdminRoutes(api: Api, d: { settings: MessagingSettingsService; accounts: AccountQueries }): void {
  adminSettingsRoutes(api, {
    accounts: d.accounts,
    segment: 'messaging',
    summaries: {
      get: "An account's messaging settings",
      patch: "Change an account's messaging settings (daily caps, streak limit, opt-out scope, inbound-only numbers, keyword answers)",
    },
    response: MessagingSettingsBody,
    body: MessagingSettingsBody.partial().strict(),
    read: (accountId) => d.settings.of(accountId),
    change: (ctx, accountId, body) => d.settings.change(accountId, body as Partial<MessagingSettings>, ctx),
  });
}
