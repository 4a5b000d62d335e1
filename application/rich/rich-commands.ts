import { type CardNames, contactCardDecider, contactCardStream } from '../../domain/rich/contact-card.decider.js';
import { locationRefreshDecider, locationRefreshStream } from '../../domain/rich/location-refresh.decider.js';
import { richConversationDecider, richConversationStream } from '../../domain/rich/rich-conversation.decider.js';
import { DomainError } from '../../domain/shared/errors.js';
import type { ConversationQueries, ConversationView } from '../messaging/conversation-queries.port.js';
import type { NumberQueries } from '../numbers/number-queries.port.js';
import type { IdsPort } from '../ports/ids.port.js';
import { awaitOutcome } from '../shared/await-outcome.js';
import type { RequestContext } from '../shared/context.js';
import type { CommandExecutor } from '../shared/execute.js';
import type { RichCapabilities, RichOptions } from './rich-capabilities.js';
import type { ContactCardView, LocationView, RichQueries } from './rich-queries.port.js';

export const RICH_CHANNEL = 'imessage';

const unavailable = (message: string) => new DomainError('RICH_CHANNEL_UNAVAILABLE', message);
const rejected = (field: string, reason: string) =>
  new DomainError('RICH_MEDIA_REJECTED', `${field}: ${reason}`, [{ field: `body.${field}`, message: reason, type: 'value_error' }]);
const replaced = (what: string) =>
  new DomainError('CONCURRENCY_CONFLICT', `Another change to this ${what} came while this one was pending and replaced it; read it again.`);
const slow = (what: string) =>
  new DomainError('RICH_PROVIDER_ERROR', `${what} did not finish in time; it goes on in the background. Read it again shortly.`);

export type BackgroundAnswer = Readonly<{
  conversationId: string;
  channel: string;
  hasBackground: boolean;
  backgroundId: string | null;
  backgroundVersion: number | null;
  changed: boolean;
}>;

/**
 * The rich channel's operations besides sending (docs/rich-messaging.md): contact cards of numbers, chat backgrounds,
 * typing indicators, and shared locations. Writes that need the provider (or a fetched image) are processes the
 * request waits for, never provider calls of its own.
 */
export class RichCommands {
  constructor(
    private readonly exec: CommandExecutor,
    private readonly ids: IdsPort,
    private readonly queries: RichQueries,
    private readonly numbers: NumberQueries,
    private readonly conversations: ConversationQueries,
    private readonly caps: RichCapabilities,
    private readonly o: RichOptions,
  ) {}

  private async ownNumber(ctx: RequestContext, numberId: string) {
    const n = await this.numbers.get(ctx.accountId, numberId);
    if (!n) throw new DomainError('PHONE_NUMBER_NOT_FOUND', 'Phone number not found');
    return n;
  }

  async card(ctx: RequestContext, numberId: string): Promise<ContactCardView> {
    await this.ownNumber(ctx, numberId);
    return (await this.queries.card(ctx.accountId, numberId)) ?? { firstName: null, lastName: null, displayName: null, hasAvatar: false };
  }

  /** PUT: replaces the card; with `avatarUrl`, answers once the avatar is fetched and checked (or refused: 422). */
  async putCard(ctx: RequestContext, numberId: string, input: CardNames & { avatarUrl: string | null }): Promise<ContactCardView> {
    const n = await this.ownNumber(ctx, numberId);
    if (!(await this.caps.activeLine(ctx.accountId, numberId)))
      throw unavailable(`The number ${n.phoneNumber} is not on the rich-messaging (iMessage) channel: it has no contact card.`);
    const changeId = this.ids.id('ccc');
    const stream = contactCardStream(numberId);
    const { avatarUrl, ...names } = input;
    await this.exec.execute(
      contactCardDecider,
      stream,
      { type: 'RequestContactCard', data: { numberId, changeId, linePhoneNumber: n.phoneNumber, names, avatarUrl } },
      ctx,
    );
    const out = await awaitOutcome(
      this.exec,
      contactCardDecider,
      stream,
      // done when decided, or when a later change replaced this one while it was pending
      (s) => s.decided.includes(changeId) || s.pending?.changeId !== changeId,
      this.o.providerTimeoutMs,
    );
    if (!out.timedOut && !out.state.decided.includes(changeId)) throw replaced('contact card');
    const outcome = out.events.find(
      (e) => (e.type === 'ContactCardSet' || e.type === 'ContactCardChangeRejected') && e.data.changeId === changeId,
    );
    if (!outcome) throw slow('Setting the contact card');
    if (outcome.type === 'ContactCardChangeRejected') throw rejected('avatarUrl', outcome.data.reason);
    if (outcome.type !== 'ContactCardSet') throw slow('Setting the contact card');
    // read-your-writes: a GET after this answer reads the card the provider's outcome set
    await this.exec.settle([outcome]);
    return { ...outcome.data.names, hasAvatar: outcome.data.avatar !== null };
  }

  /** DELETE: removes the card (a number without one: nothing to do). */
  async deleteCard(ctx: RequestContext, numberId: string): Promise<void> {
    const n = await this.ownNumber(ctx, numberId);
    await this.exec.execute(
      contactCardDecider,
      contactCardStream(numberId),
      { type: 'DeleteContactCard', data: { numberId, linePhoneNumber: n.phoneNumber } },
      ctx,
      { readYourWrites: true },
    );
  }

