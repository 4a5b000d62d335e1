import { assertNever, type Command, type Decider, type Event } from '../shared/types.js';
import { contactExists } from './contact.decider.js';

/**
 * Which contact of an account holds a phone number: one stream per (account, number), written before the
 * contact's own stream, so that two concurrent creates with one number cannot both succeed (docs/contacts.md#one-contact-per-number).
 */
export const contactPhoneStream = (accountId: string, phoneNumber: string) => `contact_phone-${accountId}:${phoneNumber}`;

export type ContactPhoneCommand =
  /** `takeOver`: the holder the caller found stale and may displace (docs/contacts.md#recovering-a-number) */
  | Command<'ClaimContactPhone', { phoneNumber: string; contactId: string; takeOver: string | null }>
  | Command<'ReleaseContactPhone', { phoneNumber: string; contactId: string }>;

export type ContactPhoneEvent =
  | Event<
      'ContactPhoneClaimed',
      { accountId: string; phoneNumber: string; contactId: string; previousContactId: string | null; claimedAt: string }
    >
  | Event<'ContactPhoneReleased', { accountId: string; phoneNumber: string; contactId: string; releasedAt: string }>;

export type ContactPhoneState = { status: 'free' } | { status: 'held'; contactId: string; since: string };

export const contactPhoneDecider: Decider<ContactPhoneCommand, ContactPhoneEvent, ContactPhoneState> = {
  initialState: () => ({ status: 'free' }),

  decide: (cmd, s) => {
    const { now, accountId } = cmd.metadata;
    const { phoneNumber, contactId } = cmd.data;
    switch (cmd.type) {
      case 'ClaimContactPhone': {
        if (s.status === 'held' && s.contactId === contactId) return [];
        if (s.status === 'held' && s.contactId !== cmd.data.takeOver) throw contactExists(phoneNumber);
        const previousContactId = s.status === 'held' ? s.contactId : null;
        return [{ type: 'ContactPhoneClaimed', data: { accountId, phoneNumber, contactId, previousContactId, claimedAt: now } }];
      }
      case 'ReleaseContactPhone':
        if (s.status !== 'held' || s.contactId !== contactId) return [];
        return [{ type: 'ContactPhoneReleased', data: { accountId, phoneNumber, contactId, releasedAt: now } }];
      default:
        return assertNever(cmd);
    }
  },

  evolve: (s, e) => {
    switch (e.type) {
      case 'ContactPhoneClaimed':
        return { status: 'held', contactId: e.data.contactId, since: e.data.claimedAt };
      case 'ContactPhoneReleased':
        return s.status === 'held' && s.contactId === e.data.contactId ? { status: 'free' } : s;
      default:
        return s;
    }
  },
};
