import { expect } from 'chai';
import {
  type SipTrunkCommand,
  type SipTrunkConfig,
  type SipTrunkEvent,
  sipTrunkDecider,
} from '../../domain/sip-trunk/sip-trunk.decider.js';
import { sipUriProblem } from '../../domain/sip-trunk/sip-uri.js';
import { deciderSpec } from '../support/decider-spec.js';

const { given } = deciderSpec(sipTrunkDecider);
const now = '2026-01-01T00:00:00.000Z';
const metadata = { now, accountId: 'acc_1' };
const trunkId = 'trk_1';
const uri = { sipUri: 'sip:pbx.example.com;transport=tls', name: null, priority: 10, weight: 10 };
const config: SipTrunkConfig = { name: 'Office', transfers: 'all', transferCallerId: 'transferee', uris: [uri] };
const created: SipTrunkEvent = {
  type: 'SipTrunkCreated',
  data: { trunkId, accountId: 'acc_1', config, providerRef: 'sbx_trk_1', terminationUri: 'sip:trk_1@sandbox', createdAt: now },
};
const linked = (numberId: string): SipTrunkEvent => ({ type: 'SipTrunkNumberLinked', data: { trunkId, numberId, linkedAt: now } });
const c = (type: SipTrunkCommand['type'], data: Record<string, unknown>, m = metadata) =>
  ({ type, data: { trunkId, ...data }, metadata: m }) as SipTrunkCommand;

