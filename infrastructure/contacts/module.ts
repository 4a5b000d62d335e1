import { ContactCommands } from '../../application/contacts/contact-commands.js';
import type { ContactErrorCode } from '../../domain/contact/errors.js';
import { KyselyContactQueries } from '../../projections/contacts/contact.queries.js';
import { contactsProjector } from '../../projections/contacts/contacts.projector.js';
import type { Capability } from '../capabilities/capability.js';
import * as m040 from '../db/migrations/040-contacts.js';
import { httpError } from '../http/errors.js';
import { PLATFORM } from '../platform/tokens.js';
import { contactRoutes } from './contacts.routes.js';
import { CONTACTS } from './tokens.js';

/**
 * How long a number's claim whose contact does not show the number yet is taken for a write under way rather
 * than a write that stopped halfway (docs/contacts.md#recovering-a-number).
 */
export const CONTACT_CLAIM_GRACE_MS = 30_000;

/** Contacts: the account's address book, one contact per phone number, and the lookup messaging uses (docs/contacts.md). */
export const contacts = {
  name: 'contacts',
  bind: (b) => {
    b.factory(CONTACTS.Queries, (r) => new KyselyContactQueries(r(PLATFORM.ReadDb)));
    b.factory(CONTACTS.Lookup, (r) => new KyselyContactQueries(r(PLATFORM.ReadDb)));
    b.factory(CONTACTS.LookupTogether, (r) => new KyselyContactQueries(r(PLATFORM.ReadTogether)));
    b.factory(
      CONTACTS.Commands,
      (r) => new ContactCommands(r(PLATFORM.Executor), r(PLATFORM.Ids), r(CONTACTS.Queries), { claimGraceMs: CONTACT_CLAIM_GRACE_MS }),
    );
  },
  routes: { v1: (api, r) => contactRoutes(api, { commands: r(CONTACTS.Commands), queries: r(CONTACTS.Queries) }) },
  projectors: [contactsProjector],
  migrations: { '040-contacts': m040 },
  errors: {
    CONTACT_NOT_FOUND: { ...httpError.notFound, fix: 'Check the contact id: GET /v1/contacts lists the contacts of this account.' },
    CONTACT_EXISTS: {
      ...httpError.conflict,
      fix: 'Update the existing contact instead: GET /v1/contacts?search=<number> finds it.',
    },
  } satisfies Record<ContactErrorCode, unknown>,
} as const satisfies Capability;
