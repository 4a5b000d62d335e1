/** Kysely types of the contacts read model (migration 040). */
export interface ContactsTable {
  account_id: string;
  contact_id: string;
  phone_number: string;
  name: string;
  email: string | null;
  notes: string | null;
  created_at: Date | string;
  updated_at: Date | string;
  /** set by ContactDeleted: the row stays, so that its revision still guards a replay */
  deleted_at: Date | string | null;
  revision: string | bigint;
}

declare module '../shared/read-db.js' {
  interface ReadDb {
    contacts: ContactsTable;
  }
}
