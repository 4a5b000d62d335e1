import type { AccountQueries } from '../../application/accounts/account-queries.port.js';
import type { RequestContext } from '../../application/shared/context.js';
import { DomainError } from '../../domain/shared/errors.js';
import type { Api } from './api.js';
import { z } from './openapi.js';

const AccountIdParams = z.object({ account_id: z.string().min(1).max(100) });

/**
 * An operator's pair of routes over one account's settings of a capability (docs/operations.md): `GET` and `PATCH`
 * `/admin/accounts/{account_id}/<segment>`, 404 for an account that does not exist, the change recorded as the
 * operator's (`actor: admin`).
 */
export function adminSettingsRoutes<S, B extends z.ZodType>(
  api: Api,
  d: Readonly<{
    accounts: AccountQueries;
    segment: string;
    summaries: Readonly<{ get: string; patch: string }>;
    response: z.ZodType<S>;
    body: B;
    read: (accountId: string) => Promise<S>;
    change: (ctx: RequestContext, accountId: string, body: z.infer<B>) => Promise<S>;
  }>,
): void {
  const requireAccount = async (accountId: string) => {
    if (!(await d.accounts.get(accountId))) throw new DomainError('ACCOUNT_NOT_FOUND', 'Account not found');
  };
  const path = `/admin/accounts/:account_id/${d.segment}`;
  api.route({
    method: 'get',
    path,
    tag: 'admin',
    auth: false,
    summary: d.summaries.get,
    params: AccountIdParams,
    response: d.response,
    errors: [401, 403, 404],
    handler: async ({ params }) => {
      await requireAccount(params.account_id);
      return d.read(params.account_id);
    },
  });
  api.route({
    method: 'patch',
    path,
    tag: 'admin',
    auth: false,
    summary: d.summaries.patch,
    params: AccountIdParams,
    body: d.body,
    response: d.response,
    errors: [401, 403, 404],
    handler: async ({ params, body, ctx }) => {
      await requireAccount(params.account_id);
      return d.change({ ...ctx, actor: 'admin' }, params.account_id, body);
    },
  });
}
