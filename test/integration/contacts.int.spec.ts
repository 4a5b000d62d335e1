import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { contactDecider, contactStream } from '../../domain/contact/contact.decider.js';
import { contactPhoneDecider, contactPhoneStream } from '../../domain/contact/contact-phone.decider.js';
import { CONTACTS } from '../../infrastructure/contacts/tokens.js';
import { PLATFORM } from '../../infrastructure/platform/tokens.js';
import { contactsProjector } from '../../projections/contacts/contacts.projector.js';
import { rebuildProjector } from '../../projections/shared/rebuild.js';
import { TestClock } from '../support/fixtures.js';
import { startTestApp, type TestApp } from '../support/http.js';
import { replayedTwice } from '../support/projections.js';

/** docs/contacts.md */
describe('contacts over HTTP', () => {
  let app: TestApp;
  let key: string;
  let accountId: string;
  let otherKey: string;
  // a unique number per test, so that tests never depend on each other's contacts
  let seq = 1000;
  const nextNumber = () => `+1415555${String(seq++).padStart(4, '0')}`;
  before(async () => {
    app = await startTestApp();
    ({ apiKey: key, accountId } = await app.newAccount('Acme'));
    otherKey = (await app.newAccount('Globex')).apiKey;
  });
  after(() => app.close());

  const create = (body: unknown, k = key, headers: Record<string, string> = {}) =>
    app.call('POST', '/v1/contacts', { key: k, body, headers });

  describe('create and read', () => {
    it('creates a contact (201) and reads it back at once', async () => {
      const phoneNumber = nextNumber();
      const r = await create({ phoneNumber, name: ' Ada Lovelace ', email: 'ada@example.com', notes: 'met at the fair' });
      expect(r.status).to.equal(201);
      expect(r.body).to.include({ phoneNumber, name: 'Ada Lovelace', email: 'ada@example.com', notes: 'met at the fair' });
      expect(r.body.id).to.match(/^ct_/);
      expect(r.body.createdAt).to.equal(r.body.updatedAt);
      expect(Object.keys(r.body)).to.deep.equal(['id', 'phoneNumber', 'name', 'email', 'notes', 'createdAt', 'updatedAt']);
      const got = await app.call('GET', `/v1/contacts/${r.body.id}`, { key });
      expect(got.status).to.equal(200);
      expect(got.body).to.deep.equal(r.body);
    });

    it('leaves email and notes null when not sent, or sent empty', async () => {
      const a = await create({ phoneNumber: nextNumber(), name: 'Bo' });
      expect(a.body).to.include({ email: null, notes: null });
      const b = await create({ phoneNumber: nextNumber(), name: 'Cy', email: '', notes: '  ' });
      expect(b.status).to.equal(201);
      expect(b.body).to.include({ email: null, notes: null });
    });

    it('normalizes North American numbers written with punctuation to E.164', async () => {
      const r = await create({ phoneNumber: '(415) 555-7001', name: 'Dee' });
      expect(r.status).to.equal(201);
      expect(r.body.phoneNumber).to.equal('+14155557001');
      const r2 = await create({ phoneNumber: '1 416 555 7002', name: 'Eve' });
      expect(r2.body.phoneNumber).to.equal('+14165557002');
      const r3 = await create({ phoneNumber: '+44 20 7946 0958', name: 'Fay' });
      expect(r3.body.phoneNumber).to.equal('+442079460958');
    });

    it('ignores unknown fields, as the other free operations do', async () => {
      const r = await create({ phoneNumber: nextNumber(), name: 'Gus', nickname: 'G' });
      expect(r.status).to.equal(201);
      expect(r.body).to.not.have.property('nickname');
    });

    it('refuses invalid fields with 422 naming them, and writes nothing', async () => {
      const before = (await app.call('GET', '/v1/contacts?limit=100', { key })).body.total;
      const cases: [unknown, string][] = [
        [{ name: 'x' }, 'phoneNumber'],
        [{ phoneNumber: '555-0100', name: 'x' }, 'phoneNumber'],
        [{ phoneNumber: '+0123', name: 'x' }, 'phoneNumber'],
        [{ phoneNumber: 14155550100, name: 'x' }, 'phoneNumber'],
        [{ phoneNumber: nextNumber() }, 'name'],
        [{ phoneNumber: nextNumber(), name: '   ' }, 'name'],
        [{ phoneNumber: nextNumber(), name: 'x'.repeat(101) }, 'name'],
        [{ phoneNumber: nextNumber(), name: 'x', email: 'not-an-email' }, 'email'],
        [{ phoneNumber: nextNumber(), name: 'x', notes: 'n'.repeat(5001) }, 'notes'],
      ];
      for (const [body, field] of cases) {
        const r = await create(body);
        expect(r.status, JSON.stringify(body)).to.equal(422);
        expect(r.body.error.code).to.equal('VALIDATION_ERROR');
        expect(r.body.detail.map((d: { loc: string[] }) => d.loc.join('.'))).to.include(`body.${field}`);
      }
      expect((await app.call('GET', '/v1/contacts?limit=100', { key })).body.total).to.equal(before);
    });
  });

  describe('one contact per phone number', () => {
    it('refuses a second contact with the same number: 409 CONTACT_EXISTS', async () => {
      const phoneNumber = nextNumber();
      expect((await create({ phoneNumber, name: 'First' })).status).to.equal(201);
      const r = await create({ phoneNumber: phoneNumber.replace(/^\+1(\d{3})(\d{3})(\d{4})$/, '($1) $2-$3'), name: 'Second' });
      expect(r.status).to.equal(409);
      expect(r.body.error).to.include({ code: 'CONTACT_EXISTS', type: 'conflict_error' });
      expect(r.body.error.message).to.contain(phoneNumber);
      const list = await app.call('GET', `/v1/contacts?search=${encodeURIComponent(phoneNumber)}`, { key });
      expect(list.body.data.map((c: { name: string }) => c.name)).to.deep.equal(['First']);
    });

    it('lets exactly one of many concurrent creates with one number win', async () => {
      const phoneNumber = nextNumber();
      const rs = await Promise.all(Array.from({ length: 6 }, (_, i) => create({ phoneNumber, name: `Racer ${i}` })));
      const statuses = rs.map((r) => r.status).sort();
      expect(statuses).to.deep.equal([201, 409, 409, 409, 409, 409]);
      for (const r of rs.filter((x) => x.status === 409)) expect(r.body.error.code).to.equal('CONTACT_EXISTS');
      const list = await app.call('GET', `/v1/contacts?search=${encodeURIComponent(phoneNumber)}`, { key });
      expect(list.body.total).to.equal(1);
      expect(list.body.data[0].id).to.equal(rs.find((r) => r.status === 201)!.body.id);
    });

    it('lets exactly one of two concurrent PATCHes to one new number win', async () => {
      const target = nextNumber();
      const a = await create({ phoneNumber: nextNumber(), name: 'Mover A' });
      const b = await create({ phoneNumber: nextNumber(), name: 'Mover B' });
      const rs = await Promise.all(
        [a, b].map((c) => app.call('PATCH', `/v1/contacts/${c.body.id}`, { key, body: { phoneNumber: target } })),
      );
      expect(rs.map((r) => r.status).sort()).to.deep.equal([200, 409]);
      const list = await app.call('GET', `/v1/contacts?search=${encodeURIComponent(target)}`, { key });
      expect(list.body.total).to.equal(1);
    });

    it('lets another account have a contact with the same number', async () => {
      const phoneNumber = nextNumber();
      expect((await create({ phoneNumber, name: 'Mine' })).status).to.equal(201);
      expect((await create({ phoneNumber, name: 'Theirs' }, otherKey)).status).to.equal(201);
    });

    it('frees the number when the contact is deleted: a new contact may take it', async () => {
      const phoneNumber = nextNumber();
      const first = await create({ phoneNumber, name: 'Old' });
      expect((await app.call('DELETE', `/v1/contacts/${first.body.id}`, { key })).status).to.equal(204);
      const again = await create({ phoneNumber, name: 'New' });
      expect(again.status).to.equal(201);
      expect(again.body.id).to.not.equal(first.body.id);
      expect((await create({ phoneNumber, name: 'Third' })).status).to.equal(409);
    });

    it('moves a number with PATCH only when no other contact holds it, and frees the old one', async () => {
      const [n1, n2, n3] = [nextNumber(), nextNumber(), nextNumber()];
      const a = await create({ phoneNumber: n1, name: 'A' });
      await create({ phoneNumber: n2, name: 'B' });
      const clash = await app.call('PATCH', `/v1/contacts/${a.body.id}`, { key, body: { phoneNumber: n2 } });
      expect(clash.status).to.equal(409);
      expect(clash.body.error.code).to.equal('CONTACT_EXISTS');
      expect((await app.call('GET', `/v1/contacts/${a.body.id}`, { key })).body.phoneNumber).to.equal(n1);
      const moved = await app.call('PATCH', `/v1/contacts/${a.body.id}`, { key, body: { phoneNumber: n3 } });
      expect(moved.status).to.equal(200);
      expect(moved.body.phoneNumber).to.equal(n3);
      // n1 is free again, n3 is taken
      expect((await create({ phoneNumber: n1, name: 'C' })).status).to.equal(201);
      expect((await create({ phoneNumber: n3, name: 'D' })).status).to.equal(409);
    });
  });

  describe('list', () => {
    it('pages with limit (default 50) and offset, oldest first, with hasMore and total', async () => {
      const { apiKey } = await app.newAccount('Lister');
      for (let i = 0; i < 3; i++) await create({ phoneNumber: nextNumber(), name: `P${i}` }, apiKey);
      const all = await app.call('GET', '/v1/contacts', { key: apiKey });
      expect(all.status).to.equal(200);
      expect(all.body.total).to.equal(3);
      expect(all.body.hasMore).to.equal(false);
      expect(all.body.data.map((c: { name: string }) => c.name)).to.deep.equal(['P0', 'P1', 'P2']);
      const page = await app.call('GET', '/v1/contacts?limit=2&offset=1', { key: apiKey });
      expect(page.body.data.map((c: { name: string }) => c.name)).to.deep.equal(['P1', 'P2']);
      expect(page.body).to.include({ hasMore: false, total: 3 });
      const first = await app.call('GET', '/v1/contacts?limit=1', { key: apiKey });
      expect(first.body).to.include({ hasMore: true, total: 3 });
      for (const bad of ['limit=0', 'limit=101', 'limit=x', 'offset=-1'])
        expect((await app.call('GET', `/v1/contacts?${bad}`, { key: apiKey })).status, bad).to.equal(422);
    });

    it('searches names and numbers, ignoring case, with LIKE wildcards taken literally', async () => {
      const { apiKey } = await app.newAccount('Searcher');
      await create({ phoneNumber: '+14155550001', name: 'Marie Curie' }, apiKey);
      await create({ phoneNumber: '+14165550002', name: 'Pierre' }, apiKey);
      await create({ phoneNumber: '+14175550003', name: '100% Real' }, apiKey);
      const names = async (q: string) =>
        (await app.call('GET', `/v1/contacts?search=${encodeURIComponent(q)}`, { key: apiKey })).body.data.map(
          (c: { name: string }) => c.name,
        );
      expect(await names('curie')).to.deep.equal(['Marie Curie']);
      expect(await names('+1416')).to.deep.equal(['Pierre']);
      expect(await names('%')).to.deep.equal(['100% Real']);
      expect(await names('_')).to.deep.equal([]);
      expect(await names('')).to.have.length(3);
    });
  });

  describe('update', () => {
    it('changes only the fields sent; null or "" clears email and notes; null keeps name', async () => {
      const c = await create({ phoneNumber: nextNumber(), name: 'Hal', email: 'hal@example.com', notes: 'n' });
      const r = await app.call('PATCH', `/v1/contacts/${c.body.id}`, { key, body: { name: null, email: null, notes: '' } });
      expect(r.status).to.equal(200);
      expect(r.body).to.include({
        id: c.body.id,
        name: 'Hal',
        email: null,
        notes: null,
        phoneNumber: c.body.phoneNumber,
        createdAt: c.body.createdAt,
      });
      const r2 = await app.call('PATCH', `/v1/contacts/${c.body.id}`, { key, body: { name: 'Hal 9000' } });
      expect(r2.body.name).to.equal('Hal 9000');
      expect(r2.body.updatedAt >= r.body.updatedAt).to.equal(true);
    });

    it('records ContactUpdated with the changed fields only, and nothing for a PATCH that changes nothing', async () => {
      const c = await create({ phoneNumber: nextNumber(), name: 'Ivy', email: 'ivy@example.com' });
      await app.call('PATCH', `/v1/contacts/${c.body.id}`, { key, body: { name: 'Ivy', email: 'ivy@other.example' } });
      const noop = await app.call('PATCH', `/v1/contacts/${c.body.id}`, { key, body: {} });
      expect(noop.status).to.equal(200);
      const events = await app.rt.store.readStream(`contact-${c.body.id}`);
      expect(events.map((e) => e.type)).to.deep.equal(['ContactCreated', 'ContactUpdated']);
      expect(events[1]!.data).to.deep.include({ changes: { email: 'ivy@other.example' } });
    });

    it('validates like create', async () => {
      const c = await create({ phoneNumber: nextNumber(), name: 'Jo' });
      for (const body of [{ name: '' }, { email: 'nope' }, { phoneNumber: '12' }, { notes: 'n'.repeat(5001) }]) {
        const r = await app.call('PATCH', `/v1/contacts/${c.body.id}`, { key, body });
        expect(r.status, JSON.stringify(body)).to.equal(422);
      }
    });
  });

  describe('delete', () => {
    it('answers 204 without a body; the contact is gone; a second delete is 404', async () => {
      const c = await create({ phoneNumber: nextNumber(), name: 'Kay' });
      const d = await app.call('DELETE', `/v1/contacts/${c.body.id}`, { key });
      expect(d.status).to.equal(204);
      expect(d.body).to.equal(null);
      expect((await app.call('GET', `/v1/contacts/${c.body.id}`, { key })).status).to.equal(404);
      expect((await app.call('PATCH', `/v1/contacts/${c.body.id}`, { key, body: { name: 'x' } })).status).to.equal(404);
      const again = await app.call('DELETE', `/v1/contacts/${c.body.id}`, { key });
      expect(again.status).to.equal(404);
      expect(again.body.error.code).to.equal('CONTACT_NOT_FOUND');
    });
  });

  describe('accounts', () => {
    it("answers 404 CONTACT_NOT_FOUND for another account's contact, on every operation", async () => {
      const c = await create({ phoneNumber: nextNumber(), name: 'Private' });
      for (const [method, body] of [
        ['GET', undefined],
        ['PATCH', { name: 'stolen' }],
        ['DELETE', undefined],
      ] as const) {
        const r = await app.call(method, `/v1/contacts/${c.body.id}`, { key: otherKey, ...(body ? { body } : {}) });
        expect(r.status, method).to.equal(404);
        expect(r.body.error).to.include({ code: 'CONTACT_NOT_FOUND', type: 'not_found' });
      }
      expect(
        (await app.call('GET', '/v1/contacts?limit=100', { key: otherKey })).body.data.map((x: { id: string }) => x.id),
      ).to.not.include(c.body.id);
      const still = await app.call('GET', `/v1/contacts/${c.body.id}`, { key });
      expect(still.body.name).to.equal('Private');
    });

    it('scopes every operation to the sub-account named by X-Sub-Account-Id', async () => {
      const sub = await app.call('POST', '/v1/sub-accounts', { key, body: { name: 'Branch' } });
      const headers = { 'x-sub-account-id': sub.body.id ?? sub.body.accountId };
      const phoneNumber = nextNumber();
      const inSub = await create({ phoneNumber, name: 'Sub contact' }, key, headers);
      expect(inSub.status).to.equal(201);
      // the master's own book is separate: the number is free there, and the sub-account's contact is not visible
      expect((await create({ phoneNumber, name: 'Master contact' })).status).to.equal(201);
      expect((await app.call('GET', `/v1/contacts/${inSub.body.id}`, { key })).status).to.equal(404);
      const subList = await app.call('GET', '/v1/contacts', { key, headers });
      expect(subList.body.data.map((x: { id: string }) => x.id)).to.deep.equal([inSub.body.id]);
      expect((await app.call('DELETE', `/v1/contacts/${inSub.body.id}`, { key, headers })).status).to.equal(204);
    });
  });

  describe('lookup port (for messaging)', () => {
    it('finds the live contact of an account by exact number, and nothing after delete', async () => {
      const lookup = app.rt.get(CONTACTS.Lookup);
      const phoneNumber = nextNumber();
      const other = nextNumber();
      const c = await create({ phoneNumber, name: 'Lou', email: 'lou@example.com' });
      const d = await create({ phoneNumber: other, name: 'Max' });
      const lou = { id: c.body.id, name: 'Lou', email: 'lou@example.com', phoneNumber };
      // several at once, in the order asked, another account's and an unknown number as null
      expect(
        await lookup.byPhoneNumbers([
          { accountId, phoneNumber: other },
          { accountId: 'acc_someone_else', phoneNumber },
          { accountId, phoneNumber },
          { accountId, phoneNumber: nextNumber() },
          { accountId, phoneNumber },
        ]),
      ).to.deep.equal([{ id: d.body.id, name: 'Max', email: null, phoneNumber: other }, null, lou, null, lou]);
      await app.call('DELETE', `/v1/contacts/${c.body.id}`, { key });
      expect(await lookup.byPhoneNumbers([{ accountId, phoneNumber }])).to.deep.equal([null]);
    });
  });
  describe('OpenAPI document', () => {
    it('documents the five operations with the public names, DELETE as 204 without a body', async () => {
      const doc = (await app.call('GET', '/openapi.json')).body;
      expect(Object.keys(doc.paths['/v1/contacts'])).to.have.members(['get', 'post']);
      expect(Object.keys(doc.paths['/v1/contacts/{contact_id}'])).to.have.members(['get', 'patch', 'delete']);
      expect(doc.paths['/v1/contacts'].post.responses).to.include.keys('201', '409', '422');
      expect(doc.paths['/v1/contacts/{contact_id}'].delete.responses['204']).to.deep.equal({ description: 'No content' });
      const limit = doc.paths['/v1/contacts'].get.parameters.find((p: { name: string }) => p.name === 'limit');
      expect(limit.schema.default).to.equal(50);
      expect(doc.components.schemas.CreateContactRequest.required).to.have.members(['phoneNumber', 'name']);
      expect(doc.components.schemas.UpdateContactRequest.required ?? []).to.deep.equal([]);
      expect(Object.keys(doc.components.schemas.ContactResponse.properties)).to.deep.equal([
        'id',
        'phoneNumber',
        'name',
        'email',
        'notes',
        'createdAt',
        'updatedAt',
      ]);
    });
  });

  describe('read model', () => {
    // runs last in this suite: every contact written above (created, updated, moved, deleted) is in the log
    it('rebuilds into tables equal to the live ones', async () => {
      const db = app.rt.get(PLATFORM.ReadDb);
      const report = await rebuildProjector(db, app.rt.store, contactsProjector, { checkOnly: true });
      expect(report.differences).to.deep.equal({ contacts: 0 });
      expect(report.equal).to.equal(true);
    });

    it('changes nothing when the events are applied a second time', async () => {
      const db = app.rt.get(PLATFORM.ReadDb);
      const rows = () => db.selectFrom('contacts').selectAll().orderBy('contact_id').execute();
      const { before, after } = await replayedTwice(app, contactsProjector, rows);
      expect(before.length).to.be.greaterThan(10);
      expect(after).to.deep.equal(before);
    });
  });
});

