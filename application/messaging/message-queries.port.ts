export type MessageView = Readonly<{
  id: string;
  conversationId: string | null;
  phoneNumberId: string;
  from: string;
  to: string;
  body: string;
  direction: string;
  channel: string | null;
  status: string | null;
  mediaUrls: readonly string[];
  at: string;
}>;

/** The read side of messages that other capabilities show (a number's message history). */
export interface NumberMessageQueries {
  /** Newest first; `before`/`after` are exclusive bounds on the message time. */
  messages(
    accountId: string,
    numberId: string,
    q: { limit: number; before?: string | undefined; after?: string | undefined },
  ): Promise<{ data: MessageView[]; hasMore: boolean }>;
}
