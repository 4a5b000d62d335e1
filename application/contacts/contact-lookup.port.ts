/** Who a phone number is, for messaging and calls: the account's contact with that number (docs/contacts.md#lookup). */
export type ContactSummary = Readonly<{ id: string; name: string; email: string | null; phoneNumber: string }>;

export interface ContactLookupPort {
  /** The account's contact with exactly this E.164 number, or null; deleted contacts are never found. */
  byPhoneNumber(accountId: string, phoneNumber: string): Promise<ContactSummary | null>;
}
