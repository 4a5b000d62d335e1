/**
 * The sending rules of a conversation (docs/messaging.md#caps) as data: the deciders read their limits from
 * here or from the account's messaging settings.
 */
export const AWAITING_REPLY_LIMIT = 3;
export const INACTIVITY_DAYS = 14;
export const DEFAULT_STREAK_LIMIT = 10;
export const DEFAULT_DAILY_NEW_CONVERSATIONS = 100;
export const DEFAULT_DAILY_OUTBOUND_TO_NEW_CONTACTS = 200;

export type OptOutScope = 'number' | 'account';

/** Per-account settings of text messaging, changed through the admin API. */
export type MessagingSettings = Readonly<{
  streakLimit: number;
  dailyNewConversationLimit: number;
  dailyOutboundLimit: number;
  /** whether a STOP covers every number of the account, or only the number it was sent to */
  optOutScope: OptOutScope;
  /** numbers that cannot start a conversation (INBOUND_ONLY) */
  inboundOnlyNumberIds: readonly string[];
  stopReply: string;
  helpReply: string;
  startReply: string;
}>;

export const DEFAULT_MESSAGING_SETTINGS: MessagingSettings = {
  streakLimit: DEFAULT_STREAK_LIMIT,
  dailyNewConversationLimit: DEFAULT_DAILY_NEW_CONVERSATIONS,
  dailyOutboundLimit: DEFAULT_DAILY_OUTBOUND_TO_NEW_CONTACTS,
  optOutScope: 'number',
  inboundOnlyNumberIds: [],
  stopReply: 'You have been unsubscribed and will receive no more messages from this number. Reply START to resubscribe.',
  helpReply: 'Reply STOP to unsubscribe, START to resubscribe. Message and data rates may apply.',
  startReply: 'You have been resubscribed and can receive messages from this number again. Reply STOP to unsubscribe.',
};

/** Consent keywords (docs/messaging.md#opt-out): case-insensitive, alone in the message (surrounding blanks ignored). */
export const STOP_KEYWORDS = ['STOP', 'STOPALL', 'UNSUBSCRIBE', 'CANCEL', 'END', 'QUIT'] as const;
export const START_KEYWORDS = ['START', 'UNSTOP'] as const;
export const HELP_KEYWORDS = ['HELP'] as const;
export type ConsentKeyword = 'stop' | 'start' | 'help';

export function consentKeywordOf(body: string): { kind: ConsentKeyword; keyword: string } | null {
  const word = body.trim().toUpperCase();
  if ((STOP_KEYWORDS as readonly string[]).includes(word)) return { kind: 'stop', keyword: word };
  if ((START_KEYWORDS as readonly string[]).includes(word)) return { kind: 'start', keyword: word };
  if ((HELP_KEYWORDS as readonly string[]).includes(word)) return { kind: 'help', keyword: word };
  return null;
}

/** The UTC day (`YYYY-MM-DD`) a time falls in: daily caps reset at midnight UTC. */
export const utcDay = (iso: string): string => iso.slice(0, 10);

/** The next UTC midnight after `iso` (when a daily cap clears). */
export function nextUtcMidnight(iso: string): string {
  const d = new Date(iso);
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 1)).toISOString();
}

export const addDays = (iso: string, days: number): string => new Date(new Date(iso).getTime() + days * 86_400_000).toISOString();
