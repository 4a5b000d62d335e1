import type { AccountCommands } from '../../application/accounts/account-commands.js';
import { formatDollars, MAX_AMOUNT_MICROS } from '../../domain/account/money.js';
import type { Api } from '../http/api.js';
import { z } from '../http/openapi.js';

const CreateAccountBody = z
  .object({
    name: z.string().trim().min(1).max(200),
    parentAccountId: z.string().min(1).nullish(),
    numberLimit: z.number().int().min(0).max(100_000).optional(),
  })
  .openapi('AdminCreateAccountRequest');

const CreditBody = z
  .object({
    // the decider also refuses a credit that would take the balance over its maximum (docs/input-rules.md)
    amountMicros: z
      .number()
      .int()
      .positive()
      .max(MAX_AMOUNT_MICROS, `must be at most ${MAX_AMOUNT_MICROS} micro-dollars (${formatDollars(MAX_AMOUNT_MICROS)}) per credit`),
    reason: z.string().max(200).default('top-up'),
  })
  .openapi('AdminCreditRequest');

const AccountLimitsBody = z
  .object({
    numberLimit: z.number().int().min(0).max(100_000),
  })
  .openapi('AdminAccountLimitsRequest');

export function adminRoutes(api: Api, deps: { accounts: AccountCommands }): void {
  const tag = 'admin';
  api.route({
    method: 'post',
    path: '/admin/accounts',
    tag,
    summary: 'Create an account and its first API key (shown once)',
    auth: false,
    body: CreateAccountBody,
    response: z.object({ accountId: z.string(), apiKey: z.string() }),
    handler: async ({ body, ctx }) => {
      const r = await deps.accounts.open(ctx, {
        name: body.name,
        ...(body.parentAccountId ? { parentAccountId: body.parentAccountId } : {}),
        ...(body.numberLimit !== undefined ? { numberLimit: body.numberLimit } : {}),
      });
      return { accountId: r.accountId, apiKey: r.apiKey };
    },
  });
  api.route({
    method: 'post',
    path: '/admin/accounts/:account_id/credit',
    tag,
    summary: 'Add credit to an account (integer micro-dollars)',
    auth: false,
    params: z.object({ account_id: z.string().min(1) }),
    body: CreditBody,
    errors: [404],
    response: z.object({ accountId: z.string(), balanceMicros: z.number().int() }),
    handler: async ({ params, body, ctx }) => {
      const view = await deps.accounts.credit(ctx, params.account_id, body.amountMicros, body.reason);
      return { accountId: view.accountId, balanceMicros: view.balanceMicros };
    },
  });
  api.route({
    method: 'patch',
    path: '/admin/accounts/:account_id',
    tag,
    summary: "Change an account's self-serve number limit",
    auth: false,
    params: z.object({ account_id: z.string().min(1) }),
    body: AccountLimitsBody,
    errors: [404],
    response: z.object({ accountId: z.string(), numberLimit: z.number().int(), numbersUsed: z.number().int() }),
    handler: async ({ params, body, ctx }) => {
      const view = await deps.accounts.setNumberLimitOf(ctx, params.account_id, body.numberLimit);
      return { accountId: view.accountId, numberLimit: view.numberLimit, numbersUsed: view.numbersUsed };
    },
  });
}
