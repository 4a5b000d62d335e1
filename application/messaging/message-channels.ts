import type { ConversationView } from './conversation-queries.port.js';
import type { MessageChannel, SendingLine } from './message-channel.port.js';

/** A conversation's `capabilities` (docs/messaging.md#reading). */
export type Capabilities = Readonly<{
  canSendMessages: boolean;
  media: boolean;
  reactions: boolean;
  emojiReactions: boolean;
  sendDisabledReason: string | null;
  sendChannel: string | null;
  availableChannels: string[];
  mediaChannels: string[];
  chatappWindowExpiresAt: string | null;
}>;

/**
 * The channels of the send path, in the order the capability modules list them (texts first): the send path and
 * the conversation reads ask this list, never a channel by an `if` (docs/messaging.md#channels).
 */
export class MessageChannels {
  constructor(readonly all: readonly MessageChannel[]) {
    const names = all.map((c) => c.name);
    if (new Set(names).size !== names.length) throw new Error(`two message channels share a name: ${names.join(', ')}`);
  }

  byName(name: string): MessageChannel | undefined {
    return this.all.find((c) => c.name === name);
  }

  ofConversation(conversationChannel: string): MessageChannel | undefined {
    return this.all.find((c) => c.conversationChannel === conversationChannel);
  }

  async availableOn(accountId: string, line: SendingLine): Promise<MessageChannel[]> {
    const ok = await Promise.all(this.all.map((c) => c.available(accountId, line)));
    return this.all.filter((_, i) => ok[i]);
  }

  /** The first line a channel adds for this id / E.164, or null. */
  async lineById(accountId: string, id: string): Promise<SendingLine | null> {
    for (const c of this.all) {
      const l = await c.lineById?.(accountId, id);
      if (l) return l;
    }
    return null;
  }

  async lineByPhoneNumber(accountId: string, phoneNumber: string): Promise<SendingLine | null> {
    for (const c of this.all) {
      const l = await c.lineByPhoneNumber?.(accountId, phoneNumber);
      if (l) return l;
    }
    return null;
  }

  /** The lines the channels add for an agent, each once. */
  async linesOfAgent(accountId: string, agentId: string): Promise<SendingLine[]> {
    const out = new Map<string, SendingLine>();
    for (const c of this.all)
      for (const l of (await c.linesOfAgent?.(accountId, agentId)) ?? []) if (!out.has(l.numberId)) out.set(l.numberId, l);
    return [...out.values()];
  }

  /**
   * What can be done in a conversation now: its own channel decides whether and how it can send; every channel
   * available on its line is listed, and adds what it knows (the chat window's end).
   */
  async capabilities(c: ConversationView, line: SendingLine, now: string): Promise<Capabilities> {
    const own = this.ofConversation(c.channel);
    const available = await this.availableOn(c.accountId, line);
    const annotations = Object.assign({}, ...(await Promise.all(available.map((ch) => ch.annotate(c, now)))));
    const ownCaps = own
      ? await own.capabilities(c, now)
      : {
          canSendMessages: false,
          sendDisabledReason: `This server sends no messages on the ${c.channel} channel.`,
          media: false,
          reactions: false,
          emojiReactions: false,
        };
    return {
      ...ownCaps,
      sendChannel: own?.name ?? null,
      availableChannels: [...new Set(available.flatMap((ch) => ch.listedAs))],
      mediaChannels: [...new Set(available.flatMap((ch) => ch.mediaChannels))],
      chatappWindowExpiresAt: null,
      ...annotations,
    };
  }
}
