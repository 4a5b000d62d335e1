import { assertNever, type Command, type Decider, type Event } from '../shared/types.js';
import type { StoredImage } from './stored-image.js';

/**
 * What the rich channel adds to one of its conversations, `rich_conversation-<conversationId>`
 * (docs/rich-messaging.md#chat-backgrounds): the chat background, typing indicators, and the reactions handed to the
 * provider.
 *
 * A background request is pending until its image is fetched and checked: the same image as the current background
 * is kept as it is (`changed` false); another is given to the provider and becomes the background with the next
 * version; a refused image or a provider failure leaves the background as it was. Removing one that is not set is a
 * no-op.
 */
export const richConversationStream = (conversationId: string) => `rich_conversation-${conversationId}`;

type Ref = { conversationId: string };
type Where = { linePhoneNumber: string; participant: string };
export type Background = Readonly<{ backgroundId: string; version: number; sha256: string }>;

export type RichConversationCommand =
  | Command<'RequestBackground', Ref & Where & { changeId: string; imageUrl: string }>
  | Command<'RecordBackgroundImage', Ref & { changeId: string; image: StoredImage; backgroundId: string }>
  | Command<'RejectBackground', Ref & { changeId: string; reason: string }>
  | Command<'RecordBackgroundApplied', Ref & { changeId: string }>
  | Command<'RecordBackgroundFailure', Ref & { changeId: string; reason: string }>
  | Command<'RemoveBackground', Ref & Where>
  | Command<'RecordBackgroundCleared', Ref & { version: number }>
  | Command<'RequestTyping', Ref & Where & { typingId: string }>
  | Command<'RecordTypingSent', Ref & { typingId: string }>
  | Command<'RecordReactionSent', Ref & { reactionId: string; messageId: string }>;

export type RichConversationEvent =
  | Event<'ChatBackgroundRequested', Ref & Where & { accountId: string; changeId: string; imageUrl: string; requestedAt: string }>
  | Event<'ChatBackgroundImageFetched', Ref & { changeId: string; image: StoredImage; backgroundId: string; fetchedAt: string }>
  | Event<'ChatBackgroundKept', Ref & { changeId: string; backgroundId: string; version: number; keptAt: string }>
  | Event<'ChatBackgroundSet', Ref & { changeId: string; backgroundId: string; version: number; sha256: string; setAt: string }>
  | Event<'ChatBackgroundRejected', Ref & { changeId: string; reason: string; rejectedAt: string }>
  | Event<'ChatBackgroundFailed', Ref & { changeId: string; reason: string; failedAt: string }>
  | Event<'ChatBackgroundRemoved', Ref & Where & { accountId: string; version: number; removedAt: string }>
  | Event<'ChatBackgroundCleared', Ref & { version: number; clearedAt: string }>
  | Event<'TypingIndicatorRequested', Ref & Where & { accountId: string; typingId: string; requestedAt: string }>
  | Event<'TypingIndicatorSent', Ref & { typingId: string; sentAt: string }>
  | Event<'RichReactionSent', Ref & { reactionId: string; messageId: string; sentAt: string }>;

type Pending = Readonly<{ changeId: string; fetched: Readonly<{ backgroundId: string; sha256: string }> | null }>;
export type RichConversationState = Readonly<{
  background: Background | null;
  /** the version of the latest background set or removed */
  version: number;
  clearedVersion: number;
  pending: Pending | null;
  /** request ids already settled (backgrounds and typing): repeats are no-ops */
  settled: readonly string[];
}>;

const RECENT = 50;
const settle = (s: RichConversationState, id: string) => [...s.settled.slice(-(RECENT - 1)), id];

