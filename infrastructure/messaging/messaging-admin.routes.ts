import type { AccountQueries } from '../../application/accounts/account-queries.port.js';
import type { MessagingSettingsService } from '../../application/messaging/messaging-settings.js';
import type { MessagingSettings } from '../../domain/conversation/rules.js';
import { DomainError } from '../../domain/shared/errors.js';
import type { Api } from '../http/api.js';
import { z } from '../http/openapi.js';
import { MessagingSettingsBody } from './messaging.schemas.js';

const AccountIdParams = z.object({ account_id: z.string().min(1).max(100) });

/** Operators set an account's messaging caps, opt-out scope and keyword answers (docs/messaging.md#settings). */
export function messagingAdminRoutes(api: Api, d: { settings: MessagingSettingsService; accounts: AccountQueries }): void {
  const requireAccount = async (accountId: string) => {
    if (!(await d.accounts.get(accountId))) throw new DomainError('ACCOUNT_NOT_FOUND', 'Account not found');
  };
  api.route({
    method: 'get',
    path: '/admin/accounts/:account_id/messaging',
    tag: 'admin',
    auth: false,
    summary: "An account's messaging settings",
    params: AccountIdParams,
    response: MessagingSettingsBody,
    errors: [401, 403, 404],
    handler: async ({ params }) => {
      await requireAccount(params.account_id);
      return d.settings.of(params.account_id);
    },
  });
  api.route({
    method: 'patch',
    path: '/admin/accounts/:account_id/messaging',
    tag: 'admin',
    auth: false,
    summary: "Change an account's messaging settings (daily caps, streak limit, opt-out scope, inbound-only numbers, keyword answers)",
    params: AccountIdParams,
    body: MessagingSettingsBody.partial().strict(),
    response: MessagingSettingsBody,
    errors: [401, 403, 404],
    handler: async ({ params, body, ctx }) => {
      await requireAccount(params.account_id);
      return d.settings.change(params.account_id, body as Partial<MessagingSettings>, { ...ctx, actor: 'admin' });
    },
  });
}