describe('SipTrunk decider', () => {
  it('creates a trunk once (the same id again is a retry)', () => {
    given([])
      .when(c('CreateSipTrunk', { config, providerRef: 'sbx_trk_1', terminationUri: 'sip:trk_1@sandbox' }))
      .then([created]);
    given([created])
      .when(c('CreateSipTrunk', { config, providerRef: 'sbx_trk_1', terminationUri: 'sip:trk_1@sandbox' }))
      .then([]);
  });
  it('records only the fields that change', () => {
    given([created])
      .when(c('UpdateSipTrunk', { changes: { name: 'Office', transfers: 'none' } }))
      .then([{ type: 'SipTrunkUpdated', data: { trunkId, changes: { transfers: 'none' }, updatedAt: now } }]);
    given([created])
      .when(c('UpdateSipTrunk', { changes: { name: 'Office' } }))
      .then([]);
  });
  it('clears the origination URIs while no number is attached', () =>
    given([created])
      .when(c('UpdateSipTrunk', { changes: { uris: [] } }))
      .then([{ type: 'SipTrunkUpdated', data: { trunkId, changes: { uris: [] }, updatedAt: now } }]));
  it('refuses to clear the origination URIs while numbers are attached', () =>
    given([created, linked('pn_1')])
      .when(c('UpdateSipTrunk', { changes: { uris: [] } }))
      .thenThrows('SIP_TRUNK_CONFLICT'));
  it('links a number once, and only when the trunk has somewhere to send calls', () => {
    given([created])
      .when(c('LinkNumber', { numberId: 'pn_1' }))
      .then([linked('pn_1')]);
    given([created, linked('pn_1')])
      .when(c('LinkNumber', { numberId: 'pn_1' }))
      .then([]);
    const cleared: SipTrunkEvent = { type: 'SipTrunkUpdated', data: { trunkId, changes: { uris: [] }, updatedAt: now } };
    given([created, cleared])
      .when(c('LinkNumber', { numberId: 'pn_1' }))
      .thenThrows('SIP_TRUNK_CONFLICT');
  });
  it('unlinks idempotently; then the URIs may be cleared', () => {
    const unlinked: SipTrunkEvent = { type: 'SipTrunkNumberUnlinked', data: { trunkId, numberId: 'pn_1', unlinkedAt: now } };
    given([created, linked('pn_1')])
      .when(c('UnlinkNumber', { numberId: 'pn_1' }))
      .then([unlinked]);
    given([created, linked('pn_1'), unlinked])
      .when(c('UnlinkNumber', { numberId: 'pn_1' }))
      .then([]);
    given([created, linked('pn_1'), unlinked])
      .when(c('UpdateSipTrunk', { changes: { uris: [] } }))
      .then([{ type: 'SipTrunkUpdated', data: { trunkId, changes: { uris: [] }, updatedAt: now } }]);
  });
  it('soft-deletes, naming the numbers still routed to it; a deleted trunk is not found', () => {
    given([created, linked('pn_1')])
      .when(c('DeleteSipTrunk', {}))
      .then([
        { type: 'SipTrunkDeleted', data: { trunkId, accountId: 'acc_1', providerRef: 'sbx_trk_1', numberIds: ['pn_1'], deletedAt: now } },
      ]);
    const deleted: SipTrunkEvent = {
      type: 'SipTrunkDeleted',
      data: { trunkId, accountId: 'acc_1', providerRef: 'sbx_trk_1', numberIds: [], deletedAt: now },
    };
    given([created, deleted]).when(c('DeleteSipTrunk', {})).thenThrows('SIP_TRUNK_NOT_FOUND');
    given([created, deleted])
      .when(c('LinkNumber', { numberId: 'pn_1' }))
      .thenThrows('SIP_TRUNK_NOT_FOUND');
    given([created, deleted])
      .when(c('UpdateSipTrunk', { changes: { name: 'x' } }))
      .thenThrows('SIP_TRUNK_NOT_FOUND');
  });
  it("answers not found for another account's trunk", () => {
    given([created])
      .when(c('UpdateSipTrunk', { changes: { name: 'x' } }, { now, accountId: 'acc_2' }))
      .thenThrows('SIP_TRUNK_NOT_FOUND');
    given([created])
      .when(c('LinkNumber', { numberId: 'pn_9' }, { now, accountId: 'acc_2' }))
      .thenThrows('SIP_TRUNK_NOT_FOUND');
  });

  describe('the termination side (docs/sip.md#calls-from-your-pbx)', () => {
    const pbx = { username: 'pbx', passwordSealed: 'enc:v1:first' };
    const withTermination: SipTrunkEvent = {
      type: 'SipTrunkUpdated',
      data: { trunkId, changes: { termination: { credentials: [pbx], addresses: ['203.0.113.7'] } }, updatedAt: now },
    };
    const updated = (termination: unknown): SipTrunkEvent =>
      ({ type: 'SipTrunkUpdated', data: { trunkId, changes: { termination }, updatedAt: now } }) as SipTrunkEvent;

    it('a trunk recorded without one has none: credentials and addresses are recorded whole, passwords as given (sealed)', () =>
      given([created])
        .when(c('UpdateSipTrunk', { changes: { termination: { credentials: [pbx], addresses: ['203.0.113.7'] } } }))
        .then([withTermination]));
    it('a list left out stays as it was; a credential without a password keeps the stored one of its user name', () => {
      given([created, withTermination])
        .when(c('UpdateSipTrunk', { changes: { termination: { addresses: ['198.51.100.0/24'] } } }))
        .then([updated({ credentials: [pbx], addresses: ['198.51.100.0/24'] })]);
      given([created, withTermination])
        .when(c('UpdateSipTrunk', { changes: { termination: { credentials: [{ username: 'pbx' }] } } }))
        .then([]);
      given([created, withTermination])
        .when(
          c('UpdateSipTrunk', {
            changes: { termination: { credentials: [{ username: 'pbx' }, { username: 'b', passwordSealed: 'enc:v1:b' }] } },
          }),
        )
        .then([updated({ credentials: [pbx, { username: 'b', passwordSealed: 'enc:v1:b' }], addresses: ['203.0.113.7'] })]);
    });
    it('a new password replaces the stored one; an empty list removes them all', () => {
      given([created, withTermination])
        .when(c('UpdateSipTrunk', { changes: { termination: { credentials: [{ username: 'pbx', passwordSealed: 'enc:v1:second' }] } } }))
        .then([updated({ credentials: [{ username: 'pbx', passwordSealed: 'enc:v1:second' }], addresses: ['203.0.113.7'] })]);
      given([created, withTermination])
        .when(c('UpdateSipTrunk', { changes: { termination: { credentials: [] } } }))
        .then([updated({ credentials: [], addresses: ['203.0.113.7'] })]);
    });
    it('refuses a new user name without a password, and a user name given twice (422)', () => {
      given([created, withTermination])
        .when(c('UpdateSipTrunk', { changes: { termination: { credentials: [{ username: 'other' }] } } }))
        .thenThrows('VALIDATION_ERROR');
      given([created])
        .when(c('UpdateSipTrunk', { changes: { termination: { credentials: [pbx, { username: 'pbx', passwordSealed: 'enc:v1:x' }] } } }))
        .thenThrows('VALIDATION_ERROR');
      given([])
        .when(c('RequestSipTrunk', { config: { ...config, termination: { credentials: [{ username: 'pbx' }] } } }))
        .thenThrows('VALIDATION_ERROR');
    });
    it('a new trunk records its termination with every list present', () =>
      given([])
        .when(c('RequestSipTrunk', { config: { ...config, termination: { addresses: ['203.0.113.7', '203.0.113.7'] } } }))
        .then([
          {
            type: 'SipTrunkRequested',
            data: {
              trunkId,
              accountId: 'acc_1',
              config: { ...config, termination: { credentials: [], addresses: ['203.0.113.7'] } },
              requestedAt: now,
            },
          },
        ]));
  });

  describe('SIP URI validation', () => {
    for (const ok of [
      'sip:pbx.example.com',
      'sips:pbx.example.com:5061',
      'sip:alice@10.0.0.1:5060;transport=udp',
      'sip:[2001:db8::1]:5060;transport=TCP',
      'sip:trunk.example.com;transport=tls',
      'SIP:pbx.example.com',
    ])
      it(`accepts ${ok}`, () => expect(sipUriProblem(ok)).to.equal(null));
    for (const bad of [
      'http://pbx.example.com',
      'pbx.example.com',
      'sip:',
      'sip:pbx.example.com;transport=sctp',
      'sip:pbx.example.com;lr',
      'sip:pbx example.com',
      'sip:300.1.1.1',
      'sip:pbx.example.com:70000',
      'sip:pbx.example.com?x=y',
    ])
      it(`refuses ${bad}`, () => expect(sipUriProblem(bad)).to.be.a('string'));
  });
});

