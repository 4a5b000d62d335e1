/** Kysely types of the phone-number read model and the lookup cache (migration 020). */
export interface PhoneNumbersTable {
  account_id: string;
  number_id: string;
  phone_number: string | null;
  country: string;
  area_code: string | null;
  type: string;
  /** provisioning | active | released | failed (only active and released are ever shown) */
  status: string;
  agent_id: string | null;
  /** checkpoint of the attach as sortable text: orders an agent's numbers (the first is its outbound default) */
  attached_order: string | null;
  /** the checkpoint of the event that made the number active, sortable as text: which holder of an E.164 is newest */
  active_order: string | null;
  sip_trunk_id: string | null;
  /** the carrier an imported number arrives from (docs/numbers.md#imported-numbers); null for bought numbers */
  carrier_id: string | null;
  renewal_status: string;
  paid_through: Date | string | null;
  failure_code: string | null;
  requested_at: Date | string;
  created_at: Date | string | null;
  released_at: Date | string | null;
  revision: string | bigint;
}
export interface NumberLookupCacheTable {
  account_id: string;
  phone_number: string;
  result: unknown;
  looked_up_at: Date | string;
}
declare module '../shared/read-db.js' {
  interface ReadDb {
    phone_numbers: PhoneNumbersTable;
    number_lookup_cache: NumberLookupCacheTable;
  }
}
