import type { LineInfo } from './carrier.port.js';

export type CachedLookup = Readonly<{ info: LineInfo; lookedUpAt: string }>;

/** Line-type lookups an account already paid for, per account and number. */
export interface LookupCachePort {
  /** Entries looked up at or after `freshSince`, by phone number. */
  get(accountId: string, phoneNumbers: readonly string[], freshSince: string): Promise<Map<string, CachedLookup>>;
  put(accountId: string, entries: readonly CachedLookup[]): Promise<void>;
}
