import type { ContactCommands } from '../../application/contacts/contact-commands.js';
import type { ContactQueries } from '../../application/contacts/contact-queries.port.js';
import { DomainError } from '../../domain/shared/errors.js';
import type { Api } from '../http/api.js';
import { z } from '../http/openapi.js';
import { toOffsetPage } from '../http/pagination.js';
import {
  ContactIdParams,
  ContactListQuery,
  ContactListResponse,
  ContactResponse,
  CreateContactRequest,
  UpdateContactRequest,
} from './contact.schemas.js';

/** /v1/contacts (docs/contacts.md). */
export function contactRoutes(api: Api, { commands, queries }: { commands: ContactCommands; queries: ContactQueries }): void {
  const tag = 'contacts';

  api.route({
    method: 'post',
    path: '/v1/contacts',
    tag,
    summary: 'Create a contact; its phone number is normalized to E.164 and unique within the account (409 CONTACT_EXISTS)',
    body: CreateContactRequest,
    status: 201,
    response: ContactResponse,
    errors: [409],
    handler: ({ body, ctx }) => commands.create(ctx, body),
  });

  api.route({
    method: 'get',
    path: '/v1/contacts',
    tag,
    summary: 'List the contacts, oldest first; `search` filters by name or phone number',
    query: ContactListQuery,
    response: ContactListResponse,
    handler: async ({ query, ctx }) => toOffsetPage(await queries.list(ctx.accountId, query), query),
  });

  api.route({
    method: 'get',
    path: '/v1/contacts/:contact_id',
    tag,
    summary: 'Get a contact',
    params: ContactIdParams,
    response: ContactResponse,
    errors: [404],
    handler: async ({ params, ctx }) => {
      const c = await queries.get(ctx.accountId, params.contact_id);
      if (!c) throw new DomainError('CONTACT_NOT_FOUND', 'Contact not found');
      return c;
    },
  });

  api.route({
    method: 'patch',
    path: '/v1/contacts/:contact_id',
    tag,
    summary: "Change a contact's fields; a new phone number must not belong to another contact (409 CONTACT_EXISTS)",
    params: ContactIdParams,
    body: UpdateContactRequest,
    response: ContactResponse,
    errors: [404, 409],
    handler: ({ params, body, ctx }) => commands.update(ctx, params.contact_id, body),
  });

  api.route({
    method: 'delete',
    path: '/v1/contacts/:contact_id',
    tag,
    summary: 'Delete a contact (204, no body); its phone number is free for a new contact',
    params: ContactIdParams,
    status: 204,
    response: z.undefined(),
    errors: [404],
    handler: async ({ params, ctx }) => {
      await commands.delete(ctx, params.contact_id);
    },
  });
}