describe('contacts: recovering a number whose write stopped halfway', () => {
  let app: TestApp;
  let key: string;
  let accountId: string;
  const clock = new TestClock(new Date());
  before(async () => {
    app = await startTestApp({}, { clock });
    ({ apiKey: key, accountId } = await app.newAccount('Recover'));
  });
  after(() => app.close());

  const ctx = () => ({ accountId, requestId: 'test', correlationId: 'test', actor: 'test' });
  /** a claim as a create leaves it when it stops before writing its contact */
  const orphanClaim = async (phoneNumber: string, contactId: string) => {
    await app.rt
      .get(PLATFORM.Executor)
      .execute(
        contactPhoneDecider,
        contactPhoneStream(accountId, phoneNumber),
        { type: 'ClaimContactPhone', data: { phoneNumber, contactId, takeOver: null } },
        ctx(),
      );
  };

  it('refuses the number while the other write may still be under way, then fences it and takes the number over', async () => {
    const phoneNumber = '+14155559001';
    const stopped = `ct_stopped_${randomUUID()}`;
    await orphanClaim(phoneNumber, stopped);
    expect((await app.call('POST', '/v1/contacts', { key, body: { phoneNumber, name: 'Too early' } })).status).to.equal(409);
    clock.advance(31_000);
    const r = await app.call('POST', '/v1/contacts', { key, body: { phoneNumber, name: 'Later' } });
    expect(r.status).to.equal(201);
    // the stopped create is fenced: it can never write its contact now
    const fenced = await app.rt.store.readStream(`contact-${stopped}`);
    expect(fenced.map((e) => e.type)).to.deep.equal(['ContactAbandoned']);
    const late = app.rt
      .get(PLATFORM.Executor)
      .execute(
        contactDecider,
        contactStream(stopped),
        { type: 'CreateContact', data: { contactId: stopped, fields: { phoneNumber, name: 'Stopped', email: null, notes: null } } },
        ctx(),
      );
    expect(
      await late.then(
        () => null,
        (e: unknown) => e,
      ),
    ).to.have.property('code', 'CONTACT_EXISTS');
    expect((await app.call('GET', '/v1/contacts', { key })).body.total).to.equal(1);
  });
});
