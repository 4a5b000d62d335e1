import type { OriginationUri } from '../../domain/sip-trunk/sip-trunk.decider.js';
import type { Page, PageOf } from './queries.port.js';

export type PhoneNumberView = Readonly<{
  id: string;
  phoneNumber: string;
  country: string;
  areaCode: string | null;
  status: 'active' | 'released';
  type: string;
  agentId: string | null;
  sipTrunkId: string | null;
  /** `payment_failed` while the current month's renewal charge could not be paid */
  renewalStatus: 'ok' | 'payment_failed';
  paidThrough: string | null;
  createdAt: string;
  releasedAt: string | null;
}>;

export interface NumberQueries {
  /** Active numbers only (spec 4.3), oldest first. */
  list(accountId: string, page: Page): Promise<PageOf<PhoneNumberView>>;
  /** Active or released. */
  get(accountId: string, numberId: string): Promise<PhoneNumberView | null>;
  /** Ids of the active numbers attached to an agent, in attach order. */
  attachedTo(accountId: string, agentId: string): Promise<string[]>;
  /** Active numbers whose paid period has ended at `now` (all accounts; for the renewal job). */
  dueForRenewal(now: string, limit: number): Promise<{ numberId: string; accountId: string }[]>;
  /** Ids of the trunks (not deleted) whose link set still names the number. */
  trunksLinkedTo(accountId: string, numberId: string): Promise<string[]>;
}

export type SipTrunkView = Readonly<{
  id: string;
  name: string;
  transfers: string;
  transferCallerId: string;
  uris: readonly OriginationUri[];
  terminationUri: string;
  numberIds: readonly string[];
  createdAt: string;
  updatedAt: string;
}>;

export interface SipTrunkQueries {
  list(accountId: string, page: Page): Promise<PageOf<SipTrunkView>>;
  get(accountId: string, trunkId: string): Promise<SipTrunkView | null>;
}

export type MessageView = Readonly<{
  id: string;
  conversationId: string | null;
  phoneNumberId: string;
  from: string;
  to: string;
  body: string;
  direction: string;
  channel: string | null;
  status: string | null;
  mediaUrls: readonly string[];
  at: string;
}>;

export type CallSummaryView = Readonly<{
  id: string;
  agentId: string | null;
  phoneNumberId: string | null;
  phoneNumber: string | null;
  fromNumber: string;
  toNumber: string;
  direction: string;
  status: string;
  startedAt: string;
  endedAt: string | null;
  durationSeconds: number | null;
  lastTranscriptSnippet: string | null;
}>;

export interface NumberActivityQueries {
  /** Newest first; `before`/`after` are exclusive bounds on the message time. */
  messages(accountId: string, numberId: string, q: { limit: number; before?: string | undefined; after?: string | undefined }): Promise<{ data: MessageView[]; hasMore: boolean }>;
  /** Newest first, offset pages. */
  calls(accountId: string, numberId: string, page: Page): Promise<PageOf<CallSummaryView>>;
}
