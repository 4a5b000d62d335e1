import { assertNever, type Command, type Decider, type Event } from '../shared/types.js';
import type { StoredImage } from './stored-image.js';

/**
 * The contact card of a number on the rich channel, `rich_contact_card-<numberId>` (docs/rich-messaging.md#contact-cards):
 * the names recipients see and an avatar. A write is pending until its avatar (when it names one) is fetched and
 * checked: then the card is set; a refused avatar leaves the card as it was. Every card set or deleted gets the next
 * version, which the provider is then given.
 */
export const contactCardStream = (numberId: string) => `rich_contact_card-${numberId}`;

export type CardNames = Readonly<{ firstName: string | null; lastName: string | null; displayName: string | null }>;
type Ref = { numberId: string };

export type ContactCardCommand =
  | Command<'RequestContactCard', Ref & { changeId: string; linePhoneNumber: string; names: CardNames; avatarUrl: string | null }>
  | Command<'ApplyCardChange', Ref & { changeId: string; avatar: StoredImage | null }>
  | Command<'RejectCardAvatar', Ref & { changeId: string; reason: string }>
  | Command<'DeleteContactCard', Ref & { linePhoneNumber: string }>
  | Command<'RecordCardPublished', Ref & { version: number }>;

export type ContactCardEvent =
  | Event<
      'ContactCardChangeRequested',
      Ref & {
        accountId: string;
        changeId: string;
        linePhoneNumber: string;
        names: CardNames;
        avatarUrl: string | null;
        requestedAt: string;
      }
    >
  | Event<
      'ContactCardSet',
      Ref & {
        accountId: string;
        changeId: string;
        linePhoneNumber: string;
        names: CardNames;
        avatar: StoredImage | null;
        version: number;
        setAt: string;
      }
    >
  | Event<'ContactCardChangeRejected', Ref & { changeId: string; reason: string; rejectedAt: string }>
  | Event<'ContactCardDeleted', Ref & { accountId: string; linePhoneNumber: string; version: number; deletedAt: string }>
  | Event<'ContactCardPublished', Ref & { version: number; publishedAt: string }>;

export type ContactCardState = Readonly<{
  card: Readonly<{ names: CardNames; avatar: StoredImage | null }> | null;
  version: number;
  publishedVersion: number;
  pending: Readonly<{ changeId: string; linePhoneNumber: string; names: CardNames; avatarUrl: string | null }> | null;
  /** the change ids already decided (set or refused): a repeated request or outcome is a no-op */
  decided: readonly string[];
}>;

const RECENT = 50;
const decided = (s: ContactCardState, id: string) => [...s.decided.slice(-(RECENT - 1)), id];

export const contactCardDecider: Decider<ContactCardCommand, ContactCardEvent, ContactCardState> = {
  initialState: () => ({ card: null, version: 0, publishedVersion: 0, pending: null, decided: [] }),
  decide: (cmd, s) => {
    const now = cmd.metadata.now;
    const accountId = cmd.metadata.accountId;
    switch (cmd.type) {
      case 'RequestContactCard': {
        const d = cmd.data;
        if (s.decided.includes(d.changeId) || s.pending?.changeId === d.changeId) return [];
        return [
          {
            type: 'ContactCardChangeRequested',
            data: {
              numberId: d.numberId,
              accountId,
              changeId: d.changeId,
              linePhoneNumber: d.linePhoneNumber,
              names: d.names,
              avatarUrl: d.avatarUrl,
              requestedAt: now,
            },
          },
        ];
      }
      case 'ApplyCardChange': {
        const p = s.pending;
        if (!p || p.changeId !== cmd.data.changeId) return [];
        if ((p.avatarUrl === null) !== (cmd.data.avatar === null)) return [];
        return [
          {
            type: 'ContactCardSet',
            data: {
              numberId: cmd.data.numberId,
              accountId,
              changeId: p.changeId,
              linePhoneNumber: p.linePhoneNumber,
              names: p.names,
              avatar: cmd.data.avatar,
              version: s.version + 1,
              setAt: now,
            },
          },
        ];
      }
      case 'RejectCardAvatar':
        if (s.pending?.changeId !== cmd.data.changeId) return [];
        return [
          {
            type: 'ContactCardChangeRejected',
            data: { numberId: cmd.data.numberId, changeId: cmd.data.changeId, reason: cmd.data.reason, rejectedAt: now },
          },
        ];
      case 'DeleteContactCard':
        if (s.card === null && s.pending === null) return [];
        return [
          {
            type: 'ContactCardDeleted',
            data: {
              numberId: cmd.data.numberId,
              accountId,
              linePhoneNumber: cmd.data.linePhoneNumber,
              version: s.version + 1,
              deletedAt: now,
            },
          },
        ];
      case 'RecordCardPublished':
        if (cmd.data.version <= s.publishedVersion || cmd.data.version > s.version) return [];
        return [{ type: 'ContactCardPublished', data: { numberId: cmd.data.numberId, version: cmd.data.version, publishedAt: now } }];
      default:
        return assertNever(cmd);
    }
  },
  evolve: (s, e) => {
    switch (e.type) {
      case 'ContactCardChangeRequested':
        return {
          ...s,
          pending: { changeId: e.data.changeId, linePhoneNumber: e.data.linePhoneNumber, names: e.data.names, avatarUrl: e.data.avatarUrl },
        };
      case 'ContactCardSet':
        return {
          ...s,
          card: { names: e.data.names, avatar: e.data.avatar },
          version: e.data.version,
          pending: null,
          decided: decided(s, e.data.changeId),
        };
      case 'ContactCardChangeRejected':
        return { ...s, pending: null, decided: decided(s, e.data.changeId) };
      case 'ContactCardDeleted':
        return { ...s, card: null, pending: null, version: e.data.version };
      case 'ContactCardPublished':
        return { ...s, publishedVersion: e.data.version };
      default:
        return assertNever(e);
    }
  },
};
