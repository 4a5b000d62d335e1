import type { Kysely } from 'kysely';
import type { ContactLookupPort, ContactSummary } from '../../application/contacts/contact-lookup.port.js';
import type { ContactQueries, ContactView } from '../../application/contacts/contact-queries.port.js';
import type { Page, PageOf } from '../../application/shared/page.js';
import { CompiledOnce } from '../shared/compiled-once.js';
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
  /** the contacts of a dispatched batch's participants, for their webhooks' payloads (every inbound text; docs/event-store.md#compiled-once) */
  private readonly byNumbers;

  constructor(private readonly db: Kysely<ReadDb>) {
    this.byNumbers = new CompiledOnce(db, (db, v: { accountIds: readonly string[]; phoneNumbers: readonly string[] }) =>
      db
        .selectFrom('contacts')
        .select(['account_id', 'contact_id', 'name', 'email', 'phone_number'])
        .where('deleted_at', 'is', null)
        .where((eb) => eb('account_id', '=', eb.fn.any(eb.val(v.accountIds))))
        .where((eb) => eb('phone_number', '=', eb.fn.any(eb.val(v.phoneNumbers))))
        .orderBy('created_at')
        .orderBy('contact_id'),
    );
  }

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

  async byPhoneNumbers(wanted: readonly Readonly<{ accountId: string; phoneNumber: string }>[]): Promise<(ContactSummary | null)[]> {
    if (wanted.length === 0) return [];
    const rows = await this.byNumbers.execute({
      accountIds: [...new Set(wanted.map((w) => w.accountId))],
      phoneNumbers: [...new Set(wanted.map((w) => w.phoneNumber))],
    });
    const first = new Map<string, ContactSummary>(); // the older of two contacts with one number (docs/contacts.md#lookup)
    for (const r of rows) {
      const key = `${r.account_id}\u0000${r.phone_number}`;
      if (!first.has(key)) first.set(key, { id: r.contact_id, name: r.name, email: r.email, phoneNumber: r.phone_number });
    }
    return wanted.map((w) => first.get(`${w.accountId}\u0000${w.phoneNumber}`) ?? null);
  }
}
