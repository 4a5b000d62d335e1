import type { Page, PageOf } from '../shared/page.js';

export type ContactView = Readonly<{
  id: string;
  phoneNumber: string;
  name: string;
  email: string | null;
  notes: string | null;
  createdAt: string;
  updatedAt: string;
}>;

export interface ContactQueries {
  /** The account's contacts, oldest first; `search` keeps those whose name or number contains it, ignoring case. */
  list(accountId: string, page: Page & Readonly<{ search?: string | undefined }>): Promise<PageOf<ContactView>>;
  /** A contact of the account that is not deleted. */
  get(accountId: string, contactId: string): Promise<ContactView | null>;
}
