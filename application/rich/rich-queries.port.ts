/** The rich channel's read models (docs/rich-messaging.md). Every query is scoped to an account. */
export type RichLineView = Readonly<{ numberId: string; phoneNumber: string; activatedAt: string }>;
export type CapabilityView = Readonly<{ phoneNumber: string; imessage: boolean; sms: boolean; checkedAt: string }>;
export type ContactCardView = Readonly<{
  firstName: string | null;
  lastName: string | null;
  displayName: string | null;
  hasAvatar: boolean;
}>;
export type LocationView = Readonly<{
  phoneNumber: string;
  latitude: number | null;
  longitude: number | null;
  status: 'active' | 'not_sharing';
  /** Unix seconds of the provider's last position (or of the report that it stopped) */
  lastUpdated: number;
}>;

export interface RichQueries {
  /** the account's numbers the provider serves now (active lines) */
  lines(accountId: string): Promise<RichLineView[]>;
  line(accountId: string, numberId: string): Promise<RichLineView | null>;
  /** the latest capability check of a number for the account */
  capability(accountId: string, phoneNumber: string): Promise<CapabilityView | null>;
  card(accountId: string, numberId: string): Promise<ContactCardView | null>;
  location(accountId: string, phoneNumber: string): Promise<LocationView | null>;
}
