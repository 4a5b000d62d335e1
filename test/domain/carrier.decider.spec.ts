import { type CarrierEvent, type CarrierSettings, carrierDecider } from '../../domain/carrier/carrier.decider.js';
import { deciderSpec } from '../support/decider-spec.js';

const { given } = deciderSpec(carrierDecider);
const metadata = { now: '2026-01-01T00:00:00.000Z', accountId: 'admin' };
const later = { now: '2026-01-02T00:00:00.000Z', accountId: 'admin' };

const settings: CarrierSettings = {
  name: 'Telnyx',
  inbound: { addresses: ['192.76.120.10/32'], username: null, passwordSealed: null },
  outbound: {
    host: 'sip.telnyx.com',
    port: 5060,
    transport: 'udp',
    username: 'me',
    passwordSealed: 'enc:v1:old',
    register: false,
    registerExpiresSeconds: 3600,
  },
  numberFormat: { plus: true, prefix: '', defaultCountryCode: '1' },
};
const created: CarrierEvent = { type: 'CarrierCreated', data: { carrierId: 'telnyx', settings, createdAt: metadata.now } };
const deleted: CarrierEvent = { type: 'CarrierDeleted', data: { carrierId: 'telnyx', deletedAt: metadata.now } };
const change = (changes: object, at = later) => ({ type: 'ChangeCarrier' as const, data: { carrierId: 'telnyx', changes }, metadata: at });

describe('Carrier decider', () => {
  it('creates a carrier', () =>
    given([])
      .when({ type: 'CreateCarrier', data: { carrierId: 'telnyx', settings }, metadata })
      .then([created]));

  it('refuses a second carrier with the same id', () =>
    given([created])
      .when({ type: 'CreateCarrier', data: { carrierId: 'telnyx', settings }, metadata })
      .thenThrows('CARRIER_EXISTS'));

  it('creates a carrier again after it was deleted', () =>
    given([created, deleted])
      .when({ type: 'CreateCarrier', data: { carrierId: 'telnyx', settings }, metadata: later })
      .then([{ type: 'CarrierCreated', data: { carrierId: 'telnyx', settings, createdAt: later.now } }]));

  it('refuses credentials without a password, and a carrier that lets nothing in or out', () => {
    given([])
      .when({
        type: 'CreateCarrier',
        data: { carrierId: 'telnyx', settings: { ...settings, inbound: { addresses: [], username: 'pbx', passwordSealed: null } } },
        metadata,
      })
      .thenThrows('VALIDATION_ERROR');
    given([])
      .when({
        type: 'CreateCarrier',
        data: {
          carrierId: 'telnyx',
          settings: { ...settings, inbound: { addresses: [], username: null, passwordSealed: null }, outbound: null },
        },
        metadata,
      })
      .thenThrows('VALIDATION_ERROR');
  });

  it('replaces the sections a change names, keeping a password the change leaves out', () =>
    given([created])
      .when(change({ name: 'Telnyx US', outbound: { ...settings.outbound, passwordSealed: undefined, port: 5080 } }))
      .then([
        {
          type: 'CarrierChanged',
          data: {
            carrierId: 'telnyx',
            settings: { ...settings, name: 'Telnyx US', outbound: { ...settings.outbound!, port: 5080 } },
            changedAt: later.now,
          },
        },
      ]));

  it('takes a new password, and does not keep the old one for a new user name', () => {
    given([created])
      .when(change({ outbound: { ...settings.outbound, passwordSealed: 'enc:v1:new' } }))
      .then([
        {
          type: 'CarrierChanged',
          data: {
            carrierId: 'telnyx',
            settings: { ...settings, outbound: { ...settings.outbound!, passwordSealed: 'enc:v1:new' } },
            changedAt: later.now,
          },
        },
      ]);
    const { passwordSealed: _, ...withoutPassword } = settings.outbound!;
    given([created])
      .when(change({ outbound: { ...withoutPassword, username: 'someone-else' } }))
      .thenThrows('VALIDATION_ERROR');
  });

  it('removes the outbound gateway with null, and refuses what would leave nothing', () => {
    given([created])
      .when(change({ outbound: null }))
      .then([{ type: 'CarrierChanged', data: { carrierId: 'telnyx', settings: { ...settings, outbound: null }, changedAt: later.now } }]);
    given([created])
      .when(change({ outbound: null, inbound: { addresses: [], username: null } }))
      .thenThrows('VALIDATION_ERROR');
  });

  it('treats a change to the same settings as a no-op', () =>
    given([created])
      .when(change({ name: 'Telnyx', numberFormat: settings.numberFormat }))
      .then([]));

  it('deletes a carrier, and refuses to change or delete one that is not there', () => {
    given([created])
      .when({ type: 'DeleteCarrier', data: { carrierId: 'telnyx' }, metadata: later })
      .then([{ type: 'CarrierDeleted', data: { carrierId: 'telnyx', deletedAt: later.now } }]);
    given([])
      .when(change({ name: 'x' }))
      .thenThrows('CARRIER_NOT_FOUND');
    given([created, deleted])
      .when(change({ name: 'x' }))
      .thenThrows('CARRIER_NOT_FOUND');
    given([created, deleted])
      .when({ type: 'DeleteCarrier', data: { carrierId: 'telnyx' }, metadata })
      .thenThrows('CARRIER_NOT_FOUND');
  });
});
