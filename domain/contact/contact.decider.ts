import { changedFields } from '../shared/changes.js';
import { DomainError } from '../shared/errors.js';
import { assertNever, type Command, type Decider, type Event } from '../shared/types.js';

/** A contact's stream (docs/contacts.md). */
export const contactStream = (contactId: string) => `contact-${contactId}`;

/** What a contact says about a person: the phone number is unique within the account (docs/contacts.md#one-contact-per-number). */
export type ContactFields = Readonly<{ phoneNumber: string; name: string; email: string | null; notes: string | null }>;
export type ContactChanges = Partial<ContactFields>;

export type ContactCommand =
  | Command<'CreateContact', { contactId: string; fields: ContactFields }>
  | Command<'UpdateContact', { contactId: string; changes: ContactChanges }>
  | Command<'DeleteContact', { contactId: string }>
  /** Fences a create that claimed a number and never wrote its contact (docs/contacts.md#recovering-a-number) */
  | Command<'AbandonContact', { contactId: string }>;

export type ContactEvent =
  | Event<'ContactCreated', { contactId: string; accountId: string } & ContactFields & { createdAt: string }>
  /** only the fields that changed */
  | Event<'ContactUpdated', { contactId: string; changes: ContactChanges; updatedAt: string }>
  | Event<'ContactDeleted', { contactId: string; accountId: string; phoneNumber: string; deletedAt: string }>
  | Event<'ContactAbandoned', { contactId: string; accountId: string; abandonedAt: string }>;

export const contactEventTypes = ['ContactCreated', 'ContactUpdated', 'ContactDeleted', 'ContactAbandoned'] as const;

export type ContactState =
  | { status: 'none' }
  | { status: 'active'; contactId: string; accountId: string; fields: ContactFields }
  | { status: 'deleted'; contactId: string; accountId: string; phoneNumber: string }
  /** never created: another request took its number over (docs/contacts.md#recovering-a-number) */
  | { status: 'abandoned'; contactId: string; accountId: string };

const notFound = () => new DomainError('CONTACT_NOT_FOUND', 'Contact not found');
export const contactExists = (phoneNumber: string) =>
  new DomainError('CONTACT_EXISTS', `A contact with phone number ${phoneNumber} already exists in this account`, [
    { field: 'phoneNumber', message: 'another contact of this account has this phone number', type: 'value_error' },
  ]);

export const contactDecider: Decider<ContactCommand, ContactEvent, ContactState> = {
  initialState: () => ({ status: 'none' }),

  decide: (cmd, s) => {
    const { now, accountId } = cmd.metadata;
    // another account's contact is indistinguishable from a missing one
    const owned = s.status !== 'none' && s.accountId === accountId;
    switch (cmd.type) {
      case 'CreateContact':
        if (s.status === 'none')
          return [{ type: 'ContactCreated', data: { contactId: cmd.data.contactId, accountId, ...cmd.data.fields, createdAt: now } }];
        // fenced: the number was taken over while this create was under way
        if (s.status === 'abandoned') throw contactExists(cmd.data.fields.phoneNumber);
        if (!owned) throw new DomainError('CONCURRENCY_CONFLICT', 'Contact id already taken');
        return [];
      case 'UpdateContact': {
        if (s.status !== 'active' || !owned) throw notFound();
        const changes = changedFields(s.fields, cmd.data.changes);
        if (Object.keys(changes).length === 0) return [];
        return [{ type: 'ContactUpdated', data: { contactId: s.contactId, changes, updatedAt: now } }];
      }
      case 'DeleteContact':
        if (s.status !== 'active' || !owned) throw notFound();
        return [
          {
            type: 'ContactDeleted',
            data: { contactId: s.contactId, accountId: s.accountId, phoneNumber: s.fields.phoneNumber, deletedAt: now },
          },
        ];
      case 'AbandonContact':
        // only a contact that was never written can be fenced; one that exists answers for itself
        if (s.status !== 'none') return [];
        return [{ type: 'ContactAbandoned', data: { contactId: cmd.data.contactId, accountId, abandonedAt: now } }];
      default:
        return assertNever(cmd);
    }
  },

  evolve: (s, e) => {
    switch (e.type) {
      case 'ContactCreated': {
        const { contactId, accountId, phoneNumber, name, email, notes } = e.data;
        return { status: 'active', contactId, accountId, fields: { phoneNumber, name, email, notes } };
      }
      case 'ContactUpdated':
        return s.status === 'active' ? { ...s, fields: { ...s.fields, ...e.data.changes } } : s;
      case 'ContactDeleted':
        return s.status === 'active'
          ? { status: 'deleted', contactId: s.contactId, accountId: s.accountId, phoneNumber: s.fields.phoneNumber }
          : s;
      case 'ContactAbandoned':
        return s.status === 'none' ? { status: 'abandoned', contactId: e.data.contactId, accountId: e.data.accountId } : s;
      default:
        return s;
    }
  },
};
