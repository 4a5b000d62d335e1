/** Kysely types of the rich-messaging channel's read models (migration 110). */
export interface RichLinesTable {
  number_id: string;
  account_id: string;
  phone_number: string;
  /** active | inactive */
  status: string;
  activated_at: Date | string;
  revision: string | bigint;
}
export interface RichCapabilitiesTable {
  account_id: string;
  phone_number: string;
  imessage: boolean;
  sms: boolean;
  checked_at: Date | string;
  check_id: string;
}
export interface RichContactCardsTable {
  number_id: string;
  account_id: string;
  /** set | deleted */
  status: string;
  first_name: string | null;
  last_name: string | null;
  display_name: string | null;
  has_avatar: boolean;
  version: number;
  revision: string | bigint;
}
export interface RichLocationsTable {
  account_id: string;
  phone_number: string;
  number_id: string;
  /** active | not_sharing */
  status: string;
  latitude: number | null;
  longitude: number | null;
  /** Unix seconds */
  last_updated: number | string;
  reported_at: Date | string;
}

declare module '../shared/read-db.js' {
  interface ReadDb {
    rich_lines: RichLinesTable;
    rich_capabilities: RichCapabilitiesTable;
    rich_contact_cards: RichContactCardsTable;
    rich_locations: RichLocationsTable;
  }
}
