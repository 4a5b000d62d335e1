import type { IdsPort } from '../ports/ids.port.js';

/**
 * The chat-application channel's ids (docs/chatapp.md#ids), derived from what makes each thing itself, so every
 * writer of one thing meets on one stream: a connection per account and business account, a binding per platform
 * number, a template per connection, name and language, a conversation per line and participant.
 */
export const chatappIds = (ids: IdsPort) => ({
  connection: (accountId: string, businessAccountId: string) => ids.derived('chc', accountId, businessAccountId),
  binding: (phoneNumberId: string) => ids.derived('chn', phoneNumberId),
  template: (accountId: string, connectionId: string, name: string, language: string) =>
    ids.derived('cht', accountId, connectionId, name, language),
  conversation: (accountId: string, lineId: string, participant: string) => ids.derived('conv', accountId, lineId, 'chatapp', participant),
  inboundMessage: (platformMessageId: string) => ids.derived('msg', 'chatapp', platformMessageId),
  inboundReaction: (platformMessageId: string) => ids.derived('rxn', 'chatapp', platformMessageId),
});
