/** Kysely types of the registration read model (docs/registration.md). */
export interface RegistrationsTable {
  account_id: string;
  status: string;
  submission: number;
  registration_type: string;
  submitted_at: Date | string;
  decided_at: Date | string | null;
  revision: string | bigint;
}

declare module '../shared/read-db.js' {
  interface ReadDb {
    registrations: RegistrationsTable;
  }
}
