import type { ColumnType } from 'kysely';

type Defaulted<T> = ColumnType<T, T | undefined, T>;

/** Kysely types of the SIP trunk read model (migration 020). */
export interface SipTrunksTable {
  account_id: string;
  trunk_id: string;
  name: string;
  transfers: string;
  transfer_caller_id: string;
  uris: unknown;
  number_ids: unknown;
  provider_ref: string;
  termination_uri: string;
  /** jsonb (migration 161): `{credentials: [{username, passwordSealed}], addresses}`, passwords sealed */
  termination: Defaulted<unknown>;
  created_at: Date | string;
  updated_at: Date | string;
  deleted_at: Date | string | null;
  revision: string | bigint;
}

declare module '../shared/read-db.js' {
  interface ReadDb {
    sip_trunks: SipTrunksTable;
  }
}
