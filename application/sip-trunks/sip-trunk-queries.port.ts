import type { OriginationUri, SipTrunkTermination } from '../../domain/sip-trunk/sip-trunk.decider.js';
import type { Page, PageOf } from '../shared/page.js';

export type SipTrunkView = Readonly<{
  id: string;
  name: string;
  transfers: string;
  transferCallerId: string;
  uris: readonly OriginationUri[];
  terminationUri: string;
  /** who may send calls out through the trunk (docs/sip.md#calls-from-your-pbx): user names only, never a password */
  termination: Readonly<{ usernames: readonly string[]; addresses: readonly string[] }>;
  numberIds: readonly string[];
  createdAt: string;
  updatedAt: string;
}>;

export interface SipTrunkQueries {
  list(accountId: string, page: Page): Promise<PageOf<SipTrunkView>>;
  get(accountId: string, trunkId: string): Promise<SipTrunkView | null>;
}

/** A trunk's termination side as the SIP engine reads it (docs/sip.md#calls-from-your-pbx): passwords still sealed. */
export type TrunkTerminationRecord = Readonly<{ trunkId: string; accountId: string; termination: SipTrunkTermination }>;

/** The trunks that let a PBX send calls out (any credential or address), of every account: what the engine checks. */
export interface TrunkTerminationQueries {
  terminations(): Promise<TrunkTerminationRecord[]>;
}
