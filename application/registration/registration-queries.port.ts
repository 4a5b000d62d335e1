/** A registration waiting for review, as the read model lists them (docs/registration.md). */
export type PendingRegistration = Readonly<{ accountId: string; submission: number; submittedAt: string }>;

export interface RegistrationQueries {
  /** pending registrations submitted at or before `submittedAtOrBefore` (ISO), oldest first */
  pendingSubmittedBy(submittedAtOrBefore: string, limit: number): Promise<readonly PendingRegistration[]>;
}
