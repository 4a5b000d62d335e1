/**
 * Kysely types of the carriers read model (migration 150, docs/sip.md#carriers). Carriers are the operator's, not an
 * account's: the table has no account column, and only the admin routes and the SIP engine read it.
 */
export interface SipCarriersTable {
  carrier_id: string;
  name: string;
  /** jsonb: the settings as recorded, passwords sealed (docs/security.md#secrets-at-rest-secrets_key); written as JSON text */
  settings: unknown;
  /** active | deleted */
  status: string;
  created_at: Date | string;
  updated_at: Date | string;
  revision: string | bigint;
}

declare module '../shared/read-db.js' {
  interface ReadDb {
    sip_carriers: SipCarriersTable;
  }
}
