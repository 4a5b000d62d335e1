import type { Page, PageOf } from '../shared/page.js';

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
  /** Active numbers only (docs/numbers.md#provisioning), oldest first. */
  list(accountId: string, page: Page): Promise<PageOf<PhoneNumberView>>;
  /** Active or released. */
  get(accountId: string, numberId: string): Promise<PhoneNumberView | null>;
  /** Ids of the active numbers attached to an agent, in attach order. */
  attachedTo(accountId: string, agentId: string): Promise<string[]>;
  /** Active numbers whose paid period has ended at `now` (all accounts; for the renewal job). */
  dueForRenewal(now: string, limit: number): Promise<{ numberId: string; accountId: string }[]>;
  /** The active number with this E.164, whichever account holds it (routing what a carrier receives). */
  activeByPhoneNumber(phoneNumber: string): Promise<(PhoneNumberView & { accountId: string }) | null>;
  /** Ids of the trunks (not deleted) whose link set still names the number. */
  trunksLinkedTo(accountId: string, numberId: string): Promise<string[]>;
}
