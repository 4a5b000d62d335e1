/** Kysely types of the simulated upstreams' own tables (migration 021); not read models. */
export interface SandboxCarrierNumbersTable {
  phone_number: string;
  area_code: string;
  country: string;
  /** purchased | released (a released number is for sale again from available_at: the quarantine) */
  status: string;
  purchase_key: string | null;
  account_id: string | null;
  carrier_ref: string;
  purchased_at: Date | string | null;
  messaging_url: string | null;
  voice_url: string | null;
  routed_at: Date | string | null;
  released_at: Date | string | null;
  available_at: Date | string | null;
}
export interface SandboxFaultsTable {
  fault_id: string;
  operation: string;
  error_code: string | null;
  delay_ms: number;
  after_effect: boolean;
  remaining: number;
  created_at: Date | string;
}
export interface SandboxSipTrunksTable {
  provider_ref: string;
  trunk_id: string;
  account_id: string;
  config: unknown;
  termination_uri: string;
  created_at: Date | string;
  updated_at: Date | string;
  deleted_at: Date | string | null;
}
export type SandboxDb = {
  sandbox_carrier_numbers: SandboxCarrierNumbersTable;
  sandbox_faults: SandboxFaultsTable;
  sandbox_sip_trunks: SandboxSipTrunksTable;
};
