import { expect } from 'chai';
import { sql } from 'kysely';
import { capabilities } from '../../infrastructure/capabilities/index.js';
import { PLATFORM } from '../../infrastructure/platform/tokens.js';
import { rebuildProjector } from '../../projections/shared/rebuild.js';
import { startTestApp, type TestApp } from '../support/http.js';
import { eventually } from '../support/numbers.js';
import { notes, notesProjector, TOY_MIGRATION } from '../support/toy-capability.js';
import { type Receiver, startReceiver } from '../support/webhook-receiver.js';

/**
 * docs/adding-a-capability.md, proved: a capability built by following the guide (test/support/toy-capability.ts) and
 * registered by one line, its module, is taken up whole: its migration runs, its routes are served and documented,
 * its projector and process manager run, its webhook events are delivered, its history is served, and its projector
 * rebuilds. No other list in the platform names it.
 */
describe('adding a capability: its module is the one line', function () {
  this.timeout(60_000);
  let app: TestApp;
  let rx: Receiver;
  let key: string;

  before(async () => {
    app = await startTestApp({ WEBHOOK_POLL_INTERVAL_MS: '20' }, { capabilities: [...capabilities, notes] });
    rx = await startReceiver();
    ({ apiKey: key } = await app.newAccount('Notes'));
    const w = await app.call('POST', '/v1/webhooks', { key, body: { url: `${rx.url}/hook`, events: ['*'] } });
    expect(w.status, JSON.stringify(w.body)).to.equal(200);
  });
  after(async () => {
    await rx?.close();
    // on a server database the migration table outlives the test: the next apps' capability lists have no toy in them
    if (app && process.env.DATABASE_URL) {
      const db = app.rt.get(PLATFORM.ReadDb);
      await sql`delete from kysely_migration where name = ${TOY_MIGRATION}`.execute(db);
      await sql`drop table if exists toy_notes`.execute(db);
    }
    await app?.close();
  });

  it('runs its migration, serves its routes from its read model, and runs its process manager', async () => {
    const created = await app.call('POST', '/v1/toy-notes', { key, body: { text: 'buy stamps' } });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    expect(created.body).to.include({ text: 'buy stamps' });
    const acknowledged = await eventually(async () => {
      const r = await app.call('GET', `/v1/toy-notes/${created.body.id}`, { key });
      return r.body.status === 'acknowledged' ? r.body : undefined;
    }, 'the process manager acknowledged the note and the projector showed it');
    expect(acknowledged).to.deep.equal({ id: created.body.id, text: 'buy stamps', status: 'acknowledged' });
    const other = await app.newAccount('Someone else');
    expect((await app.call('GET', `/v1/toy-notes/${created.body.id}`, { key: other.apiKey })).status).to.equal(404);
  });

  it('documents its operations in /openapi.json, its history route included', async () => {
    const doc = await app.call('GET', '/openapi.json');
    expect(Object.keys(doc.body.paths)).to.include.members(['/v1/toy-notes', '/v1/toy-notes/{note_id}', '/v1/toy-notes/{note_id}/history']);
    expect(doc.body.components.schemas.HistoryResponse.properties.kind.enum).to.include('toy_note');
  });

  it('delivers its webhook events and serves its audit history', async () => {
    const created = await app.call('POST', '/v1/toy-notes', { key, body: { text: 'water the plants' } });
    const delivered = await eventually(
      async () =>
        rx.received
          .map((r) => JSON.parse(r.body))
          .find((b: { event: string; data: { noteId?: string } }) => b.event === 'toy.note_created' && b.data.noteId === created.body.id),
      'toy.note_created delivered',
    );
    expect(delivered.data).to.deep.equal({ noteId: created.body.id, text: 'water the plants' });
    const history = await eventually(async () => {
      const r = await app.call('GET', `/v1/toy-notes/${created.body.id}/history`, { key });
      return r.body.events?.length === 2 ? r.body : undefined;
    }, 'the history of both steps');
    expect(history).to.include({ kind: 'toy_note', id: created.body.id, stream: `toy_note-${created.body.id}`, status: 'acknowledged' });
    expect(history.events.map((e: { type: string; status: string }) => [e.type, e.status])).to.deep.equal([
      ['NoteCreated', 'created'],
      ['NoteAcknowledged', 'acknowledged'],
    ]);
  });

  it('rebuilds its projector into equal tables', async () => {
    const report = await rebuildProjector(app.rt.get(PLATFORM.ReadDb), app.rt.store, notesProjector, { checkOnly: true });
    expect(report.equal).to.equal(true);
  });
});
