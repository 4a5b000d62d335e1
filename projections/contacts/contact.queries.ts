import type { Kysely } from 'kysely';
import type { ContactLookupPort, ContactSummary } from '../../application/contacts/contact-lookup.port.js';
import type { ContactQueries, ContactView } from '../../application/contacts/contact-queries.port.js';
import type { Page, PageOf } from '../../application/shared/page.js';
import type { ReadDb } from '../shared/read-db.js';
import type { ContactsTable } from './tables.js';

const iso = (d: Date | string) => new Date(d).toISOString();

const toContact = (r: ContactsTable): ContactView => ({
  id: r.contact_id,
  phoneNumber: r.phone_number,
  name: r.name,
  email: r.email,
  notes: r.notes,
  createdAt: iso(r.created_at),
  updatedAt: iso(r.updated_at),
});

/** `%`, `_` and `\` match themselves in a search (LIKE's escape character is `\`). */
const likePattern = (s: string) => `%${s.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/** Contacts of one account, never the deleted ones; also the lookup port messaging uses (docs/contacts.md#lookup). */
export class KyselyContactQueries implements ContactQueries, ContactLookupPort {
  constructor(private readonly db: Kysely<ReadDb>) {}

  private live(accountId: string) {
    return this.db.selectFrom('contacts').where('account_id', '=', accountId).where('deleted_at', 'is', null);
  }

  async list(accountId: string, page: Page & Readonly<{ search?: string | undefined }>): Promise<PageOf<ContactView>> {
    let q = this.live(accountId);
    if (page.search) {
      const p = likePattern(page.search);
      q = q.where((eb) => eb.or([eb('name', 'ilike', p), eb('phone_number', 'ilike', p)]));
    }
    const [rows, count] = await Promise.all([
      q.selectAll().orderBy('created_at').orderBy('contact_id').limit(page.limit).offset(page.offset).execute(),
      q.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow(),
    ]);
    return { data: rows.map(toContact), total: Number(count.n) };
  }

  async get(accountId: string, contactId: string): Promise<ContactView | null> {
    const r = await this.live(accountId).selectAll().where('contact_id', '=', contactId).executeTakeFirst();
    return r ? toContact(r) : null;
  }

  async byPhoneNumber(accountId: string, phoneNumber: string): Promise<ContactSummary | null> {
    const r = await this.live(accountId)
      .select(['contact_id', 'name', 'email', 'phone_number'])
      .where('phone_number', '=', phoneNumber)
      .orderBy('created_at')
      .orderBy('contact_id')
      .executeTakeFirst();
    return r ? { id: r.contact_id, name: r.name, email: r.email, phoneNumber: r.phone_number } : null;
  }
}
