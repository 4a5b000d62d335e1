import { expect } from 'chai';
import { sql } from 'kysely';
import { PLATFORM } from '../../infrastructure/platform/tokens.js';
import { SIP } from '../../infrastructure/sip/tokens.js';
import { carriersProjector } from '../../projections/carriers/carriers.projector.js';
import { rebuildProjector } from '../../projections/shared/rebuild.js';
import { ADMIN_TOKEN, startTestApp, type TestApp } from '../support/http.js';

const INBOUND_SECRET = 'inbound-secret-4711';
const OUTBOUND_SECRET = 'outbound-secret-0815';

/**
 * The operator's carriers (docs/sip.md#carriers): created, read, changed and deleted through /admin/carriers,
 * event-sourced, passwords sealed at rest and never shown; the start-up configuration's carriers listed beside them
 * and read-only; a carrier with imported numbers kept.
 */
describe('SIP carriers: the operator API', function () {
  this.timeout(60_000);
  let app: TestApp;
  const admin = (method: string, path: string, body?: unknown) => app.call(method, path, { key: ADMIN_TOKEN, ...(body ? { body } : {}) });

  before(async () => {
    app = await startTestApp({
      SIP_CARRIERS: JSON.stringify([{ id: 'from-file', inbound: { addresses: ['198.51.100.0/24'] } }]),
    });
  });
  after(async () => app?.close());

  const telnyx = {
    id: 'telnyx',
    name: 'Telnyx',
    inbound: { addresses: ['192.76.120.10/32', '2001:db8::/32'], username: 'pbx', password: INBOUND_SECRET },
    outbound: { host: 'sip.telnyx.com', username: 'me', password: OUTBOUND_SECRET, register: true },
    numberFormat: { plus: false },
  };

  it('creates a carrier, shows it without its passwords, and refuses a second with the same id', async () => {
    const created = await admin('POST', '/admin/carriers', telnyx);
    expect(created.status, JSON.stringify(created.body)).to.equal(200);
    expect(created.body).to.deep.include({
      id: 'telnyx',
      name: 'Telnyx',
      source: 'api',
      inbound: { addresses: ['192.76.120.10/32', '2001:db8::/32'], username: 'pbx', hasPassword: true },
      outbound: {
        host: 'sip.telnyx.com',
        port: 5060,
        transport: 'udp',
        username: 'me',
        hasPassword: true,
        register: true,
        registerExpiresSeconds: 3600,
      },
      numberFormat: { plus: false, prefix: '', defaultCountryCode: '1' },
    });
    const again = await admin('POST', '/admin/carriers', telnyx);
    expect(again.status).to.equal(409);
    expect(again.body.error.code).to.equal('CARRIER_EXISTS');
    const one = await admin('GET', '/admin/carriers/telnyx');
    expect(one.body).to.deep.equal(created.body);
  });

  it('keeps the passwords sealed in the events and the read model, and never answers them', async () => {
    const list = await admin('GET', '/admin/carriers');
    expect(list.status).to.equal(200);
    expect(list.body.data.map((c: any) => [c.id, c.source])).to.deep.equal([
      ['from-file', 'configuration'],
      ['telnyx', 'api'],
    ]);
    const stream = await app.rt.store.readStream('carrier-telnyx');
    const rows = await sql`select settings::text as s from sip_carriers`.execute(app.rt.get(PLATFORM.ReadDb));
    expect(stream.map((e) => e.type)).to.deep.equal(['CarrierCreated']);
    const recorded = JSON.stringify(stream.map((e) => e.data));
    for (const stored of [recorded, JSON.stringify(rows.rows), JSON.stringify(list.body)]) {
      expect(stored).not.to.include(INBOUND_SECRET);
      expect(stored).not.to.include(OUTBOUND_SECRET);
    }
    expect(recorded).to.include('enc:v1:');
    // the SIP engine's directory opens them
    const opened = (await app.rt.get(SIP.Carriers).list()).find((c) => c.id === 'telnyx');
    expect(opened?.inbound.password).to.equal(INBOUND_SECRET);
    expect(opened?.outbound?.password).to.equal(OUTBOUND_SECRET);
  });

  it('changes the sections a PATCH names, keeping a password left out; refuses a new user name without its password', async () => {
    const changed = await admin('PATCH', '/admin/carriers/telnyx', {
      outbound: { host: 'sip.telnyx.eu', port: 5080, transport: 'tcp', username: 'me' },
    });
    expect(changed.status, JSON.stringify(changed.body)).to.equal(200);
    expect(changed.body.outbound).to.deep.include({
      host: 'sip.telnyx.eu',
      port: 5080,
      transport: 'tcp',
      hasPassword: true,
      register: false,
    });
    expect(changed.body.inbound.hasPassword).to.equal(true);
    const opened = (await app.rt.get(SIP.Carriers).list()).find((c) => c.id === 'telnyx');
    expect(opened?.outbound).to.include({ host: 'sip.telnyx.eu', password: OUTBOUND_SECRET });
    const renamed = await admin('PATCH', '/admin/carriers/telnyx', { outbound: { host: 'sip.telnyx.eu', username: 'someone-else' } });
    expect(renamed.status).to.equal(422);
    const cleared = await admin('PATCH', '/admin/carriers/telnyx', { inbound: { addresses: ['192.76.120.10'], password: null } });
    expect(cleared.status).to.equal(200);
    expect(cleared.body.inbound).to.deep.equal({ addresses: ['192.76.120.10'], username: null, hasPassword: false });
  });

  it('refuses bad input with a 422 and changes nothing', async () => {
    for (const body of [
      { ...telnyx, id: 'Bad Id' },
      { id: 'bad-cidr', inbound: { addresses: ['10.0.0.0/33'] } },
      { id: 'nothing', inbound: { addresses: [] } },
      { id: 'half', inbound: { addresses: [], username: 'pbx' } },
      { id: 'port', outbound: { host: 'gw.example', port: 70000 } },
    ]) {
      const r = await admin('POST', '/admin/carriers', body);
      expect(r.status, JSON.stringify(body)).to.equal(422);
    }
    const list = await admin('GET', '/admin/carriers');
    expect(list.body.data.map((c: any) => c.id)).to.deep.equal(['from-file', 'telnyx']);
  });

  it('leaves the carriers of the start-up configuration alone', async () => {
    for (const [method, path, body] of [
      ['POST', '/admin/carriers', { id: 'from-file', inbound: { addresses: ['203.0.113.1'] } }],
      ['PATCH', '/admin/carriers/from-file', { name: 'x' }],
      ['DELETE', '/admin/carriers/from-file', undefined],
    ] as const) {
      const r = await admin(method, path, body);
      expect(r.status, `${method} ${path}`).to.equal(409);
      expect(r.body.error.code).to.equal('CARRIER_CONFIGURED');
    }
    const one = await admin('GET', '/admin/carriers/from-file');
    expect(one.body).to.include({ id: 'from-file', source: 'configuration' });
  });

  it('keeps a carrier that numbers were imported with, and deletes it once they are gone', async () => {
    const { accountId, apiKey } = await app.newAccount('Imports');
    const imported = await admin('POST', `/admin/accounts/${accountId}/numbers/import`, {
      phoneNumber: '+14155550177',
      carrierId: 'telnyx',
    });
    expect(imported.status, JSON.stringify(imported.body)).to.equal(200);
    const refused = await admin('DELETE', '/admin/carriers/telnyx');
    expect(refused.status).to.equal(409);
    expect(refused.body.error.code).to.equal('CARRIER_IN_USE');
    const released = await app.call('DELETE', `/v1/numbers/${imported.body.id}`, { key: apiKey });
    expect(released.status, JSON.stringify(released.body)).to.be.oneOf([200, 204]);
    const deleted = await admin('DELETE', '/admin/carriers/telnyx');
    expect(deleted.status).to.equal(204);
    expect((await admin('GET', '/admin/carriers/telnyx')).status).to.equal(404);
    expect((await admin('DELETE', '/admin/carriers/telnyx')).status).to.equal(404);
    const gone = await admin('POST', `/admin/accounts/${accountId}/numbers/import`, { phoneNumber: '+14155550178', carrierId: 'telnyx' });
    expect(gone.status).to.equal(422);
    // created again after the delete: a new life of the same id
    expect((await admin('POST', '/admin/carriers', telnyx)).status).to.equal(200);
  });

  it('rebuilds the carriers read model from the log into an equal table (after everything above)', async () => {
    const r = await rebuildProjector(app.rt.get(PLATFORM.ReadDb), app.rt.store, carriersProjector, { checkOnly: true });
    expect(r.equal, JSON.stringify(r)).to.equal(true);
  });

  it('needs the admin token', async () => {
    const { apiKey } = await app.newAccount('Not the operator');
    expect((await app.call('GET', '/admin/carriers', { key: apiKey })).status).to.equal(403);
    expect((await app.call('POST', '/admin/carriers', { body: telnyx })).status).to.equal(401);
  });
});
