import type { AccountCommands } from '../../application/accounts/account-commands.js';
import type { AccountQueries, AccountView, ApiKeyView } from '../../application/accounts/account-queries.port.js';
import type { Billing } from '../../application/accounts/billing.js';
import type { UsageReport } from '../../application/accounts/usage.js';
import type { Api } from '../http/api.js';
import { z } from '../http/openapi.js';
import { offsetEnvelope, offsetQuery, toOffsetPage } from '../http/pagination.js';

const ApiKeyResponse = z
  .object({
    id: z.string(),
    name: z.string(),
    prefix: z.string(),
    createdAt: z.string(),
    lastUsedAt: z.string().nullable(),
    revokedAt: z.string().nullable(),
  })
  .openapi('ApiKeyResponse');
const CreatedApiKeyResponse = ApiKeyResponse.extend({
  key: z.string().openapi({ description: 'the key itself: shown once, store it now' }),
}).openapi('CreatedApiKeyResponse');
const SubAccountResponse = z
  .object({
    id: z.string(),
    name: z.string(),
    parentAccountId: z.string(),
    status: z.string(),
    createdAt: z.string(),
  })
  .openapi('SubAccountResponse');
const NameBody = z.object({ name: z.string().trim().min(1).max(200) });

const Money = z.object({ micros: z.number().int(), dollars: z.number(), accountId: z.string() });
const UsageResponse = z
  .object({
    plan: z.object({
      name: z.string(),
      limits: z.object({
        numbers: z.number().int(),
        messagesPerMonth: z.number().int(),
        voiceMinutesPerMonth: z.number().int(),
        maxCallDurationMinutes: z.number().int(),
        concurrentCalls: z.number().int(),
      }),
    }),
    numbers: z.object({ used: z.number().int(), limit: z.number().int(), remaining: z.number().int() }),
    stats: z.object({
      totalMessages: z.number().int(),
      messagesLast24h: z.number().int(),
      messagesLast7d: z.number().int(),
      messagesLast30d: z.number().int(),
      totalCalls: z.number().int(),
      callsLast24h: z.number().int(),
      callsLast7d: z.number().int(),
      callsLast30d: z.number().int(),
      totalWebhookDeliveries: z.number().int(),
      successfulWebhookDeliveries: z.number().int(),
      failedWebhookDeliveries: z.number().int(),
      messagesSent: z.number().int(),
      messagesSentLast30d: z.number().int(),
      messagesReceived: z.number().int(),
      messagesReceivedLast30d: z.number().int(),
      messageSegments: z.number().int().openapi({ description: 'SMS segments of the texts sent and received (what carriers bill by)' }),
      messageSegmentsLast30d: z.number().int(),
      callSeconds: z.number().int().openapi({ description: 'seconds of the calls counted (from answer to end)' }),
      callSecondsLast30d: z.number().int(),
      lookups: z.number().int().openapi({ description: 'numbers looked up and charged' }),
      spentMicros: z
        .number()
        .int()
        .openapi({ description: "everything charged to this account (a sub-account's charges are its parent's)" }),
      spentMicrosLast30d: z.number().int(),
    }),
    periodStart: z.string(),
    periodEnd: z.string(),
    balance: Money.openapi({
      description: 'balance of the billing account (the parent, for a sub-account), integer micro-dollars and dollars',
    }),
  })
  .openapi('UsageResponse');

const key = (k: ApiKeyView) => ({
  id: k.keyId,
  name: k.name,
  prefix: k.prefix,
  createdAt: k.createdAt,
  lastUsedAt: k.lastUsedAt,
  revokedAt: k.revokedAt,
});
const sub = (a: AccountView) => ({
  id: a.accountId,
  name: a.name,
  parentAccountId: a.parentAccountId ?? '',
  status: a.status,
  createdAt: a.createdAt,
});

