/** Kysely types of the sign-up read models and the sandbox outbox the sign-up e-mails go to (migration 006). */

export interface SignupsTable {
  verification_id: string;
  email: string;
  client_address: string | null;
  status: string;
  account_id: string | null;
  requested_at: Date | string;
  updated_at: Date | string;
  revision: string | bigint;
}
export interface SandboxOutboxTable {
  message_id: string;
  to_address: string;
  subject: string;
  body: string;
  sent_at: Date | string;
}

declare module '../shared/read-db.js' {
  interface ReadDb {
    signups: SignupsTable;
    sandbox_outbox: SandboxOutboxTable;
  }
}