describe('SipTrunk decider: the provider steps as facts', () => {
  const requested: SipTrunkEvent = { type: 'SipTrunkRequested', data: { trunkId, accountId: 'acc_1', config, requestedAt: now } };
  const updated: SipTrunkEvent = { type: 'SipTrunkUpdated', data: { trunkId, changes: { transfers: 'none' }, updatedAt: now } };
  const deletion: SipTrunkEvent = { type: 'SipTrunkDeletionRequested', data: { trunkId, requestedAt: now } };
  const refusal = { code: 'TELEPHONY_PROVIDER_ERROR' as const, message: 'provider down' };

  it('records a request once; another account cannot take the id', () => {
    given([]).when(c('RequestSipTrunk', { config })).then([requested]);
    given([requested]).when(c('RequestSipTrunk', { config })).then([]);
    given([requested])
      .when(c('RequestSipTrunk', { config }, { now, accountId: 'acc_2' }))
      .thenThrows('CONCURRENCY_CONFLICT');
  });
  it('creates the requested trunk with what the provider answered, keeping the requested configuration', () =>
    given([requested])
      .when(c('CreateSipTrunk', { config: { ...config, name: 'ignored' }, providerRef: 'sbx_trk_1', terminationUri: 'sip:trk_1@sandbox' }))
      .then([created]));
  it('fails a requested trunk once, and never one that was created', () => {
    given([requested])
      .when(c('FailSipTrunk', refusal))
      .then([{ type: 'SipTrunkFailed', data: { trunkId, accountId: 'acc_1', ...refusal, failedAt: now } }]);
    given([requested, created]).when(c('FailSipTrunk', refusal)).then([]);
  });
  it('is not found for updates while it is only requested or has failed', () => {
    given([requested])
      .when(c('UpdateSipTrunk', { changes: { transfers: 'none' } }))
      .thenThrows('SIP_TRUNK_NOT_FOUND');
    given([requested, { type: 'SipTrunkFailed', data: { trunkId, accountId: 'acc_1', ...refusal, failedAt: now } }])
      .when(c('DeleteSipTrunk', {}))
      .thenThrows('SIP_TRUNK_NOT_FOUND');
  });
  it('reverts the fields of a refused update, so the record matches the trunk the provider runs', () => {
    const reverted: SipTrunkEvent = {
      type: 'SipTrunkUpdateReverted',
      data: { trunkId, changes: { transfers: 'all' }, ...refusal, revertedAt: now },
    };
    given([created, updated])
      .when(c('RevertSipTrunkUpdate', { changes: { transfers: 'all' }, ...refusal }))
      .then([reverted]);
    // after the revert, asking for the old value again changes nothing: it is the value on record
    given([created, updated, reverted])
      .when(c('UpdateSipTrunk', { changes: { transfers: 'all' } }))
      .then([]);
  });
  it('records a deletion request once, and deletes or fails it', () => {
    given([created]).when(c('RequestSipTrunkDeletion', {})).then([deletion]);
    given([created, deletion]).when(c('RequestSipTrunkDeletion', {})).then([]);
    given([created, deletion])
      .when(c('FailSipTrunkDeletion', refusal))
      .then([{ type: 'SipTrunkDeletionFailed', data: { trunkId, ...refusal, failedAt: now } }]);
    given([created]).when(c('FailSipTrunkDeletion', refusal)).then([]);
    given([created, deletion])
      .when(c('DeleteSipTrunk', {}))
      .then([{ type: 'SipTrunkDeleted', data: { trunkId, accountId: 'acc_1', providerRef: 'sbx_trk_1', numberIds: [], deletedAt: now } }]);
  });
});