export function accountRoutes(
  api: Api,
  d: { commands: AccountCommands; queries: AccountQueries; usage: UsageReport; billing: Billing },
): void {
  api.route({
    method: 'get',
    path: '/v1/api-keys',
    tag: 'api-keys',
    summary: "List the account's API keys (never the keys themselves)",
    response: z.object({ data: z.array(ApiKeyResponse) }),
    handler: async ({ ctx }) => ({ data: (await d.queries.keys(ctx.accountId)).map(key) }),
  });
  api.route({
    method: 'post',
    path: '/v1/api-keys',
    tag: 'api-keys',
    summary: 'Create an API key; the key is in this response only',
    status: 201,
    body: z.object({ name: z.string().trim().min(1).max(100).default('api key') }).openapi('CreateApiKeyRequest'),
    response: CreatedApiKeyResponse,
    handler: async ({ ctx, body }) => {
      const r = await d.commands.issueKey(ctx, body.name);
      return { ...key(r.view), key: r.key };
    },
  });
  api.route({
    method: 'delete',
    path: '/v1/api-keys/:key_id',
    tag: 'api-keys',
    summary: 'Revoke an API key; it is refused from the moment this answers',
    params: z.object({ key_id: z.string().min(1).max(64) }),
    errors: [404],
    response: z.object({ success: z.boolean(), id: z.string(), revokedAt: z.string().nullable() }),
    handler: async ({ ctx, params }) => {
      const k = await d.commands.revokeKey(ctx, params.key_id);
      return { success: true, id: k.keyId, revokedAt: k.revokedAt };
    },
  });

  const SubIdParams = z.object({ sub_account_id: z.string().min(1).max(64) });
  api.route({
    method: 'get',
    path: '/v1/sub-accounts',
    tag: 'sub-accounts',
    summary: 'List sub-accounts',
    query: offsetQuery(),
    response: offsetEnvelope(SubAccountResponse),
    handler: async ({ ctx, query }) => {
      const page = await d.queries.subAccounts(ctx.accountId, query);
      return toOffsetPage({ data: page.data.map(sub), total: page.total }, query);
    },
  });
  api.route({
    method: 'post',
    path: '/v1/sub-accounts',
    tag: 'sub-accounts',
    summary: 'Create a sub-account (address it with X-Sub-Account-Id)',
    body: NameBody.openapi('CreateSubAccountRequest'),
    response: SubAccountResponse,
    errors: [403],
    handler: async ({ ctx, body }) => sub(await d.commands.openSubAccount(ctx, body.name)),
  });
  api.route({
    method: 'patch',
    path: '/v1/sub-accounts/:sub_account_id',
    tag: 'sub-accounts',
    summary: 'Rename a sub-account',
    params: SubIdParams,
    body: NameBody.openapi('UpdateSubAccountRequest'),
    response: SubAccountResponse,
    errors: [403, 404],
    handler: async ({ ctx, params, body }) => sub(await d.commands.renameSubAccount(ctx, params.sub_account_id, body.name)),
  });
  api.route({
    method: 'delete',
    path: '/v1/sub-accounts/:sub_account_id',
    tag: 'sub-accounts',
    summary: 'Close a sub-account; its resources become unreachable',
    params: SubIdParams,
    response: z.object({ success: z.boolean(), id: z.string() }),
    errors: [403, 404],
    handler: async ({ ctx, params }) => {
      await d.commands.closeSubAccount(ctx, params.sub_account_id);
      return { success: true, id: params.sub_account_id };
    },
  });

  api.route({
    method: 'get',
    path: '/v1/usage',
    tag: 'usage',
    summary: 'Plan, number limit, usage statistics and balance',
    response: UsageResponse,
    handler: ({ ctx }) => d.usage.forAccount(ctx.accountId),
  });
  api.route({
    method: 'get',
    path: '/v1/billing/ledger',
    tag: 'usage',
    summary: "The billing account's credits and charges, newest first (micro-dollars)",
    query: offsetQuery({ defaultLimit: 50 }),
    response: offsetEnvelope(
      z.object({
        id: z.string(),
        kind: z.string(),
        amountMicros: z.number().int(),
        balanceMicros: z.number().int(),
        description: z.string(),
        reference: z.string().nullable(),
        at: z.string(),
      }),
    ),
    handler: async ({ ctx, query }) => toOffsetPage(await d.queries.ledger(await d.billing.billingAccountOf(ctx.accountId), query), query),
  });
}
