import type { AccountQueries } from '../../application/accounts/account-queries.port.js';
import type { ChatappCommands } from '../../application/chatapp/chatapp-commands.js';
import type { ChatappNumberView, ConnectionView, TemplateView } from '../../application/chatapp/chatapp-queries.port.js';
import type { ChatappSettingsService } from '../../application/chatapp/chatapp-settings.js';
import { adminSettingsRoutes } from '../http/admin-settings.routes.js';
import type { Api } from '../http/api.js';
import { offsetEnvelope, offsetQuery, toOffsetPage } from '../http/pagination.js';
import {
  BindRequest,
  ConnectionDeleted,
  ConnectionIdParams,
  ConnectionResponse,
  ConnectRequest,
  NumberParams,
  NumberResponse,
  SettingsBody,
  TemplateParams,
  TemplateRequest,
  TemplateResponse,
} from './chatapp.schemas.js';

/** The integration's paths carry no version prefix (docs/chatapp.md#endpoints). */
const BASE = '/integrations/chatapp';

const connection = ({ accountId: _a, ...c }: ConnectionView) => c;
const number = ({ accountId: _a, nativeNumberId: _n, ...n }: ChatappNumberView) => n;
const template = ({ accountId: _a, ...t }: TemplateView) => t;

/** Connections, numbers, templates and the account's switch (docs/chatapp.md), behind the API key. */
export function chatappRoutes(api: Api, d: { commands: ChatappCommands; settings: ChatappSettingsService }): void {
  const tag = 'chatapp';
  const c = d.commands;

  api.route({
    method: 'post',
    path: `${BASE}/connections`,
    tag,
    summary: 'Connect a business account of the chat platform: the platform verifies the token (answered `pending` while it has not)',
    body: ConnectRequest,
    response: ConnectionResponse,
    errors: [403, 422],
    handler: async ({ body, ctx }) =>
      connection(await c.connect(ctx, { businessAccountId: body.business_account_id, accessToken: body.access_token })),
  });
  api.route({
    method: 'get',
    path: `${BASE}/connections`,
    tag,
    summary: 'The connections of the account, oldest first',
    query: offsetQuery(),
    response: offsetEnvelope(ConnectionResponse),
    handler: async ({ query, ctx }) => {
      const page = await c.connections(ctx, query);
      return toOffsetPage({ data: page.data.map(connection), total: page.total }, query);
    },
  });
  api.route({
    method: 'get',
    path: `${BASE}/connections/:connection_id`,
    tag,
    summary: 'A connection',
    params: ConnectionIdParams,
    response: ConnectionResponse,
    errors: [404],
    handler: async ({ params, ctx }) => connection(await c.connection(ctx, params.connection_id)),
  });
  api.route({
    method: 'delete',
    path: `${BASE}/connections/:connection_id`,
    tag,
    summary: 'Delete a connection: its token is forgotten and its numbers are unbound (their conversations stay)',
    params: ConnectionIdParams,
    response: ConnectionDeleted,
    errors: [404],
    handler: async ({ params, ctx }) => {
      const before = await c.deleteConnection(ctx, params.connection_id);
      return { success: true, id: before.id, businessAccountId: before.businessAccountId, status: 'deleted' as const };
    },
  });

  api.route({
    method: 'post',
    path: `${BASE}/:connection_id/numbers`,
    tag,
    summary:
      'Bind a number of the business account: checked and registered with the platform; dual-channel when the account has the same E.164 as a native number',
    params: ConnectionIdParams,
    body: BindRequest,
    response: NumberResponse,
    errors: [403, 404, 409, 422],
    handler: async ({ params, body, ctx }) =>
      number(
        await c.bind(ctx, params.connection_id, {
          phoneNumberId: body.phone_number_id,
          agentId: body.agent_id ?? null,
          pin: body.pin ?? null,
        }),
      ),
  });
  api.route({
    method: 'get',
    path: `${BASE}/:connection_id/numbers`,
    tag,
    summary: "The connection's numbers, oldest first",
    params: ConnectionIdParams,
    query: offsetQuery(),
    response: offsetEnvelope(NumberResponse),
    errors: [404],
    handler: async ({ params, query, ctx }) => {
      const page = await c.numbers(ctx, params.connection_id, query);
      return toOffsetPage({ data: page.data.map(number), total: page.total }, query);
    },
  });
  api.route({
    method: 'get',
    path: `${BASE}/:connection_id/numbers/:chatapp_number_id`,
    tag,
    summary: 'A number of the connection',
    params: NumberParams,
    response: NumberResponse,
    errors: [404],
    handler: async ({ params, ctx }) => number(await c.number(ctx, params.connection_id, params.chatapp_number_id)),
  });
  api.route({
    method: 'delete',
    path: `${BASE}/:connection_id/numbers/:chatapp_number_id`,
    tag,
    summary: 'Unbind a number: it neither sends nor receives by the channel any more; its conversations stay',
    params: NumberParams,
    response: NumberResponse,
    errors: [404],
    handler: async ({ params, ctx }) => number(await c.unbind(ctx, params.connection_id, params.chatapp_number_id)),
  });

  api.route({
    method: 'post',
    path: `${BASE}/:connection_id/templates`,
    tag,
    summary: 'Create a message template; the platform reviews it (status pending, then approved or rejected)',
    params: ConnectionIdParams,
    body: TemplateRequest,
    response: TemplateResponse,
    errors: [403, 404, 409, 422],
    handler: async ({ params, body, ctx }) =>
      template(
        await c.createTemplate(ctx, params.connection_id, {
          name: body.name,
          language: body.language,
          category: body.category,
          body: body.body,
          header: body.header ?? null,
          buttons: (body.buttons ?? []).map((b) =>
            b.type === 'phone_number' ? { type: b.type, text: b.text, phoneNumber: b.phone_number } : b,
          ),
          examples: body.examples ?? null,
        }),
      ),
  });
  api.route({
    method: 'get',
    path: `${BASE}/:connection_id/templates`,
    tag,
    summary: "The connection's templates with their review status, oldest first",
    params: ConnectionIdParams,
    query: offsetQuery(),
    response: offsetEnvelope(TemplateResponse),
    errors: [404],
    handler: async ({ params, query, ctx }) => {
      const page = await c.templates(ctx, params.connection_id, query);
      return toOffsetPage({ data: page.data.map(template), total: page.total }, query);
    },
  });
  api.route({
    method: 'get',
    path: `${BASE}/:connection_id/templates/:template_id`,
    tag,
    summary: 'A template with its review status',
    params: TemplateParams,
    response: TemplateResponse,
    errors: [404],
    handler: async ({ params, ctx }) => template(await c.template(ctx, params.connection_id, params.template_id)),
  });

  api.route({
    method: 'get',
    path: `${BASE}/settings`,
    tag,
    summary: 'Whether the chat-app channel is switched on for the account (on by default)',
    response: SettingsBody,
    handler: ({ ctx }) => d.settings.of(ctx.accountId),
  });
  api.route({
    method: 'patch',
    path: `${BASE}/settings`,
    tag,
    summary: 'Switch the chat-app channel on or off for the account; off, its operations answer 403 CHATAPP_NOT_ENABLED',
    body: SettingsBody,
    response: SettingsBody,
    handler: ({ body, ctx }) => d.settings.set(ctx, ctx.accountId, body.enabled),
  });
}

/** Operators switch the channel for an account (docs/chatapp.md#switching-it-off). */
export function chatappAdminRoutes(api: Api, d: { settings: ChatappSettingsService; accounts: AccountQueries }): void {
  adminSettingsRoutes(api, {
    accounts: d.accounts,
    segment: 'chatapp',
    summaries: {
      get: 'Whether the chat-app channel is switched on for an account',
      patch: 'Switch the chat-app channel on or off for an account',
    },
    response: SettingsBody,
    body: SettingsBody,
    read: (accountId) => d.settings.of(accountId),
    change: (ctx, accountId, body) => d.settings.set(ctx, accountId, body.enabled),
  });
}