export const richConversationDecider: Decider<RichConversationCommand, RichConversationEvent, RichConversationState> = {
  initialState: () => ({ background: null, version: 0, clearedVersion: 0, pending: null, settled: [] }),
  decide: (cmd, s) => {
    const now = cmd.metadata.now;
    const accountId = cmd.metadata.accountId;
    const pendingFor = (changeId: string) => s.pending?.changeId === changeId;
    switch (cmd.type) {
      case 'RequestBackground':
        if (s.settled.includes(cmd.data.changeId) || pendingFor(cmd.data.changeId)) return [];
        return [{ type: 'ChatBackgroundRequested', data: { ...cmd.data, accountId, requestedAt: now } }];
      case 'RecordBackgroundImage': {
        const c = cmd.data;
        if (!pendingFor(c.changeId) || s.pending?.fetched) return [];
        if (s.background && s.background.sha256 === c.image.sha256)
          return [
            {
              type: 'ChatBackgroundKept',
              data: {
                conversationId: c.conversationId,
                changeId: c.changeId,
                backgroundId: s.background.backgroundId,
                version: s.background.version,
                keptAt: now,
              },
            },
          ];
        return [
          {
            type: 'ChatBackgroundImageFetched',
            data: { conversationId: c.conversationId, changeId: c.changeId, image: c.image, backgroundId: c.backgroundId, fetchedAt: now },
          },
        ];
      }
      case 'RejectBackground':
        if (!pendingFor(cmd.data.changeId)) return [];
        return [{ type: 'ChatBackgroundRejected', data: { ...cmd.data, rejectedAt: now } }];
      case 'RecordBackgroundApplied': {
        const f = s.pending?.changeId === cmd.data.changeId ? s.pending.fetched : null;
        if (!f) return [];
        return [
          {
            type: 'ChatBackgroundSet',
            data: {
              conversationId: cmd.data.conversationId,
              changeId: cmd.data.changeId,
              backgroundId: f.backgroundId,
              version: s.version + 1,
              sha256: f.sha256,
              setAt: now,
            },
          },
        ];
      }
      case 'RecordBackgroundFailure':
        if (!pendingFor(cmd.data.changeId)) return [];
        return [{ type: 'ChatBackgroundFailed', data: { ...cmd.data, failedAt: now } }];
      case 'RemoveBackground':
        if (s.background === null) return [];
        return [{ type: 'ChatBackgroundRemoved', data: { ...cmd.data, accountId, version: s.version + 1, removedAt: now } }];
      case 'RecordBackgroundCleared':
        if (cmd.data.version <= s.clearedVersion || s.background !== null || cmd.data.version !== s.version) return [];
        return [{ type: 'ChatBackgroundCleared', data: { ...cmd.data, clearedAt: now } }];
      case 'RequestTyping':
        if (s.settled.includes(cmd.data.typingId)) return [];
        return [{ type: 'TypingIndicatorRequested', data: { ...cmd.data, accountId, requestedAt: now } }];
      case 'RecordTypingSent':
        if (s.settled.includes(cmd.data.typingId)) return [];
        return [{ type: 'TypingIndicatorSent', data: { ...cmd.data, sentAt: now } }];
      case 'RecordReactionSent':
        if (s.settled.includes(cmd.data.reactionId)) return [];
        return [{ type: 'RichReactionSent', data: { ...cmd.data, sentAt: now } }];
      default:
        return assertNever(cmd);
    }
  },
  evolve: (s, e) => {
    switch (e.type) {
      case 'ChatBackgroundRequested':
        return { ...s, pending: { changeId: e.data.changeId, fetched: null } };
      case 'ChatBackgroundImageFetched':
        return s.pending
          ? { ...s, pending: { ...s.pending, fetched: { backgroundId: e.data.backgroundId, sha256: e.data.image.sha256 } } }
          : s;
      case 'ChatBackgroundKept':
      case 'ChatBackgroundRejected':
      case 'ChatBackgroundFailed':
        return { ...s, pending: null, settled: settle(s, e.data.changeId) };
      case 'ChatBackgroundSet':
        return {
          ...s,
          background: { backgroundId: e.data.backgroundId, version: e.data.version, sha256: e.data.sha256 },
          version: e.data.version,
          pending: null,
          settled: settle(s, e.data.changeId),
        };
      case 'ChatBackgroundRemoved':
        return { ...s, background: null, version: e.data.version };
      case 'ChatBackgroundCleared':
        return { ...s, clearedVersion: e.data.version };
      case 'TypingIndicatorRequested':
        return s;
      case 'TypingIndicatorSent':
        return { ...s, settled: settle(s, e.data.typingId) };
      case 'RichReactionSent':
        return { ...s, settled: settle(s, e.data.reactionId) };
      default:
        return assertNever(e);
    }
  },
};
