import type { OriginationUri } from '../../domain/sip-trunk/sip-trunk.decider.js';
import type { Page, PageOf } from '../shared/page.js';

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
