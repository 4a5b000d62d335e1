import { type ContactCommand, type ContactEvent, type ContactFields, contactDecider } from '../../domain/contact/contact.decider.js';
import { type ContactPhoneCommand, type ContactPhoneEvent, contactPhoneDecider } from '../../domain/contact/contact-phone.decider.js';
import { deciderSpec } from '../support/decider-spec.js';

const metadata = { now: '2026-01-01T00:00:00.000Z', accountId: 'acc_1' };
const fields: ContactFields = { phoneNumber: '+14155550100', name: 'Ada', email: null, notes: null };
const created: ContactEvent = {
  type: 'ContactCreated',
  data: { contactId: 'ct_1', accountId: 'acc_1', ...fields, createdAt: metadata.now },
};
const deleted: ContactEvent = {
  type: 'ContactDeleted',
  data: { contactId: 'ct_1', accountId: 'acc_1', phoneNumber: fields.phoneNumber, deletedAt: metadata.now },
};
const abandoned: ContactEvent = { type: 'ContactAbandoned', data: { contactId: 'ct_1', accountId: 'acc_1', abandonedAt: metadata.now } };
const cmd = <T extends ContactCommand['type']>(type: T, data: Extract<ContactCommand, { type: T }>['data'], accountId = 'acc_1') =>
  ({ type, data, metadata: { ...metadata, accountId } }) as ContactCommand;

describe('Contact decider', () => {
  const { given } = deciderSpec(contactDecider);
  const create = cmd('CreateContact', { contactId: 'ct_1', fields });

  it('creates a contact for the acting account', () => given([]).when(create).then([created]));
  it('treats creating the same contact again as a retry', () => given([created]).when(create).then([]));
  it('refuses a create that was fenced while its number changed hands', () => given([abandoned]).when(create).thenThrows('CONTACT_EXISTS'));
  it('refuses an id of another account', () =>
    given([created])
      .when(cmd('CreateContact', { contactId: 'ct_1', fields }, 'acc_2'))
      .thenThrows('CONCURRENCY_CONFLICT'));

  it('records only the fields that really change', () =>
    given([created])
      .when(cmd('UpdateContact', { contactId: 'ct_1', changes: { name: 'Ada', email: 'ada@example.com', notes: null } }))
      .then([{ type: 'ContactUpdated', data: { contactId: 'ct_1', changes: { email: 'ada@example.com' }, updatedAt: metadata.now } }]));
  it('is a no-op when nothing changes', () =>
    given([created])
      .when(cmd('UpdateContact', { contactId: 'ct_1', changes: { name: 'Ada' } }))
      .then([]));
  it('folds updates into the state', () =>
    given([created, { type: 'ContactUpdated', data: { contactId: 'ct_1', changes: { name: 'Grace' }, updatedAt: metadata.now } }])
      .when(cmd('UpdateContact', { contactId: 'ct_1', changes: { name: 'Grace' } }))
      .then([]));
  it("hides another account's contact on update", () =>
    given([created])
      .when(cmd('UpdateContact', { contactId: 'ct_1', changes: { name: 'x' } }, 'acc_2'))
      .thenThrows('CONTACT_NOT_FOUND'));
  it('cannot update a deleted contact', () =>
    given([created, deleted])
      .when(cmd('UpdateContact', { contactId: 'ct_1', changes: { name: 'x' } }))
      .thenThrows('CONTACT_NOT_FOUND'));

  it('deletes a contact, naming the number it frees', () =>
    given([created])
      .when(cmd('DeleteContact', { contactId: 'ct_1' }))
      .then([deleted]));
  it('answers a second delete as not found', () =>
    given([created, deleted])
      .when(cmd('DeleteContact', { contactId: 'ct_1' }))
      .thenThrows('CONTACT_NOT_FOUND'));
  it("hides another account's contact on delete", () =>
    given([created])
      .when(cmd('DeleteContact', { contactId: 'ct_1' }, 'acc_2'))
      .thenThrows('CONTACT_NOT_FOUND'));
  it('cannot delete a contact that was never created', () =>
    given([])
      .when(cmd('DeleteContact', { contactId: 'ct_1' }))
      .thenThrows('CONTACT_NOT_FOUND'));

  it('fences a contact that was never written', () =>
    given([])
      .when(cmd('AbandonContact', { contactId: 'ct_1' }))
      .then([abandoned]));
  it('leaves a contact that exists alone when asked to fence it', () =>
    given([created])
      .when(cmd('AbandonContact', { contactId: 'ct_1' }))
      .then([]));
});

describe('Contact phone (claim) decider', () => {
  const { given } = deciderSpec(contactPhoneDecider);
  const phoneNumber = '+14155550100';
  const claim = (contactId: string, takeOver: string | null = null): ContactPhoneCommand => ({
    type: 'ClaimContactPhone',
    data: { phoneNumber, contactId, takeOver },
    metadata,
  });
  const release = (contactId: string): ContactPhoneCommand => ({ type: 'ReleaseContactPhone', data: { phoneNumber, contactId }, metadata });
  const claimed = (contactId: string, previousContactId: string | null = null): ContactPhoneEvent => ({
    type: 'ContactPhoneClaimed',
    data: { accountId: 'acc_1', phoneNumber, contactId, previousContactId, claimedAt: metadata.now },
  });
  const released = (contactId: string): ContactPhoneEvent => ({
    type: 'ContactPhoneReleased',
    data: { accountId: 'acc_1', phoneNumber, contactId, releasedAt: metadata.now },
  });

  it('gives a free number to the contact', () =>
    given([])
      .when(claim('ct_1'))
      .then([claimed('ct_1')]));
  it('treats claiming a number the contact holds as a retry', () =>
    given([claimed('ct_1')])
      .when(claim('ct_1'))
      .then([]));
  it('refuses a number another contact holds', () =>
    given([claimed('ct_1')])
      .when(claim('ct_2'))
      .thenThrows('CONTACT_EXISTS'));
  it('takes a number over from the holder named as stale', () =>
    given([claimed('ct_1')])
      .when(claim('ct_2', 'ct_1'))
      .then([claimed('ct_2', 'ct_1')]));
  it('refuses a take-over when the holder is no longer the one found stale', () =>
    given([claimed('ct_1'), claimed('ct_3', 'ct_1')])
      .when(claim('ct_2', 'ct_1'))
      .thenThrows('CONTACT_EXISTS'));
  it('gives a released number to the next contact', () =>
    given([claimed('ct_1'), released('ct_1')])
      .when(claim('ct_2'))
      .then([claimed('ct_2')]));
  it('releases the number its holder lets go of', () =>
    given([claimed('ct_1')])
      .when(release('ct_1'))
      .then([released('ct_1')]));
  it('ignores a release by a contact that does not hold the number', () =>
    given([claimed('ct_1'), claimed('ct_2', 'ct_1')])
      .when(release('ct_1'))
      .then([]));
  it('ignores a release of a free number', () => given([]).when(release('ct_1')).then([]));
});
