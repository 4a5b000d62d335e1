/** US A2P 10DLC registration of an account's brand and campaign (docs/registration.md). */
export type RegistrationStatus = 'none' | 'pending' | 'approved' | 'rejected';

export interface RegistrationStatusPort {
  /** the registration that covers the account's US sends now (read from the event store, never stale) */
  statusOf(accountId: string): Promise<RegistrationStatus>;
}
