/**
 * Request idempotency for sends (docs/messaging.md#idempotency-keys): the first request with a key claims it, its
 * answer is kept for 24 hours, and a repeat with the same body gets that answer back.
 */
export type StoredAnswer = Readonly<{ status: number; body: unknown }>;

export type ClaimResult =
  | { kind: 'claimed' }
  | { kind: 'answered'; requestHash: string; answer: StoredAnswer }
  | { kind: 'in_progress'; requestHash: string };

export interface IdempotencyStorePort {
  /** claims (accountId, key) for a request, unless a live claim or answer exists (older than `since`: expired, reclaimed) */
  claim(o: { accountId: string; key: string; requestHash: string; now: string; since: string }): Promise<ClaimResult>;
  complete(o: { accountId: string; key: string; answer: StoredAnswer }): Promise<void>;
  /** gives the key up (the request failed in a way a retry may fix) */
  release(o: { accountId: string; key: string }): Promise<void>;
}
