import type { Page, PageOf } from '../shared/page.js';

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

/** The read side of calls that other capabilities show (a number's call history). */
export interface NumberCallQueries {
  /** Newest first, offset pages. */
  calls(accountId: string, numberId: string, page: Page): Promise<PageOf<CallSummaryView>>;
}