  private async ownConversation(ctx: RequestContext, conversationId: string): Promise<ConversationView> {
    const c = await this.conversations.get(ctx.accountId, conversationId);
    if (!c) throw new DomainError('CONVERSATION_NOT_FOUND', 'Conversation not found');
    return c;
  }

  private async richConversation(ctx: RequestContext, conversationId: string, what: string): Promise<ConversationView> {
    const c = await this.ownConversation(ctx, conversationId);
    if (c.channel !== RICH_CHANNEL)
      throw unavailable(
        `${what} needs a conversation on the imessage channel; this one is on ${c.channel === 'native' ? 'sms' : c.channel}.`,
      );
    if (c.isGroup) throw unavailable(`${what} is for one-to-one imessage conversations.`);
    if (!(await this.caps.activeLine(ctx.accountId, c.phoneNumberId)))
      throw unavailable(`The number ${c.phoneNumber} is no longer on the rich-messaging (iMessage) channel.`);
    return c;
  }

  /** POST background: answers once the image is fetched, checked and handed to the provider (or refused). */
  async setBackground(ctx: RequestContext, conversationId: string, imageUrl: string): Promise<BackgroundAnswer> {
    const c = await this.richConversation(ctx, conversationId, 'A chat background');
    const changeId = this.ids.id('bgc');
    const stream = richConversationStream(conversationId);
    await this.exec.execute(
      richConversationDecider,
      stream,
      {
        type: 'RequestBackground',
        data: { conversationId, changeId, imageUrl, linePhoneNumber: c.phoneNumber, participant: c.participant },
      },
      ctx,
    );
    const out = await awaitOutcome(
      this.exec,
      richConversationDecider,
      stream,
      // done when settled, or when a later request replaced this one while it was pending
      (s) => s.settled.includes(changeId) || s.pending?.changeId !== changeId,
      this.o.providerTimeoutMs,
    );
    if (!out.timedOut && !out.state.settled.includes(changeId)) throw replaced('chat background');
    const base = { conversationId, channel: RICH_CHANNEL, hasBackground: true };
    for (const e of out.events) {
      if (!('changeId' in e.data) || e.data.changeId !== changeId) continue;
      switch (e.type) {
        case 'ChatBackgroundSet':
          return { ...base, backgroundId: e.data.backgroundId, backgroundVersion: e.data.version, changed: true };
        case 'ChatBackgroundKept':
          return { ...base, backgroundId: e.data.backgroundId, backgroundVersion: e.data.version, changed: false };
        case 'ChatBackgroundRejected':
          throw rejected('image_url', e.data.reason);
        case 'ChatBackgroundFailed':
          throw new DomainError('RICH_PROVIDER_ERROR', `The provider did not take the background: ${e.data.reason}`);
      }
    }
    throw slow('Setting the chat background');
  }

  /** DELETE background: idempotent; a chat with the default background is a no-op. */
  async removeBackground(ctx: RequestContext, conversationId: string): Promise<void> {
    const c = await this.ownConversation(ctx, conversationId);
    if (c.channel !== RICH_CHANNEL) return;
    await this.exec.execute(
      richConversationDecider,
      richConversationStream(conversationId),
      { type: 'RemoveBackground', data: { conversationId, linePhoneNumber: c.phoneNumber, participant: c.participant } },
      ctx,
    );
  }

  /** A typing indicator on an imessage conversation: `sent` once the provider took it, `pending` while it has not yet. */
  async typing(ctx: RequestContext, c: ConversationView): Promise<'sent' | 'pending' | 'unsupported'> {
    if (c.isGroup || !(await this.caps.activeLine(ctx.accountId, c.phoneNumberId))) return 'unsupported';
    const typingId = this.ids.id('typ');
    const stream = richConversationStream(c.id);
    await this.exec.execute(
      richConversationDecider,
      stream,
      { type: 'RequestTyping', data: { conversationId: c.id, typingId, linePhoneNumber: c.phoneNumber, participant: c.participant } },
      ctx,
    );
    const out = await awaitOutcome(
      this.exec,
      richConversationDecider,
      stream,
      (s) => s.settled.includes(typingId),
      this.o.providerTimeoutMs,
    );
    return out.timedOut ? 'pending' : 'sent';
  }

  /** POST /v1/location/refresh: asks the provider for every contact sharing with the account's lines; read after `pollAfterSeconds`. */
  async refreshLocations(ctx: RequestContext): Promise<{ success: true; pollAfterSeconds: number }> {
    const lines = await this.caps.activeLines(ctx.accountId);
    if (lines.length === 0)
      throw unavailable('No number of this account is on the rich-messaging (iMessage) channel, so no contact shares a location with it.');
    const refreshId = this.ids.id('lrf');
    await this.exec.execute(
      locationRefreshDecider,
      locationRefreshStream(refreshId),
      {
        type: 'RequestLocationRefresh',
        data: { refreshId, lines: lines.map((l) => ({ numberId: l.numberId, phoneNumber: l.phoneNumber })) },
      },
      ctx,
    );
    return { success: true, pollAfterSeconds: this.o.pollAfterSeconds };
  }

  async location(ctx: RequestContext, phoneNumber: string): Promise<LocationView> {
    const l = await this.queries.location(ctx.accountId, phoneNumber);
    if (!l)
      throw new DomainError(
        'LOCATION_NOT_FOUND',
        `No contact ${phoneNumber} shares a location with this account's numbers (as of the last POST /v1/location/refresh).`,
      );
    return l;
  }
}
