import type { SipTrunkConfig } from '../../domain/sip-trunk/sip-trunk.decider.js';

/** The upstream that runs SIP trunks. Failures are `TELEPHONY_PROVIDER_ERROR` DomainErrors. */
export interface SipTrunkProviderPort {
  /** Idempotent by `trunkId`: creating the same trunk again returns the first result. */
  createTrunk(o: { trunkId: string; accountId: string; config: SipTrunkConfig }): Promise<{ providerRef: string; terminationUri: string }>;
  updateTrunk(o: { providerRef: string; config: SipTrunkConfig }): Promise<void>;
  /** Idempotent: deleting a trunk that is gone is a no-op. */
  deleteTrunk(o: { providerRef: string }): Promise<void>;
}
