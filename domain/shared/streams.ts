/**
 * Stream names are `<category>-<id>`; the category is snake_case without `-`, because EventStoreDB's
 * `$by_category` and our PostgreSQL `stream_category` split on the first `-` (docs/event-store.md#aggregates-and-events).
 */
export const streams = {
  account: (id: string) => `account-${id}`,
  signUp: (verificationId: string) => `signup-${verificationId}`,
  agent: (id: string) => `agent-${id}`,
  phoneNumber: (id: string) => `phone_number-${id}`,
  sipTrunk: (id: string) => `sip_trunk-${id}`,
  /** a webhook configuration: the account's master on `webhook-<accountId>`, an agent's own on `webhook-<agentId>` */
  webhook: (id: string) => `webhook-${id}`,
  webhookDelivery: (id: string) => `webhook_delivery-${id}`,
  conversation: (id: string) => `conversation-${id}`,
  message: (id: string) => `message-${id}`,
  /** a number's daily sending counters (UTC day `YYYY-MM-DD`) */
  numberDay: (numberId: string, day: string) => `number_day-${numberId}:${day}`,
  /** a recipient's consent to an account's texts */
  consent: (accountId: string, recipient: string) => `consent-${accountId}:${recipient}`,
  messagingSettings: (accountId: string) => `messaging_settings-${accountId}`,
  /** an account's US A2P 10DLC registration (docs/registration.md) */
  registration: (accountId: string) => `registration-${accountId}`,
} as const;

export const categoryOf = (stream: string): string => {
  const i = stream.indexOf('-');
  return i < 0 ? stream : stream.slice(0, i);
};
