import type { CarrierSettings } from '../../domain/carrier/carrier.decider.js';

/** A carrier as the read model holds it: its settings as recorded, passwords sealed (docs/sip.md#carriers). */
export type CarrierRecord = Readonly<{ carrierId: string; settings: CarrierSettings; createdAt: string; updatedAt: string }>;

/** The carriers the operator configured through the API (the read model). */
export interface CarrierQueries {
  /** the carriers not deleted, by id */
  list(): Promise<CarrierRecord[]>;
  get(carrierId: string): Promise<CarrierRecord | null>;
  /** how many active numbers were imported with the carrier */
  numbersOf(carrierId: string): Promise<number>;
}

/** Seals a password before it is recorded; only the SIP engine opens it (docs/security.md#secrets-at-rest-secrets_key). */
export interface CredentialSealerPort {
  seal(plain: string): string;
}
