/** Who a phone number is, for messaging and calls: the account's contact with that number (docs/contacts.md#lookup). */
export type ContactSummary = Readonly<{ id: string; name: string; email: string | null; phoneNumber: string }>;

export interface ContactLookupPort {
  /**
   * For each account and E.164 number, in order, the account's contact with exactly that number, or null; deleted
   * contacts are never found. One look-up for all of them (a dispatch batch's payloads).
   */
  byPhoneNumbers(wanted: readonly Readonly<{ accountId: string; phoneNumber: string }>[]): Promise<(ContactSummary | null)[]>;
}
