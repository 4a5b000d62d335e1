import type { ContactCommands } from '../../application/contacts/contact-commands.js';
import type { ContactLookupPort } from '../../application/contacts/contact-lookup.port.js';
import type { ContactQueries } from '../../application/contacts/contact-queries.port.js';
import { token } from '../capabilities/token.js';

/** The contacts capability's tokens (its module binds them). `Lookup` is the port messaging uses (docs/contacts.md#lookup). */
export const CONTACTS = {
  Queries: token<ContactQueries>('ContactQueries'),
  Lookup: token<ContactLookupPort>('ContactLookupPort'),
  /** the same look-up, for reads awaited with others (docs/event-store.md#reads-together) */
  LookupTogether: token<ContactLookupPort>('ContactLookupTogether'),
  Commands: token<ContactCommands>('ContactCommands'),
} as const;
